"""The timeline check's kernels against the simulator's own, and the check against theory.

The kernels that serve requests on a fleet whose size changes (``_timeline_kernel``) must, on a
fleet that does not change, give the simulator's results request for request: the pooled batching
queue those of ``_sim_kernel.run_batching_queue``, the balanced per-replica queues those of
``_sim_kernel.run_fleet``. With a changing fleet, the batched kernel without batching must be the
first round's unbatched one, start for start.
"""

from __future__ import annotations

import numpy as np
import pytest

from sdlab_model import evaluate
from sdlab_model.simulation import _sim_kernel, _timeline_kernel
from sdlab_model.timeline import AutoscalerConfig, TimelineInputs, TrafficShape, run_timeline
from sdlab_model.timeline.check import coverage_note, is_covered, simulate_timeline
from sdlab_model.workload import Workload

SERVICE_BY_SIZE_S = np.array([0.0, 0.010, 0.013, 0.016, 0.019])  # batches of 0..4


def _arrivals(seed: int, count: int, rate_rps: float) -> np.ndarray:
    random = np.random.default_rng(seed)
    return np.cumsum(random.exponential(1.0 / rate_rps, count))


def test_without_batching_the_batched_kernel_is_the_unbatched_one_on_a_changing_fleet():
    arrivals = _arrivals(1, 20_000, 400.0)
    starts = np.array([0.0, 10.0, 20.0, 30.0, 40.0])
    servers = np.array([4, 2, 6, 0, 3], np.int64)  # up, down, none for 10 s, back
    expected = _timeline_kernel.serve(arrivals, 0.01, starts, servers)
    dispatch = np.empty(arrivals.size)
    completion = np.empty(arrivals.size)
    _timeline_kernel.serve_batches(
        arrivals, 1, 0.0, np.array([0.0, 0.01]), starts, servers, dispatch, completion
    )
    assert np.array_equal(dispatch, expected), "B = 1 must reproduce the unbatched kernel"
    assert np.all(dispatch >= arrivals), "no request starts before it arrives"
    gap = (dispatch >= 30.0) & (dispatch < 40.0)
    assert not gap.any(), "nothing starts while the fleet has no server"


def test_on_a_fixed_fleet_the_pooled_batching_queue_is_the_simulators():
    arrivals = _arrivals(2, 30_000, 900.0)
    servers, size, window_s = 3, 4, 0.004
    dispatch = np.empty(arrivals.size)
    completion = np.empty(arrivals.size)
    _timeline_kernel.serve_batches(
        arrivals,
        size,
        window_s,
        SERVICE_BY_SIZE_S,
        np.array([0.0]),
        np.array([servers], np.int64),
        dispatch,
        completion,
    )
    sim_dispatch = np.empty(arrivals.size)
    sim_completion = np.empty(arrivals.size)
    _sim_kernel.run_batching_queue(
        arrivals * 1000.0,
        servers,
        size,
        window_s * 1000.0,
        SERVICE_BY_SIZE_S * 1000.0,
        np.empty(0),
        sim_dispatch,
        sim_completion,
        np.empty(arrivals.size, np.int64),
    )
    assert completion == pytest.approx(sim_completion / 1000.0, rel=1e-12, abs=1e-9), (
        "the pooled batching queue's completions differ from the simulator's"
    )


