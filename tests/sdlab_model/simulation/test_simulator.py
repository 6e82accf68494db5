"""The simulator against theory, against an obviously-correct event loop, and its contract."""

from __future__ import annotations

import hashlib
import heapq
import json
import math
import os
import subprocess
import sys
from collections import deque
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdlab_model.simulation import simulator
from sdlab_model.simulation.simulator import (
    MAX_REQUESTS_PER_CALL,
    MAX_REQUESTS_PER_GRID,
    SimResult,
    simulate,
    simulate_grid,
)
from sdlab_model.workload import Workload

ROOT = Path(__file__).resolve().parents[3]

_ARRIVAL, _SERVER_FREE, _WINDOW_ENDS = 0, 1, 2


def reference_event_loop(workload: Workload, arrival_ms, service_multiplier=None):
    """The batching queue as a plain heapq event loop, written for clarity, not speed.

    Events at the same instant run arrivals first, so a request arriving exactly when a batch
    closes joins it (the kernel's ``arrival <= dispatch``). After every event, free servers take
    batches from the head of the one FCFS queue while the rule allows.
    """
    batch_limit, window_ms, service_by_size_ms = simulator._queue_settings(workload)
    count = len(arrival_ms)
    events = [(float(a), _ARRIVAL, j) for j, a in enumerate(arrival_ms)]
    heapq.heapify(events)
    queue: deque[int] = deque()
    free_servers = workload.servers
    dispatch_ms = np.full(count, np.nan)
    completion_ms = np.full(count, np.nan)
    batch_sizes = []
    while events:
        now, kind, request = heapq.heappop(events)
        if kind == _ARRIVAL:
            queue.append(request)
        elif kind == _SERVER_FREE:
            free_servers += 1
        while free_servers > 0 and queue:
            deadline = arrival_ms[queue[0]] + window_ms
            if len(queue) < batch_limit and now < deadline:
                heapq.heappush(events, (deadline, _WINDOW_ENDS, -1))
                break
            size = min(batch_limit, len(queue))
            service = service_by_size_ms[size]
            if service_multiplier is not None:
                service = service * service_multiplier[len(batch_sizes)]
            for _ in range(size):
                served = queue.popleft()
                dispatch_ms[served] = now
                completion_ms[served] = now + service
            batch_sizes.append(size)
            free_servers -= 1
            heapq.heappush(events, (now + service, _SERVER_FREE, -1))
    return dispatch_ms, completion_ms, np.array(batch_sizes)


def mmc_response_p99_ms(servers: int, rho: float, service_ms: float) -> float:
    """p99 of the M/M/c response time W + S, from P(W > t) = C(c, a) e^{-(c mu - lam) t}.

    With theta = c mu - lam, W is 0 with probability 1 - C and Exp(theta) otherwise, S is
    Exp(mu) and independent, so P(W + S > t) = (1 - C) e^{-mu t}
    + C (theta e^{-mu t} - mu e^{-theta t}) / (theta - mu). Solved for 0.01 by bisection.
    """
    mu = 1.0 / service_ms
    lam = rho * servers * mu
    offered = lam / mu
    erlang_b = 1.0
    for k in range(1, servers + 1):
        erlang_b = offered * erlang_b / (k + offered * erlang_b)
    erlang_c = erlang_b / (1.0 - rho * (1.0 - erlang_b))
    theta = servers * mu - lam

    def tail(t: float) -> float:
        both = (theta * math.exp(-mu * t) - mu * math.exp(-theta * t)) / (theta - mu)
        return (1.0 - erlang_c) * math.exp(-mu * t) + erlang_c * both

    low, high = 0.0, 1.0
    while tail(high) > 0.01:
        high *= 2.0
    for _ in range(200):
        middle = 0.5 * (low + high)
        low, high = (middle, high) if tail(middle) > 0.01 else (low, middle)
    return 0.5 * (low + high)


