"""The queueing model: exact M/D/c cross-checks, the batching model's flags, and invariants."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdlab_model.queues import queueing
from sdlab_model.queues.mdc import MdcWait
from sdlab_model.scenarios import SCENARIOS
from sdlab_model.workload import Workload


@pytest.mark.parametrize("rho", [0.1, 0.5, 0.9, 0.97])
def test_md1_mean_wait_is_pollaczek_khinchine(rho):
    # Pollaczek–Khinchine for M/D/1: E[W] = rho D / (2 (1 - rho)), D = 1.
    wait = MdcWait.solve(1, rho)
    assert wait.mean_wait == pytest.approx(rho / (2 * (1 - rho)), rel=1e-9), "M/D/1 mean wait"


@pytest.mark.parametrize("x", [0.0, 0.25, 0.5, 0.99])
def test_md1_wait_cdf_within_first_service_time(x):
    # M/D/1, 0 <= x < D: P(W <= x) = (1 - rho) e^(lambda x) (Erlang 1909; Gross & Harris §5.1).
    rho = 0.6
    expected = (1 - rho) * math.exp(rho * x)
    assert MdcWait.solve(1, rho).wait_cdf(x) == pytest.approx(expected, rel=1e-10), "M/D/1 law"


@pytest.mark.parametrize(("servers", "rho"), [(2, 0.7), (16, 0.9), (256, 0.95)])
def test_mdc_wait_probability_matches_cdf_and_erlang_order(servers, rho):
    from sdlab_model.queues.erlang import erlang_c

    wait = MdcWait.solve(servers, servers * rho)
    assert wait.wait_probability == pytest.approx(1 - wait.wait_cdf(0.0), abs=1e-12), (
        "P(W > 0) summed directly disagrees with 1 - P(W <= 0)"
    )
    # Deterministic service waits less often than exponential service at the same load.
    assert wait.wait_probability < erlang_c(servers, servers * rho), "M/D/c should wait less"


def test_md1_p99_is_exact_golden():
    # Golden (2026-11-29): exact M/D/1, rho = 0.9, D = 20 ms. p99 = D (1 + 21.8982...) from the
    # Crommelin–Franx solution, cross-checked by the Pollaczek–Khinchine mean above.
    result = queueing.latency(_cpu(servers=1, rho=0.9, latency_ms=20.0))
    assert result.accuracy == "exact", "no batching must be the exact M/D/c result"
    assert result.p99_ms == pytest.approx(20.0 * 22.8982, rel=1e-4), "M/D/1 p99 golden"


def _cpu(servers: int, rho: float, latency_ms: float = 20.0, batching: bool = False, **kw):
    """The fleet-wide queue (``central_queue``) with ``servers`` one-worker replicas."""
    base = Workload(
        lb_policy="central_queue",
        model_latency_ms=latency_ms,
        replicas=servers,
        cpu_workers_per_replica=1,
        dynamic_batching=batching,
        **kw,
    )
    return base.with_changes(rate_rps=rho * base.capacity_rps)


def test_unstable_is_infinite_never_capped():
    workload = _cpu(servers=4, rho=1.0)
    result = queueing.latency(workload)
    assert not result.is_stable, "rate at capacity must be unstable"
    assert math.isinf(result.p99_ms) and math.isinf(result.p50_ms), "unstable p99 must be inf"


def test_breakdown_sums_to_p99():
    for workload in (_cpu(8, 0.8), _cpu(16, 0.6, batching=True, batch_window_ms=5.0)):
        r = queueing.latency(workload)
        total = r.compute_ms + r.batch_wait_ms + r.queue_ms
        assert total == pytest.approx(r.p99_ms, rel=1e-12), f"breakdown {total} != p99 {r.p99_ms}"


def test_batching_flags_few_servers_and_server_limited_batches():
    few = queueing.latency(_cpu(2, 0.3, batching=True, batch_window_ms=20.0))
    assert few.accuracy == "approximate", "batching on fewer than 4 servers must be flagged"
    # 16 servers, 5 ms window: at rho 0.3 the window sets the batch (b_sat/b_w = 0.24), at 0.5
    # busy servers start to (0.33, past the 0.3 limit the simulation comparison set).
    window_limited = queueing.latency(_cpu(16, 0.3, batching=True, batch_window_ms=5.0))
    assert window_limited.accuracy == "validated", "window-limited batching is in its target"
    limited = queueing.latency(_cpu(16, 0.5, batching=True, batch_window_ms=5.0))
    assert limited.accuracy == "approximate", "server-limited batching must be flagged"
    card = queueing.latency(SCENARIOS[1].workload().with_changes(lb_policy="central_queue"))
    assert card.accuracy == "validated", "the dynamic-batching card is in the validated regime"


def test_batching_model_close_to_simulation_on_the_batching_card():
    simulator = pytest.importorskip("sdlab_model.simulation.simulator")
    workload = SCENARIOS[1].workload()
    model = queueing.latency(workload)
    sim = simulator.simulate(workload, n_requests=200_000, seed=3)
    assert model.p99_ms == pytest.approx(sim.p99_ms, rel=0.15), (
        f"batching card: model p99 {model.p99_ms:.2f} vs simulated {sim.p99_ms:.2f}"
    )
    assert model.mean_batch_size == pytest.approx(sim.mean_batch_size, rel=0.1), "mean batch"


workloads = st.builds(
    Workload,
    rate_rps=st.floats(1, 500_000),
    model_latency_ms=st.floats(1, 500),
    batch_window_ms=st.floats(0, 100),
    replicas=st.integers(1, 500),
    dynamic_batching=st.booleans(),
    gpu=st.booleans(),
    max_batch_size=st.integers(1, 256),
    cpu_workers_per_replica=st.integers(1, 64),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads)
def test_percentiles_ordered_finite_and_above_compute(workload):
    r = queueing.latency(workload)
    values = (r.p50_ms, r.p95_ms, r.p99_ms, r.compute_ms, r.batch_wait_ms, r.queue_ms)
    assert not any(math.isnan(v) for v in values), f"NaN in {r}"
    assert r.is_stable == (workload.rate_rps < workload.capacity_rps), "stability vs capacity"
    if r.is_stable:
        assert r.p50_ms <= r.p95_ms <= r.p99_ms < math.inf, f"percentiles out of order: {r}"
        assert r.p99_ms >= workload.single_request_ms * (1 - 1e-12), "p99 below one service"
        assert r.p99_ms >= r.compute_ms * (1 - 1e-12), "p99 below its own compute time"
    else:
        assert math.isinf(r.p99_ms), "unstable must be inf"


@settings(max_examples=60, deadline=None)
@given(
    rate=st.floats(1, 20_000),
    factor=st.floats(1.0, 3.0),
    replicas=st.integers(1, 40),
    latency=st.floats(1, 100),
)
def test_unbatched_p99_monotone_in_rate_and_replicas(rate, factor, replicas, latency):
    base = Workload(
        rate_rps=rate, model_latency_ms=latency, replicas=replicas, dynamic_batching=False
    )
    faster = base.with_changes(rate_rps=min(500_000.0, rate * factor))
    more = base.with_changes(replicas=replicas + 1)
    p, p_fast, p_more = (queueing.latency(w).p99_ms for w in (base, faster, more))
    assert p_fast >= p * (1 - 1e-9), f"p99 fell when the rate rose: {p} -> {p_fast}"
    assert p_more <= p * (1 + 1e-9), f"p99 rose with more replicas: {p} -> {p_more}"


def test_server_limited_batching_below_capacity_stays_finite():
    # Found by Hypothesis: window 0, so busy servers alone set the batch size, which makes the
    # batch servers' utilization exactly 1; the queue must use the full-batch load instead.
    workload = Workload(
        rate_rps=34_973.0,
        model_latency_ms=1.0,
        batch_window_ms=0.0,
        replicas=1,
        dynamic_batching=True,
        gpu=True,
        max_batch_size=3,
    )
    result = queueing.latency(workload)
    assert result.is_stable, "0.39 of capacity is stable"
    # Simulated p99 0.206 ms (sdlab_model.simulation.simulator, seed 1, 300k requests; 2026-11-29).
    assert result.p99_ms == pytest.approx(0.206, rel=0.15), f"p99 {result.p99_ms} vs simulated"
    assert result.accuracy == "approximate", "server-limited batching must be flagged"


def test_flat_cost_batches_keep_validated_a_little_longer():
    # GPU default f = 0.97: a batch costs nearly the same at any size, so server-limited batch
    # sizes barely move the latency. 16 GPU instances, window 1 ms, rho 0.6 has b_sat/b_w = 0.43:
    # validated (simulated p99 5.43 ms, model 5.45 ms; seed 2, 300k requests, 2026-11-29), while
    # the CPU limit (0.3) would flag it.
    base = Workload(
        lb_policy="central_queue",
        model_latency_ms=20,
        replicas=16,
        gpu_instances_per_replica=1,
        gpu=True,
        dynamic_batching=True,
        batch_window_ms=1.0,
        max_batch_size=32,
    )
    result = queueing.latency(base.with_changes(rate_rps=0.6 * base.capacity_rps))
    assert result.accuracy == "validated", f"flat-cost batches at saturation 0.43: {result}"
    assert result.p99_ms == pytest.approx(5.43, rel=0.05), "GPU server-limited p99 vs simulation"
