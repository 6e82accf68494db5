"""p99 of a packed fleet whose replicas keep an LRU cache of models: misses, loads and their wait.

The fleet is ``sdlab_model.queues.fleet``'s: a load balancer spreads requests over ``R`` replicas
(so each replica sees every model, model ``j`` at ``x_j = p_j * rate / R``), and each replica
batches per model on its ``c`` slots. What residency adds, per replica:

1. References. A model is used once per batch: ``beta_j = x_j / b_j`` with the window-limited
   batch ``b_j = min(B, 1 + x_j W)`` (1 without batching).
2. Hits. Che's approximation over those references, in the memory left after the reserve and
   any pinned models (which always hit): ``h_j`` (``sdlab_model.residency.che``).
3. Loads. A miss loads the model on the slot its batch took, ``L_j = overhead + size_j / bw``.
   Batches of the model dispatched while it loads hold their slots until it is done (about
   ``min(beta_j L_j, c - 1)`` of them, each for half the load on average:
   ``blocked_batches``). So the slots spend ``phi = sum_j beta_j (1 - h_j) L_j (1 +
   blocked_j / 2) / c`` of their time on loads. The requests that do not wait for a load see
   the fleet model at the rate the remaining capacity sees: ``rate / (1 - phi)``; at
   ``phi >= 1`` or beyond capacity the fleet is unstable.
4. Who waits for a load. The batch that missed waits all of ``L_j`` (a share ``p_j (1 - h_j)``
   of all requests); requests of that model arriving during the load wait for what is left of
   it, uniform on ``(0, L_j)`` (a share ``p_j (1 - h_j) x_j L_j / b_j``, at most ``p_j`` in all).
5. The p99 solves ``(1 - A) S(t) + sum over waiting requests P(wait + S > t) = 1%``: ``S`` the
   tail of a request that waits for no load (the fleet model's through its p50, p95 and p99,
   or an M/G/c wait for a slot behind the loads where that is longer), ``A`` the share that
   waits. A request that waits for a load still forms its batch, queues for a slot and is
   served, so its tail is ``S`` shifted by its wait. When more than 1% of requests wait for a
   load, the p99 is a load time.

With every model resident (memory for all, or pinned) nothing misses and the result is the fleet
model's, exactly.

Approximations: references per batch are taken as independent (Che's model); a load stalls
only its own slot and those of its model's batches that wait on it, and the wait it causes
other models is folded into the raised rate and the M/G/c wait for a slot (Allen-Cunneen),
which reads high as the slots fill; batch sizes ignore slot saturation.
``scripts/residency_check.py`` measures the p99 against the simulator (``simulate_residency``)
and sets the accuracy flag.

Sources: Che, Tung & Wang (2002) and Fricker, Robert & Roberts (2012) for LRU hit ratios; KServe
ModelMesh (models as an LRU cache across serving pods) and Triton's explicit model control for
the serving pattern; Clockwork (Gujarati et al., OSDI 2020) for loads taking a GPU's time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sdlab_model.latency import Accuracy
from sdlab_model.params import NUMERIC_BY_NAME
from sdlab_model.queues import batching, erlang, queueing
from sdlab_model.residency import che
from sdlab_model.residency.inputs import ResidencyInputs
from sdlab_model.workload import Workload

TAIL = 0.01
"""The p99's tail probability."""

LOAD_TIME_SHARE = 0.01
"""Above this share of requests waiting for a load, the p99 is a load time."""

MAX_VALIDATED_LOAD_SHARE = 0.20
MAX_VALIDATED_SLOT_LOAD = 0.52
"""Above this share of requests waiting for a load, or this busy share of the slots (loads and
the batches waiting on them included), the model is flagged approximate: set on the tuning
grid of ``scripts/residency_check.py --grid tune`` (seed 5, 48 cells), where every cell below
both was within 15% of simulation (the largest error +11%) and errors grew past them (+15% at
0.53 busy with 21% waiting, +21% at 0.74; the model reads high as the slots fill)."""

