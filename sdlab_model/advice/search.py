"""Advice from the numbers: the cheapest design that meets the target, the levers, what breaks.

Every verdict is the one judgement the Lab shows (``sdlab_model.assessment.judged_p99_ms``: the
queueing model where it is trusted, a simulation where it says it is approximate), for the
load-balancer policy the person chose; nothing is a threshold rule. The model's grid only orders
the search and draws the cost-p99 frontier.

- ``advise``: search hardware x batching on/off x batch window x max batch x replicas for the
  cheapest design the judge passes with capacity headroom (utilization at most ``1 - HEADROOM``),
  plus the cost-p99 Pareto frontier of the model.
- ``levers``: every single change to the current design, with its judged p99 and its cost.
- ``comparisons``: idealized policies no server runs (the central queue), for comparison only.
- ``breaking_points``: for each workload input, the factor at which the judge first says the
  target is missed or the queue is unstable.

Simulations are budgeted (``MAX_SIMULATIONS``, ``LEVER_SIMULATIONS``, ``BREAKING_SIMULATIONS``);
a result says when its budget ran out, and no design is recommended that the judge did not pass.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sdlab_model.advice.cost import FleetCost, fleet_cost
from sdlab_model.advice.hardware import HardwareType
from sdlab_model.assessment import design_simulation, judged_p99_ms, latency, needs_simulation
from sdlab_model.params import (
    CHOICE_BY_NAME,
    DEFAULT_LB_POLICY,
    NUMERIC_BY_NAME,
    SAFE_UTILIZATION,
    TOGGLE_BY_NAME,
)
from sdlab_model.queues import queueing
from sdlab_model.simulation.converged import ConvergedSim
from sdlab_model.workload import Workload

HEADROOM = 1.0 - SAFE_UTILIZATION
"""Capacity headroom a recommended design keeps: utilization at most 75% (25% spare), the same
safe-capacity line the lab's meters use, so a design survives a burst or a lost replica."""

WINDOWS_MS: tuple[float, ...] = (1.0, 2.0, 5.0, 10.0, 20.0)
MAX_BATCH_SIZES: tuple[int, ...] = (4, 8, 16, 32, 64, 128)
_GRID_SLACK = 0.02  # the grid is within 1% of latency(); start this far past the target
_REPLICA_LIMIT = int(NUMERIC_BY_NAME["replicas"].maximum)

MAX_SIMULATIONS = 80
"""Design simulations one ``advise`` may run (the judge's, one design each). An exact answer
costs about one per configuration the model is approximate on (62 configurations in the default
space) plus a bisection in the cheapest; past the budget the search says how many configurations
it could not settle."""
LEVER_SIMULATIONS = 16
"""Simulations ``levers`` may run; a lever past them shows the model's p99, marked approximate."""
BREAKING_SIMULATIONS = 32
"""Simulations ``breaking_points`` may run; past them a point is the model's, marked so."""
_BREAK_PRECISION = 1.01  # a breaking factor is bracketed to within 1%

IDEALIZED_POLICIES: tuple[str, ...] = ("central_queue",)
"""Policies no real server runs: compared with, never offered as a lever or recommended."""


class _Judge:
    """The judge's p99 of designs, running at most ``max_simulations`` new simulations."""

    def __init__(self, max_simulations: int) -> None:
        self.max_simulations = max_simulations
        self.simulations = 0
        self._p99_ms: dict[Workload, float] = {}

    def p99_ms(self, workload: Workload) -> float | None:
        """The judged p99 (inf if unstable), or None where it needs a simulation past the budget."""
        if workload not in self._p99_ms:
            if needs_simulation(workload):
                if self.simulations >= self.max_simulations:
                    return None
                self.simulations += 1
            self._p99_ms[workload] = judged_p99_ms(workload)
        return self._p99_ms[workload]

    def meets(self, workload: Workload) -> bool | None:
        """Whether the judged p99 meets the target, or None past the budget."""
        p99 = self.p99_ms(workload)
        return None if p99 is None else p99 <= workload.p99_target_ms


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
    """One design at the workload's rate: its p99 (the judge's, or the model's grid on the
    frontier), utilization, the model's accuracy there, and the simulation the p99 is from."""

    hardware: HardwareOption
    workload: Workload
    p99_ms: float
    utilization: float
    accuracy: str
    simulation: ConvergedSim | None = None

    @property
    def cost(self) -> FleetCost:
        return fleet_cost(
            self.workload.replicas, self.hardware.usd_per_hour, self.workload.rate_rps
        )

    @property
    def is_simulated(self) -> bool:
        return self.simulation is not None

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
    """The result of ``advise``: the cheapest design the judge passes (or None), and more.

    ``complete`` is False when the simulation budget ran out before every configuration was
    settled: ``unsettled`` of them might still hold a cheaper design (``best`` is then the
    cheapest the judge passed among the rest)."""

    best: Design | None
    frontier: tuple[Design, ...]
    current: Design
    configurations_searched: int
    lb_policy: str
    simulations: int
    complete: bool
    unsettled: int
    headroom: float = HEADROOM


