"""Where the models live: dedicated replicas, packed with LRU, packed with the hottest pinned, or
routed by model.

``plan_residency`` is the entry point: the four placements side by side at the current
workload (p99, cost, hit ratio), the fewest replicas each needs to meet the p99 target and what
that costs, the recommended one (the cheapest that meets the target), the accelerator memory a
packed LRU fleet needs for the target, how many models fit on a replica, and the model size from
which packing costs more than it saves.

- **Dedicated**: each model on replicas of its own, the fewest (at least one) that meet the
  target at its share of the traffic (``sdlab_model.assessment.min_replicas_for_target`` on a
  one-model workload). Nothing is ever loaded. Its p99 is the worst model's, an upper bound on
  the fleet's (if every model's p99 is at most ``t``, at least 99% of all requests are).
- **Packed, LRU**: every replica serves every model and keeps an LRU cache of them
  (``packed_latency``), at the workload's replica count.
- **Packed, hottest pinned**: the same, with the most popular models pinned (never evicted) and
  the rest sharing what memory is left through LRU; the pinned count is the one (of a few tried)
  with the lowest p99.
- **Model-aware routing**: each model on the fewest replicas its traffic needs, within each
  replica's memory, and each request sent only to a replica holding its model
  (``sdlab_model.residency.routing``): nothing is loaded in steady state, and each replica
  batches only its few models' traffic.

Cost is replicas times the price of a replica-hour of the accelerator picked from the hardware
catalog (``replica_usd_per_hour``: the catalog entry's hourly price per GPU times the replica's
GPUs), the same for every placement, so packed and dedicated fleets are priced alike. The
sidebar's GPU price is not used here: the accelerator (and so the memory) comes from the
catalog, and so does its price (``advice/data/hardware.json``, each price sourced and dated).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sdlab_model.advice.hardware import hardware_by_id
from sdlab_model.latency import Accuracy
from sdlab_model.params import NUMERIC_BY_NAME, RESIDENCY_BY_NAME
from sdlab_model.queues.queueing import p99_pairs
from sdlab_model.residency.inputs import ResidencyInputs
from sdlab_model.residency.latency import ResidencyLatency, models_that_fit, packed_latency
from sdlab_model.residency.routing import route_models, routed_latency
from sdlab_model.wording import count
from sdlab_model.workload import Workload

PLACEMENT_IDS: tuple[str, ...] = ("dedicated", "packed_lru", "packed_pinned", "model_aware")
PLACEMENT_LABELS: dict[str, str] = {
    "dedicated": "Dedicated replicas per model",
    "packed_lru": "Packed, LRU cache per replica",
    "packed_pinned": "Packed, hottest models pinned",
    "model_aware": "Model-aware routing",
}
MAX_REPLICAS = int(NUMERIC_BY_NAME["replicas"].maximum)
PINNED_CANDIDATES = 6
"""How many pinned counts the pinned placement tries."""
CROSSOVER_SIZES_GB: tuple[float, ...] = (0.1, 0.2, 0.5, 1, 2, 3, 5, 8, 12, 20, 40, 80)
"""Model sizes the packing-stops-paying sweep tries."""
_MIN_RATE_RPS = NUMERIC_BY_NAME["rate_rps"].minimum


@dataclass(frozen=True)
class Placement:
    """One placement at the current workload, and what it takes to meet the target.

    ``replicas``/``usd_per_hour``: as evaluated (packed: the workload's replicas; dedicated: the
    sum over models). ``p99_is_bound``: the p99 is an upper bound (dedicated). ``replicas_to_meet``
    is ``None`` when no count up to ``MAX_REPLICAS`` meets the target; ``p99_ms_to_meet`` and
    ``accuracy_to_meet`` are the model's p99 and its accuracy at that count (``nan`` without one).
    """

    id: str
    label: str
    replicas: int
    usd_per_hour: float
    p99_ms: float
    p99_is_bound: bool
    hit_ratio: float
    load_wait_share: float
    p99_is_load_time: bool
    is_stable: bool
    meets_target: bool
    replicas_to_meet: int | None
    usd_per_hour_to_meet: float
    pinned_models: int
    accuracy: Accuracy
    note: str
    p99_ms_to_meet: float = math.nan
    accuracy_to_meet: Accuracy = "approximate"


@dataclass(frozen=True)
class ResidencyPlan:
    """Everything the Models and memory section shows for one workload and its inputs."""

    workload: Workload
    inputs: ResidencyInputs
    placements: tuple[Placement, ...]
    recommended: str | None
    usd_per_replica_hour: float
    usable_memory_gb: float
    models_fit_per_replica: int
    memory_for_target_gb: float | None
    packing_stops_paying_gb: float | None
    packing_pays_everywhere: bool

    def placement(self, placement_id: str) -> Placement:
        """The placement with this id."""
        return next(p for p in self.placements if p.id == placement_id)


def plan_residency(
    workload: Workload, inputs: ResidencyInputs, sweep: bool = True
) -> ResidencyPlan:
    """The four placements side by side, the recommendation, and the memory and size limits.

    ``sweep=False`` skips the searches only the Models and memory page shows: the memory the
    target needs and the packing-stops-paying sweep (twelve model sizes, each with a replica
    search); ``memory_for_target_gb`` is then ``None``. ``evaluate`` needs the placements only.
    """
    price = replica_usd_per_hour(workload, inputs)
    dedicated = dedicated_placement(workload, inputs, price)
    lru = _packed_placement(workload, inputs, 0, price, "packed_lru")
    pinned = _packed_placement(
        workload, inputs, _best_pinned_count(workload, inputs), price, "packed_pinned"
    )
    placements = (dedicated, lru, pinned, routed_placement(workload, inputs, price))
    meeting = [p for p in placements if p.replicas_to_meet is not None]
    recommended = (
        min(meeting, key=lambda p: (p.usd_per_hour_to_meet, -p.hit_ratio)).id if meeting else None
    )
    stops, everywhere = (None, False)
    if sweep:
        stops, everywhere = _packing_stops_paying(workload, inputs, dedicated, price)
    return ResidencyPlan(
        workload=workload,
        inputs=inputs,
        placements=placements,
        recommended=recommended,
        usd_per_replica_hour=price,
        usable_memory_gb=inputs.usable_memory_gb,
        models_fit_per_replica=models_that_fit(
            inputs.sizes_gb(workload.models_hosted), inputs.usable_memory_gb
        ),
        memory_for_target_gb=memory_for_target_gb(workload, inputs) if sweep else None,
        packing_stops_paying_gb=stops,
        packing_pays_everywhere=everywhere,
    )


def dedicated_placement(
    workload: Workload, inputs: ResidencyInputs, price: float | None = None
) -> Placement:
    """Each model on its own replicas: the fewest (at least one) that meet the target.

    A model's workload is the fleet's with its share of the rate (at least the lab's 1 req/s)
    and one model; its p99 at each count comes from the fleet model's vectorized grid formulas
    (``p99_pairs``, within 1% of the point model), searched by ``fewest_replicas_meeting``.
    A model that misses the target at every count
    keeps its share of the workload's replicas, and the placement does not meet the target. A
    model larger than the usable memory fits nowhere: the placement is infeasible.
    """
    price = replica_usd_per_hour(workload, inputs) if price is None else price
    sizes = inputs.sizes_gb(workload.models_hosted)
    rates = np.maximum(workload.rate_rps * workload.model_shares, _MIN_RATE_RPS)
    if sizes.max() > inputs.usable_memory_gb:
        return _placement_infeasible(
            "dedicated",
            f"A {sizes.max():.3g} GB model does not fit in {inputs.usable_memory_gb:.3g} GB.",
        )
    target = workload.p99_target_ms
    single = workload.with_changes(models_hosted=1)
    first, first_p99 = fewest_replicas_meeting(single, rates, target)
    met = first > 0
    fallback = np.maximum(1, np.round(workload.replicas * rates / workload.rate_rps)).astype(int)
    chosen = np.where(met, first, np.minimum(fallback, MAX_REPLICAS))
    chosen_p99 = np.where(met, first_p99, 0.0)
    if not met.all():
        unmet = ~met
        chosen_p99[unmet] = p99_pairs(single, rates[unmet], chosen[unmet].astype(float))
    missing = int(np.count_nonzero(~met))
    replicas_needed = int(chosen.sum())
    worst_p99 = float(chosen_p99.max())
    meets = missing == 0
    cost = replicas_needed * price
    note = (
        f"{count(workload.models_hosted, 'model')} on {count(replicas_needed, 'replica')} of "
        "their own; "
        "the p99 shown is the worst model's, an upper bound on the fleet's."
    )
    if not meets:
        note = (
            f"{missing:,} of the models miss the target on any count up to {MAX_REPLICAS} "
            "replicas of their own. " + note
        )
    return Placement(
        id="dedicated",
        label=PLACEMENT_LABELS["dedicated"],
        replicas=replicas_needed,
        usd_per_hour=cost,
        p99_ms=worst_p99,
        p99_is_bound=True,
        hit_ratio=1.0,
        load_wait_share=0.0,
        p99_is_load_time=False,
        is_stable=math.isfinite(worst_p99),
        meets_target=meets,
        replicas_to_meet=replicas_needed if meets else None,
        usd_per_hour_to_meet=cost if meets else math.inf,
        pinned_models=0,
        accuracy="validated" if meets else "approximate",
        note=note,
        p99_ms_to_meet=worst_p99 if meets else math.nan,
        accuracy_to_meet="validated",
    )


SEARCH_LADDER = np.unique(np.round(np.geomspace(1, MAX_REPLICAS, 18))).astype(int)
"""Replica counts every model tries first; the search then narrows between two rungs."""
SEARCH_POINTS = 12
"""Counts tried per model in each later round of ``fewest_replicas_meeting``."""


def fewest_replicas_meeting(
    workload: Workload, rates_rps: np.ndarray, target_ms: float
) -> tuple[np.ndarray, np.ndarray]:
    """For each rate, the fewest replicas (1 to ``MAX_REPLICAS``) of ``workload``'s fleet whose
    p99 (``p99_pairs``) is at most ``target_ms``, and that p99; 0 (and inf) where none is.

    The p99 falls as replicas are added (each gets less traffic), so a k-ary search finds the
    same count as trying every one: all rates try ``SEARCH_LADDER`` in one vectorized call, then
    each narrows its own bracket, ``SEARCH_POINTS`` counts per call, until it is one count wide.
    Three or four calls in all instead of one per count.
    """
    rates = np.asarray(rates_rps, dtype=float)
    ladder = SEARCH_LADDER.astype(float)
    p99 = p99_pairs(workload, rates[:, None], ladder[None, :])
    meets = p99 <= target_ms
    met = meets.any(axis=1)
    rung = np.argmax(meets, axis=1)
    high = np.where(met, SEARCH_LADDER[rung], 0)  # meets (0: nothing does)
    high_p99 = np.where(met, p99[np.arange(rates.size), rung], np.inf)
    low = np.where(met & (rung > 0), SEARCH_LADDER[np.maximum(rung - 1, 0)], 0)  # does not meet
    open_ = np.flatnonzero(met & (high - low > 1))
    while open_.size:
        lo, hi = low[open_], high[open_]
        steps = np.linspace(0.0, 1.0, SEARCH_POINTS + 2)[1:-1]
        spread = np.round(lo[:, None] + (hi - lo)[:, None] * steps)
        counts = np.clip(spread, lo[:, None] + 1, hi[:, None] - 1)
        tried = p99_pairs(workload, np.repeat(rates[open_, None], SEARCH_POINTS, 1), counts)
        ok = tried <= target_ms
        any_ok = ok.any(axis=1)
        pick = np.argmax(ok, axis=1)
        rows = np.arange(open_.size)
        new_high = np.where(any_ok, counts[rows, pick], hi)
        high_p99[open_] = np.where(any_ok, tried[rows, pick], high_p99[open_])
        below = np.where(any_ok, pick - 1, SEARCH_POINTS - 1)
        new_low = np.where(below >= 0, counts[rows, np.maximum(below, 0)], lo)
        low[open_], high[open_] = new_low.astype(int), new_high.astype(int)
        open_ = open_[high[open_] - low[open_] > 1]
    return high, high_p99


def replicas_to_meet(
    workload: Workload, inputs: ResidencyInputs, pinned_models: int = 0
) -> int | None:
    """Fewest replicas (1 to ``MAX_REPLICAS``) whose packed p99 meets the target, else ``None``.

    Bisection: more replicas give each a lower rate, so fewer loads and shorter queues (the hit
    ratios themselves barely move, Che's depending on relative popularity).
    """

    def meets(count: int) -> bool:
        result = packed_latency(workload.with_changes(replicas=count), inputs, pinned_models)
        return result.is_stable and result.p99_ms <= workload.p99_target_ms

    if not meets(MAX_REPLICAS):
        return None
    low, high = 0, MAX_REPLICAS  # meets(high) holds; meets(low) does not (or low = 0)
    while high - low > 1:
        middle = (low + high) // 2
        if meets(middle):
            high = middle
        else:
            low = middle
    return high


def memory_for_target_gb(workload: Workload, inputs: ResidencyInputs) -> float | None:
    """Accelerator memory (GB, the reserve included) a packed LRU fleet at the workload's replica
    count needs for its p99 to meet the target; ``None`` if even every model resident misses.

    Bisection on the memory for weights between the largest model and all of them (0.01 GB).
    """
    sizes = inputs.sizes_gb(workload.models_hosted)
    target = workload.p99_target_ms

    def meets(usable: float) -> bool:
        result = packed_latency(workload, inputs, usable_gb=usable)
        return result.is_stable and result.p99_ms <= target

    low, high = float(sizes.max()), float(sizes.sum())
    if not meets(high):
        return None
    if meets(low):
        return low + inputs.activation_reserve_gb
    while high - low > 0.01:
        middle = 0.5 * (low + high)
        if meets(middle):
            high = middle
        else:
            low = middle
    return high + inputs.activation_reserve_gb


def routed_replicas_to_meet(workload: Workload, inputs: ResidencyInputs) -> int | None:
    """Fewest replicas (1 to ``MAX_REPLICAS``) whose model-aware p99 meets the target, else
    ``None`` (``routed_search``)."""
    return routed_search(workload, inputs)[0]


def routed_search(
    workload: Workload, inputs: ResidencyInputs
) -> tuple[int | None, ResidencyLatency | None]:
    """The fewest replicas whose model-aware p99 meets the target, and that p99's result.

    Starts at the fewest replicas that could carry the rate on full batches and hold every
    model once, and grows by a quarter until one meets the target, then bisects back: the
    placement changes with the count, so each count is placed and judged afresh (the p99 is
    taken to fall as replicas are added).
    """
    sizes = inputs.sizes_gb(workload.models_hosted)
    usable = inputs.usable_memory_gb
    if sizes.max() > usable:
        return None, None
    judged: dict[int, ResidencyLatency] = {}

    def meets(count: int) -> bool:
        judged[count] = routed_latency(workload.with_changes(replicas=count), inputs)
        return judged[count].is_stable and judged[count].p99_ms <= workload.p99_target_ms

    full = workload.effective_max_batch_size
    per_replica_rps = workload.slots_per_replica * full * 1000.0 / workload.batch_service_ms(full)
    fewest = max(workload.rate_rps / per_replica_rps, float(sizes.sum()) / usable * (1 - 1e-9))
    count = min(MAX_REPLICAS, max(1, math.ceil(fewest)))
    low = count - 1  # does not meet (or 0)
    while not meets(count):
        if count == MAX_REPLICAS:
            return None, None
        low, count = count, min(MAX_REPLICAS, max(count + 1, math.ceil(count * 1.25)))
    high = count
    while high - low > 1:
        middle = (low + high) // 2
        if meets(middle):
            high = middle
        else:
            low = middle
    return high, judged[high]


def routed_placement(
    workload: Workload, inputs: ResidencyInputs, price: float | None = None
) -> Placement:
    """Model-aware routing at the workload's replicas, and the fewest replicas meeting the
    target (``routed_search``)."""
    price = replica_usd_per_hour(workload, inputs) if price is None else price
    result = routed_latency(workload, inputs)
    needed, at_need = routed_search(workload, inputs)
    return _placement_from(workload, result, needed, price, "model_aware", at_need)


def _packed_placement(
    workload: Workload, inputs: ResidencyInputs, pinned_models: int, price: float, placement_id: str
) -> Placement:
    result: ResidencyLatency = packed_latency(workload, inputs, pinned_models)
    needed = replicas_to_meet(workload, inputs, pinned_models)
    at_need = (
        None
        if needed is None
        else packed_latency(workload.with_changes(replicas=needed), inputs, pinned_models)
    )
    return _placement_from(workload, result, needed, price, placement_id, at_need)


def _placement_from(
    workload: Workload,
    result: ResidencyLatency,
    needed: int | None,
    price: float,
    placement_id: str,
    at_need: ResidencyLatency | None,
) -> Placement:
    return Placement(
        id=placement_id,
        label=PLACEMENT_LABELS[placement_id],
        replicas=workload.replicas,
        usd_per_hour=workload.replicas * price,
        p99_ms=result.p99_ms,
        p99_is_bound=False,
        hit_ratio=result.hit_ratio,
        load_wait_share=result.load_wait_share,
        p99_is_load_time=result.p99_is_load_time,
        is_stable=result.is_stable,
        meets_target=result.is_stable and result.p99_ms <= workload.p99_target_ms,
        replicas_to_meet=needed,
        usd_per_hour_to_meet=math.inf if needed is None else needed * price,
        pinned_models=result.pinned_models,
        accuracy=result.accuracy,
        note=result.note,
        p99_ms_to_meet=math.nan if at_need is None else at_need.p99_ms,
        accuracy_to_meet="approximate" if at_need is None else at_need.accuracy,
    )


def _best_pinned_count(workload: Workload, inputs: ResidencyInputs) -> int:
    """Of up to ``PINNED_CANDIDATES`` pinned counts that leave room to load any other model,
    the one with the lowest p99 (the fewest on a tie); 0 if none leaves room."""
    sizes = inputs.sizes_gb(workload.models_hosted)
    usable = inputs.usable_memory_gb
    held = np.cumsum(sizes)
    largest_after = np.maximum.accumulate(sizes[::-1])[::-1]  # largest size from model k on
    feasible = [
        count
        for count in range(1, workload.models_hosted)
        if held[count - 1] + largest_after[count] <= usable * (1.0 + 1e-9)
    ]
    if not feasible:
        return 0
    picks = sorted(
        {feasible[round(i)] for i in np.linspace(0, len(feasible) - 1, PINNED_CANDIDATES)}
    )
    scored = [(packed_latency(workload, inputs, count).p99_ms, count) for count in picks]
    return min(scored)[1]


def _packing_stops_paying(
    workload: Workload, inputs: ResidencyInputs, dedicated: Placement, price: float
) -> tuple[float | None, bool]:
    """The smallest model size (of ``CROSSOVER_SIZES_GB``) from which packing with LRU, sized to
    meet the target, costs more than dedicated replicas (or cannot meet it while dedicated can).

    Returns ``(size, False)``, or ``(None, True)`` when packing costs less at every size tried,
    or ``(None, False)`` when neither meets the target at any size. Every model takes the size.
    """
    top = RESIDENCY_BY_NAME["model_size_gb"].maximum
    any_meets = False
    for size in CROSSOVER_SIZES_GB:
        if size > top:
            break
        sized = inputs.with_changes(model_size_gb=size, model_sizes_gb=())
        if size > sized.usable_memory_gb:
            return (size, False) if dedicated.replicas_to_meet is not None else (None, False)
        needed = replicas_to_meet(workload, sized)
        packed_cost = math.inf if needed is None else needed * price
        any_meets = any_meets or needed is not None
        if packed_cost > dedicated.usd_per_hour_to_meet or (
            needed is None and dedicated.replicas_to_meet is not None
        ):
            return size, False
        if needed is None and dedicated.replicas_to_meet is None:
            return None, False
    return None, any_meets


def _placement_infeasible(placement_id: str, note: str) -> Placement:
    return Placement(
        id=placement_id,
        label=PLACEMENT_LABELS[placement_id],
        replicas=0,
        usd_per_hour=math.inf,
        p99_ms=math.inf,
        p99_is_bound=False,
        hit_ratio=0.0,
        load_wait_share=1.0,
        p99_is_load_time=False,
        is_stable=False,
        meets_target=False,
        replicas_to_meet=None,
        usd_per_hour_to_meet=math.inf,
        pinned_models=0,
        accuracy="exact",
        note=note,
    )


def replica_usd_per_hour(workload: Workload, inputs: ResidencyInputs) -> float:
    """One replica-hour on the catalog's accelerator: its price per GPU (the entry's hourly price
    over its GPUs) times the replica's ``gpu_instances_per_replica`` GPUs."""
    hardware = hardware_by_id(inputs.accelerator)
    return hardware.usd_per_hour / hardware.slots * workload.gpu_instances_per_replica


def routed_reason(plan: ResidencyPlan) -> str:
    """Why model-aware routing wins, with its numbers, where it is the recommended placement
    (else ``""``): what sending every model to every replica costs, and what routing changes."""
    if plan.recommended != "model_aware":
        return ""
    workload, inputs = plan.workload, plan.inputs
    routed = plan.placement("model_aware")
    lru = plan.placement("packed_lru")
    dedicated = plan.placement("dedicated")
    needed = workload.with_changes(replicas=routed.replicas_to_meet)
    routing = route_models(needed, inputs)
    counts = routing.holders_per_model
    most = int(np.bincount(routing.holder_replicas, minlength=needed.replicas).max())
    lru_p99 = (
        "and its loads overrun the slots: unstable (∞)"
        if not lru.is_stable
        else f"a p99 of {lru.p99_ms:,.1f} ms"
    )
    dedicated_cost = (
        f"${dedicated.usd_per_hour_to_meet:,.2f}/h ({count(dedicated.replicas_to_meet, 'replica')})"
        if dedicated.replicas_to_meet
        else "dedicated replicas, which cannot meet it"
    )
    return (
        f"Sent to every one of {count(workload.replicas, 'replica')}, all "
        f"{workload.models_hosted:,} "
        f"models compete for {plan.models_fit_per_replica} places in each GPU's memory: packed "
        f"LRU finds the model loaded for {lru.hit_ratio:.1%} of batches, {lru_p99}. Routed by "
        f"model, the hottest model sits on {count(int(counts[0]), 'replica')} and "
        f"{int(np.count_nonzero(counts == 1)):,} of {workload.models_hosted:,} models on one "
        f"each, at most {most} on a replica, all loaded (hit ratio {routed.hit_ratio:.0%}), and "
        "each replica batches only its own models' traffic. That meets the "
        f"{workload.p99_target_ms:g} ms target with "
        f"{count(routed.replicas_to_meet, 'replica')} for "
        f"${routed.usd_per_hour_to_meet:,.2f}/h, against {dedicated_cost} dedicated."
    )
