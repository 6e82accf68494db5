"""Advice from the numbers: the cheapest design that meets the target, the levers, what breaks.

Everything here is computed with the analytic queueing model (``sdlab_model.queues.queueing``) for
the load-balancer policy the person chose; nothing is a threshold rule.

- ``advise``: search hardware x batching on/off x batch window x max batch x replicas for the
  cheapest design whose p99 meets the target with capacity headroom (utilization at most
  ``1 - HEADROOM``), plus the runners-up and the cost-p99 Pareto frontier.
- ``levers``: every single change to the current design, with its change in p99 and in cost.
- ``breaking_points``: for each workload input, the factor at which the target is first missed or
  the queue becomes unstable.

A design is judged by ``queueing.latency`` (the same numbers ``evaluate`` shows); the replica
sweep uses ``p99_grid`` (within 1% of it) to find the candidates, and the final pick in each
configuration is checked with ``latency``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from sdlab_model.advice.cost import FleetCost, fleet_cost
from sdlab_model.params import (
    CHOICE_BY_NAME,
    NUMERIC_BY_NAME,
    SAFE_UTILIZATION,
)
from sdlab_model.queues import queueing
from sdlab_model.workload import Workload

HEADROOM = 1.0 - SAFE_UTILIZATION
"""Capacity headroom a recommended design keeps: utilization at most 75% (25% spare), the same
safe-capacity line the lab's meters use, so a design survives a burst or a lost replica."""

WINDOWS_MS: tuple[float, ...] = (1.0, 2.0, 5.0, 10.0, 20.0)
MAX_BATCH_SIZES: tuple[int, ...] = (4, 8, 16, 32, 64, 128)
_GRID_SLACK = 0.02  # the grid is within 1% of latency(); look this far past the target
_REPLICA_LIMIT = int(NUMERIC_BY_NAME["replicas"].maximum)


@dataclass(frozen=True)
class HardwareOption:
    """One kind of replica to buy: what it changes in the workload and what it costs an hour."""

    id: str
    name: str
    usd_per_hour: float
    changes: tuple[tuple[str, float | int | bool], ...]
    price_note: str = ""

    def apply(self, workload: Workload) -> Workload:
        return workload.with_changes(**dict(self.changes))


@dataclass(frozen=True)
class Design:
    """One candidate design, judged by the analytic model at the workload's rate."""

    hardware: HardwareOption
    workload: Workload
    p99_ms: float
    utilization: float
    accuracy: str
    simulated_p99_ms: float | None = None

    @property
    def cost(self) -> FleetCost:
        return fleet_cost(
            self.workload.replicas, self.hardware.usd_per_hour, self.workload.rate_rps
        )

    @property
    def meets_target(self) -> bool:
        return math.isfinite(self.p99_ms) and self.p99_ms <= self.workload.p99_target_ms

    @property
    def has_headroom(self) -> bool:
        return self.utilization <= 1.0 - HEADROOM

    @property
    def batching_text(self) -> str:
        w = self.workload
        if not w.dynamic_batching:
            return "no batching"
        return f"batching ≤{w.max_batch_size} in {w.batch_window_ms:g} ms"

    @property
    def label(self) -> str:
        return f"{self.workload.replicas} × {self.hardware.name}, {self.batching_text}"


@dataclass(frozen=True)
class Advice:
    """The result of ``advise``: the cheapest design meeting the target (or None), and more."""

    best: Design | None
    runners_up: tuple[Design, ...]
    frontier: tuple[Design, ...]
    current: Design
    configurations_searched: int
    headroom: float = HEADROOM


@dataclass(frozen=True)
class Lever:
    """One single change to the current design and what it does."""

    label: str
    workload: Workload
    hardware: HardwareOption
    p99_ms: float
    delta_p99_ms: float
    usd_per_hour: float
    delta_usd_per_hour: float
    meets_target: bool


@dataclass(frozen=True)
class BreakingPoint:
    """How far one input can move before the target is missed or the queue is unstable."""

    input: str
    factor: float | None
    breaks_as: str
    text: str


def price_per_replica_hour(workload: Workload) -> float:
    """The workload's own price of one replica-hour (its CPU or GPU price input)."""
    return workload.gpu_usd_per_replica_hour if workload.gpu else workload.cpu_usd_per_replica_hour