@dataclass(frozen=True)
class Lever:
    """One single change to the current design and what it does.

    ``is_judged`` is False where the judge would have simulated past ``LEVER_SIMULATIONS``: the
    p99 is then the queueing model's (approximate there) and ``meets_target`` is None."""

    label: str
    workload: Workload
    hardware: HardwareOption
    p99_ms: float
    delta_p99_ms: float
    usd_per_hour: float
    delta_usd_per_hour: float
    meets_target: bool | None
    is_judged: bool = True


@dataclass(frozen=True)
class Comparison:
    """An idealized policy beside the current design: what the model says, for comparison."""

    label: str
    workload: Workload
    p99_ms: float
    note: str


@dataclass(frozen=True)
class BreakingPoint:
    """How far one input can move before the target is missed or the queue is unstable.

    ``is_judged`` is False where the simulation budget ran out and the model decided."""

    input: str
    factor: float | None
    breaks_as: str
    text: str
    is_judged: bool = True


def price_per_replica_hour(workload: Workload) -> float:
    """The workload's own price of one replica-hour (its CPU or GPU price input)."""
    return workload.gpu_usd_per_replica_hour if workload.gpu else workload.cpu_usd_per_replica_hour


def workload_cost(workload: Workload) -> FleetCost:
    """The fleet's cost at the workload's own prices."""
    return fleet_cost(workload.replicas, price_per_replica_hour(workload), workload.rate_rps)


def replica_of(workload: Workload, hardware: HardwareType) -> tuple[int, float]:
    """How many ``hardware`` instances make one of the workload's replicas of that kind (as many
    as give it about the slots it has now), and that replica's price per hour: one way to price
    a replica, the Lab's and the catalog's alike."""
    gpu = hardware.kind == "gpu"
    slots = workload.gpu_instances_per_replica if gpu else workload.cpu_workers_per_replica
    count = hardware.instances_for(slots)
    return count, count * hardware.usd_per_hour


def priced_as(workload: Workload, hardware: HardwareType) -> Workload:
    """``workload`` with its replicas built from ``hardware`` (``replica_of``): the kind, the
    price and the slots of a replica of that many instances."""
    count, usd_per_hour = replica_of(workload, hardware)
    if hardware.kind == "gpu":
        return workload.with_changes(
            gpu=True,
            gpu_usd_per_replica_hour=usd_per_hour,
            gpu_instances_per_replica=count * hardware.slots,
        )
    return workload.with_changes(
        gpu=False,
        cpu_usd_per_replica_hour=usd_per_hour,
        cpu_workers_per_replica=count * hardware.slots,
    )


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


def _search_policy(workload: Workload) -> Workload:
    """The workload with a policy a real server runs: the default where it is idealized."""
    if workload.lb_policy in IDEALIZED_POLICIES:
        return workload.with_changes(lb_policy=DEFAULT_LB_POLICY)
    return workload


# Inputs the search varies, at the values a search key holds instead.
_SEARCHED = ("replicas", "gpu", "dynamic_batching", "batch_window_ms", "max_batch_size")


def search_key(workload: Workload) -> Workload:
    """``workload`` with the inputs ``advise`` varies at their defaults: every design of the
    same traffic, target and prices gets the same search (only ``Advice.current`` differs)."""
    defaults = {
        name: NUMERIC_BY_NAME[name].default for name in _SEARCHED if name in NUMERIC_BY_NAME
    }
    defaults.update(
        {name: TOGGLE_BY_NAME[name].default for name in _SEARCHED if name in TOGGLE_BY_NAME}
    )
    defaults["replicas"] = int(defaults["replicas"])
    defaults["max_batch_size"] = int(defaults["max_batch_size"])
    return workload.with_changes(**defaults)


def current_design(workload: Workload) -> Design:
    """The workload's own design, judged as the Lab judges it."""
    return _design(_matching_option(workload, hardware_options(workload)), workload)


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


