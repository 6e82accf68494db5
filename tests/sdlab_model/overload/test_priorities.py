"""Strict priority on c servers: the analytic model against theory, hand sums and the simulator."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sdlab_model.overload import _priority_kernel
from sdlab_model.overload.priorities import (
    PriorityClass,
    PriorityQueue,
    busy_period_cdf,
    cobham_mean_waits,
    priority_latency,
    simulate_priorities,
)
from sdlab_model.queues.queueing import latency
from sdlab_model.simulation._sim_kernel import run_batching_queue
from sdlab_model.workload import Workload

SERVICE_MS = 20.0


def _queue(servers: int, utilization: float, shares: tuple[float, ...]) -> PriorityQueue:
    classes = tuple(PriorityClass(f"class {k}", s, 100.0) for k, s in enumerate(shares))
    return PriorityQueue(utilization * servers * 1000.0 / SERVICE_MS, servers, SERVICE_MS, classes)


@pytest.mark.parametrize(("servers", "utilization"), [(1, 0.7), (4, 0.9), (16, 0.8)])
def test_one_class_is_the_plain_mdc_queue(servers, utilization):
    rate_rps = utilization * servers * 1000.0 / SERVICE_MS
    workload = Workload(
        rate_rps=rate_rps,
        model_latency_ms=SERVICE_MS,
        replicas=servers,
        cpu_workers_per_replica=1,
        gpu=False,
        dynamic_batching=False,
        lb_policy="central_queue",
    )
    fifo = latency(workload)
    result = priority_latency(_queue(servers, utilization, (1.0,)))
    (only,) = result.classes
    assert math.isclose(only.p99_ms, fifo.p99_ms, rel_tol=1e-9), (
        f"M/D/{servers} at {utilization}: one class p99 {only.p99_ms} vs queues' {fifo.p99_ms}"
    )
    assert math.isclose(result.fifo_p99_ms, fifo.p99_ms, rel_tol=1e-9), "FIFO p99 differs"
    assert only.approximate_because is None, f"one class is exact, flagged: {only}"


def test_cobham_means_match_a_hand_computation_for_md1():
    # M/D/1, D = 10 ms, rho1 = 0.3, rho2 = 0.5: W_FIFO = rho D / (2 (1 - rho)) = 20 ms,
    # W0 = W_FIFO (1 - rho) = 4 ms, W1 = 4 / 0.7 = 5.714 ms, W2 = 4 / (0.7 * 0.2) = 28.571 ms.
    waits = cobham_mean_waits(20.0, 0.8, np.array([0.0, 0.3]), np.array([0.3, 0.5]))
    assert np.allclose(waits, [4.0 / 0.7, 4.0 / 0.14], rtol=1e-12), f"Cobham gave {waits}"
    queue = PriorityQueue(
        80.0, 1, 10.0, (PriorityClass("a", 0.375, 50), PriorityClass("b", 0.625, 50))
    )
    result = priority_latency(queue)
    means = [c.mean_wait_ms for c in result.classes]
    assert np.allclose(means, [4.0 / 0.7, 4.0 / 0.14], rtol=1e-6), f"priority_latency: {means}"


@pytest.mark.parametrize("servers", [2, 8])
def test_cobham_means_keep_the_conservation_law(servers):
    queue = _queue(servers, 0.85, (0.2, 0.3, 0.5))
    result = priority_latency(queue)
    weighted = sum(c.share * c.mean_wait_ms for c in result.classes)
    assert math.isclose(weighted, result.fifo_mean_wait_ms, rel_tol=1e-9), (
        f"share-weighted mean wait {weighted} should equal FIFO's {result.fifo_mean_wait_ms}"
    )


def test_below_one_percent_waiting_every_class_p99_is_the_service_time():
    queue = _queue(32, 0.5, (0.3, 0.7))
    result = priority_latency(queue)
    assert result.wait_probability < 0.01, f"P(wait) {result.wait_probability} should be < 1%"
    for c in result.classes:
        assert c.p99_ms == SERVICE_MS and c.approximate_because is None, f"not exact D: {c}"


def test_priority_orders_the_classes_around_fifo():
    result = priority_latency(_queue(4, 0.9, (0.2, 0.3, 0.5)))
    p99 = [c.p99_ms for c in result.classes]
    assert p99[0] <= p99[1] <= p99[2], f"lower classes should wait longer: {p99}"
    assert p99[0] < result.fifo_p99_ms < p99[2], f"FIFO {result.fifo_p99_ms} not between {p99}"


def test_past_capacity_the_top_class_is_served_and_the_low_class_is_unstable():
    queue = _queue(1, 1.25, (0.3, 0.7))
    top, low = priority_latency(queue).classes
    assert top.is_stable and math.isfinite(top.p99_ms) and top.approximate_because, f"top: {top}"
    assert not low.is_stable and math.isinf(low.p99_ms), f"low should be unstable: {low}"
    sim = simulate_priorities(queue, seed=5, max_requests=1_000_000)
    simulated_top, simulated_low = sim.classes
    assert math.isinf(simulated_low.p99_ms), f"the simulated low class: {simulated_low}"
    error = top.p99_ms / simulated_top.p99_ms - 1.0
    assert abs(error) <= 0.03, f"one server past capacity: top class off by {error:+.1%}"


def test_busy_period_has_the_mean_v_over_one_minus_rho():
    # E[T(v)] = v / (1 - rate * step): from the CDF on a fine time grid.
    rate, step, v = 0.6, 1.0, 2.0
    times = np.arange(0.0, 200.0, step) + v
    cdf = np.array([busy_period_cdf(np.array([v]), t + 1e-9, rate, step)[0] for t in times])
    mean = float(np.sum(times * np.diff(np.concatenate(([0.0], cdf)))))
    assert math.isclose(mean, v / (1.0 - rate * step), rel_tol=1e-6), f"mean {mean}"
    assert busy_period_cdf(np.array([0.0, 1.0]), 0.5, 0.0, step).tolist() == [1.0, 0.0]


def test_kernel_with_one_class_is_the_fifo_recursion_bit_for_bit():
    rng = np.random.default_rng(3)
    arrival_ms = np.cumsum(rng.exponential(5.0, 5_000))
    start_ms = np.empty_like(arrival_ms)
    _priority_kernel.run_priority_queue(arrival_ms, np.array([0, 5_000]), 4, 18.0, start_ms)
    dispatch, completion = np.empty_like(arrival_ms), np.empty_like(arrival_ms)
    sizes = np.empty(5_000, dtype=np.int64)
    run_batching_queue(
        arrival_ms, 4, 1, 0.0, np.array([0.0, 18.0]), np.empty(0), dispatch, completion, sizes
    )
    assert np.array_equal(start_ms, dispatch), "one class should be the M/D/c recursion exactly"


def test_compiled_kernel_equals_its_python_source():
    rng = np.random.default_rng(4)
    gaps = rng.exponential(4.0, 3_000)
    marks = rng.integers(0, 3, 3_000)
    order = np.argsort(marks, kind="stable")
    arrival_ms = np.cumsum(gaps)[order]
    bounds = np.concatenate(([0], np.cumsum(np.bincount(marks, minlength=3))))
    compiled, python = np.empty(3_000), np.empty(3_000)
    _priority_kernel.run_priority_queue(arrival_ms, bounds, 3, 11.0, compiled)
    _priority_kernel._run_priority_queue(arrival_ms, bounds, 3, 11.0, python)
    assert np.array_equal(compiled, python), "compiled and plain-Python kernels differ"
    waits = compiled - arrival_ms
    assert np.all(waits >= 0.0), "a request started before it arrived"
    means = [waits[bounds[k] : bounds[k + 1]].mean() for k in range(3)]
    assert means[0] < means[1] < means[2], f"strict priority should order the waits: {means}"


@pytest.mark.parametrize(
    ("servers", "utilization", "shares", "tolerance"),
    [(1, 0.8, (0.3, 0.7), 0.03), (4, 0.85, (0.2, 0.8), 0.05)],
)
def test_simulator_agrees_with_the_model(servers, utilization, shares, tolerance):
    queue = _queue(servers, utilization, shares)
    model = priority_latency(queue)
    sim = simulate_priorities(queue, seed=11, max_requests=1_500_000)
    for analytic, simulated in zip(model.classes, sim.classes, strict=True):
        error = analytic.p99_ms / simulated.p99_ms - 1.0
        assert abs(error) <= tolerance, (
            f"M/D/{servers} at {utilization}, {analytic.name}: model {analytic.p99_ms:.2f} ms vs "
            f"simulated {simulated.p99_ms:.2f} ms ({error:+.1%}); {sim.note}"
        )


def test_a_small_budget_says_not_converged():
    sim = simulate_priorities(_queue(2, 0.95, (0.5, 0.5)), seed=1, max_requests=50_000)
    assert not sim.converged and sim.note.startswith("Not converged"), f"note: {sim.note}"
    assert sim.simulated_requests <= 50_000, f"over budget: {sim.simulated_requests}"


@pytest.mark.parametrize(
    ("shares", "words"),
    [((0.5, 0.4), "sum to"), ((0.0, 1.0), "must be in (0, 1]"), ((1.0, 1.0), "sum to")],
)
def test_invalid_shares_are_refused_with_the_field(shares, words):
    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace("]", r"\]")):
        _queue(2, 0.5, shares)


@pytest.mark.parametrize(
    ("servers", "utilization", "shares", "flagged"),
    [
        (16, 0.75, (0.8, 0.2), (False, True)),  # the lowest behind a heavy upper share
        (16, 0.75, (0.2, 0.8), (False, False)),
        (4, 0.95, (0.3, 0.7), (True, True)),  # past the checked utilization
        (1, 0.8, (0.5, 0.5), (False, False)),  # exact on one server
    ],
)
def test_the_flags_mark_the_cases_the_tuning_grid_found_off(servers, utilization, shares, flagged):
    result = priority_latency(_queue(servers, utilization, shares))
    got = tuple(c.approximate_because is not None for c in result.classes)
    assert got == flagged, f"M/D/{servers} at {utilization}, {shares}: flags {got}, not {flagged}"