_MAX_RATE_RPS = NUMERIC_BY_NAME["rate_rps"].maximum


@dataclass(frozen=True)
class ResidencyLatency:
    """One packed design's residency and p99 at one workload.

    ``hit_ratio``: share of batches whose model is resident; ``request_hit_ratio``: share of
    requests whose model is (``sum p_j h_j``); ``load_wait_share``: share of requests that wait
    for a load, their own batch's or one under way. ``utilization``: slot time busy, loads
    included. ``p99_is_load_time``: more than ``LOAD_TIME_SHARE`` of requests wait for a load.
    """

    p99_ms: float
    hit_ratio: float
    request_hit_ratio: float
    load_wait_share: float
    load_ms: float
    loads_per_s: float
    utilization: float
    is_stable: bool
    p99_is_load_time: bool
    pinned_models: int
    models_resident_max: int
    accuracy: Accuracy
    note: str


def packed_latency(
    workload: Workload,
    inputs: ResidencyInputs,
    pinned_models: int = 0,
    usable_gb: float | None = None,
) -> ResidencyLatency:
    """p99 and residency of the packed fleet: every replica an LRU cache, the hottest
    ``pinned_models`` pinned (see the module docstring for the model).

    ``usable_gb`` replaces the memory for weights the inputs give (to ask what memory a target
    needs)."""
    models = workload.models_hosted
    if not 0 <= pinned_models <= models:
        raise ValueError(f"pinned_models={pinned_models!r} is outside [0, {models}]")
    sizes = inputs.sizes_gb(models)
    usable = inputs.usable_memory_gb if usable_gb is None else float(usable_gb)
    pinned_gb = float(sizes[:pinned_models].sum())
    fit = models_that_fit(sizes, usable)
    if sizes.max() > usable or pinned_gb > usable:
        what = (
            f"the {pinned_models} pinned models need {pinned_gb:.3g} GB"
            if pinned_gb > usable
            else f"a {sizes.max():.3g} GB model does not fit"
        )
        return _infeasible(
            pinned_models,
            fit,
            f"{what} in {usable:.3g} GB of usable memory "
            f"({inputs.accelerator_memory_gb:g} GB less a {inputs.activation_reserve_gb:g} GB "
            "reserve): no p99.",
        )
    shares = workload.model_shares
    per_replica_per_ms = workload.rate_rps / 1000.0 / workload.replicas
    rate_j = per_replica_per_ms * shares
    batch_j = window_batch_sizes(workload, rate_j)
    references = rate_j / batch_j
    hits = np.ones(models)
    if pinned_models < models:
        hits[pinned_models:] = che.hit_ratios(
            references[pinned_models:], sizes[pinned_models:], usable - pinned_gb
        )
    misses = 1.0 - hits
    if not np.any(misses > 0.0):
        base = queueing.latency(workload)
        return ResidencyLatency(
            p99_ms=base.p99_ms,
            hit_ratio=1.0,
            request_hit_ratio=1.0,
            load_wait_share=0.0,
            load_ms=0.0,
            loads_per_s=0.0,
            utilization=base.utilization,
            is_stable=base.is_stable,
            p99_is_load_time=False,
            pinned_models=pinned_models,
            models_resident_max=fit,
            accuracy=base.accuracy,
            note="Every model stays resident: no loads, the fleet model's p99 as it is.",
        )
    load_ms = inputs.load_ms(sizes)
    miss_per_ms = references * misses
    slots = workload.slots_per_replica
    blocked = blocked_batches(references, load_ms, slots)
    load_busy = float(np.sum(miss_per_ms * load_ms * (1.0 + 0.5 * blocked))) / slots
    hit_ratio = float(np.sum(references * hits) / references.sum())
    request_hit = float(np.sum(shares * hits))
    loads_per_s = float(miss_per_ms.sum()) * 1000.0 * workload.replicas
    mean_load = float(np.sum(miss_per_ms * load_ms) / miss_per_ms.sum())
    whole_load = shares * misses
    partial_load = np.minimum(shares - whole_load, whole_load * rate_j * load_ms / batch_j)
    waiting = float(np.sum(whole_load + partial_load))
    effective_rps = workload.rate_rps / (1.0 - load_busy) if load_busy < 1.0 else math.inf
    common = dict(
        hit_ratio=hit_ratio,
        request_hit_ratio=request_hit,
        load_wait_share=waiting,
        load_ms=mean_load,
        loads_per_s=loads_per_s,
        p99_is_load_time=waiting > LOAD_TIME_SHARE,
        pinned_models=pinned_models,
        models_resident_max=fit,
    )
    waits, mean_wait, slot_load = _slot_wait_tail(
        workload, references, batch_j, miss_per_ms, load_ms, blocked
    )
    if effective_rps >= workload.capacity_rps or slot_load >= 1.0:
        return ResidencyLatency(
            p99_ms=math.inf,
            utilization=max(slot_load, 1.0),
            is_stable=False,
            accuracy="approximate",
            note=(
                (
                    f"Loads alone would need {load_busy:,.1f} times the slots' time"
                    if load_busy >= 1.0
                    else f"Loads take {load_busy:.0%} of the slots' time and the requests "
                    "need the rest and more"
                )
                + ": the queue grows without bound."
            ),
            **common,
        )
    hit_part, fleet_accuracy, in_range = _fleet_quantiles(workload, effective_rps)
    p99 = _mixture_p99(hit_part, (waits, mean_wait), whole_load, partial_load, load_ms, waiting)
    note = (
        f"{waiting:.1%} of requests wait for a model to load ({mean_load:,.0f} ms a load on "
        f"average); loads and the batches waiting on them take {load_busy:.1%} of the slots' "
        "time."
    )
    checked = (
        in_range
        and waiting <= MAX_VALIDATED_LOAD_SHARE
        and slot_load <= MAX_VALIDATED_SLOT_LOAD
        and _checked_fleet(workload)
    )
    if not checked:
        accuracy: Accuracy = "approximate"
        note += " Outside the range where the residency model was checked against simulation."
    elif waiting > LOAD_TIME_SHARE:
        # The p99 is a load time: the residency check, not the fleet model's own, says how good.
        accuracy = "validated"
    else:
        accuracy = "validated" if fleet_accuracy == "exact" else fleet_accuracy
    return ResidencyLatency(
        p99_ms=p99,
        utilization=slot_load,
        is_stable=True,
        accuracy=accuracy,
        note=note,
        **common,
    )


