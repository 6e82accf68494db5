"""The canary planner's fast power and search against the slow ones they replaced (issue 26).

``reference_power`` and ``reference_detection_seconds`` are ``z_test_power`` and
``detection_seconds`` as they were before issue 26: the pooled ``Z`` evaluated on every
combination of counts, and a bisection in ``ln T``. The fast power must give the same sum (up to
``NEGLIGIBLE_MASS``, the probability it may leave out), and the fast search the same time within
0.5%, except where the power steps up and down with the window (a lattice) between the two
times: there both are crossings of the same power (the search hands lattices to the bisection,
but one that looks smooth to it gets the crossing it finds), and the new time must be one.
"""

from __future__ import annotations

import importlib.util
import itertools
import math
import time
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pytest

from sdlab_model.timeline.canary import (
    DETECTION_TOLERANCE,
    NEGLIGIBLE_MASS,
    CanaryPlan,
    detection_seconds,
    detection_seconds_many,
    plan_rollout,
    z_test_power,
)
from sdlab_model.workload import Workload

ROOT = Path(__file__).resolve().parents[3]
_NORMAL = NormalDist()


def _load_bench():
    spec = importlib.util.spec_from_file_location(
        "bench_canary", ROOT / "scripts" / "bench_canary.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench = _load_bench()


def _reference_axis(mean: float, points: int) -> tuple[np.ndarray, np.ndarray]:
    if mean <= 0.0:
        return np.zeros(1), np.ones(1)
    spread = 8.0 * math.sqrt(mean) + 8.0
    low, high = max(0, math.floor(mean - spread)), math.ceil(mean + spread)
    stride = max(1, math.ceil((high - low + 1) / points))
    counts = np.arange(low, high + 1, stride, dtype=float)
    log_factorial = np.array([math.lgamma(c + 1.0) for c in counts])
    weights = np.exp(counts * math.log(mean) - mean - log_factorial)
    return counts, weights / weights.sum()


def _reference_good_axis(requests: float, bad_share: float) -> tuple[np.ndarray, np.ndarray]:
    mean = requests * (1.0 - bad_share)
    if requests >= 20_000:
        return np.array([mean]), np.ones(1)
    return _reference_axis(mean, 7)


def reference_power(p0, p1, rate1, rate0, confidence, window_s) -> float:
    """The summed power before issue 26: ``Z`` on every combination of counts."""
    canary_bad, canary_bad_w = _reference_axis(rate1 * window_s * p1, 200)
    baseline_bad, baseline_bad_w = _reference_axis(rate0 * window_s * p0, 200)
    canary_good, canary_good_w = _reference_good_axis(rate1 * window_s, p1)
    baseline_good, baseline_good_w = _reference_good_axis(rate0 * window_s, p0)
    x1, x0 = canary_bad[:, None], baseline_bad[None, :]
    critical = _NORMAL.inv_cdf(confidence)
    power = 0.0
    for g1, w1 in zip(canary_good, canary_good_w, strict=True):
        for g0, w0 in zip(baseline_good, baseline_good_w, strict=True):
            n1, n0 = x1 + g1, x0 + g0
            with np.errstate(divide="ignore", invalid="ignore"):
                pooled = (x1 + x0) / (n1 + n0)
                spread = np.sqrt(pooled * (1.0 - pooled) * (1.0 / n1 + 1.0 / n0))
                z = (x1 / n1 - x0 / n0) / spread
            rejects = np.where(np.isfinite(z), z, 0.0) > critical
            power += w1 * w0 * float(canary_bad_w @ rejects @ baseline_bad_w)
    return power


def reference_detection_seconds(p0, p1, rate1, rate0, confidence, power, start_s) -> float:
    """The bisection in ``ln T`` before issue 26, from the normal approximation's ``start_s``."""
    low, high = math.log(start_s / 4.0), math.log(start_s * 4.0)
    while high - low > 3e-3:
        middle = 0.5 * (low + high)
        if reference_power(p0, p1, rate1, rate0, confidence, math.exp(middle)) < power:
            low = middle
        else:
            high = middle
    return math.exp(high)


SHARES = [(0.001, 0.002), (0.01, 0.0135), (0.3, 0.6), (2e-6, 5e-6), (0.01, 0.045)]
RATES = [(2.0, 198.0), (500.0, 500.0), (0.05, 0.95), (900.0, 100.0)]
POWER_CASES = [
    (p0, p1, rate1, rate0, confidence, bad_requests / (rate1 * p1))
    for (p0, p1), (rate1, rate0) in itertools.product(SHARES, RATES)
    for confidence, bad_requests in [(0.5, 3.0), (0.95, 0.4), (0.95, 40.0), (0.999, 900.0)]
]
"""Canary bad requests from 0.4 (a few counts, the lattice) to 900 (strided axes), baseline
good counts summed and fixed, confidence 50% (``z₁₋α = 0``) to 99.9%."""


@pytest.mark.parametrize("case", POWER_CASES, ids=lambda case: "-".join(f"{v:.3g}" for v in case))
def test_the_power_is_the_sum_over_every_combination_of_counts(case):
    fast, slow = z_test_power(*case), reference_power(*case)
    assert -1e-12 <= slow - fast <= NEGLIGIBLE_MASS + 1e-12, (
        f"power {fast!r} against the full sum's {slow!r}: off by more than the mass left out"
    )


@pytest.mark.parametrize("critical", [0.0, 1.6448536269514722, 3.090232306167813])
def test_the_rejecting_baseline_counts_are_a_prefix_of_the_axis(critical):
    # Exhaustive over small counts (where the lattice is), and over large real ones at random.
    small = np.arange(0.0, 31.0)
    g1, g0, x1 = np.meshgrid(small, small, small, indexing="ij")
    random = np.random.default_rng(26)
    large = [random.uniform(0, 1e6, 20_000) for _ in range(3)]
    for g1_values, g0_values, x1_values, x0_values in (
        (g1.ravel(), g0.ravel(), x1.ravel(), np.arange(0.0, 61.0)),
        (*large, np.linspace(0.0, 2e6, 200)),
    ):
        c1, c0, b1 = (values[:, None] for values in (g1_values, g0_values, x1_values))
        b0 = x0_values[None, :]
        n1, n0 = b1 + c1, b0 + c0
        with np.errstate(divide="ignore", invalid="ignore"):
            pooled = (b1 + b0) / (n1 + n0)
            z = (b1 / n1 - b0 / n0) / np.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n0))
        rejects = np.where(np.isfinite(z), z, 0.0) > critical
        rises = np.diff(rejects.astype(int), axis=1) > 0
        assert not rises.any(), (
            f"at z₁₋α={critical}: a baseline count rejects after one that does not "
            f"({int(rises.any(axis=1).sum())} rows)"
        )


