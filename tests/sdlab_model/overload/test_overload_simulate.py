"""The simulator against the analytic model on a few points, against theory where it is exact,
and its own promises: seeded, converged or saying so."""

from __future__ import annotations

import pytest

from sdlab_model.overload import OverloadPolicy, overload, simulate_burst, simulate_overload
from sdlab_model.workload import Workload

DESIGN = Workload(
    rate_rps=1.0,
    dynamic_batching=False,
    gpu=False,
    replicas=1,
    cpu_workers_per_replica=8,
    model_latency_ms=10.0,
    p99_target_ms=50.0,
    lb_policy="random",
)
CAPACITY = 800.0


@pytest.mark.parametrize(
    "policy,multiple",
    [
        (OverloadPolicy(queue_limit=16), 2.0),
        (OverloadPolicy(deadline_ms=30.0), 1.5),
        (OverloadPolicy(queue_limit=16, deadline_ms=40.0, max_retries=3, retry_budget=0.2), 2.0),
        (OverloadPolicy(queue_limit=16), 0.6),
    ],
)
def test_simulation_agrees_with_the_analytic_model(policy, multiple):
    fresh = multiple * CAPACITY
    model = overload(DESIGN, policy, fresh)
    sim = simulate_overload(DESIGN, policy, fresh, seed=3, max_attempts=300_000)
    shed = sim["rejected_share"].estimate + sim["timed_out_share"].estimate
    assert model.rejected_share + model.timed_out_share == pytest.approx(shed, abs=0.01)
    assert model.served_p99_ms == pytest.approx(sim["served_p99_ms"].estimate, rel=0.05)
    assert model.goodput_rps == pytest.approx(sim["goodput_rps"].estimate, rel=0.03, abs=8.0)
    assert sim.attempt_rps == pytest.approx(model.attempt_rps, rel=0.03), "attempt rates"


def test_unbounded_mdc_p99_within_the_simulations_interval():
    model = overload(DESIGN, OverloadPolicy(), 0.8 * CAPACITY)
    sim = simulate_overload(DESIGN, OverloadPolicy(), 0.8 * CAPACITY, seed=1)
    p99 = sim["served_p99_ms"]
    assert p99.low - 0.2 <= model.served_p99_ms <= p99.high + 0.2, (model.served_p99_ms, p99)


def test_the_same_seed_gives_the_same_numbers_and_a_small_budget_says_not_converged():
    policy = OverloadPolicy(queue_limit=4)
    first = simulate_overload(DESIGN, policy, 0.9 * CAPACITY, seed=7, max_attempts=60_000)
    again = simulate_overload(DESIGN, policy, 0.9 * CAPACITY, seed=7, max_attempts=60_000)
    assert first.measures == again.measures, "a seeded run changed"
    assert not first.converged and first.note.startswith("Not converged"), first.note


def test_budget_caps_the_simulated_retries():
    policy = OverloadPolicy(queue_limit=8, max_retries=3, retry_budget=0.2)
    sim = simulate_overload(DESIGN, policy, 3 * CAPACITY, seed=2, max_attempts=300_000)
    assert sim.attempt_rps / sim.fresh_rps == pytest.approx(1.2, abs=0.01), sim.attempt_rps


def test_a_brief_burst_leaves_a_lasting_storm_without_a_budget_and_none_with_one():
    """Retrying on a deadline without a limit: after a 2 s burst at 2x, the attempts stay at
    (1 + 3) x the fresh 0.75x and goodput at zero; a 20% budget comes back to 0.75x."""
    storm = OverloadPolicy(deadline_ms=30.0, max_retries=3)
    stuck = simulate_burst(DESIGN, storm, before_s=4.0, after_s=10.0, seed=1)
    attempts, goodput = stuck.after_burst(4.0)
    assert attempts == pytest.approx(3.0, rel=0.05) and goodput < 0.01, (attempts, goodput)
    budgeted = OverloadPolicy(deadline_ms=30.0, max_retries=3, retry_budget=0.2)
    back = simulate_burst(DESIGN, budgeted, before_s=4.0, after_s=10.0, seed=1)
    attempts, goodput = back.after_burst(4.0)
    assert attempts == pytest.approx(0.75, rel=0.05), f"the budget did not recover: {attempts}"
    assert goodput == pytest.approx(0.75, rel=0.05), f"goodput did not recover: {goodput}"