@dataclass(frozen=True)
class _Configuration:
    """One configuration over the searched replica counts, with the model's grid p99 there."""

    hardware: HardwareOption
    base: Workload
    counts: np.ndarray
    model_p99_ms: np.ndarray
    utilization: np.ndarray

    @property
    def first_with_headroom(self) -> int:
        """Index of the fewest counts with headroom (utilization falls as counts grow)."""
        return int(np.searchsorted(-self.utilization, -(1.0 - HEADROOM), side="left"))

    @property
    def model_first(self) -> int | None:
        """Index of the fewest counts the model's grid puts at the target, with headroom."""
        near = np.flatnonzero(
            (self.model_p99_ms <= self.base.p99_target_ms * (1 + _GRID_SLACK))
            & (self.utilization <= 1.0 - HEADROOM)
        )
        return int(near[0]) if near.size else None

    def at(self, index: int) -> Workload:
        return self.base.with_changes(replicas=int(self.counts[index]))

    def model_cost(self) -> float:
        first = self.model_first
        return math.inf if first is None else self.counts[first] * self.hardware.usd_per_hour


def _configuration(hardware: HardwareOption, base: Workload, counts: np.ndarray) -> _Configuration:
    p99 = queueing.p99_grid(base, np.array([base.rate_rps]), counts.astype(float))[:, 0]
    per_replica = base.capacity_rps / base.replicas
    utilization = base.rate_rps / (per_replica * counts)
    return _Configuration(hardware, base, counts, p99, utilization)


def _fewest_within(config: _Configuration, limit: int, judge: _Judge) -> tuple[int | None, bool]:
    """The fewest counts (an index at most ``limit``) the judge passes with headroom, and
    whether that is settled (False when the budget ran out first; a returned index is still one
    the judge passed). Assumes more replicas never hurt, as ``judged_min_replicas`` does: from
    the model's answer, growing steps up or down to a bracket, then bisection."""
    low = config.first_with_headroom - 1  # known to fail (or -1: none below)
    if limit <= low:
        return None, True
    first = config.model_first
    start = first if first is not None and low < first <= limit else limit
    verdict = judge.meets(config.at(start))
    if verdict is None:
        return None, False
    high: int | None = start
    if verdict:
        step = 1
        while high - low > 1:
            probe = max(low + 1, high - step)
            verdict = judge.meets(config.at(probe))
            if verdict is None:
                return high, False
            if not verdict:
                low = probe
                break
            high, step = probe, step * 2
    else:
        low, high, step = start, None, 1
        while high is None and low < limit:
            probe = min(limit, low + step)
            verdict = judge.meets(config.at(probe))
            if verdict is None:
                return None, False
            if verdict:
                high = probe
            else:
                low, step = probe, step * 2
        if high is None:
            return None, True
    while high - low > 1:
        middle = (low + high) // 2
        verdict = judge.meets(config.at(middle))
        if verdict is None:
            return high, False
        low, high = (low, middle) if verdict else (middle, high)
    return high, True


def _design(hardware: HardwareOption, workload: Workload) -> Design:
    """A design judged as the Lab judges it (its simulation where it has one)."""
    model = latency(workload)
    simulated = needs_simulation(workload)
    return Design(
        hardware,
        workload,
        judged_p99_ms(workload),
        model.utilization,
        model.accuracy,
        design_simulation(workload) if simulated else None,
    )