@pytest.mark.parametrize(("policy", "code"), [("round_robin", 1), ("random", 0)])
def test_on_a_fixed_fleet_the_balanced_replicas_are_the_simulators(policy, code):
    arrivals = _arrivals(3, 30_000, 1500.0)
    replicas, slots, size, window_s = 5, 2, 4, 0.004
    uniform = np.random.default_rng(4).random(arrivals.size)
    life_of = np.empty(arrivals.size, np.int64)
    life_start = np.empty(replicas)
    lives = _timeline_kernel.route(
        arrivals,
        np.array([0.0]),
        np.array([replicas], np.int64),
        code,
        uniform,
        life_of,
        life_start,
    )
    assert lives == replicas, f"{lives} replica lives on a fixed fleet of {replicas}"
    dispatch = np.empty(arrivals.size)
    completion = np.empty(arrivals.size)
    _timeline_kernel.serve_lives(
        arrivals,
        life_of,
        life_start,
        slots,
        size,
        window_s,
        SERVICE_BY_SIZE_S,
        dispatch,
        completion,
    )
    choice = np.minimum(replicas - 1, (uniform * replicas).astype(np.int64))
    sim_dispatch = np.empty(arrivals.size)
    sim_completion = np.empty(arrivals.size)
    _sim_kernel.run_fleet(
        arrivals * 1000.0,
        np.zeros(arrivals.size, np.int64),
        choice,
        choice,
        _sim_kernel.POLICY_ROUND_ROBIN if code == 1 else _sim_kernel.POLICY_RANDOM,
        replicas,
        slots,
        1,
        size,
        window_s * 1000.0,
        SERVICE_BY_SIZE_S * 1000.0,
        np.empty(0),
        sim_dispatch,
        sim_completion,
        np.empty(arrivals.size, np.int64),
        np.empty(arrivals.size, np.int64),
        np.empty(0),
        np.empty(0),
        np.empty(0, np.bool_),
        0.0,
        np.empty(arrivals.size),
        np.empty(0, np.int64),  # no model-aware routing
        np.zeros(1, np.int64),
    )
    assert completion == pytest.approx(sim_completion / 1000.0, rel=1e-12, abs=1e-9), (
        f"{policy}: per-replica completions differ from the simulator's fleet"
    )


def test_a_replica_added_again_is_a_new_replica_and_a_removed_one_gets_nothing_new():
    arrivals = np.arange(0.05, 30.0, 0.1)
    starts = np.array([0.0, 10.0, 20.0])
    replicas = np.array([3, 1, 2], np.int64)
    life_of = np.empty(arrivals.size, np.int64)
    life_start = np.empty(4)
    lives = _timeline_kernel.route(
        arrivals,
        starts,
        replicas,
        1,
        np.empty(0),
        life_of,
        life_start,
    )
    assert lives == 4, f"3 at first, then replica 1 again after the scale-down: {lives} lives"
    assert set(life_of[(arrivals >= 10) & (arrivals < 20)]) == {0}, "one replica in [10, 20)"
    assert set(life_of[arrivals >= 20]) == {0, 3}, "replica 1 comes back as a new life"
    assert life_start[3] == 20.0, "the new life starts when it is added"


def test_the_check_covers_batching_and_every_balancer_but_least_request():
    assert is_covered(Workload(dynamic_batching=True, lb_policy="random")), "batched random"
    assert is_covered(Workload(dynamic_batching=True, lb_policy="central_queue")), "central"
    assert not is_covered(Workload(lb_policy="least_request")), "least request is outside"
    note = coverage_note(Workload(lb_policy="least_request", models_hosted=3))
    assert note is not None and "least-request" in note and "3 hosted models" in note, note


@pytest.mark.parametrize("policy", ["central_queue", "round_robin", "random"])
def test_a_steady_batched_fleet_simulates_to_the_queueing_models_p99(policy):
    workload = Workload(rate_rps=3000, replicas=4, lb_policy=policy)
    inputs = TimelineInputs(
        workload=workload,
        traffic=TrafficShape(kind="constant", base_rate_rps=workload.rate_rps),
        autoscaler=AutoscalerConfig(kind="none", min_replicas=4, max_replicas=4),
        duration_s=240,
    )
    check = simulate_timeline(run_timeline(inputs), seed=11)
    expected = evaluate(workload).p99_ms
    simulated = check.simulated_p99_ms[check.compared]
    # The queueing model's stated accuracy with batching is 15% (queueing.py), a minute's
    # p99 from ~180,000 requests adds about 1%.
    errors = np.abs(simulated - expected) / simulated
    assert errors.max() < 0.17, f"{policy}: minute p99s {simulated} vs the model's {expected}"