def workload_cost(workload: Workload) -> FleetCost:
    """The fleet's cost at the workload's own prices."""
    return fleet_cost(workload.replicas, price_per_replica_hour(workload), workload.rate_rps)


def current_hardware(workload: Workload) -> HardwareOption:
    """The workload's own replica kind as a hardware option (priced by its price inputs)."""
    if workload.gpu:
        return HardwareOption(
            "current-gpu",
            f"GPU replica ({workload.gpu_instances_per_replica} instances)",
            workload.gpu_usd_per_replica_hour,
            (("gpu", True),),
        )
    return HardwareOption(
        "current-cpu",
        f"CPU replica ({workload.cpu_workers_per_replica} workers)",
        workload.cpu_usd_per_replica_hour,
        (("gpu", False),),
    )


def hardware_options(workload: Workload) -> tuple[HardwareOption, ...]:
    """The replica kinds ``advise`` compares: the workload's CPU and GPU replicas as set."""
    return (
        current_hardware(workload.with_changes(gpu=False)),
        current_hardware(workload.with_changes(gpu=True)),
    )


def _judge(hardware: HardwareOption, workload: Workload) -> Design:
    result = queueing.latency(workload)
    return Design(hardware, workload, result.p99_ms, result.utilization, result.accuracy)


def _configurations(workload: Workload, options, windows_ms, max_batch_sizes):
    for hardware in options:
        base = hardware.apply(workload)
        yield hardware, base.with_changes(dynamic_batching=False)
        for window in windows_ms:
            for size in max_batch_sizes:
                yield (
                    hardware,
                    base.with_changes(
                        dynamic_batching=True, batch_window_ms=window, max_batch_size=size
                    ),
                )