def _rollout_cases(workload: Workload, plan: CanaryPlan) -> list[tuple[float, ...]]:
    return [
        (
            detection.baseline_share,
            detection.regressed_share,
            detection.canary_rate_rps,
            detection.baseline_rate_rps,
            plan.confidence,
            plan.power,
        )
        for step in plan_rollout(workload, plan).steps
        for detection in (step.error_detection, step.latency_detection)
        if detection.seconds is not None
    ]


DETECTION_CASES = [
    *_rollout_cases(Workload(), CanaryPlan()),
    *_rollout_cases(
        Workload(rate_rps=8000, replicas=20, gpu=True),
        CanaryPlan(
            step_shares=(0.01, 0.25), placement="shared", shadow_share=0.2, p99_regression=0.1
        ),
    ),
    *_rollout_cases(bench.WORST_WORKLOAD, bench.WORST)[:6],
    # Small counts: a 40% error rate against 60% at 1 req/s, a strict test at 99.9% power.
    (0.4, 0.6, 0.5, 0.5, 0.95, 0.8),
    (0.001, 0.0013, 30.0, 270.0, 0.999, 0.999),
    (2e-6, 5e-6, 100.0, 900.0, 0.5, 0.6),
    # Lattices the search took for smooth in scripts/bench_canary.py's sample (8 bad requests).
    (0.01, 0.04997544956191505, 1.820594, 1.9934, 0.9410537019701017, 0.7467967525172681),
    (6.824492690240157e-05, 0.00013197890847521358, 183.3614, 96322.6386, 0.5422, 0.9336),
]


@pytest.mark.parametrize("case", DETECTION_CASES, ids=lambda c: "-".join(f"{v:.3g}" for v in c))
def test_the_detection_time_is_the_bisection_s_or_another_crossing_of_a_lattice(case):
    from sdlab_model.timeline.canary import normal_detection_seconds

    fast = detection_seconds(*case)
    slow = reference_detection_seconds(*case, normal_detection_seconds(*case))
    if abs(fast / slow - 1.0) <= 0.005:
        return
    # Further apart: the power must step down somewhere between the two times (a lattice, so
    # both are crossings), and the new time must be one: the power reached there and, within
    # the search's tolerance before it, not.
    p0, p1, rate1, rate0, confidence, power = case
    between = np.geomspace(min(fast, slow), max(fast, slow), 60)
    powers = np.array([reference_power(p0, p1, rate1, rate0, confidence, t) for t in between])
    reached = powers >= power
    assert (reached[:-1] & ~reached[1:]).any(), (
        f"{fast:.5g} s against the bisection's {slow:.5g} s, and the power does not step back "
        f"below {power} between them: {np.round(powers, 4)}"
    )
    assert reference_power(*case[:5], fast) >= power - NEGLIGIBLE_MASS, "not reached at the time"
    before = fast * math.exp(-DETECTION_TOLERANCE)
    window = np.geomspace(before, fast, 12)[:-1]
    assert min(reference_power(*case[:5], t) for t in window) < power, (
        f"the power is reached all through the tolerance before {fast:.5g} s: not the crossing"
    )


def test_at_the_lowest_confidence_and_power_there_is_a_time():
    # Both at 50% the normal approximation's time is 0 (the bisection took the log of 0 and
    # raised); the search starts at the canary's first bad request instead.
    case = (0.001, 0.002, 2.0, 198.0, 0.5, 0.5)
    seconds = detection_seconds(*case)
    assert 0.0 < seconds < math.inf, f"time {seconds!r}"
    assert z_test_power(*case[:5], seconds) >= 0.5 - NEGLIGIBLE_MASS, "power not reached"


def test_searching_together_gives_each_search_s_own_time():
    cases = DETECTION_CASES[:8]
    together = detection_seconds_many(cases)
    alone = [detection_seconds(*case) for case in cases]
    assert together == alone, f"together {together} against one at a time {alone}"


def test_the_slowest_plan_found_stays_fast():
    # The target is 50 ms on the development machine; ten times that leaves room for a
    # loaded CI runner (the figures themselves are measured by scripts/bench_canary.py).
    plan_rollout(bench.WORST_WORKLOAD, bench.WORST)
    spent = []
    for _ in range(3):
        started = time.thread_time()
        plan_rollout(bench.WORST_WORKLOAD, bench.WORST)
        spent.append(time.thread_time() - started)
    assert min(spent) < 0.5, f"the slowest plan found took {min(spent) * 1e3:.0f} ms (CPU)"
