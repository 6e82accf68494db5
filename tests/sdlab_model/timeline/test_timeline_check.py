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