def window_batch_sizes(workload: Workload, rate_per_ms: np.ndarray) -> np.ndarray:
    """Each model's window-limited batch size, ``min(B, 1 + x_j W)`` (1 without batching).

    Triton's rule: a batch holds its first request and those arriving within the window.
    """
    if workload.effective_max_batch_size == 1:
        return np.ones_like(rate_per_ms)
    window = float(workload.batch_window_ms)
    return np.minimum(float(workload.effective_max_batch_size), 1.0 + rate_per_ms * window)


def models_that_fit(sizes_gb: np.ndarray, usable_gb: float) -> int:
    """How many models, most popular first, fit in ``usable_gb`` together."""
    held = np.cumsum(sizes_gb)
    return int(np.count_nonzero(held <= usable_gb * (1.0 + 1e-9)))


def _fleet_quantiles(
    workload: Workload, rate_rps: float
) -> tuple[tuple[float, float, float], Accuracy, bool]:
    """The fleet model's p50, p95, p99 at ``rate_rps`` and its accuracy; False where that rate
    is past the lab's input range (then the nearest rate in range is used, flagged by the
    caller)."""
    in_range = rate_rps <= _MAX_RATE_RPS
    shifted = queueing.latency(workload.with_changes(rate_rps=min(rate_rps, _MAX_RATE_RPS)))
    p50 = shifted.p50_ms if shifted.p50_ms is not None else shifted.p99_ms
    p95 = shifted.p95_ms if shifted.p95_ms is not None else shifted.p99_ms
    return (p50, p95, shifted.p99_ms), shifted.accuracy, in_range


