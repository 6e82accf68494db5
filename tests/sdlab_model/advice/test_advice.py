"""``advise``, ``levers`` and ``breaking_points``: advice that agrees with the model's numbers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdlab_model import SCENARIOS
from sdlab_model.advice.cost import SECONDS_PER_HOUR, fleet_cost
from sdlab_model.advice.search import (
    HEADROOM,
    advise,
    breaking_points,
    comparisons,
    current_design,
    hardware_options,
    levers,
    search_key,
    workload_cost,
)
from sdlab_model.assessment import judge, judged_p99_ms, latency, needs_simulation
from sdlab_model.workload import Workload


def _random_workloads(count: int, seed: int) -> list[Workload]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        out.append(
            Workload(
                rate_rps=float(np.round(np.exp(rng.uniform(np.log(20), np.log(50_000))), 1)),
                model_latency_ms=float(np.round(np.exp(rng.uniform(np.log(2), np.log(100))), 1)),
                p99_target_ms=float(rng.choice([30, 60, 100, 200, 500])),
                models_hosted=int(rng.choice([1, 1, 3, 20])),
                lb_policy=str(rng.choice(["round_robin", "random", "least_request"])),
                replicas=int(rng.integers(1, 20)),
            )
        )
    return out


_CASES = [card.workload() for card in SCENARIOS] + _random_workloads(20, seed=11)


# A small space, so the judge's simulations take seconds: two windows, two max batches, and
# replica counts spread from 1 to 256, finer where card 5 meets its target (where the model's
# and the simulation's fewest replicas differ, so that a search by the model alone fails).
_WINDOWS_MS, _SIZES = (2.0, 10.0), (8, 32)
_COUNTS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 112, 120, 128, 256)


@pytest.mark.parametrize("workload", _CASES[:5] + _CASES[5:25:3], ids=lambda w: f"{w.rate_rps:g}")
def test_the_recommended_design_meets_the_target_by_the_judge(workload):
    advice = advise(
        workload, windows_ms=_WINDOWS_MS, max_batch_sizes=_SIZES, replica_counts=_COUNTS
    )
    if advice.best is None:
        return
    best = advice.best
    assessed = judge(best.workload)
    assert best.p99_ms == assessed.p99_ms, (
        f"advice says p99 {best.p99_ms:.2f} ms for {best.label}, the Lab {assessed.p99_ms:.2f}"
    )
    assert best.is_simulated == assessed.is_simulated, "advice and the Lab differ on the source"
    assert assessed.meets_target, (
        f"recommended {best.label} has a judged p99 of {assessed.p99_ms:.1f} ms over the "
        f"{workload.p99_target_ms:g} ms target"
    )
    assert assessed.utilization <= 1.0 - HEADROOM + 1e-12, (
        f"recommended {best.label} runs at {assessed.utilization:.0%}, without the headroom"
    )
    for kept in ("rate_rps", "model_latency_ms", "models_hosted", "lb_policy", "p99_target_ms"):
        assert getattr(best.workload, kept) == getattr(workload, kept), f"advice changed {kept}"


def _cheapest_by_brute_force(workload: Workload) -> float:
    """Every design of the small space in cost order, each judged, until one passes: $/h."""
    cells = []
    for hardware in hardware_options(workload):
        base = hardware.apply(workload)
        configs = [base.with_changes(dynamic_batching=False)] + [
            base.with_changes(dynamic_batching=True, batch_window_ms=w, max_batch_size=b)
            for w in _WINDOWS_MS
            for b in _SIZES
        ]
        cells += [
            (count * hardware.usd_per_hour, config.with_changes(replicas=count))
            for config in configs
            for count in _COUNTS
        ]
    for cost, design in sorted(cells, key=lambda cell: cell[0]):
        if latency(design).utilization > 1.0 - HEADROOM:
            continue
        if judged_p99_ms(design) <= workload.p99_target_ms:
            return cost
    return math.inf


@pytest.mark.parametrize("card", SCENARIOS, ids=[card.id for card in SCENARIOS])
def test_advice_is_the_cheapest_design_the_judge_passes(card):
    # Must-show 4: brute force over a small space, every design judged as the Lab judges it.
    workload = card.workload()
    advice = advise(
        workload, windows_ms=_WINDOWS_MS, max_batch_sizes=_SIZES, replica_counts=_COUNTS
    )
    assert advice.complete, f"the search left {advice.unsettled} configurations unsettled"
    cheapest = _cheapest_by_brute_force(workload)
    found = advice.best.cost.usd_per_hour if advice.best else math.inf
    assert found == pytest.approx(cheapest, rel=1e-12) or (found == cheapest == math.inf), (
        f"advise found ${found:.3f}/h, brute force by the judge ${cheapest:.3f}/h"
    )
    if advice.best is not None:
        assert advice.best.p99_ms == judged_p99_ms(advice.best.workload), "not the judge's p99"


@settings(max_examples=25, deadline=None)
@given(
    rate=st.floats(10, 30_000),
    latency=st.floats(2, 80),
    target=st.sampled_from([40.0, 100.0, 300.0]),
    policy=st.sampled_from(["round_robin", "random"]),
)
def test_the_frontier_is_non_dominated_and_costs_add_up(rate, latency, target, policy):
    workload = Workload(
        rate_rps=rate, model_latency_ms=latency, p99_target_ms=target, lb_policy=policy
    )
    advice = advise(
        workload,
        windows_ms=(2.0, 10.0),
        max_batch_sizes=(8, 64),
        max_replicas=60,
        max_simulations=0,
    )
    frontier = advice.frontier
    costs = [d.cost.usd_per_hour for d in frontier]
    p99s = [d.p99_ms for d in frontier]
    assert costs == sorted(costs), "the frontier is sorted by cost"
    for i, (cost, p99) in enumerate(zip(costs, p99s, strict=True)):
        for j, (other_cost, other_p99) in enumerate(zip(costs, p99s, strict=True)):
            if i != j:
                assert not (other_cost <= cost and other_p99 <= p99), (
                    f"frontier point {i} (${cost:.2f}, {p99:.1f} ms) is dominated by {j}"
                )
    if advice.best is not None:
        assert judged_p99_ms(advice.best.workload) <= target, "recommended what the judge fails"
    for design in frontier + ((advice.best,) if advice.best else ()):
        cost = design.cost
        per_hour = design.workload.replicas * design.hardware.usd_per_hour
        assert cost.usd_per_hour == pytest.approx(per_hour, rel=1e-12), "$/h = replicas x price"
        assert cost.usd_per_million == pytest.approx(
            per_hour * 1e6 / (SECONDS_PER_HOUR * workload.rate_rps), rel=1e-12
        ), "$/1M = $/h x 10^6 / (3600 x rate)"


def test_fleet_cost_identity_and_validation():
    cost = fleet_cost(10, 1.006, 2_000.0)
    assert cost.usd_per_hour == pytest.approx(10.06)
    assert cost.usd_per_million == pytest.approx(10.06 * 1e6 / (3600 * 2000))
    for bad in ((0, 1.0, 1.0), (2.5, 1.0, 1.0), (1, 0.0, 1.0), (1, 1.0, -1.0), (1, math.nan, 1)):
        with pytest.raises(ValueError):
            fleet_cost(*bad)
    assert math.isinf(fleet_cost(1, 1.0, 0.0).usd_per_million), "no traffic: no price per request"


def test_workload_cost_uses_the_price_of_its_replica_kind():
    workload = Workload(replicas=3, cpu_usd_per_replica_hour=2.0, gpu_usd_per_replica_hour=7.0)
    assert workload_cost(workload).usd_per_hour == 6.0
    assert workload_cost(workload.with_changes(gpu=True)).usd_per_hour == 21.0


# --- levers ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "workload",
    [Workload(), Workload(rate_rps=5000, replicas=10), SCENARIOS[2].workload()],
    ids=["defaults", "5k-10-replicas", "card-3"],
)
def test_levers_report_the_judges_numbers(workload):
    now = judged_p99_ms(workload)
    found = levers(workload)
    assert found, "there is always something to change"
    assert any(needs_simulation(lever.workload) for lever in found) or workload == Workload(), (
        "these cases have levers the model is approximate on: the test needs one"
    )
    for lever in found:
        assert lever.is_judged, f"{lever.label}: not judged within the budget"
        p99 = judged_p99_ms(lever.workload)
        assert lever.p99_ms == p99, f"{lever.label}: p99 {lever.p99_ms} is not the judge's {p99}"
        if math.isfinite(p99) and math.isfinite(now):
            assert lever.delta_p99_ms == pytest.approx(p99 - now)
        assert lever.meets_target == (p99 <= workload.p99_target_ms), lever.label
        assert lever.delta_usd_per_hour == pytest.approx(
            workload_cost(lever.workload).usd_per_hour - workload_cost(workload).usd_per_hour
        )
    meeting = [lever for lever in found if lever.meets_target]
    assert found[: len(meeting)] == tuple(meeting), "levers that meet the target come first"


def test_a_lever_past_the_budget_is_the_models_and_never_ticked():
    workload = Workload(rate_rps=5000, replicas=10)
    found = levers(workload, max_simulations=0)
    unjudged = [lever for lever in found if not lever.is_judged]
    assert unjudged, "this case has levers the model is approximate on: the test needs one"
    for lever in unjudged:
        assert lever.meets_target is None, f"{lever.label}: a verdict the judge did not give"
        assert lever.p99_ms == latency(lever.workload).p99_ms, f"{lever.label}: not the model's"
        assert math.isnan(lever.delta_p99_ms), f"{lever.label}: a delta mixing two sources"
    for lever in found:
        if lever.is_judged:
            assert not needs_simulation(lever.workload), f"{lever.label}: simulated past budget"


def test_idealized_policies_are_comparisons_never_levers_or_recommendations():
    workload = Workload(rate_rps=5000, replicas=10)
    offered = {lever.workload.lb_policy for lever in levers(workload)}
    assert "central_queue" not in offered, "the central queue is offered as a lever"
    compared = comparisons(workload)
    assert [c.workload.lb_policy for c in compared] == ["central_queue"], compared
    assert compared[0].p99_ms == latency(compared[0].workload).p99_ms, "not the model's p99"
    idealized = workload.with_changes(lb_policy="central_queue")
    advice = advise(idealized, windows_ms=_WINDOWS_MS, max_batch_sizes=_SIZES, max_replicas=40)
    assert advice.lb_policy == "round_robin", f"searched with {advice.lb_policy}"
    assert advice.best is None or not advice.best.workload.is_central_queue, advice.best.label
    assert comparisons(idealized) == (), "the lab's own policy is not a comparison"


def test_turning_batching_off_is_a_lever_where_it_helps():
    # Issue 10's case: 5k req/s on 10 replicas misses 100 ms with batching (per-replica batches
    # of a pooled fleet model said so), and meets it without.
    workload = Workload(rate_rps=5000, replicas=10)
    off = next(lever for lever in levers(workload) if lever.label == "Turn batching off")
    assert off.p99_ms < judged_p99_ms(workload), "batching off should be faster here"


# --- breaking points -------------------------------------------------------------------------


@pytest.mark.parametrize("workload", [Workload(), SCENARIOS[1].workload(), SCENARIOS[2].workload()])
def test_breaking_points_are_where_the_judge_says_the_target_breaks(workload):
    for point in breaking_points(workload):
        assert point.is_judged, f"{point.text}: decided by the model past the budget"
        if point.input in ("Request rate", "Model latency") and point.factor not in (None, 1.0):
            field = "rate_rps" if point.input == "Request rate" else "model_latency_ms"
            value = getattr(workload, field)
            broken = judged_p99_ms(workload.with_changes(**{field: value * point.factor}))
            held = judged_p99_ms(workload.with_changes(**{field: value * point.factor / 1.01}))
            assert broken > workload.p99_target_ms, (
                f"{point.input} x{point.factor:.3f} should break the target by the judge"
            )
            assert held <= workload.p99_target_ms, (
                f"{point.input} just below x{point.factor:.3f} should still hold by the judge"
            )
        if point.input == "p99 target" and point.factor != 1.0:
            judged = judged_p99_ms(workload)
            assert point.factor == pytest.approx(judged / workload.p99_target_ms), point.text
        assert point.text, "every breaking point says something"


def test_the_search_never_recommends_what_the_judge_did_not_pass():
    # With no simulations, only designs the model is trusted on can be settled.
    workload = SCENARIOS[3].workload()
    full = advise(workload, windows_ms=_WINDOWS_MS, max_batch_sizes=_SIZES, max_replicas=60)
    assert full.best is not None and full.best.is_simulated, (
        "this case's cheapest design is one the model is approximate on: the test needs one"
    )
    starved = advise(
        workload,
        windows_ms=_WINDOWS_MS,
        max_batch_sizes=_SIZES,
        max_replicas=60,
        max_simulations=0,
    )
    assert starved.simulations == 0, f"ran {starved.simulations} simulations with a budget of 0"
    assert not starved.complete and starved.unsettled > 0, "the budget ran out: it must say so"
    if starved.best is not None:
        assert not starved.best.is_simulated, "recommended a design nobody judged"
        assert judged_p99_ms(starved.best.workload) <= workload.p99_target_ms
        assert starved.best.cost.usd_per_hour >= full.best.cost.usd_per_hour


def test_one_search_serves_every_design_of_the_same_traffic():
    # The page searches once per search_key: loading the recommended design must not change it.
    card = SCENARIOS[3].workload()
    space = {"windows_ms": _WINDOWS_MS, "max_batch_sizes": _SIZES, "replica_counts": _COUNTS}
    advice = advise(card, **space)
    for other in (
        card.with_changes(replicas=40, gpu=False, dynamic_batching=False),
        advice.best.workload,
        search_key(card),
    ):
        assert search_key(other) == search_key(card), f"{other}: a second search on the page"
        again = advise(other, **space)
        assert again.best == advice.best, f"{other}: recommends {again.best.label}"
        assert again.current == current_design(other), "the current design is the workload's"


def test_levers_list_each_resulting_design_once():
    found = levers(Workload())  # 2 replicas: "one fewer" and "a quarter fewer" are both 1
    designs = [lever.workload for lever in found]
    assert len(designs) == len(set(designs)), [lever.label for lever in found]
