"""A brief overload on the page's terms: ``Burst`` refuses shapes it cannot measure, runs too big
for one press are shortened in proportion, and ``BurstRun.recovery`` says the storm stays
without a budget and comes back within seconds with one."""

from __future__ import annotations

import math

import pytest

from sdlab_model.overload import OverloadPolicy, simulate_burst
from sdlab_model.overload.storm import (
    MAX_BURST_ATTEMPTS,
    Burst,
    attempt_slots,
    fit_burst,
)
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
STORM = OverloadPolicy(deadline_ms=30.0, max_retries=3)
BUDGETED = OverloadPolicy(deadline_ms=30.0, max_retries=3, retry_budget=0.2)


@pytest.mark.parametrize(
    "changes",
    [{"base_multiple": 1.2}, {"burst_multiple": 0.5}, {"burst_s": -1.0}, {"window_s": 4.0}],
)
def test_a_burst_that_cannot_be_measured_is_refused_with_its_field(changes):
    name = next(iter(changes))
    with pytest.raises(ValueError, match=name):
        Burst(**changes)


def test_a_run_over_the_cap_is_shortened_in_proportion():
    big = Workload(
        dynamic_batching=False, gpu=False, cpu_workers_per_replica=64, model_latency_ms=1.0
    )
    burst = Burst()
    factor = fit_burst(big, (STORM,), burst)
    assert 0 < factor < 1, f"a run of {attempt_slots(big, STORM, burst):,.0f} slots not shortened"
    shortened = burst.run_arguments(factor)
    assert shortened["burst_s"] == pytest.approx(burst.burst_s * factor), "the burst not scaled"
    assert shortened["burst_multiple"] == burst.burst_multiple, "a load was scaled"
    slots = attempt_slots(big, STORM, burst) * factor
    assert slots == pytest.approx(MAX_BURST_ATTEMPTS), f"{slots:,.0f} slots after shortening"
    assert fit_burst(DESIGN, (STORM,), burst) == 1.0, "a small run was shortened"


def test_the_storm_stays_without_a_budget_and_goes_with_one():
    burst = Burst(before_s=4.0, after_s=10.0)
    stuck = simulate_burst(DESIGN, STORM, seed=1, **burst.run_arguments()).recovery()
    assert stuck.recovered_after_s is None, f"the storm recovered: {stuck}"
    assert stuck.end_attempts == pytest.approx(3.0, rel=0.05), stuck
    assert stuck.attempts_per_request_before == pytest.approx(1.0, rel=0.1), stuck
    back = simulate_burst(DESIGN, BUDGETED, seed=1, **burst.run_arguments()).recovery()
    assert back.recovered_after_s is not None and back.recovered_after_s <= 2.0, back
    assert back.end_goodput == pytest.approx(0.75, rel=0.05), back
    assert math.isclose(back.base_multiple, 0.75), back