def _checked_fleet(workload: Workload) -> bool:
    """Whether the fleet is of the kind ``scripts/residency_check.py`` simulates: Poisson
    arrivals, a round-robin or random balancer and at least ``MIN_ACCURATE_SERVERS`` slots
    a replica (the fleet model's other limits, bursty replicas and least request, stay
    flagged)."""
    return (
        workload.arrival_cv == 1.0
        and workload.lb_policy in ("round_robin", "random")
        and workload.slots_per_replica >= batching.MIN_ACCURATE_SERVERS
    )


def blocked_batches(references: np.ndarray, load_ms: np.ndarray, slots: int) -> np.ndarray:
    """Batches of a model dispatched while it loads, per load: ``min(beta_j L_j, c - 1)``.

    A batch of a model that is still loading takes a slot and holds it until the load ends
    (as ModelMesh and Triton queue a request for a loading model on its instance; the
    simulator does the same). Its references keep coming at ``beta_j`` during the ``L_j`` of
    the load, at most one per other slot. Each holds its slot for what is left of the load,
    ``L_j / 2`` on average, so a load costs the slots ``L_j (1 + blocked_j / 2)`` in all.
    """
    return np.minimum(references * load_ms, max(slots - 1, 0))


def _slot_wait_tail(
    workload: Workload,
    references: np.ndarray,
    batch: np.ndarray,
    miss_per_ms: np.ndarray,
    load_ms: np.ndarray,
    blocked: np.ndarray,
) -> tuple[float, float, float]:
    """The wait for a free slot when some batches carry a load: ``P(W > t) = P_wait e^(-t/m)``.

    An M/G/c view of one replica's slots: batches arrive at ``sum beta_j`` per ms and take
    ``S(b_j)``, plus ``L_j`` for those that miss. ``P_wait`` is Erlang C at the slots' load;
    the mean wait of those who wait is ``E[S] / (c (1 - u)) * (1 + cs^2) / 2`` (the M/M/c mean
    scaled by the Allen-Cunneen factor, ``cs^2`` the service's squared CV). Returns
    ``(P_wait, m, u)``, ``u`` the slots' utilization, loads included.
    Sources: Allen, *Probability, Statistics and Queueing Theory* (1990), the Allen-Cunneen
    approximation; Erlang C as in ``sdlab_model.queues.erlang``.
    """
    slots = workload.slots_per_replica
    service = workload.batch_service_ms(batch)
    total = float(references.sum())
    # A batch that loads adds L; one dispatched during a load adds what is left, U ~ (0, L).
    waiting_batches = miss_per_ms * blocked
    first = (
        float(np.sum(references * service))
        + float(np.sum(miss_per_ms * load_ms))
        + float(np.sum(waiting_batches * load_ms / 2.0))
    ) / total
    second = (
        float(np.sum(references * service**2))
        + float(np.sum(miss_per_ms * (load_ms**2 + 2.0 * load_ms * service)))
        + float(np.sum(waiting_batches * (load_ms**2 / 3.0 + load_ms * service)))
    ) / total
    utilization = total * first / slots
    if utilization >= 1.0:
        return 1.0, math.inf, utilization
    waits = erlang.erlang_c(slots, slots * utilization)
    scv = max(0.0, second / first**2 - 1.0)
    mean = first / (slots * (1.0 - utilization)) * (1.0 + scv) / 2.0
    return waits, mean, utilization


_PARTIAL_POINTS = 8
"""Midpoints that average a request's tail over the uniform rest of a load under way."""