def _served_in_chunks(arrivals, horizons, serve_chunk):
    """Serve ``arrivals`` a chunk at a time (cut at ``horizons``), carrying what a chunk leaves
    unserved into the next, as the check does; returns every request's completion."""
    completion = np.full(arrivals.size, np.nan)
    carried = np.empty(0, np.int64)
    cuts = np.searchsorted(arrivals, horizons)
    for begin, end, horizon in zip(
        np.r_[0, cuts], np.r_[cuts, arrivals.size], np.r_[horizons, np.inf], strict=True
    ):
        chunk = np.r_[carried, np.arange(begin, end)]
        done = serve_chunk(chunk, horizon)
        completion[chunk[done]] = serve_chunk.completion[done]
        carried = chunk[~done]
    assert carried.size == 0, "the last chunk (no horizon) serves every request"
    return completion


@pytest.mark.parametrize(("size", "window_s"), [(1, 0.0), (4, 0.004), (8, 0.05)])
def test_a_pooled_queue_served_in_chunks_is_the_queue_served_at_once(size, window_s):
    arrivals = _arrivals(5, 40_000, 2500.0)
    starts = np.array([0.0, 3.0, 7.5, 9.0, 12.0])
    servers = np.array([6, 2, 9, 0, 5], np.int64)  # overloaded, idle, no server, back
    service = np.linspace(0.0, 0.02, size + 1)
    dispatch = np.empty(arrivals.size)
    expected = np.empty(arrivals.size)
    _timeline_kernel.serve_batches(
        arrivals, size, window_s, service, starts, servers, dispatch, expected
    )
    heap, counters, clock = _timeline_kernel.start_queue(starts, servers)

    def serve_chunk(chunk, horizon):
        out = np.empty(chunk.size)
        done = _timeline_kernel.serve_queue_until(
            arrivals[chunk],
            size,
            window_s,
            service,
            starts,
            servers,
            heap,
            counters,
            clock,
            horizon,
            np.empty(chunk.size),
            out,
        )
        serve_chunk.completion = out
        return np.arange(chunk.size) < done

    horizons = np.array([0.5, 2.99, 3.0, 3.01, 7.5, 8.0, 9.2, 11.0, 12.0, 12.0001, 14.0])
    got = _served_in_chunks(arrivals, horizons, serve_chunk)
    assert np.array_equal(got, expected), (
        f"B={size}: {np.sum(got != expected)} completions differ when served in chunks"
    )


@pytest.mark.parametrize(("policy", "size", "window_s"), [(1, 4, 0.004), (0, 8, 0.05), (0, 1, 0)])
def test_balanced_replicas_served_in_chunks_are_the_replicas_served_at_once(policy, size, window_s):
    arrivals = _arrivals(6, 40_000, 2500.0)
    starts = np.array([0.0, 3.0, 7.5, 9.0, 12.0])
    replicas = np.array([4, 1, 6, 0, 3], np.int64)
    slots = 2
    uniform = np.random.default_rng(7).random(arrivals.size)
    service = np.linspace(0.0, 0.02, size + 1)
    life_of = np.empty(arrivals.size, np.int64)
    life_start = np.empty(16)
    _timeline_kernel.route(arrivals, starts, replicas, policy, uniform, life_of, life_start)
    expected = np.empty(arrivals.size)
    _timeline_kernel.serve_lives(
        arrivals,
        life_of,
        life_start,
        slots,
        size,
        window_s,
        service,
        np.empty(arrivals.size),
        expected,
    )
    starts_of_life = np.empty(16)
    alive, counters = _timeline_kernel.start_routing(starts, replicas, starts_of_life)
    chunk_life = np.empty(arrivals.size, np.int64)
    routed = np.zeros(arrivals.size, bool)
    heaps = np.empty((16, slots))
    clocks = np.empty((16, 2))
    prepared = [0]

    def serve_chunk(chunk, horizon):
        new = chunk[~routed[chunk]]
        if new.size:
            out = np.empty(new.size, np.int64)
            _timeline_kernel.route_until(
                arrivals[new],
                starts,
                replicas,
                policy,
                uniform[new],
                new[0],
                alive,
                counters,
                starts_of_life,
                out,
            )
            chunk_life[new] = out
            routed[new] = True
        for life in range(prepared[0], counters[1]):
            heaps[life] = starts_of_life[life]
            clocks[life] = (starts_of_life[life], -np.inf)
        prepared[0] = counters[1]
        completion = np.empty(chunk.size)
        done = np.zeros(chunk.size, bool)
        _timeline_kernel.serve_lives_until(
            arrivals[chunk],
            chunk_life[chunk],
            starts_of_life,
            slots,
            size,
            window_s,
            service,
            heaps,
            clocks,
            horizon,
            np.empty(chunk.size),
            completion,
            done,
        )
        serve_chunk.completion = completion
        return done

    horizons = np.array([0.5, 2.99, 3.0, 3.01, 7.5, 8.0, 9.2, 11.0, 12.0, 12.0001, 14.0])
    got = _served_in_chunks(arrivals, horizons, serve_chunk)
    assert np.array_equal(life_of, chunk_life), "routing in chunks sends requests elsewhere"
    assert np.array_equal(got, expected), (
        f"policy {policy}, B={size}: {np.sum(got != expected)} completions differ in chunks"
    )