def _cpu_queue(servers: int, rho: float, *, batching: bool = False, **changes) -> Workload:
    """A CPU fleet of ``servers`` workers on one replica, loaded to utilization ``rho``."""
    workload = Workload(
        replicas=1,
        cpu_workers_per_replica=servers,
        gpu=False,
        dynamic_batching=batching,
        model_latency_ms=10.0,
        **changes,
    )
    return workload.with_changes(rate_rps=rho * workload.capacity_rps)


# --- theory -----------------------------------------------------------------------------------


@pytest.mark.parametrize("rho", [0.5, 0.9])
def test_mmc_helper_reduces_to_mm1(rho):
    # M/M/1: the response time is Exp(mu - lam), so its p99 is ln(100) S / (1 - rho).
    expected = math.log(100.0) * 10.0 / (1.0 - rho)
    assert mmc_response_p99_ms(1, rho, 10.0) == pytest.approx(expected, rel=1e-9), (
        f"the test's M/M/c p99 helper disagrees with the M/M/1 closed form at rho={rho}"
    )


@pytest.mark.parametrize("servers", [1, 4, 32])
@pytest.mark.parametrize("rho", [0.5, 0.9])
def test_exponential_service_reproduces_mmc_p99(servers, rho):
    workload = _cpu_queue(servers, rho)
    result = simulate(workload, n_requests=1_000_000, seed=11, service="exponential")
    theory = mmc_response_p99_ms(servers, rho, workload.single_request_ms)
    low, high = result.p99_ci_ms
    assert low <= theory <= high, (
        f"M/M/{servers} at rho={rho}: closed-form p99 {theory:.3f} ms outside the simulated "
        f"95% interval [{low:.3f}, {high:.3f}] (point {result.p99_ms:.3f})"
    )


@pytest.mark.parametrize("rho", [0.3, 0.6, 0.85])
def test_md1_mean_wait_matches_pollaczek_khinchine(rho):
    workload = _cpu_queue(1, rho)
    service_ms = workload.single_request_ms
    theory = rho * service_ms / (2.0 * (1.0 - rho))
    result = simulate(workload, n_requests=1_000_000, seed=3)
    # 1M requests put the mean wait's standard error well under 1% up to rho = 0.85.
    assert result.mean_wait_ms == pytest.approx(theory, rel=0.03), (
        f"M/D/1 at rho={rho}: simulated mean wait {result.mean_wait_ms:.4f} ms, "
        f"Pollaczek-Khinchine {theory:.4f} ms"
    )


@pytest.mark.parametrize("batching", [False, True])
def test_littles_law_on_the_simulated_queue(batching):
    workload = _cpu_queue(8, 0.8, batching=batching, batch_window_ms=5.0, max_batch_size=8)
    trace = simulator._simulate_trace(workload, 300_000, np.random.SeedSequence(5))
    start_ms, end_ms = trace.arrival_ms[30_000], trace.arrival_ms[-30_000]
    # N(t) as a step function: +1 at each arrival, -1 at each completion, integrated over the
    # window by summing N between consecutive event times.
    times = np.concatenate([trace.arrival_ms, trace.completion_ms])
    steps = np.concatenate([np.ones(trace.arrival_ms.size), -np.ones(trace.completion_ms.size)])
    order = np.argsort(times, kind="stable")
    times, in_system = times[order], np.cumsum(steps[order])
    clipped = np.clip(times, start_ms, end_ms)
    area = float(np.sum(in_system[:-1] * np.diff(clipped)))
    mean_in_system = area / (end_ms - start_ms)
    measured = (trace.arrival_ms >= start_ms) & (trace.arrival_ms <= end_ms)
    arrival_rate_per_ms = workload.rate_rps / 1000.0
    mean_sojourn_ms = float(np.mean(trace.latency_ms[measured]))
    assert mean_in_system == pytest.approx(arrival_rate_per_ms * mean_sojourn_ms, rel=0.02), (
        f"Little's law broken: time-average number in system {mean_in_system:.3f}, "
        f"lambda x mean sojourn {arrival_rate_per_ms * mean_sojourn_ms:.3f}"
    )


