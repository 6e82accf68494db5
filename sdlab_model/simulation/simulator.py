"""Discrete-event simulation of the serving system, to check the queueing model against.

It simulates exactly the system described in ``sdlab_model.workload``: a renewal arrival stream
at ``rate_rps`` (Poisson, or Gamma gaps with coefficient of variation ``arrival_cv``), each
request for one model (Zipf shares), a load balancer, and in every replica one Triton-style
batcher per model sharing the replica's slots; deterministic ``batch_service_ms(b)``.

Two compiled kernels (numba, ``sdlab_model.simulation._sim_kernel``, imported only when a
simulation runs):

- ``central_queue``: one FCFS queue and batcher for the whole fleet, a one-pass recursion (a free
  server takes up to ``max_batch_size`` waiting requests; if fewer wait it holds until the oldest
  has waited ``batch_window_ms`` or ``max_batch_size`` have arrived). Models play no part.
- every other policy: an event loop over arrivals, window expiries and batch completions.

Random numbers come from numpy Generators seeded from ``np.random.SeedSequence(seed)``, one
stream per random input (arrivals, service times, the model and replica of each request); there
is no global RNG state. The arrival stream of a Poisson workload is the same whatever the policy.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from sdlab_model.policies import Policy
from sdlab_model.workload import Workload

ServiceDistribution = Literal["deterministic", "exponential"]

MAX_REQUESTS_PER_CALL = 2_000_000
"""Request budget of one ``simulate`` call (all replications together) and of one grid cell."""

MAX_REQUESTS_PER_GRID = 40_000_000
"""Request budget of one ``simulate_grid`` call (cells x requests per cell)."""

MIN_REQUESTS_PER_REPLICATION = 100
GRID_BATCHES = 5
"""Batches per grid cell for the batch-means interval of its p99."""
MAX_REPLICATIONS = 30

# Two-sided 95% Student t quantiles t_{0.975, df} for df = 1..29 (any statistics table).
# fmt: off
_T_975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045,
)
# fmt: on


@dataclass(frozen=True, eq=False)
class SimResult:
    """What one ``simulate`` call measured, and the settings it used.

    ``latencies_ms`` holds every measured request's end-to-end latency (arrival to completion),
    after each replication's warm-up, replications one after another; it is read-only. When the
    workload is unstable (``rate_rps >= capacity_rps``) nothing is simulated: the percentiles
    are ``inf``, ``latencies_ms`` is empty, ``is_stable`` is False and ``note`` says why.

    ``p99_ci_ms`` is a 95% Student t interval for the p99: centred on ``p99_ms`` (the p99 of all
    measured requests together), half-width ``t * sd / sqrt(R)`` from the spread of the ``R``
    replications' own p99s (``replication_p99_ms``). With one replication it is ``(nan, nan)``.
    """

    workload: Workload
    n_requests: int
    seed: int
    warmup_fraction: float
    replications: int
    service: ServiceDistribution
    latencies_ms: np.ndarray
    p50_ms: float
    p95_ms: float
    p99_ms: float
    p99_ci_ms: tuple[float, float]
    replication_p99_ms: tuple[float, ...]
    mean_latency_ms: float
    mean_wait_ms: float
    mean_batch_size: float
    utilization: float
    is_stable: bool
    note: str

    @property
    def measured_requests(self) -> int:
        """Requests behind the statistics (after warm-up, all replications)."""
        return int(self.latencies_ms.size)


@dataclass(frozen=True, eq=False)
class Trace:
    """One replication's raw output, every request (warm-up included), in arrival order.

    ``batch_sizes`` and ``batch_first`` (index of each batch's oldest request) are per batch, in
    dispatch order.
    """

    arrival_ms: np.ndarray
    dispatch_ms: np.ndarray
    completion_ms: np.ndarray
    batch_sizes: np.ndarray
    batch_first: np.ndarray
    batch_load_ms: np.ndarray | None = None

    @property
    def latency_ms(self) -> np.ndarray:
        return self.completion_ms - self.arrival_ms


@dataclass(frozen=True, eq=False)
class CacheSettings:
    """Each replica's cache of models, as the fleet kernel takes it (arrays per model).

    ``model_size_gb`` and ``load_ms`` per model (index 0 the most popular), ``pinned`` the models
    never evicted, ``cache_gb`` the memory each replica holds models in.
    """

    model_size_gb: np.ndarray
    load_ms: np.ndarray
    pinned: np.ndarray
    cache_gb: float


_NO_CACHE = CacheSettings(np.empty(0), np.empty(0), np.empty(0, dtype=np.bool_), math.inf)


@dataclass(frozen=True, eq=False)
class HolderRouting:
    """Model-aware routing as the fleet kernel takes it: model ``m`` is held by the replicas
    ``holder_replicas[holder_start[m]:holder_start[m + 1]]``, and only they get its requests."""

    holder_replicas: np.ndarray
    holder_start: np.ndarray

    def counts(self) -> np.ndarray:
        """Holders per model."""
        return np.diff(self.holder_start)


_NO_HOLDERS = HolderRouting(np.empty(0, dtype=np.int64), np.zeros(1, dtype=np.int64))


def _kernel():
    # Imported here, not at module top: `import sdlab_model` must not import numba or compile.
    from sdlab_model.simulation._sim_kernel import run_batching_queue

    return run_batching_queue


def _fleet_kernel():
    from sdlab_model.simulation._sim_kernel import run_fleet

    return run_fleet


_POLICY_CODES = {
    "random": int(Policy.RANDOM),
    "round_robin": int(Policy.ROUND_ROBIN),
    "least_request": int(Policy.LEAST_REQUEST),
}


def arrival_gaps(
    workload: Workload, rng: np.random.Generator, count: int, mean_gap: float
) -> np.ndarray:
    """``count`` gaps between arrivals with mean ``mean_gap`` and CV ``workload.arrival_cv``.

    Exponential (Poisson arrivals) at CV 1, drawn exactly as before the CV existed; otherwise
    Gamma with shape ``1 / cv**2``, the usual renewal model of bursty traffic.
    """
    cv = workload.arrival_cv
    if cv == 1.0:
        return rng.exponential(mean_gap, count)
    return rng.gamma(1.0 / (cv * cv), mean_gap * cv * cv, count)


def routing_draws(
    workload: Workload, rng: np.random.Generator, count: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each request's model (Zipf shares) and the balancer's random replica choices.

    ``second`` is a replica distinct from ``first`` (where there are two), for least request.
    """
    shares = workload.model_shares
    if shares.size == 1:
        model_of = np.zeros(count, dtype=np.int64)
    else:
        cumulative = np.cumsum(shares)
        model_of = np.searchsorted(cumulative, rng.random(count) * cumulative[-1], side="right")
        model_of = np.minimum(model_of, shares.size - 1).astype(np.int64)
    replicas = workload.replicas
    first = rng.integers(0, replicas, count, dtype=np.int64)
    if replicas > 1:
        second = (first + 1 + rng.integers(0, replicas - 1, count, dtype=np.int64)) % replicas
    else:
        second = first.copy()
    return model_of, first, second


def holder_draws(
    model_of: np.ndarray, holders: HolderRouting, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Each request's random choices among its model's holders, as holder indices: ``first``
    uniform, ``second`` a different one where the model has two or more (least request)."""
    counts = holders.counts()[model_of]
    first = np.minimum((rng.random(model_of.size) * counts).astype(np.int64), counts - 1)
    others = np.maximum(counts - 1, 1)
    step = 1 + np.minimum((rng.random(model_of.size) * others).astype(np.int64), others - 1)
    second = np.where(counts > 1, (first + step) % counts, first)
    return first, second


def _check_int(name: str, value: object, minimum: int, maximum: int, why: str = "") -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    if not minimum <= value <= maximum:
        raise ValueError(
            f"{name}={value!r} is outside the allowed range [{minimum}, {maximum}]{why}"
        )
    return int(value)


def _check_warmup(warmup_fraction: float) -> float:
    if not (isinstance(warmup_fraction, (int, float)) and 0.0 <= warmup_fraction < 0.9):
        raise ValueError(
            f"warmup_fraction={warmup_fraction!r} is outside the allowed range [0, 0.9)"
        )
    return float(warmup_fraction)


def _queue_settings(workload: Workload) -> tuple[int, float, np.ndarray]:
    """Batch limit, window and service time by batch size (index = size) the kernel runs with."""
    batch_limit = workload.effective_max_batch_size
    window_ms = float(workload.batch_window_ms) if workload.dynamic_batching else 0.0
    sizes = np.arange(batch_limit + 1, dtype=float)
    service_by_size_ms = np.asarray(workload.batch_service_ms(sizes), dtype=float)
    return batch_limit, window_ms, service_by_size_ms


def run_trace(
    workload: Workload,
    arrival_ms: np.ndarray,
    service_multiplier: np.ndarray | None = None,
    routing: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
    residency: CacheSettings | None = None,
    holders: HolderRouting | None = None,
) -> Trace:
    """Serve the given sorted arrivals; ``service_multiplier[k]`` scales the k-th batch.

    ``routing`` is ``routing_draws(...)`` for the same requests (every policy but
    ``central_queue`` needs it; with ``holders``, its choices are ``holder_draws``'s).
    ``residency`` adds each replica's LRU cache of models, ``holders`` model-aware routing
    (load balancer policies only).
    """
    batch_limit, window_ms, service_by_size_ms = _queue_settings(workload)
    count = arrival_ms.size
    dispatch_ms = np.empty(count)
    completion_ms = np.empty(count)
    batch_sizes = np.empty(count, dtype=np.int64)
    multiplier = np.empty(0) if service_multiplier is None else service_multiplier
    if workload.is_central_queue:
        batches = _kernel()(
            arrival_ms,
            workload.servers,
            batch_limit,
            window_ms,
            service_by_size_ms,
            multiplier,
            dispatch_ms,
            completion_ms,
            batch_sizes,
        )
        sizes = batch_sizes[:batches]
        return Trace(arrival_ms, dispatch_ms, completion_ms, sizes, np.cumsum(sizes) - sizes)
    if routing is None:
        raise ValueError(f"lb_policy={workload.lb_policy!r} needs routing draws")
    model_of, first, second = routing
    batch_first = np.empty(count, dtype=np.int64)
    cache = residency or _NO_CACHE
    batch_load_ms = np.zeros(count if residency else 0)
    batches = _fleet_kernel()(
        arrival_ms,
        model_of,
        first,
        second,
        _POLICY_CODES[workload.lb_policy],
        workload.replicas,
        workload.slots_per_replica,
        workload.models_hosted,
        batch_limit,
        window_ms,
        service_by_size_ms,
        multiplier,
        dispatch_ms,
        completion_ms,
        batch_sizes,
        batch_first,
        cache.model_size_gb,
        cache.load_ms,
        cache.pinned,
        cache.cache_gb,
        batch_load_ms,
        (holders or _NO_HOLDERS).holder_replicas,
        (holders or _NO_HOLDERS).holder_start,
    )
    return Trace(
        arrival_ms,
        dispatch_ms,
        completion_ms,
        batch_sizes[:batches],
        batch_first[:batches],
        batch_load_ms[:batches] if residency else None,
    )


def _simulate_trace(
    workload: Workload,
    n_requests: int,
    seed_sequence: np.random.SeedSequence,
    service: ServiceDistribution = "deterministic",
    residency: CacheSettings | None = None,
    holders: HolderRouting | None = None,
) -> Trace:
    """One replication from an empty system: ``n_requests`` Poisson arrivals from ``seed_sequence``.

    One stream per random input: the arrival stream is the same whichever ``service`` is chosen.
    ``service="exponential"`` draws each batch's service time from an exponential distribution
    with mean ``batch_service_ms(b)``; it exists to check the simulator against M/M/c theory.
    """
    # spawn(3)[:2] equals spawn(2): the arrival and service streams predate the routing one.
    arrival_stream, service_stream, routing_stream = seed_sequence.spawn(3)
    mean_gap_ms = 1000.0 / workload.rate_rps
    gaps_ms = arrival_gaps(workload, np.random.default_rng(arrival_stream), n_requests, mean_gap_ms)
    arrival_ms = np.cumsum(gaps_ms)
    multiplier = None
    if service == "exponential":
        # At most one batch per request, so n_requests draws always suffice.
        multiplier = np.random.default_rng(service_stream).exponential(1.0, n_requests)
    routing = None
    if not workload.is_central_queue:
        rng = np.random.default_rng(routing_stream)
        routing = routing_draws(workload, rng, n_requests)
        if holders is not None:  # drawn after the plain choices: those stay as they were
            routing = (routing[0], *holder_draws(routing[0], holders, rng))
    return run_trace(workload, arrival_ms, multiplier, routing, residency, holders)


def t_quantile_975(degrees_of_freedom: int) -> float:
    """Student t quantile t_{0.975, df}, for a two-sided 95% interval (the normal 1.96 past 29)."""
    if degrees_of_freedom <= len(_T_975):
        return _T_975[degrees_of_freedom - 1]
    return 1.96


def _unstable_result(workload, n_requests, seed, warmup_fraction, replications, service):
    rho = workload.rate_rps / workload.capacity_rps
    return SimResult(
        workload=workload,
        n_requests=n_requests,
        seed=seed,
        warmup_fraction=warmup_fraction,
        replications=replications,
        service=service,
        latencies_ms=_read_only(np.empty(0)),
        p50_ms=math.inf,
        p95_ms=math.inf,
        p99_ms=math.inf,
        p99_ci_ms=(math.inf, math.inf),
        replication_p99_ms=(),
        mean_latency_ms=math.inf,
        mean_wait_ms=math.inf,
        mean_batch_size=float(workload.effective_max_batch_size),
        utilization=1.0,
        is_stable=False,
        note=(
            f"Not simulated: {workload.rate_rps:g} req/s is at or beyond capacity "
            f"({workload.capacity_rps:.4g} req/s, utilization {rho:.3g}); the queue grows "
            "without bound, so every percentile is infinite."
        ),
    )


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


def percentiles(values: np.ndarray, percents: Sequence[float]) -> list[float]:
    """``np.percentile(values, percents)`` with its default linear interpolation, to the last bit,
    for values without NaN.

    One single-index selection (``np.partition``) per percentile, and the next order statistic as
    the minimum above it: numpy partitions at every neighbouring index at once, plus both ends to
    look for NaN, which on the Lab's 180,000 latencies cost ~10 ms against ~1 ms for this. The
    interpolation repeats numpy's (``numpy.lib._function_base_impl._lerp``) so the results are
    identical; ``tests/sdlab_model/simulation/test_simulator.py`` checks that they are.
    """
    values = np.asarray(values, dtype=float).ravel()
    count = values.size
    results = []
    for percent in percents:
        virtual_index = (count - 1) * (float(percent) / 100)
        lower = math.floor(virtual_index)
        gamma = virtual_index - lower
        selected = np.partition(values, lower)
        below = float(selected[lower])
        above = float(selected[lower + 1 :].min()) if lower + 1 < count else below
        difference = above - below
        results.append(
            above - difference * (1 - gamma) if gamma >= 0.5 else below + difference * gamma
        )
    return results


def simulate(
    workload: Workload,
    n_requests: int = 200_000,
    seed: int = 0,
    warmup_fraction: float = 0.1,
    replications: int = 5,
    service: ServiceDistribution = "deterministic",
) -> SimResult:
    """Simulate ``workload`` for ``n_requests`` requests in all, split over ``replications``.

    Each replication starts empty with its own seed (``SeedSequence(seed).spawn(replications)``),
    serves ``n_requests // replications`` requests and drops the first ``warmup_fraction`` of
    them from the statistics. The same arguments always give the same result.

    Utilization is the measured busy fraction: service time of the batches dispatched between the
    first measured arrival and the last arrival, over ``servers`` times that span.

    Approximations:
        Finite runs: percentiles carry sampling error (see ``p99_ci_ms``) and a little bias from
        starting empty, which the warm-up removes. Arrivals stop after the last request, so the
        last batch may wait out its full window.

    Sources:
        Triton Inference Server, dynamic batcher (``max_queue_delay_microseconds``,
        ``max_batch_size``). Kiefer & Wolfowitz (1955) for the FCFS multi-server recursion.
        Law, *Simulation Modeling and Analysis* (5th ed.), ch. 9, replication t-intervals.
    """
    replications = _check_int("replications", replications, 1, MAX_REPLICATIONS)
    n_requests = _check_int(
        "n_requests",
        n_requests,
        replications * MIN_REQUESTS_PER_REPLICATION,
        MAX_REQUESTS_PER_CALL,
        f" (the request budget of one simulate call is {MAX_REQUESTS_PER_CALL:,}; at least "
        f"{MIN_REQUESTS_PER_REPLICATION} per replication)",
    )
    seed = _check_int("seed", seed, 0, 2**63 - 1)
    warmup_fraction = _check_warmup(warmup_fraction)
    if service not in ("deterministic", "exponential"):
        raise ValueError(f"service={service!r} is not one of 'deterministic', 'exponential'")
    if workload.rate_rps >= workload.capacity_rps:
        return _unstable_result(workload, n_requests, seed, warmup_fraction, replications, service)

    per_replication = n_requests // replications
    warmup = int(warmup_fraction * per_replication)
    latencies, waits, replication_p99 = [], [], []
    batch_count = batch_requests = 0
    busy_ms = span_ms = 0.0
    for child in np.random.SeedSequence(seed).spawn(replications):
        trace = _simulate_trace(workload, per_replication, child, service)
        measured = slice(warmup, None)
        latency_ms = trace.latency_ms[measured]
        latencies.append(latency_ms)
        waits.append((trace.dispatch_ms - trace.arrival_ms)[measured])
        replication_p99.append(percentiles(latency_ms, (99,))[0])
        first_request = trace.batch_first
        batch_dispatch_ms = trace.dispatch_ms[first_request]
        window_start_ms, window_end_ms = trace.arrival_ms[warmup], trace.arrival_ms[-1]
        in_window = (batch_dispatch_ms >= window_start_ms) & (batch_dispatch_ms <= window_end_ms)
        batch_service_ms = (trace.completion_ms - trace.dispatch_ms)[first_request]
        busy_ms += float(np.sum(batch_service_ms[in_window]))
        span_ms += window_end_ms - window_start_ms
        measured_batches = first_request >= warmup
        batch_count += int(np.count_nonzero(measured_batches))
        batch_requests += int(np.sum(trace.batch_sizes[measured_batches]))

    all_latency_ms = np.concatenate(latencies)
    p50, p95, p99 = percentiles(all_latency_ms, (50, 95, 99))
    if replications > 1:
        half_width = (
            t_quantile_975(replications - 1)
            * float(np.std(replication_p99, ddof=1))
            / math.sqrt(replications)
        )
        interval = (p99 - half_width, p99 + half_width)
    else:
        interval = (math.nan, math.nan)
    utilization = busy_ms / (workload.servers * span_ms) if span_ms > 0 else math.nan
    return SimResult(
        workload=workload,
        n_requests=n_requests,
        seed=seed,
        warmup_fraction=warmup_fraction,
        replications=replications,
        service=service,
        latencies_ms=_read_only(all_latency_ms),
        p50_ms=p50,
        p95_ms=p95,
        p99_ms=p99,
        p99_ci_ms=interval,
        replication_p99_ms=tuple(replication_p99),
        mean_latency_ms=float(np.mean(all_latency_ms)),
        mean_wait_ms=float(np.mean(np.concatenate(waits))),
        mean_batch_size=batch_requests / batch_count if batch_count else math.nan,
        utilization=utilization,
        is_stable=True,
        note=(
            f"Simulated {replications} x {per_replication:,} requests "
            f"(first {warmup_fraction:.0%} of each dropped as warm-up); the same inputs draw the "
            "same random numbers, so a rerun repeats them."
        ),
    )


def simulate_grid(
    workload: Workload,
    rates_rps: Sequence[float] | np.ndarray,
    replicas: Sequence[int] | np.ndarray,
    n_requests: int = 30_000,
    seed: int = 0,
    warmup_fraction: float = 0.2,
    progress: Callable[[int, int], None] | None = None,
    interval: bool = False,
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Simulated p99 (ms) over rates x replicas, shape ``(len(replicas), len(rates))``.

    With ``interval`` it also returns each cell's 95% interval for the p99, shape
    ``(*grid, 2)``, by batch means: the measured requests are cut into ``GRID_BATCHES``
    consecutive batches and the interval is the p99 ± ``t * sd / sqrt(k)`` of the batches' own
    p99s (``inf`` where the cell is not simulated). Consecutive batches of one queue are not
    quite independent, so near capacity the interval is on the narrow side.

    Every other input is the workload's; ``inf`` where a cell is at or beyond capacity (not
    simulated). Each cell serves ``n_requests`` requests from empty and drops the first
    ``warmup_fraction``. ``progress(done_cells, total_cells)`` is called after each row.

    Approximations:
        Common random numbers: every cell uses the same unit-rate arrival stream, rescaled to its
        rate, so neighbouring cells differ by the system, not by the noise, and the map is smooth.
        One replication per cell, so each p99 carries its sampling error (a few percent at tens
        of thousands of requests and moderate load; more near capacity).

    Sources:
        Law, *Simulation Modeling and Analysis* (5th ed.), ch. 11, common random numbers.
    """
    rates = np.asarray(rates_rps, dtype=float).ravel()
    counts = np.asarray(replicas).ravel()
    n_requests = _check_int(
        "n_requests",
        n_requests,
        MIN_REQUESTS_PER_REPLICATION,
        MAX_REQUESTS_PER_CALL,
        f" (the request budget of one grid cell is {MAX_REQUESTS_PER_CALL:,})",
    )
    cells = rates.size * counts.size
    if cells * n_requests > MAX_REQUESTS_PER_GRID:
        raise ValueError(
            f"{cells} cells x n_requests={n_requests:,} = {cells * n_requests:,} requests is over "
            f"the request budget of one simulate_grid call ({MAX_REQUESTS_PER_GRID:,})"
        )
    seed = _check_int("seed", seed, 0, 2**63 - 1)
    warmup = int(_check_warmup(warmup_fraction) * n_requests)
    # Validate every cell before simulating any, so a bad input (e.g. 2.5 replicas) fails fast.
    cell_workloads = [
        [workload.with_changes(rate_rps=rate.item(), replicas=count.item()) for rate in rates]
        for count in counts
    ]
    # Arrivals come from the seed itself (as before routing existed), routing from its child.
    arrival_stream = np.random.SeedSequence(seed)
    (routing_stream,) = arrival_stream.spawn(1)
    unit_arrivals = np.cumsum(
        arrival_gaps(workload, np.random.default_rng(arrival_stream), n_requests, 1.0)
    )
    p99_ms = np.full((counts.size, rates.size), np.inf)
    bounds_ms = np.full((counts.size, rates.size, 2), np.inf)
    for row, row_workloads in enumerate(cell_workloads):
        routing = None
        if not workload.is_central_queue:
            rng = np.random.default_rng(routing_stream)
            routing = routing_draws(row_workloads[0], rng, n_requests)
        for column, cell in enumerate(row_workloads):
            if cell.rate_rps < cell.capacity_rps:
                trace = run_trace(cell, unit_arrivals * (1000.0 / cell.rate_rps), None, routing)
                measured = trace.latency_ms[warmup:]
                p99_ms[row, column] = percentiles(measured, (99,))[0]
                if interval:
                    batch_p99 = [
                        percentiles(part, (99,))[0]
                        for part in np.array_split(measured, GRID_BATCHES)
                    ]
                    half = (
                        t_quantile_975(GRID_BATCHES - 1)
                        * float(np.std(batch_p99, ddof=1))
                        / math.sqrt(GRID_BATCHES)
                    )
                    bounds_ms[row, column] = (
                        p99_ms[row, column] - half,
                        p99_ms[row, column] + half,
                    )
        if progress is not None:
            progress((row + 1) * rates.size, cells)
    return (p99_ms, bounds_ms) if interval else p99_ms


@dataclass(frozen=True, eq=False)
class ResidencySimResult:
    """What ``simulate_residency`` measured (after warm-up, all replications together).

    ``batch_hit_ratio``: share of batches whose model was resident when dispatched.
    ``load_wait_share``: share of requests whose batch waited for a load (its own or one that
    another slot had started). ``p99_ci_ms`` as in ``SimResult``.
    """

    p99_ms: float
    p99_ci_ms: tuple[float, float]
    p50_ms: float
    batch_hit_ratio: float
    load_wait_share: float
    measured_requests: int


def simulate_residency(
    workload: Workload,
    cache: CacheSettings,
    n_requests: int = 200_000,
    seed: int = 0,
    warmup_fraction: float = 0.2,
    replications: int = 4,
    holders: HolderRouting | None = None,
) -> ResidencySimResult:
    """Simulate ``workload`` with each replica's LRU cache of models (``run_fleet``'s residency).

    The workload must use a load balancer (not ``central_queue``) and be below capacity; each
    replication starts warm (see ``run_fleet``) and drops ``warmup_fraction`` of its requests.
    ``holders``: model-aware routing, each request only to a replica holding its model.

    Approximations: finite runs, as ``simulate``. Sources: as ``simulate``; the cache is plain
    LRU on dispatches, as in ModelMesh's and Triton's explicit model control.
    """
    if workload.is_central_queue:
        raise ValueError("simulate_residency needs a load balancer: lb_policy is central_queue")
    if workload.rate_rps >= workload.capacity_rps:
        raise ValueError(
            f"rate_rps={workload.rate_rps:g} is at or beyond capacity "
            f"({workload.capacity_rps:.4g} req/s): nothing to simulate"
        )
    replications = _check_int("replications", replications, 1, MAX_REPLICATIONS)
    n_requests = _check_int(
        "n_requests",
        n_requests,
        replications * MIN_REQUESTS_PER_REPLICATION,
        MAX_REQUESTS_PER_CALL,
        f" (the request budget of one simulate call is {MAX_REQUESTS_PER_CALL:,})",
    )
    seed = _check_int("seed", seed, 0, 2**63 - 1)
    warmup_fraction = _check_warmup(warmup_fraction)
    models = workload.models_hosted
    for name in ("model_size_gb", "load_ms", "pinned"):
        if getattr(cache, name).shape != (models,):
            raise ValueError(f"cache.{name} must have one entry per model ({models})")
    if holders is not None:
        _check_holders(holders, models, workload.replicas)
    per_replication = n_requests // replications
    warmup = int(warmup_fraction * per_replication)
    latencies, replication_p99 = [], []
    batches = hits = waited = measured = 0
    for child in np.random.SeedSequence(seed).spawn(replications):
        trace = _simulate_trace(workload, per_replication, child, "deterministic", cache, holders)
        latency_ms = trace.latency_ms[warmup:]
        latencies.append(latency_ms)
        replication_p99.append(percentiles(latency_ms, (99,))[0])
        kept = trace.batch_first >= warmup
        load_ms = trace.batch_load_ms[kept]
        batches += int(load_ms.size)
        hits += int(np.count_nonzero(load_ms == 0.0))
        waited += int(np.sum(trace.batch_sizes[kept][load_ms > 0.0]))
        measured += int(np.sum(trace.batch_sizes[kept]))
    all_latency_ms = np.concatenate(latencies)
    p50, p99 = percentiles(all_latency_ms, (50, 99))
    interval = (math.nan, math.nan)
    if replications > 1:
        half = (
            t_quantile_975(replications - 1)
            * float(np.std(replication_p99, ddof=1))
            / math.sqrt(replications)
        )
        interval = (p99 - half, p99 + half)
    return ResidencySimResult(
        p99_ms=p99,
        p99_ci_ms=interval,
        p50_ms=p50,
        batch_hit_ratio=hits / batches if batches else math.nan,
        load_wait_share=waited / measured if measured else math.nan,
        measured_requests=int(all_latency_ms.size),
    )


def _check_holders(holders: HolderRouting, models: int, replicas: int) -> None:
    """Every model held by at least one replica, each replica index in range, at most once."""
    start, held = holders.holder_start, holders.holder_replicas
    if start.shape != (models + 1,) or start[0] != 0 or start[-1] != held.size:
        raise ValueError(
            f"holders.holder_start must have {models + 1} offsets from 0 to "
            f"{held.size} (one more than the {models} models)"
        )
    if np.any(np.diff(start) < 1):
        raise ValueError("holders: every model needs at least one replica holding it")
    if held.size and (held.min() < 0 or held.max() >= replicas):
        raise ValueError(f"holders.holder_replicas must be replica indices in [0, {replicas})")
    for model in range(models):
        if np.unique(held[start[model] : start[model + 1]]).size != start[model + 1] - start[model]:
            raise ValueError(f"holders: model {model} is listed twice on one replica")


def simulate_lru_hit_ratio(
    shares: np.ndarray, model_size_gb: np.ndarray, cache_gb: float, n_references: int, seed: int
) -> float:
    """Hit ratio of one LRU cache of models fed ``n_references`` independent references.

    Each reference is for model ``i`` with probability ``shares[i]`` (the independent reference
    model Che's approximation assumes); the cache starts warm and the first 10% of references
    are dropped. Checks ``sdlab_model.residency.che``.
    """
    from sdlab_model.simulation._sim_kernel import run_lru

    n_references = _check_int("n_references", n_references, 100, MAX_REQUESTS_PER_CALL)
    seed = _check_int("seed", seed, 0, 2**63 - 1)
    cumulative = np.cumsum(np.asarray(shares, dtype=float))
    draws = np.random.default_rng(np.random.SeedSequence(seed)).random(n_references)
    model_of = np.minimum(
        np.searchsorted(cumulative, draws * cumulative[-1], side="right"), cumulative.size - 1
    ).astype(np.int64)
    hits = np.zeros(n_references, dtype=np.int64)
    run_lru(model_of, np.asarray(model_size_gb, dtype=float), float(cache_gb), hits)
    return float(np.mean(hits[n_references // 10 :]))