def _constant(policy: str, rate_rps: float, duration_s: float) -> TimelineInputs:
    workload = Workload(rate_rps=rate_rps, replicas=8, lb_policy=policy)
    return TimelineInputs(
        workload=workload,
        traffic=TrafficShape(kind="spike", base_rate_rps=rate_rps, factor=3, at_s=60),
        autoscaler=AutoscalerConfig(kind="hpa", min_replicas=2, max_replicas=40),
        duration_s=duration_s,
    )


@pytest.mark.parametrize("policy", ["central_queue", "round_robin", "random"])
def test_the_chunk_size_sets_the_checks_memory_never_its_result(policy):
    result = run_timeline(_constant(policy, 2000, 300))
    small = simulate_timeline(result, seed=3, chunk_requests=2_000)
    whole = simulate_timeline(result, seed=3, chunk_requests=10**9)
    assert small.requests == whole.requests > 1_000_000, "the same requests either way"
    assert np.array_equal(small.simulated_p99_ms, whole.simulated_p99_ms, equal_nan=True), (
        f"{policy}: chunks of 2,000 requests give other minute p99s than one chunk"
    )
    assert small.simulated_requests_over == whole.simulated_requests_over, policy


def test_the_check_holds_a_chunk_of_requests_not_every_request():
    import tracemalloc

    result = run_timeline(_constant("random", 5000, 600))  # ~3.2M requests
    simulate_timeline(result, seed=1)  # kernels compiled outside the measurement
    tracemalloc.start()
    check = simulate_timeline(result, seed=1)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    per_request = 8 * check.requests  # the latencies kept for the minutes' p99s
    assert peak < per_request + 40e6, (
        f"{check.requests:,} requests took {peak / 1e6:.0f} MB of arrays at the peak: more "
        f"than their latencies ({per_request / 1e6:.0f} MB) and a chunk's"
    )


def test_a_timeline_over_the_cap_is_checked_over_its_first_minutes(monkeypatch):
    from sdlab_model.timeline import check as check_module

    result = run_timeline(_constant("round_robin", 2000, 600))
    monkeypatch.setattr(check_module, "MAX_SIMULATED_REQUESTS", 500_000)
    span = check_module.check_span(result)
    # 120,000 requests in minute 0, 360,000 in minute 1 (the spike): 480,000; then 840,000.
    assert span.minutes == 2 and not span.whole, f"2,000 req/s then ×3: {span}"
    assert span.end_s == 120.0 and span.expected_requests == pytest.approx(480_000), span
    check = simulate_timeline(result, seed=2)
    assert check.span == span, "the check says what it simulated"
    assert check.requests < 520_000, f"{check.requests:,} requests drawn past the cap"
    assert np.all(np.isnan(check.simulated_p99_ms[2:])), "nothing simulated after the span"
    assert check.compared[:2].all() and not check.compared[2:].any(), check.compared
    target = result.inputs.workload.p99_target_ms
    over = int(np.sum(result.minute_p99_ms[:2] > target))
    assert check.model_minutes_over == over, "the model's minutes over, counted over the span"
    monkeypatch.setattr(check_module, "MAX_SIMULATED_REQUESTS", 100_000)
    with pytest.raises(ValueError, match="first minute"):
        simulate_timeline(result, seed=2)