def test_utilization_is_the_offered_load_without_batching():
    workload = _cpu_queue(4, 0.7)
    result = simulate(workload, n_requests=400_000, seed=2)
    assert result.utilization == pytest.approx(0.7, rel=0.02), (
        f"busy fraction {result.utilization:.4f} should be the offered load 0.7 in M/D/4"
    )
    assert result.mean_batch_size == 1.0, "without batching every batch has one request"


def test_more_replicas_never_raise_the_grid_p99_without_batching():
    # Same arrivals in every cell (common random numbers) and FCFS: more servers can only make
    # each request start earlier, so the p99 cannot rise down a column.
    workload = Workload(dynamic_batching=False, cpu_workers_per_replica=2)
    grid = simulate_grid(workload, [200.0, 300.0], [2, 3, 4, 8], n_requests=5_000, seed=1)
    finite = np.where(np.isfinite(grid), grid, 1e300)
    assert np.all(np.diff(finite, axis=0) <= 1e-9), f"p99 rose with more replicas:\n{grid}"


# --- the recursion equals the event loop ------------------------------------------------------


@st.composite
def small_workloads(draw):
    gpu = draw(st.booleans())
    workload = Workload(
        lb_policy="central_queue",
        replicas=draw(st.integers(1, 3)),
        cpu_workers_per_replica=draw(st.integers(1, 3)),
        gpu_instances_per_replica=draw(st.integers(1, 3)),
        gpu=gpu,
        dynamic_batching=draw(st.booleans()),
        max_batch_size=draw(st.integers(1, 8)),
        batch_window_ms=draw(st.one_of(st.just(0.0), st.floats(0.0, 30.0))),
        model_latency_ms=draw(st.floats(1.0, 60.0)),
        cpu_batch_overhead_share=draw(st.floats(0.0, 0.95)),
        gpu_batch_overhead_share=draw(st.floats(0.0, 0.995)),
    )
    # Up to 30% overload: finite runs still end, and long queues exercise full batches.
    load = draw(st.floats(0.1, 1.3))
    return workload.with_changes(rate_rps=max(1.0, min(500_000.0, load * workload.capacity_rps)))


@settings(max_examples=150, deadline=None)
@given(
    workload=small_workloads(),
    n_requests=st.integers(1, 250),
    seed=st.integers(0, 2**32),
    exponential=st.booleans(),
)
def test_kernel_equals_reference_event_loop(workload, n_requests, seed, exponential):
    service = "exponential" if exponential else "deterministic"
    trace = simulator._simulate_trace(workload, n_requests, np.random.SeedSequence(seed), service)
    multiplier = None
    if exponential:
        multiplier = np.random.default_rng(np.random.SeedSequence(seed).spawn(2)[1]).exponential(
            1.0, n_requests
        )
    dispatch_ms, completion_ms, batch_sizes = reference_event_loop(
        workload, trace.arrival_ms, multiplier
    )
    assert np.array_equal(trace.dispatch_ms, dispatch_ms), (
        f"dispatch times differ from the event loop for {workload}: "
        f"{trace.dispatch_ms[:8]} vs {dispatch_ms[:8]}"
    )
    assert np.array_equal(trace.completion_ms, completion_ms), (
        f"completion times differ from the event loop for {workload}"
    )
    assert np.array_equal(trace.batch_sizes, batch_sizes), (
        f"batch sizes differ from the event loop: {trace.batch_sizes} vs {batch_sizes}"
    )
    limit = workload.effective_max_batch_size
    assert np.all((batch_sizes >= 1) & (batch_sizes <= limit)), f"batch outside [1, {limit}]"
    assert np.all(trace.dispatch_ms >= trace.arrival_ms), "a request started before it arrived"


