"""The time-stepped model: traffic over time through an autoscaled fleet, one step at a time.

Each step of ``step_s`` seconds is one interval of a fluid queue:

- The offered rate ``lambda`` is the traffic shape's at the step's start; ``ready`` replicas serve
  at most ``mu = ready x capacity per replica`` (the workload's capacity: every slot busy on full
  batches). A replica serves only once ready: one cold start after the decision that started it.
- The backlog carries between steps: ``B' = max(0, B + (lambda - mu) x step_s)``; with a queue
  limit, what exceeds it is dropped.
- p99 of a step: where there is no backlog at either end and ``lambda < mu``, the steady-state
  p99 of the existing queueing model (``sdlab_model.queues.queueing``) at that rate and ready
  fleet, as if the step lasted; otherwise the backlog-drain wait: a request waits until the
  fleet, with the capacity it will have (replicas still starting included), has served the
  backlog ahead of it (``drain_waits_s``); the waits of the step's first and last arrivals
  bound a linear ramp whose 99th percentile is ``max - 0.01 |last - first|``; plus one full
  batch's service.
- The autoscaler (``sdlab_model.timeline.autoscalers``) reads the metrics of the steps before its
  decision: the busy share (served / capacity) for the HPA, requests in flight (backlog plus
  ``served rate x time in system``, Little's law) for the KPA and Ray Serve.

Totals: minutes over the target (a minute's p99 is the arrival-weighted 99th percentile of its
steps' p99s), requests over the target (in backlog steps exactly for the fluid waits; in steady
steps from an exponential tail through the single-request time and the p99, the shape of the
M/D/c tail; plus every dropped request), replica-hours (ready and starting: a starting node is
paid for) and their cost at the workload's price per replica-hour.

Approximations: quasi-stationary (a step's p99 is the steady state it would reach, which is
right when the rate changes slowly against the queue's relaxation time, ~ms to s here, and wrong
for a few steps after an abrupt change); a fluid backlog (no randomness once the queue is long).
``scripts/timeline_check.py`` measures both against the discrete-event simulator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from sdlab_model.advice.search import price_per_replica_hour
from sdlab_model.assessment import min_replicas_for_target
from sdlab_model.params import NUMERIC_BY_NAME
from sdlab_model.queues import queueing
from sdlab_model.timeline.autoscalers import (
    HPA_CPU_INITIALIZATION_PERIOD_S,
    HPA_SCALE_UP_PERIOD_S,
    HPA_SCALE_UP_PODS,
    KPA_MAX_SCALE_DOWN_RATE,
    KPA_MAX_SCALE_UP_RATE,
    KPA_TICK_S,
    MAX_REPLICAS,
    AutoscalerConfig,
    ColdStart,
)
from sdlab_model.timeline.traffic import TrafficShape
from sdlab_model.workload import Workload

MAX_STEPS = 200_000
"""Longest timeline in steps (a day at 1 s is 86,400): bounds memory and time on a server."""
MAX_DURATION_S = 2 * 86_400.0
EXACT_PAIRS_LIMIT = 16
"""Up to this many distinct (rate, ready replicas) steady steps, each p99 is the queueing
model's point solution, exactly what ``evaluate`` shows; beyond it, its vectorized grid
(``p99_grid``: within 1% of the point solution without batching, the same formulas with)."""
MINUTE_S = 60.0
TAIL_QUANTILE = 0.99
_MIN_RATE = NUMERIC_BY_NAME["rate_rps"].minimum
_MAX_RATE = NUMERIC_BY_NAME["rate_rps"].maximum


@dataclass(frozen=True)
class TimelineInputs:
    """One timeline: a workload (its rate is replaced by the traffic's), traffic, autoscaler,
    cold start and the clock. ``queue_limit_requests`` 0 means an unbounded queue."""

    workload: Workload = field(default_factory=Workload)
    traffic: TrafficShape = field(default_factory=TrafficShape)
    autoscaler: AutoscalerConfig = field(default_factory=AutoscalerConfig)
    cold_start: ColdStart = field(default_factory=ColdStart)
    duration_s: float = 600.0
    step_s: float = 1.0
    queue_limit_requests: float = 0.0

    def __post_init__(self) -> None:
        if not (0.01 <= self.step_s <= 3600.0) or not math.isfinite(self.step_s):
            raise ValueError(f"step_s={self.step_s!r} is outside the allowed range [0.01, 3600]")
        if not (self.step_s <= self.duration_s <= MAX_DURATION_S):
            raise ValueError(
                f"duration_s={self.duration_s!r} is outside the allowed range "
                f"[step_s, {MAX_DURATION_S:g}]"
            )
        if self.steps > MAX_STEPS:
            raise ValueError(
                f"{self.steps:,} steps (duration_s / step_s) is more than {MAX_STEPS:,}; "
                "use a longer step"
            )
        if not (0.0 <= self.queue_limit_requests <= 1e9):
            raise ValueError(
                f"queue_limit_requests={self.queue_limit_requests!r} is outside [0, 1e9]"
            )

    @property
    def steps(self) -> int:
        return math.ceil(self.duration_s / self.step_s - 1e-9)

    @property
    def initial_replicas(self) -> int:
        """The fleet at time 0: the workload's replicas, within the autoscaler's bounds."""
        bounds = self.autoscaler
        return min(max(self.workload.replicas, bounds.min_replicas), bounds.max_replicas)

    @property
    def capacity_per_replica_rps(self) -> float:
        return self.workload.with_changes(replicas=1).capacity_rps


@dataclass(frozen=True)
class TimelineTotals:
    """What a timeline adds up to."""

    minutes: int
    minutes_over_target: int
    requests: float
    requests_over_target: float
    requests_dropped: float
    replica_hours: float
    usd: float
    peak_backlog_requests: float
    worst_p99_ms: float
    peak_replicas: int


@dataclass(frozen=True)
class TimelineResult:
    """Per-step series (arrays of one value per step) and the totals of one timeline."""

    inputs: TimelineInputs
    times_s: np.ndarray
    offered_rps: np.ndarray
    ready_replicas: np.ndarray
    starting_replicas: np.ndarray
    capacity_rps: np.ndarray
    backlog_requests: np.ndarray
    served_requests: np.ndarray
    dropped_requests: np.ndarray
    busy_share: np.ndarray
    concurrency: np.ndarray
    p99_ms: np.ndarray
    over_target_share: np.ndarray
    decisions: np.ndarray
    """The total replica count set at each step where the autoscaler changed it, else -1."""
    minute_starts_s: np.ndarray
    minute_p99_ms: np.ndarray
    totals: TimelineTotals
    fixed_replicas: int | None = None
    """For a fixed fleet sized for the peak: its replicas (None for any other timeline)."""

    @property
    def decision_times_s(self) -> np.ndarray:
        return self.times_s[self.decisions >= 0]


def run_timeline(inputs: TimelineInputs) -> TimelineResult:
    """The time-stepped model over ``inputs``' duration (see the module docstring)."""
    from sdlab_model.timeline import _stepper

    arguments = kernel_arguments(inputs)
    (ready, starting, backlog_start, backlog_end, served, dropped, busy, concurrency, decided) = (
        _stepper.run(*arguments)
    )
    times = np.arange(inputs.steps) * inputs.step_s
    return _result(
        inputs,
        times,
        arguments[0],
        ready,
        starting,
        backlog_start,
        backlog_end,
        served,
        dropped,
        busy,
        concurrency,
        decided,
    )


def kernel_arguments(inputs: TimelineInputs) -> tuple:
    """The compiled loop's arguments for ``inputs`` (``_stepper.run``'s signature, in order)."""
    from sdlab_model.timeline import _stepper

    scaler = inputs.autoscaler
    step = inputs.step_s
    rates = inputs.traffic.rates_rps(np.arange(inputs.steps) * step).astype(float)
    capacity_per_replica = inputs.capacity_per_replica_rps
    cold_steps = _steps(inputs.cold_start.cold_start_s, step)
    kind = ("none", "hpa", "kpa", "ray").index(scaler.kind)
    floats = np.zeros(_stepper.N_PARAMS)
    ints = np.zeros(_stepper.N_INT_PARAMS, np.int64)
    counted_steps = cold_steps
    if scaler.kind == "hpa":
        floats[_stepper.P_TARGET] = scaler.hpa_target_utilization
        floats[_stepper.P_TOLERANCE] = scaler.hpa_tolerance
        ints[_stepper.I_PERIOD] = _steps(scaler.hpa_sync_period_s, step)
        ints[_stepper.I_WINDOW] = _steps(scaler.hpa_metric_window_s, step)
        # metrics-server scrapes once a window from t = 0: a sync between scrapes reads the last.
        ints[_stepper.I_SCRAPE_INTERVAL] = ints[_stepper.I_WINDOW]
        ints[_stepper.I_STABILIZATION] = _steps(scaler.hpa_scale_down_stabilization_s, step)
        ints[_stepper.I_RATE_PERIOD] = _steps(HPA_SCALE_UP_PERIOD_S, step)
        ints[_stepper.I_SCALE_UP_PODS] = HPA_SCALE_UP_PODS
        counted_steps = _steps(
            inputs.cold_start.cold_start_s
            + hpa_metric_delay_s(inputs.cold_start, scaler.hpa_metric_window_s),
            step,
        )
    elif scaler.kind == "kpa":
        floats[_stepper.P_TARGET] = kpa_target_per_pod(inputs)
        floats[_stepper.P_PANIC_THRESHOLD] = scaler.kpa_panic_threshold
        floats[_stepper.P_MAX_SCALE_UP_RATE] = KPA_MAX_SCALE_UP_RATE
        floats[_stepper.P_MAX_SCALE_DOWN_RATE] = KPA_MAX_SCALE_DOWN_RATE
        ints[_stepper.I_PERIOD] = _steps(KPA_TICK_S, step)
        ints[_stepper.I_WINDOW] = _steps(scaler.kpa_stable_window_s, step)
        ints[_stepper.I_PANIC_WINDOW] = _steps(kpa_panic_window_s(scaler), step)
    elif scaler.kind == "ray":
        floats[_stepper.P_TARGET] = scaler.ray_target_ongoing_requests
        ints[_stepper.I_WINDOW] = _steps(scaler.ray_look_back_period_s, step)
        # Ray acts once a decision has held for more than the delay (its counter of 0.1 s loops).
        ints[_stepper.I_UP_DELAY] = int(scaler.ray_upscale_delay_s / step + 1e-9)
        ints[_stepper.I_DOWN_DELAY] = int(scaler.ray_downscale_delay_s / step + 1e-9)
    queue_limit = inputs.queue_limit_requests if inputs.queue_limit_requests > 0 else np.inf
    return (
        rates,
        float(step),
        float(capacity_per_replica),
        float(time_in_system_s(inputs)),
        float(queue_limit),
        kind,
        floats,
        ints,
        inputs.initial_replicas,
        scaler.min_replicas,
        scaler.max_replicas,
        cold_steps,
        counted_steps,
    )


def run_fixed_for_peak(inputs: TimelineInputs) -> TimelineResult:
    """The same traffic through a fixed fleet sized for its peak: the fewest replicas whose
    steady-state p99 at the peak rate meets the target (500, the lab's most, if none does)."""
    replicas = replicas_for_peak(inputs)
    fixed = TimelineInputs(
        workload=inputs.workload.with_changes(replicas=replicas or MAX_REPLICAS),
        traffic=inputs.traffic,
        autoscaler=AutoscalerConfig(
            kind="none",
            min_replicas=replicas or MAX_REPLICAS,
            max_replicas=replicas or MAX_REPLICAS,
        ),
        cold_start=inputs.cold_start,
        duration_s=inputs.duration_s,
        step_s=inputs.step_s,
        queue_limit_requests=inputs.queue_limit_requests,
    )
    result = run_timeline(fixed)
    return _with_fixed(result, replicas)


def replicas_for_peak(inputs: TimelineInputs) -> int | None:
    """Fewest replicas meeting the p99 target at the traffic's peak rate, or None (none up to
    500 does)."""
    peak = inputs.traffic.peak_rate_rps(inputs.duration_s)
    peak_workload = inputs.workload.with_changes(rate_rps=min(max(peak, _MIN_RATE), _MAX_RATE))
    return min_replicas_for_target(peak_workload)


def replicas_at_target(inputs: TimelineInputs, rate_rps: float) -> int:
    """Replicas that carry a steady ``rate_rps`` at the HPA's target utilization without a
    backlog, ``ceil(rate / (capacity per replica x target))`` within the bounds: where the
    formula ``ceil(n x utilization / target)`` comes to rest (its 10% tolerance may stop it
    a little short)."""
    scaler = inputs.autoscaler
    wanted = rate_rps / (inputs.capacity_per_replica_rps * scaler.hpa_target_utilization)
    return min(max(math.ceil(wanted - 1e-9), scaler.min_replicas), scaler.max_replicas)


def hpa_metric_delay_s(cold_start: ColdStart, metric_window_s: float) -> float:
    """Seconds from a new pod turning ready to the HPA using its CPU metric.

    ``groupPods`` in ``replica_calculator.go``: while a pod is within the CPU initialization
    period (5 min) of its ``StartTime``, its metric is ignored until one metric window
    (``metric_window_s``, metrics-server's ``--metric-resolution``, 15 s by default) has been
    collected since it turned ready; after that period, as soon as it is ready. A pod's
    ``StartTime`` is set when the kubelet on its node accepts it, so on a new node the period
    starts after node provisioning, not at the decision; the model load runs inside it. So a
    ready pod counts ``min(window, max(0, provisioning + 300 - cold start))`` s after it turned
    ready: one window unless the model load alone takes more than ~5 minutes. (The 30 s
    ``delayOfInitialReadinessStatus`` applies only past the period, to a pod that is not ready
    and never was; such a pod is still starting here and counts as 0% on a scale-up anyway.)
    """
    past_initialization = (
        cold_start.node_provision_s + HPA_CPU_INITIALIZATION_PERIOD_S - cold_start.cold_start_s
    )
    return min(metric_window_s, max(0.0, past_initialization))


def hpa_scale_up_gaps_s(inputs: TimelineInputs) -> tuple[float, float]:
    """Fewest and most seconds from an HPA decision to the first sync that counts the pods it
    started, on the timeline's clocks (syncs every sync period, scrapes every metric window,
    both from t = 0): while a backlog keeps every pod 100% busy, the seconds between the steps
    of the HPA's ramp.

    A pod decided at a sync ``d`` counts from ``d + cold start + hpa_metric_delay_s``; a sync
    reads the newest scrape, so it is seen at the first sync at or after the first scrape at or
    after that. Until then ``replica_calculator.go`` counts it at 0% on a scale-up and the
    rebalanced ratio (``n / (target x new total)``) is inside the tolerance. The gap repeats
    with the two clocks' common period: every sync of one such period is tried.
    """
    scaler, step = inputs.autoscaler, inputs.step_s
    period = _steps(scaler.hpa_sync_period_s, step)
    window = _steps(scaler.hpa_metric_window_s, step)
    delay = hpa_metric_delay_s(inputs.cold_start, scaler.hpa_metric_window_s)
    counted = _steps(inputs.cold_start.cold_start_s + delay, step)
    gaps = []
    for decided in range(period, period + math.lcm(period, window), period):
        scrape = -(-(decided + counted) // window) * window
        gaps.append(-(-scrape // period) * period - decided)
    return min(gaps) * step, max(gaps) * step


def kpa_panic_window_s(scaler: AutoscalerConfig) -> float:
    """Knative's panic window: ``stable window x percentage / 100`` rounded to a whole second, at
    least one 1 s bucket (``pkg/reconciler/autoscaling/resources/metric.go`` lines 49-52 at
    knative/serving 98e5ef90aa)."""
    window = scaler.kpa_stable_window_s * scaler.kpa_panic_window_percentage / 100.0
    return max(1.0, float(math.floor(window + 0.5)))  # Go's Duration.Round: halves away from 0


def kpa_target_per_pod(inputs: TimelineInputs) -> float:
    """Knative's per-pod concurrency target: ``containerConcurrency x target utilization``, with
    the container concurrency the replica's slots x max batch (what it can serve at once) unless
    set."""
    scaler = inputs.autoscaler
    concurrency = scaler.kpa_container_concurrency or float(
        inputs.workload.slots_per_replica * inputs.workload.effective_max_batch_size
    )
    return concurrency * scaler.kpa_target_utilization


def time_in_system_s(inputs: TimelineInputs) -> float:
    """A request's time in the system without a backlog, for Little's law: the queueing
    model's median at the starting rate and fleet (the single-request time if that is
    unstable)."""
    workload = inputs.workload.with_changes(
        rate_rps=min(max(inputs.traffic.base_rate_rps, _MIN_RATE), _MAX_RATE),
        replicas=inputs.initial_replicas,
    )
    result = queueing.latency(workload)
    median = result.p50_ms if result.is_stable else workload.single_request_ms
    return float(median) / 1000.0


def _steps(seconds: float, step_s: float) -> int:
    """Whole steps covering ``seconds`` (a cold start of 45 s at 1 s steps is 45 steps)."""
    return math.ceil(seconds / step_s - 1e-9)


def _with_fixed(result: TimelineResult, replicas: int | None) -> TimelineResult:
    from dataclasses import replace

    return replace(result, fixed_replicas=replicas)


def _result(
    inputs,
    times,
    rates,
    ready,
    starting,
    backlog_start,
    backlog_end,
    served,
    dropped,
    busy,
    concurrency,
    decided,
) -> TimelineResult:
    workload = inputs.workload
    step = inputs.step_s
    capacity = ready * inputs.capacity_per_replica_rps
    full_batch_ms = workload.batch_service_ms(workload.effective_max_batch_size)
    steady = (backlog_start <= 0.0) & (backlog_end <= 0.0) & (rates < capacity) & (ready > 0)
    p99 = np.full(times.shape, np.inf)
    p99[steady] = steady_p99_ms(workload, rates[steady], ready[steady])
    wait_start, wait_end = drain_waits_s(capacity, backlog_start, backlog_end, step)
    backlogged = ~steady
    high = np.maximum(wait_start, wait_end)
    spread = np.abs(wait_end - wait_start)
    with np.errstate(invalid="ignore"):
        wait_ms = 1000.0 * (high - (1.0 - TAIL_QUANTILE) * np.where(np.isfinite(spread), spread, 0))
    p99[backlogged] = wait_ms[backlogged] + full_batch_ms
    over = _over_target_share(workload, p99, steady, wait_start, wait_end, full_batch_ms)
    arrivals = rates * step
    minute_starts, minute_p99 = per_minute_p99(times, p99, arrivals, step)
    target = workload.p99_target_ms
    totals = TimelineTotals(
        minutes=len(minute_starts),
        minutes_over_target=int(np.sum(minute_p99 > target)),
        requests=float(arrivals.sum()),
        requests_over_target=float(np.sum(arrivals * over) + dropped.sum()),
        requests_dropped=float(dropped.sum()),
        replica_hours=float(np.sum(ready + starting) * step / 3600.0),
        usd=float(np.sum(ready + starting) * step / 3600.0 * price_per_replica_hour(workload)),
        peak_backlog_requests=float(backlog_end.max(initial=0.0)),
        worst_p99_ms=float(p99.max(initial=0.0)),
        peak_replicas=int((ready + starting).max(initial=0)),
    )
    return TimelineResult(
        inputs=inputs,
        times_s=times,
        offered_rps=rates,
        ready_replicas=ready,
        starting_replicas=starting,
        capacity_rps=capacity,
        backlog_requests=backlog_end,
        served_requests=served,
        dropped_requests=dropped,
        busy_share=busy,
        concurrency=concurrency,
        p99_ms=p99,
        over_target_share=over,
        decisions=decided,
        minute_starts_s=minute_starts,
        minute_p99_ms=minute_p99,
        totals=totals,
    )


def steady_p99_ms(workload: Workload, rates_rps: np.ndarray, replicas: np.ndarray) -> np.ndarray:
    """The queueing model's steady-state p99 (ms) at each (rate, replicas) pair.

    Rates below the lab's 1 req/s are taken at 1 req/s (a p99 of almost nothing, weighted by
    almost no requests). Few distinct pairs: the point solution, as ``evaluate``; many: the
    vectorized grid, one call per distinct replica count.
    """
    rates = np.clip(np.asarray(rates_rps, float), _MIN_RATE, _MAX_RATE)
    counts = np.asarray(replicas, np.int64)
    out = np.empty(rates.shape)
    if rates.size == 0:
        return out
    groups = []
    for count in np.unique(counts):
        chosen = np.flatnonzero(counts == count)
        distinct, inverse = np.unique(rates[chosen], return_inverse=True)
        groups.append((int(count), chosen, distinct, inverse.ravel()))
    exact = sum(len(distinct) for _, _, distinct, _ in groups) <= EXACT_PAIRS_LIMIT
    for count, chosen, distinct, inverse in groups:
        if exact:
            values = np.array(
                [
                    queueing.latency(
                        workload.with_changes(rate_rps=float(r), replicas=count)
                    ).p99_ms
                    for r in distinct
                ]
            )
        else:
            values = queueing.p99_grid(workload, distinct, np.array([float(count)]))[0]
        out[chosen] = values[inverse]
    return out


def drain_waits_s(
    capacity_rps: np.ndarray, backlog_start: np.ndarray, backlog_end: np.ndarray, step_s: float
) -> tuple[np.ndarray, np.ndarray]:
    """The fluid FCFS wait of a request arriving at each step's start and end: the time until the
    fleet, with the capacity it actually has from then on (replicas that become ready meanwhile
    included), has served the backlog ahead of it. Past the timeline's end the last step's
    capacity holds; with no capacity ever again the wait is ``inf``."""
    served_by = np.concatenate([[0.0], np.cumsum(capacity_rps * step_s)])
    n = len(capacity_rps)
    last_rate = capacity_rps[-1] if n else 0.0

    def wait(arrival_step: np.ndarray, backlog: np.ndarray) -> np.ndarray:
        goal = served_by[arrival_step] + backlog
        index = np.clip(np.searchsorted(served_by, goal, side="right") - 1, 0, n)
        rate = np.where(index < n, capacity_rps[np.minimum(index, n - 1)], last_rate)
        with np.errstate(divide="ignore", invalid="ignore"):
            within = np.where(rate > 0, (goal - served_by[index]) / rate, np.inf)
        done = np.where(backlog <= 0, arrival_step * step_s, index * step_s + within)
        return done - arrival_step * step_s

    steps = np.arange(n)
    return wait(steps, backlog_start), wait(steps + 1, backlog_end)


def _over_target_share(workload, p99, steady, wait_start, wait_end, full_batch_ms):
    """Share of each step's arrivals whose latency exceeds the target (see the module
    docstring)."""
    target = workload.p99_target_ms
    floor_ms = workload.single_request_ms
    share = np.ones(p99.shape)
    # Steady steps: P(T > x) = 0.01 ** ((x - floor) / (p99 - floor)) beyond the floor.
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        spread = p99 - floor_ms
        exponent = np.where(
            spread > 0, (target - floor_ms) / np.where(spread > 0, spread, 1.0), np.inf
        )
        tail = np.where(target < floor_ms, 1.0, np.power(1.0 - TAIL_QUANTILE, exponent))
        tail = np.where(spread <= 0, (target < p99).astype(float), tail)
    share[steady] = np.clip(tail[steady], 0.0, 1.0)
    # Backlog steps: waits move linearly from the step's first arrival's to its last's.
    backlogged = ~steady
    allowed = (target - full_batch_ms) / 1000.0  # the longest wait that still meets the target
    low = np.minimum(wait_start, wait_end)
    high = np.maximum(wait_start, wait_end)
    with np.errstate(divide="ignore", invalid="ignore"):
        ramp = np.where(high > low, (high - allowed) / np.where(high > low, high - low, 1.0), 0.0)
    ramp = np.where(high > low, np.clip(ramp, 0.0, 1.0), (high > allowed).astype(float))
    ramp = np.where(np.isfinite(high), ramp, 1.0)  # never served: over any target
    share[backlogged] = ramp[backlogged]
    return share


def per_minute_p99(
    times_s: np.ndarray, p99_ms: np.ndarray, arrivals: np.ndarray, step_s: float
) -> tuple[np.ndarray, np.ndarray]:
    """Each minute's p99: the arrival-weighted 99th percentile of its steps' p99s.

    A minute whose steps share one p99 gets that p99; a minute in which 2% of the requests
    arrive during a backlog gets a p99 from the backlog's steps, as the requests themselves
    would. Steps longer than a minute make one "minute" per step.
    """
    bucket_s = max(MINUTE_S, step_s)
    buckets = np.floor(times_s / bucket_s + 1e-9).astype(np.int64)
    order = np.lexsort((p99_ms, buckets))
    sorted_buckets = buckets[order]
    weights = arrivals[order]
    starts = np.flatnonzero(np.r_[True, sorted_buckets[1:] != sorted_buckets[:-1]])
    ends = np.r_[starts[1:], len(order)]
    cumulative = np.cumsum(weights)
    before = np.r_[0.0, cumulative][starts]
    totals = cumulative[ends - 1] - before
    minute_p99 = np.empty(len(starts))
    sorted_p99 = p99_ms[order]
    for index, (start, end) in enumerate(zip(starts, ends, strict=True)):
        if totals[index] <= 0:
            minute_p99[index] = float(np.max(sorted_p99[start:end]))
            continue
        share = (cumulative[start:end] - before[index]) / totals[index]
        position = int(np.searchsorted(share, TAIL_QUANTILE - 1e-12))
        minute_p99[index] = sorted_p99[start + min(position, end - start - 1)]
    return sorted_buckets[starts] * bucket_s, minute_p99