def advise(
    workload: Workload,
    options: Sequence[HardwareOption] | None = None,
    windows_ms: Sequence[float] = WINDOWS_MS,
    max_batch_sizes: Sequence[int] = MAX_BATCH_SIZES,
    max_replicas: int = _REPLICA_LIMIT,
    replica_counts: Sequence[int] | None = None,
    max_simulations: int = MAX_SIMULATIONS,
) -> Advice:
    """The cheapest design the judge passes for ``workload``'s target with ``HEADROOM``.

    The rate, model, models hosted, popularity, arrival CV, target and LB policy stay the
    workload's (an idealized policy is replaced by the default one); the search varies the
    replica kind (``options``), batching on or off, the window (``windows_ms``), the max batch
    (``max_batch_sizes``) and the replica count (``replica_counts``, else 1 to ``max_replicas``).

    Configurations are taken in the order of the model's cheapest count in each; each is asked
    only whether it beats the cheapest design found so far, by the judge (``judged_p99_ms``),
    so that most cost one verdict at the count just below it. The judge is free where the model
    is trusted and a simulation elsewhere, at most ``max_simulations`` of them. Ties in cost go
    to the configuration found first. Assumes a configuration's judged p99 never rises with
    more replicas. The result, but ``current``, is the same for every workload of one
    ``search_key``.
    """
    options = tuple(options) if options is not None else hardware_options(workload)
    current = _design(_matching_option(workload, options), workload)
    workload = _search_policy(search_key(workload))
    if replica_counts is None:
        counts = np.arange(1, max_replicas + 1)
    else:
        counts = np.unique(np.asarray(replica_counts, dtype=int))
    configs = [
        _configuration(hardware, base, counts)
        for hardware, base in _configurations(workload, options, windows_ms, max_batch_sizes)
    ]
    configs.sort(key=_Configuration.model_cost)
    judge = _Judge(max_simulations)
    best: tuple[HardwareOption, Workload] | None = None
    best_cost, unsettled = math.inf, 0
    for config in configs:
        cheaper = counts * config.hardware.usd_per_hour < best_cost
        index, settled = _fewest_within(config, int(np.count_nonzero(cheaper)) - 1, judge)
        unsettled += not settled
        if index is not None:
            best = (config.hardware, config.at(index))
            best_cost = counts[index] * config.hardware.usd_per_hour
    return Advice(
        best=_design(*best) if best is not None else None,
        frontier=_frontier(configs),
        current=current,
        configurations_searched=len(configs),
        lb_policy=workload.lb_policy,
        simulations=judge.simulations,
        complete=unsettled == 0,
        unsettled=unsettled,
    )


def _matching_option(workload: Workload, options: Sequence[HardwareOption]) -> HardwareOption:
    for option in options:
        if option.apply(workload) == workload:
            return option
    return current_hardware(workload)


def _frontier(configs: Sequence[_Configuration]) -> tuple[Design, ...]:
    """The model's cost-p99 Pareto frontier over every configuration and count with headroom:
    no other point is as cheap and at least as fast (and strictly better in one). By cost."""
    points = []
    for config in configs:
        usable = np.isfinite(config.model_p99_ms) & (config.utilization <= 1.0 - HEADROOM)
        for index in np.flatnonzero(usable):
            cost = config.counts[index] * config.hardware.usd_per_hour
            points.append((float(cost), float(config.model_p99_ms[index]), config, int(index)))
    points.sort(key=lambda point: (point[0], point[1]))
    frontier = []
    best_p99 = math.inf
    for _cost, p99, config, index in points:
        if p99 < best_p99:
            best_p99 = p99
            frontier.append(
                Design(
                    config.hardware,
                    config.at(index),
                    p99,
                    float(config.utilization[index]),
                    "grid",
                )
            )
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
        if choice != workload.lb_policy and choice not in IDEALIZED_POLICIES:
            changes.append((f"Load balancer: {policy.label_of(choice)}", {"lb_policy": choice}))
    return changes


def levers(workload: Workload, max_simulations: int = LEVER_SIMULATIONS) -> tuple[Lever, ...]:
    """Every single change to the current design, with its judged p99 and cost beside the
    current ones (the current p99 is the judge's too). Idealized policies are not levers
    (``comparisons``).

    Changes are judged in the order of the model's p99 (the likeliest to help first); past
    ``max_simulations`` a change shows the model's p99 with ``is_judged`` False and no verdict.
    Sorted: changes the judge passes first (cheapest first), then the rest by p99.
    """
    now_p99 = judged_p99_ms(workload)
    now_cost = workload_cost(workload).usd_per_hour
    changed_designs: dict[Workload, str] = {}
    for label, change in _lever_changes(workload):
        # e.g. "one fewer" and "a quarter fewer" of two replicas are one design
        changed_designs.setdefault(workload.with_changes(**change), label)
    judge = _Judge(max_simulations)
    out = []
    for changed in sorted(changed_designs, key=lambda w: latency(w).p99_ms):
        judged = judge.p99_ms(changed)
        p99 = judged if judged is not None else latency(changed).p99_ms
        cost = workload_cost(changed).usd_per_hour
        out.append(
            Lever(
                label=changed_designs[changed],
                workload=changed,
                hardware=current_hardware(changed),
                p99_ms=p99,
                delta_p99_ms=p99 - now_p99 if judged is not None else math.nan,
                usd_per_hour=cost,
                delta_usd_per_hour=cost - now_cost,
                meets_target=None if judged is None else judged <= workload.p99_target_ms,
                is_judged=judged is not None,
            )
        )
    out.sort(
        key=lambda lever: (
            lever.meets_target is not True,
            lever.usd_per_hour if lever.meets_target else lever.p99_ms,
        )
    )
    return tuple(out)