def test_kernel_matches_a_hand_worked_batching_case():
    # One CPU server, batches of up to 3, window 4 ms, a batch of b takes 10 * (0.5 + 0.5 b) ms.
    workload = Workload(
        lb_policy="central_queue",
        replicas=1,
        cpu_workers_per_replica=1,
        gpu=False,
        dynamic_batching=True,
        max_batch_size=3,
        batch_window_ms=4.0,
        model_latency_ms=10.0,
        cpu_batch_overhead_share=0.5,
    )
    arrival_ms = np.array([1.0, 2.0, 3.0, 4.0, 20.0, 21.0])
    trace = simulator.run_trace(workload, arrival_ms)
    # Batch 1: requests 0-2, the third arrives at 3 < 1 + 4 -> dispatch 3, 3 requests,
    # service 10 * (0.5 + 0.5 * 3) = 20 -> done 23.
    # Batch 2: request 3 waits for the server (free at 23), its window ended at 8, and requests
    # 4 and 5 have arrived by 23 -> dispatch 23 with 3 requests, done 43.
    assert trace.dispatch_ms.tolist() == [3.0, 3.0, 3.0, 23.0, 23.0, 23.0], (
        f"hand-worked dispatch times differ: {trace.dispatch_ms.tolist()}"
    )
    assert trace.completion_ms.tolist() == [23.0, 23.0, 23.0, 43.0, 43.0, 43.0], (
        f"hand-worked completion times differ: {trace.completion_ms.tolist()}"
    )


# --- numba: lazy, and identical with the JIT off ----------------------------------------------

_FINGERPRINT_SCRIPT = """
import hashlib, json, sys
import numpy as np
from sdlab_model.simulation import simulator
from sdlab_model.workload import Workload
workload = Workload(rate_rps=3000.0, replicas=1, cpu_workers_per_replica=4,
                    dynamic_batching=True, batch_window_ms=3.0, max_batch_size=8)
result = simulator.simulate(workload, n_requests=3_000, seed=9, replications=2)
trace = simulator._simulate_trace(workload, 2_000, np.random.SeedSequence(4), "exponential")
kernel = simulator._kernel()
print(json.dumps({
    "latencies": hashlib.sha256(result.latencies_ms.tobytes()).hexdigest(),
    "completion": hashlib.sha256(trace.completion_ms.tobytes()).hexdigest(),
    "compiled": hasattr(kernel, "py_func"),
}))
"""