def _mixture_p99(
    hit_part: tuple[float, float, float],
    slot_wait: tuple[float, float],
    whole_load: np.ndarray,
    partial_load: np.ndarray,
    load_ms: np.ndarray,
    waiting: float,
) -> float:
    """Solve ``(1 - A) S(t) + sum_j [whole_j H(t - L_j) + partial_j E H(t - U_j)] = TAIL`` for
    ``t`` by bisection (the left side falls as ``t`` grows).

    ``S``: the tail of a request that waits for no load, the fleet model's through its p50,
    p95 and p99 (log-linear between them, exponential past the p99), or the wait for a slot
    behind loads if that is longer. ``H``: the same fleet tail, shifted by the load a request
    waits for (its whole batch's ``L_j``, or what is left, ``U_j ~ Uniform(0, L_j)``, of one
    under way): it still forms its batch, may queue for a slot and is served after the load.
    """
    p50, p95, p99 = hit_part
    decay = max((p99 - p95) / math.log(0.05 / TAIL), 1e-6 * max(p99, 1.0))
    knots_ms = np.array([p50, max(p95, p50 + 1e-9), max(p99, p95 + 1e-9, p50 + 2e-9)])
    knots_log = np.log([0.5, 0.05, TAIL])
    waits, mean_wait = slot_wait
    keep = (whole_load > 0.0) | (partial_load > 0.0)
    # Models with the same load time shift the tail alike, so their weights add up: one term per
    # distinct load time (one in all when every model has one size), not one per model.
    loads, group = np.unique(load_ms[keep], return_inverse=True)
    whole = np.bincount(group, weights=whole_load[keep], minlength=loads.size)
    partial = np.bincount(group, weights=partial_load[keep], minlength=loads.size)
    fractions = (np.arange(_PARTIAL_POINTS) + 0.5) / _PARTIAL_POINTS
    rests = loads[:, None] * fractions[None, :]

    def fleet_tail(t):
        t = np.asarray(t, dtype=float)
        below = knots_log[0] + (t - knots_ms[0]) * (knots_log[1] - knots_log[0]) / (
            knots_ms[1] - knots_ms[0]
        )
        inside = np.interp(t, knots_ms, knots_log)
        past = knots_log[2] - (t - knots_ms[2]) / decay
        log_tail = np.where(t < knots_ms[0], below, np.where(t > knots_ms[2], past, inside))
        if waits > 0.0:
            slot_log = math.log(waits) - np.maximum(t - p50, 0.0) / mean_wait
            log_tail = np.maximum(log_tail, np.where(t > p50, slot_log, -np.inf))
        return np.exp(np.minimum(log_tail, 0.0))

    offsets = np.concatenate(([0.0], loads, rests.ravel()))
    count = loads.size

    def tail(t: float) -> float:
        # One call of fleet_tail for the plain, whole-load and partial-load terms together.
        values = fleet_tail(t - offsets)
        plain = float(values[0])
        shifted = float(np.sum(whole * values[1 : 1 + count]))
        rest = float(np.sum(partial * values[1 + count :].reshape(count, -1).mean(axis=1)))
        return (1.0 - waiting) * plain + shifted + rest

    low = p50
    high = max(p99 + float(load_ms.max()), p99) + 50.0 * decay
    if waits > 0.0:
        high += mean_wait * max(0.0, math.log(waits / (0.1 * TAIL)))
    if tail(low) <= TAIL:
        return low
    for _ in range(100):
        middle = 0.5 * (low + high)
        if tail(middle) > TAIL:
            low = middle
        else:
            high = middle
        if high - low < 1e-7 * high:
            break
    return high


def _infeasible(pinned_models: int, fit: int, note: str) -> ResidencyLatency:
    return ResidencyLatency(
        p99_ms=math.inf,
        hit_ratio=0.0,
        request_hit_ratio=0.0,
        load_wait_share=1.0,
        load_ms=math.inf,
        loads_per_s=math.inf,
        utilization=math.inf,
        is_stable=False,
        p99_is_load_time=False,
        pinned_models=pinned_models,
        models_resident_max=fit,
        accuracy="exact",
        note=note,
    )