def comparisons(workload: Workload) -> tuple[Comparison, ...]:
    """The idealized policies beside the current design, by the model: how much the balancer
    costs in p99, not something to build (no server runs them)."""
    policy = CHOICE_BY_NAME["lb_policy"]
    out = []
    for choice in IDEALIZED_POLICIES:
        if choice == workload.lb_policy:
            continue
        changed = workload.with_changes(lb_policy=choice)
        out.append(
            Comparison(
                label=policy.label_of(choice),
                workload=changed,
                p99_ms=latency(changed).p99_ms,
                note="an idealization no server runs: one fleet-wide queue and batcher",
            )
        )
    return tuple(out)


# --- what breaks first ----------------------------------------------------------------------


def _breaks(workload: Workload, judge: _Judge) -> tuple[str | None, bool]:
    """How the design breaks by the judge ('unstable', 'over target' or None), and whether the
    judge decided (False: the budget ran out and the model did)."""
    judged = judge.p99_ms(workload)
    p99 = judged if judged is not None else latency(workload).p99_ms
    if not math.isfinite(p99):
        how = "unstable"
    elif p99 > workload.p99_target_ms:
        how = "over target"
    else:
        how = None
    return how, judged is not None


_MODEL_NOTE = " (queueing model, approximate: simulation budget spent)"


def _scale_until_break(
    workload: Workload, field: str, judge: _Judge, integer: bool = False
) -> BreakingPoint:
    spec = NUMERIC_BY_NAME[field]
    start = float(getattr(workload, field))
    label = spec.label
    all_judged = True

    def breaks(factor: float) -> str | None:
        nonlocal all_judged
        value = start * factor
        how, judged = _breaks(
            workload.with_changes(**{field: round(value) if integer else value}), judge
        )
        all_judged = all_judged and judged
        return how

    def point(factor: float | None, how: str, text: str) -> BreakingPoint:
        return BreakingPoint(
            label, factor, how, text + ("" if all_judged else _MODEL_NOTE), all_judged
        )

    now = breaks(1.0)
    if now:
        return point(1.0, now, f"{label}: already broken now")
    limit = spec.maximum / start
    lo, hi = 1.0, 2.0
    while hi < limit and breaks(hi) is None:
        lo, hi = hi, hi * 2.0
    if hi >= limit:
        hi = limit
        if breaks(hi) is None:
            return point(
                None, "", f"{label}: holds up to its maximum ({spec.maximum:g}, ×{limit:.3g})"
            )
    while hi / lo > _BREAK_PRECISION:
        mid = math.sqrt(lo * hi)
        if breaks(mid) is None:
            lo = mid
        else:
            hi = mid
    how = breaks(hi) or ""
    return point(hi, how, f"{label} ×{hi:.2f} ({how})")


def breaking_points(
    workload: Workload, max_simulations: int = BREAKING_SIMULATIONS
) -> tuple[BreakingPoint, ...]:
    """For rate, model latency, models hosted and target (and one replica lost): the factor at
    which the judge first says the target is missed or the queue is unstable (``None``: never
    in range), bracketed to within 1%. Past ``max_simulations`` the model decides, and the
    point says so.

    For the target the factor is how far it can shrink (the judged p99 is already known)."""
    judge = _Judge(max_simulations)
    points = [
        _scale_until_break(workload, "rate_rps", judge),
        _scale_until_break(workload, "model_latency_ms", judge),
        _scale_until_break(workload, "models_hosted", judge, integer=True),
    ]
    p99 = judged_p99_ms(workload)
    target = workload.p99_target_ms
    if p99 <= target:
        shrink = target / p99
        points.append(
            BreakingPoint(
                "p99 target", 1.0 / shrink, "over target", f"p99 target ÷{shrink:.2f} (over target)"
            )
        )
    else:
        points.append(BreakingPoint("p99 target", 1.0, "over target", "p99 target: already missed"))
    if workload.replicas > 1:
        how, judged = _breaks(workload.with_changes(replicas=workload.replicas - 1), judge)
        text = "One replica lost: " + (how if how else "still meets the target")
        points.append(
            BreakingPoint(
                "one replica lost",
                None if how is None else 1.0,
                how or "",
                text + ("" if judged else _MODEL_NOTE),
                judged,
            )
        )
    return tuple(points)