def _fingerprint(extra_env: dict[str, str]) -> dict:
    env = {**os.environ, **extra_env}
    completed = subprocess.run(
        [sys.executable, "-c", _FINGERPRINT_SCRIPT],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, f"fingerprint script failed:\n{completed.stderr}"
    return json.loads(completed.stdout.strip().splitlines()[-1])


def test_results_identical_to_the_bit_with_the_jit_disabled():
    interpreted = _fingerprint({"NUMBA_DISABLE_JIT": "1"})
    assert not interpreted["compiled"], "NUMBA_DISABLE_JIT=1 should leave the kernel as Python"
    # Same computation in this process, with the JIT on.
    workload = Workload(
        rate_rps=3000.0,
        replicas=1,
        cpu_workers_per_replica=4,
        dynamic_batching=True,
        batch_window_ms=3.0,
        max_batch_size=8,
    )
    result = simulate(workload, n_requests=3_000, seed=9, replications=2)
    trace = simulator._simulate_trace(workload, 2_000, np.random.SeedSequence(4), "exponential")
    if os.environ.get("NUMBA_DISABLE_JIT") != "1":
        assert hasattr(simulator._kernel(), "py_func"), "the kernel should be numba-compiled here"
    assert hashlib.sha256(result.latencies_ms.tobytes()).hexdigest() == interpreted["latencies"], (
        "simulated latencies differ between the compiled and the interpreted kernel"
    )
    assert hashlib.sha256(trace.completion_ms.tobytes()).hexdigest() == interpreted["completion"], (
        "exponential-service completions differ between the compiled and the interpreted kernel"
    )


def test_compile_falls_back_when_no_cache_directory_is_writable(monkeypatch):
    from sdlab_model.simulation import _sim_kernel

    calls = []

    def fake_njit(*, cache, nogil):
        assert nogil, "the kernel should release the GIL while it runs"
        calls.append(cache)
        if cache:
            raise RuntimeError("cannot cache function: no locator available")
        return lambda function: function

    monkeypatch.setattr(_sim_kernel, "njit", fake_njit)
    compiled = _sim_kernel._compile(_sim_kernel._replace_min)
    assert calls == [True, False], f"expected a cached try then an uncached compile, got {calls}"
    assert compiled is _sim_kernel._replace_min, "the fallback should compile the same function"


# --- the contract -----------------------------------------------------------------------------


def test_same_seed_same_result_and_different_seeds_differ():
    workload = Workload(rate_rps=2_000.0)
    first = simulate(workload, n_requests=20_000, seed=42)
    again = simulate(workload, n_requests=20_000, seed=42)
    other = simulate(workload, n_requests=20_000, seed=43)
    assert np.array_equal(first.latencies_ms, again.latencies_ms), "same seed, different latencies"
    assert first.p99_ci_ms == again.p99_ci_ms, "same seed, different interval"
    assert not np.array_equal(first.latencies_ms, other.latencies_ms), (
        "seeds 42 and 43 gave identical latencies"
    )
    grid_a = simulate_grid(workload, [1_000.0, 2_000.0], [1, 2], n_requests=2_000, seed=7)
    grid_b = simulate_grid(workload, [1_000.0, 2_000.0], [1, 2], n_requests=2_000, seed=7)
    assert np.array_equal(grid_a, grid_b), "same seed, different simulated grid"


def test_result_reports_its_settings_and_a_sane_interval():
    workload = Workload(rate_rps=4_000.0)
    result = simulate(workload, n_requests=50_000, seed=1, warmup_fraction=0.2, replications=5)
    assert isinstance(result, SimResult), "simulate should return a SimResult"
    assert (result.n_requests, result.seed, result.replications) == (50_000, 1, 5), (
        "settings not recorded"
    )
    assert result.measured_requests == 5 * 8_000, (
        f"expected 5 x (10,000 - 20% warm-up) requests, got {result.measured_requests}"
    )
    assert result.p50_ms <= result.p95_ms <= result.p99_ms, "percentiles out of order"
    assert result.p99_ci_ms[0] <= result.p99_ms <= result.p99_ci_ms[1], "p99 outside its interval"
    assert len(result.replication_p99_ms) == 5, "one p99 per replication expected"
    assert 1.0 <= result.mean_batch_size <= workload.max_batch_size, "mean batch size out of range"
    assert 0.0 < result.utilization < 1.0, f"utilization {result.utilization} not in (0, 1)"
    assert result.is_stable, "a workload under capacity should be stable"
    assert not result.latencies_ms.flags.writeable, "latencies should be read-only"
    assert np.all(result.latencies_ms >= workload.batch_service_ms(1) - 1e-9), (
        "a request finished faster than a batch of one takes"
    )


def test_request_budget_is_enforced():
    workload = Workload()
    with pytest.raises(ValueError, match="2,000,000"):
        simulate(workload, n_requests=MAX_REQUESTS_PER_CALL + 1)
    with pytest.raises(ValueError, match="40,000,000"):
        simulate_grid(workload, np.linspace(100, 1_000, 40), np.arange(1, 41), n_requests=30_000)
    assert MAX_REQUESTS_PER_GRID < 40 * 40 * 30_000, "the grid case above must exceed the budget"
    with pytest.raises(ValueError, match="replications"):
        simulate(workload, replications=0)
    with pytest.raises(ValueError, match="warmup_fraction"):
        simulate(workload, warmup_fraction=0.95)
    with pytest.raises(ValueError, match="service"):
        simulate(workload, service="pareto")


def test_unstable_workload_is_not_simulated():
    workload = Workload(replicas=1, dynamic_batching=False)
    overloaded = workload.with_changes(rate_rps=workload.capacity_rps)
    result = simulate(overloaded)
    assert not result.is_stable, "rate == capacity must be unstable"
    assert math.isinf(result.p99_ms) and math.isinf(result.p50_ms), "percentiles must be inf"
    assert result.latencies_ms.size == 0, "nothing should be simulated when unstable"
    assert "capacity" in result.note, f"the note should say why: {result.note!r}"
    rates = [0.5 * workload.capacity_rps, 2.0 * workload.capacity_rps]
    grid = simulate_grid(workload, rates, [1], n_requests=1_000)
    assert np.isfinite(grid[0, 0]) and np.isinf(grid[0, 1]), (
        f"grid should be inf only past capacity: {grid}"
    )


def test_grid_shape_and_progress():
    calls = []
    grid = simulate_grid(
        Workload(),
        [100.0, 1_000.0, 5_000.0],
        [1, 2],
        n_requests=1_000,
        progress=lambda done, total: calls.append((done, total)),
    )
    assert grid.shape == (2, 3), f"grid shape should be (replicas, rates), got {grid.shape}"
    assert calls == [(3, 6), (6, 6)], f"progress should report after each row, got {calls}"


# --- the fleet kernel equals a plain event loop of per-replica, per-model batchers -----------

_WINDOW, _DONE, _COMES = 0, 1, 2  # at one instant: windows, then completions, then arrivals


def reference_fleet_event_loop(workload: Workload, arrival_ms, routing, service_multiplier=None):
    """Load balancer + per-replica, per-model Triton batchers as a plain heapq event loop.

    Written from the description in ``sdlab_model.workload``, for clarity, not speed. After
    every event, each free slot of the replica concerned takes the batch of the queue that has
    been ready longest, while any is ready (ready: ``B`` waiting, or the oldest waited ``W``);
    on equal ready times, the queue whose oldest request came first.
    """
    batch_limit, window_ms, service_by_size_ms = simulator._queue_settings(workload)
    model_of, first, second = routing
    replicas, models = workload.replicas, workload.models_hosted
    queues = [[deque() for _ in range(models)] for _ in range(replicas)]
    free = [workload.slots_per_replica] * replicas
    unfinished = [0] * replicas
    count = len(arrival_ms)
    dispatch_ms = np.full(count, np.nan)
    completion_ms = np.full(count, np.nan)
    batches = []  # (first request, size)
    events = [(float(a), _COMES, j, -1) for j, a in enumerate(arrival_ms)]
    heapq.heapify(events)

    def ready_since(queue):
        since = arrival_ms[queue[0]] + window_ms
        if len(queue) >= batch_limit:
            since = min(since, arrival_ms[queue[batch_limit - 1]])
        return since

    while events:
        now, kind, request, replica = heapq.heappop(events)
        if kind == _COMES:
            if workload.lb_policy == "round_robin":
                replica = request % replicas
            elif workload.lb_policy == "least_request":
                a, b = int(first[request]), int(second[request])
                replica = b if unfinished[b] < unfinished[a] else a
            else:
                replica = int(first[request])
            unfinished[replica] += 1
            queues[replica][model_of[request]].append(request)
        elif kind == _DONE:
            free[replica] += 1
            unfinished[replica] -= request  # the batch size rides in the request field
        while free[replica] > 0:
            ready = [
                (ready_since(q), q[0], m)
                for m, q in enumerate(queues[replica])
                if q and ready_since(q) <= now
            ]
            if not ready:
                break
            *_, model = min(ready)
            queue = queues[replica][model]
            size = min(batch_limit, len(queue))
            service = service_by_size_ms[size]
            if service_multiplier is not None:  # one draw per batch, by its oldest request
                service = service * service_multiplier[queue[0]]
            batches.append((queue[0], size))
            for _ in range(size):
                served = queue.popleft()
                dispatch_ms[served] = now
                completion_ms[served] = now + service
            free[replica] -= 1
            heapq.heappush(events, (now + service, _DONE, size, replica))
        for queue in queues[replica]:
            if queue and ready_since(queue) > now:
                heapq.heappush(events, (ready_since(queue), _WINDOW, queue[0], replica))
    return dispatch_ms, completion_ms, batches


@st.composite
def small_fleets(draw):
    workload = Workload(
        lb_policy=draw(st.sampled_from(["random", "round_robin", "least_request"])),
        replicas=draw(st.integers(1, 4)),
        models_hosted=draw(st.integers(1, 4)),
        popularity_skew=draw(st.floats(0.0, 2.0)),
        cpu_workers_per_replica=draw(st.integers(1, 3)),
        gpu_instances_per_replica=draw(st.integers(1, 3)),
        gpu=draw(st.booleans()),
        dynamic_batching=draw(st.booleans()),
        max_batch_size=draw(st.integers(1, 8)),
        batch_window_ms=draw(st.one_of(st.just(0.0), st.floats(0.0, 30.0))),
        model_latency_ms=draw(st.floats(1.0, 60.0)),
        arrival_cv=draw(st.sampled_from([0.5, 1.0, 3.0])),
    )
    load = draw(st.floats(0.1, 1.3))
    return workload.with_changes(rate_rps=max(1.0, min(500_000.0, load * workload.capacity_rps)))


@settings(max_examples=150, deadline=None)
@given(
    workload=small_fleets(),
    n_requests=st.integers(1, 250),
    seed=st.integers(0, 2**32),
    exponential=st.booleans(),
)
def test_fleet_kernel_equals_reference_event_loop(workload, n_requests, seed, exponential):
    service = "exponential" if exponential else "deterministic"
    trace = simulator._simulate_trace(workload, n_requests, np.random.SeedSequence(seed), service)
    _, service_stream, routing_stream = np.random.SeedSequence(seed).spawn(3)
    routing = simulator.routing_draws(workload, np.random.default_rng(routing_stream), n_requests)
    multiplier = None
    if exponential:
        multiplier = np.random.default_rng(service_stream).exponential(1.0, n_requests)
    dispatch_ms, completion_ms, batches = reference_fleet_event_loop(
        workload, trace.arrival_ms, routing, multiplier
    )
    assert np.array_equal(trace.dispatch_ms, dispatch_ms), (
        f"dispatch times differ from the event loop for {workload}: "
        f"{trace.dispatch_ms[:8]} vs {dispatch_ms[:8]}"
    )
    assert np.array_equal(trace.completion_ms, completion_ms), (
        f"completion times differ from the event loop for {workload}"
    )
    # Batches that start at the same instant on different replicas may be listed either way.
    kernel = sorted(zip(trace.batch_first.tolist(), trace.batch_sizes.tolist(), strict=True))
    assert kernel == sorted(batches), f"batches differ from the event loop: {kernel} vs {batches}"


def test_central_queue_reproduces_the_pooled_simulator_bit_for_bit():
    # Pinned 2026-11-30 from the simulator before load balancers existed (commit 5b9a436):
    # the central queue must keep giving exactly those numbers.
    workload = Workload(rate_rps=3000, replicas=4, lb_policy="central_queue")
    result = simulate(workload, n_requests=50_000)
    assert result.p99_ms == 105.32584299037431, f"central-queue p99 moved: {result.p99_ms!r}"
    assert result.utilization == 0.20508653262331733, "central-queue utilization moved"
    grid = simulate_grid(workload, [1000.0, 3000.0], [2, 4], n_requests=5_000)
    unbatched = simulate(workload.with_changes(dynamic_batching=False), n_requests=50_000)
    assert unbatched.p99_ms == 32.93318642587593, f"unbatched p99 moved: {unbatched.p99_ms!r}"
    assert np.all(np.isfinite(grid)), "the grid cells are all stable"


@pytest.mark.parametrize("models", [1, 7, 60])
def test_round_robin_without_batching_is_the_central_queue_on_the_same_arrivals(models):
    # FCFS with deterministic service hands requests to servers cyclically, so sending every
    # R-th request to the same replica changes nothing: the latencies are the same, exactly,
    # whatever the models (each replica serves its requests in arrival order).
    central = Workload(rate_rps=3000, replicas=4, dynamic_batching=False, lb_policy="central_queue")
    pooled = simulate(central, n_requests=50_000)
    for cv in (1.0, 3.0):
        base = central.with_changes(arrival_cv=cv)
        expected = simulate(base, n_requests=50_000)
        spread = simulate(
            base.with_changes(lb_policy="round_robin", models_hosted=models), n_requests=50_000
        )
        assert np.array_equal(spread.latencies_ms, expected.latencies_ms), (
            f"round robin differs from the central queue at CV {cv}, {models} models"
        )
    assert pooled.p99_ms > 20.0, "the comparison must include queueing"


# ---- Percentiles by selection (issue 13: the Lab's simulation without numpy's multi-partition)


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(
        st.floats(min_value=0, max_value=1e6, allow_nan=False) | st.sampled_from([1.0, 2.5, 7.0]),
        min_size=1,
        max_size=300,
    ),
    percents=st.lists(st.floats(min_value=0, max_value=100), min_size=1, max_size=4),
)
def test_percentiles_are_numpys_to_the_last_bit(values, percents):
    array = np.asarray(values)
    expected = np.percentile(array, percents).tolist()
    got = simulator.percentiles(array, percents)
    assert got == expected, f"percentiles {percents} of {len(values)} values: {got} != {expected}"