def _sweep(base: Workload, max_replicas: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Replica counts 1..max with the grid p99 and utilization of each, at the base's rate."""
    counts = np.arange(1, max_replicas + 1, dtype=float)
    p99 = queueing.p99_grid(base, np.array([base.rate_rps]), counts)[:, 0]
    per_replica = base.capacity_rps / base.replicas
    utilization = base.rate_rps / (per_replica * counts)
    return counts, p99, utilization


def _cheapest_in(hardware: HardwareOption, base: Workload, counts, p99, utilization):
    """The fewest replicas of one configuration that meet the target with headroom, judged by
    ``latency`` among the counts the grid puts within ``_GRID_SLACK`` of the target."""
    target = base.p99_target_ms
    near = np.flatnonzero((p99 <= target * (1 + _GRID_SLACK)) & (utilization <= 1.0 - HEADROOM))
    for index in near[:8]:
        design = _judge(hardware, base.with_changes(replicas=int(counts[index])))
        if design.meets_target and design.has_headroom:
            return design
    return None


def advise(
    workload: Workload,
    options: Sequence[HardwareOption] | None = None,
    windows_ms: Sequence[float] = WINDOWS_MS,
    max_batch_sizes: Sequence[int] = MAX_BATCH_SIZES,
    max_replicas: int = _REPLICA_LIMIT,
    simulate_p99: Callable[[Workload], float] | None = None,
    max_simulations: int = 12,
) -> Advice:
    """The cheapest design meeting ``workload``'s p99 target with ``HEADROOM``, and the frontier.

    The rate, model, models hosted, popularity, arrival CV, target and LB policy stay the
    workload's; the search varies the replica kind (``options``), batching on or off, the window
    (``windows_ms``), the max batch (``max_batch_sizes``) and the replica count (1 to
    ``max_replicas``). Ties in cost go to the lower p99.

    With ``simulate_p99`` (a workload's simulated p99), a candidate the model marks approximate
    must also meet the target in simulation: candidates are tried cheapest first, and one that
    fails is tried again with a quarter more replicas, up to ``max_simulations`` simulations;
    then only designs the model is sure of (exact or validated) are taken. ``Design.simulated``
    holds the simulated p99 of the design returned, where one was run.
    """
    options = tuple(options) if options is not None else hardware_options(workload)
    candidates: list[Design] = []
    points: list[tuple[float, float, HardwareOption, Workload, float]] = []
    searched = 0
    for hardware, base in _configurations(workload, options, windows_ms, max_batch_sizes):
        searched += 1
        counts, p99, utilization = _sweep(base, max_replicas)
        usable = np.isfinite(p99) & (utilization <= 1.0 - HEADROOM)
        for index in np.flatnonzero(usable):
            cost = counts[index] * hardware.usd_per_hour
            points.append((cost, float(p99[index]), hardware, base, float(counts[index])))
        design = _cheapest_in(hardware, base, counts, p99, utilization)
        if design is not None:
            candidates.append(design)
    if simulate_p99 is not None:
        candidates = _confirmed(candidates, simulate_p99, max_simulations, max_replicas)
    best_per_group: dict[tuple[str, bool], Design] = {}
    for design in candidates:
        group = (design.hardware.id, design.workload.dynamic_batching)
        known = best_per_group.get(group)
        if known is None or _rank(design) < _rank(known):
            best_per_group[group] = design
    ranked = sorted(best_per_group.values(), key=_rank)
    current = _judge(_matching_option(workload, options), workload)
    return Advice(
        best=ranked[0] if ranked else None,
        runners_up=tuple(ranked[1:5]),
        frontier=_frontier(points),
        current=current,
        configurations_searched=searched,
    )


def _confirmed(candidates, simulate_p99, max_simulations, max_replicas) -> list[Design]:
    """Candidates the model is sure of, plus approximate ones a simulation confirmed, in cost
    order; a failed one is retried with a quarter more replicas while simulations remain."""
    queue = sorted(candidates, key=_rank)
    kept: list[Design] = []
    simulations = 0
    while queue:
        design = queue.pop(0)
        if design.accuracy != "approximate":
            kept.append(design)
            continue
        if simulations >= max_simulations:
            continue
        simulations += 1
        simulated = simulate_p99(design.workload)
        if simulated <= design.workload.p99_target_ms:
            kept.append(replace(design, simulated_p99_ms=simulated))
            continue
        more = math.ceil(design.workload.replicas * 1.25)
        if more <= max_replicas:
            retry = _judge(design.hardware, design.workload.with_changes(replicas=more))
            if retry.meets_target and retry.has_headroom:
                queue.append(retry)
                queue.sort(key=_rank)
    return kept


def _rank(design: Design) -> tuple[float, float]:
    return (design.cost.usd_per_hour, design.p99_ms)


def _matching_option(workload: Workload, options: Sequence[HardwareOption]) -> HardwareOption:
    for option in options:
        if option.apply(workload) == workload:
            return option
    return current_hardware(workload)


def _frontier(points) -> tuple[Design, ...]:
    """The cost-p99 Pareto frontier: no other point is as cheap and at least as fast (and
    strictly better in one). Sorted by cost."""
    points.sort(key=lambda point: (point[0], point[1]))
    frontier = []
    best_p99 = math.inf
    for _cost, p99, hardware, base, count in points:
        if p99 < best_p99:
            best_p99 = p99
            workload = base.with_changes(replicas=int(count))
            utilization = base.rate_rps / (base.capacity_rps / base.replicas * count)
            frontier.append(Design(hardware, workload, p99, utilization, "grid"))
    return tuple(frontier)


# --- levers ---------------------------------------------------------------------------------


def _lever_changes(workload: Workload) -> list[tuple[str, dict]]:
    changes: list[tuple[str, dict]] = []
    if workload.dynamic_batching:
        changes.append(("Turn batching off", {"dynamic_batching": False}))
        window = workload.batch_window_ms
        if window > 0:
            changes.append(
                (f"Halve the window to {window / 2:g} ms", {"batch_window_ms": window / 2})
            )
        if window * 2 <= NUMERIC_BY_NAME["batch_window_ms"].maximum:
            changes.append(
                (f"Double the window to {window * 2:g} ms", {"batch_window_ms": window * 2})
            )
        size = workload.max_batch_size
        if size >= 2:
            changes.append((f"Max batch {size // 2}", {"max_batch_size": size // 2}))
        if size * 2 <= NUMERIC_BY_NAME["max_batch_size"].maximum:
            changes.append((f"Max batch {size * 2}", {"max_batch_size": size * 2}))
    else:
        changes.append(("Turn batching on", {"dynamic_batching": True}))
    changes.append(
        (
            "Move to GPU replicas" if not workload.gpu else "Move to CPU replicas",
            {"gpu": not workload.gpu},
        )
    )
    replicas = workload.replicas
    for label, count in (
        ("One replica fewer", replicas - 1),
        ("One replica more", replicas + 1),
        ("A quarter fewer replicas", math.floor(replicas * 0.75)),
        ("Half again as many replicas", math.ceil(replicas * 1.5)),
    ):
        if 1 <= count <= _REPLICA_LIMIT and count != replicas:
            changes.append((f"{label} ({count})", {"replicas": count}))
    policy = CHOICE_BY_NAME["lb_policy"]
    for choice in policy.choices:
        if choice != workload.lb_policy:
            changes.append((f"Load balancer: {policy.label_of(choice)}", {"lb_policy": choice}))
    return changes


def levers(workload: Workload) -> tuple[Lever, ...]:
    """Every single change to the current design, with its p99 and cost beside the current ones.

    Sorted: changes that meet the target first (cheapest first), then the rest by p99.
    """
    now = queueing.latency(workload)
    now_cost = workload_cost(workload).usd_per_hour
    out = []
    seen = set()
    for label, change in _lever_changes(workload):
        changed = workload.with_changes(**change)
        if changed in seen:  # e.g. "one fewer" and "a quarter fewer" of two replicas
            continue
        seen.add(changed)
        result = queueing.latency(changed)
        cost = workload_cost(changed).usd_per_hour
        out.append(
            Lever(
                label=label,
                workload=changed,
                hardware=current_hardware(changed),
                p99_ms=result.p99_ms,
                delta_p99_ms=result.p99_ms - now.p99_ms,
                usd_per_hour=cost,
                delta_usd_per_hour=cost - now_cost,
                meets_target=result.is_stable and result.p99_ms <= workload.p99_target_ms,
            )
        )
    out.sort(
        key=lambda lever: (
            not lever.meets_target,
            lever.usd_per_hour if lever.meets_target else lever.p99_ms,
        )
    )
    return tuple(out)


# --- what breaks first ----------------------------------------------------------------------


def _breaks(workload: Workload) -> str | None:
    result = queueing.latency(workload)
    if not result.is_stable:
        return "unstable"
    if result.p99_ms > workload.p99_target_ms:
        return "over target"
    return None


def _scale_until_break(workload: Workload, field: str, integer: bool = False) -> BreakingPoint:
    spec = NUMERIC_BY_NAME[field]
    start = float(getattr(workload, field))
    label = spec.label
    if _breaks(workload):
        return BreakingPoint(label, 1.0, _breaks(workload) or "", f"{label}: already broken now")
    limit = spec.maximum / start

    def at(factor: float) -> Workload:
        value = start * factor
        return workload.with_changes(**{field: round(value) if integer else value})

    lo, hi = 1.0, 2.0
    while hi < limit and _breaks(at(hi)) is None:
        lo, hi = hi, hi * 2.0
    if hi >= limit:
        hi = limit
        if _breaks(at(hi)) is None:
            return BreakingPoint(
                label,
                None,
                "",
                f"{label}: holds up to its maximum ({spec.maximum:g}, ×{limit:.3g})",
            )
    for _ in range(30):
        mid = math.sqrt(lo * hi)
        if _breaks(at(mid)) is None:
            lo = mid
        else:
            hi = mid
        if hi / lo < 1.005:
            break
    how = _breaks(at(hi)) or ""
    return BreakingPoint(label, hi, how, f"{label} ×{hi:.2f} ({how})")


def breaking_points(workload: Workload) -> tuple[BreakingPoint, ...]:
    """For rate, model latency, models hosted and target (and one replica lost): the factor at
    which the target is first missed or the queue becomes unstable (``None``: never in range).

    For the target the factor is how far it can shrink (the p99 is already known)."""
    points = [
        _scale_until_break(workload, "rate_rps"),
        _scale_until_break(workload, "model_latency_ms"),
        _scale_until_break(workload, "models_hosted", integer=True),
    ]
    result = queueing.latency(workload)
    target = workload.p99_target_ms
    if result.is_stable and result.p99_ms <= target:
        shrink = target / result.p99_ms
        points.append(
            BreakingPoint(
                "p99 target", 1.0 / shrink, "over target", f"p99 target ÷{shrink:.2f} (over target)"
            )
        )
    else:
        points.append(BreakingPoint("p99 target", 1.0, "over target", "p99 target: already missed"))
    if workload.replicas > 1:
        lost = workload.with_changes(replicas=workload.replicas - 1)
        how = _breaks(lost)
        text = "One replica lost: " + (how if how else "still meets the target")
        points.append(
            BreakingPoint("one replica lost", None if how is None else 1.0, how or "", text)
        )
    return tuple(points)