@pytest.mark.parametrize("rate_rps", [300.0, 3_000.0])
def test_simulated_percentiles_equal_numpy_percentile(rate_rps):
    result = simulate(Workload(rate_rps=rate_rps, dynamic_batching=True), n_requests=20_000)
    expected = np.percentile(result.latencies_ms, [50, 95, 99]).tolist()
    assert [result.p50_ms, result.p95_ms, result.p99_ms] == expected, (
        f"simulate's p50/p95/p99 {result.p50_ms, result.p95_ms, result.p99_ms} differ from "
        f"np.percentile {expected}"
    )
    per_replication = np.split(result.latencies_ms, result.replications)
    expected_p99s = [float(np.percentile(part, 99)) for part in per_replication]
    assert list(result.replication_p99_ms) == expected_p99s, (
        f"replication p99s {result.replication_p99_ms} differ from np.percentile {expected_p99s}"
    )


def test_grid_intervals_bracket_the_p99_and_leave_it_unchanged():
    workload = Workload(rate_rps=1000.0, replicas=2)
    rates, counts = [500.0, 3000.0, 400_000.0], [1, 4]
    plain = simulate_grid(workload, rates, counts, n_requests=20_000, seed=4)
    p99, bounds = simulate_grid(workload, rates, counts, n_requests=20_000, seed=4, interval=True)
    assert np.array_equal(p99, plain), "asking for intervals must not change the p99"
    assert bounds.shape == (*p99.shape, 2), f"interval shape {bounds.shape}"
    stable = np.isfinite(p99)
    assert stable.any() and (~stable).any(), "the grid needs stable and unstable cells"
    low, high = bounds[..., 0], bounds[..., 1]
    assert np.all(low[stable] <= p99[stable]) and np.all(p99[stable] <= high[stable])
    assert np.all(high[stable] > low[stable]), "a finite run's p99 carries some uncertainty"
    assert np.all(np.isinf(bounds[~stable])), "an unstable cell has no interval"
