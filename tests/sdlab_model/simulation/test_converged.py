"""simulate_converged: the representative replica against the whole fleet, its interval against a
long reference, the stop rule, warm-up detection and its contract."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sdlab_model.simulation import converged
from sdlab_model.simulation.converged import (
    ConvergedSim,
    batch_means_half_width,
    mser_truncation,
    p99_drift_ms,
    representative_replica_gaps,
    simulate_converged,
)
from sdlab_model.simulation.simulator import percentiles, routing_draws, run_trace, simulate
from sdlab_model.workload import Workload

# A small fleet near its capacity, where round robin's smoothing and a burst's clumping both
# move the tail: a wrong replica stream shows in the p99.
_FLEET = Workload(
    rate_rps=1_000,
    model_latency_ms=20,
    batch_window_ms=5,
    replicas=4,
    models_hosted=3,
    cpu_workers_per_replica=2,
    gpu=False,
)


def _loaded(policy: str, batching: bool, cv: float, load: float = 0.75) -> Workload:
    workload = _FLEET.with_changes(lb_policy=policy, dynamic_batching=batching, arrival_cv=cv)
    return workload.with_changes(rate_rps=load * workload.capacity_rps)


def _replica_latencies(workload: Workload, count: int, seed: int) -> np.ndarray:
    """One replica alone on its representative stream, warm-up (first 10%) dropped."""
    gaps_rng, count_rng, routing_rng = (
        np.random.default_rng(child) for child in np.random.SeedSequence(seed).spawn(3)
    )
    arrival_ms = np.cumsum(representative_replica_gaps(workload, gaps_rng, count_rng, count))
    replica = workload.with_changes(replicas=1)
    trace = run_trace(replica, arrival_ms, None, routing_draws(replica, routing_rng, count))
    return trace.latency_ms[count // 10 :]


@pytest.mark.parametrize("cv", [1.0, 2.0])
@pytest.mark.parametrize("batching", [False, True])
@pytest.mark.parametrize("policy", ["random", "round_robin"])
def test_representative_replica_has_the_fleets_latency_distribution(policy, batching, cv):
    workload = _loaded(policy, batching, cv)
    fleet = simulate(workload, 400_000, seed=11, replications=1).latencies_ms
    replica = _replica_latencies(workload, 400_000, seed=12)
    for percent in (50, 90, 99):
        fleet_q = percentiles(fleet, (percent,))[0]
        replica_q = percentiles(replica, (percent,))[0]
        # Batch-means noise of each quantile, from the p99 helper applied to shifted copies.
        noise = math.hypot(
            _quantile_half_width(fleet, percent), _quantile_half_width(replica, percent)
        )
        assert abs(replica_q - fleet_q) <= noise + 0.01 * fleet_q, (
            f"{policy}, batching={batching}, cv={cv}: p{percent} of one representative replica "
            f"{replica_q:.3f} ms vs the whole fleet's {fleet_q:.3f} ms (noise ±{noise:.3f})"
        )
    # The entry point itself, on its own stream and seed, within both intervals.
    result = simulate_converged(workload, rel_half_width=0.01, max_requests=400_000)
    fleet_p99 = percentiles(fleet, (99,))[0]
    allowed = result.p99_ms - result.p99_ci_ms[0] + _quantile_half_width(fleet, 99)
    assert result.representative_replica, "random and round robin should use one replica"
    assert abs(result.p99_ms - fleet_p99) <= allowed, (
        f"{policy}, batching={batching}, cv={cv}: simulate_converged p99 {result.p99_ms:.3f} ms "
        f"{result.p99_ci_ms} vs the whole fleet's {fleet_p99:.3f} ms"
    )


def _quantile_half_width(values: np.ndarray, percent: float, batches: int = 20) -> float:
    parts = [percentiles(part, (percent,))[0] for part in np.array_split(values, batches)]
    return 2.093 * float(np.std(parts, ddof=1)) / math.sqrt(batches)


@pytest.mark.parametrize("policy", ["random", "round_robin"])
@pytest.mark.parametrize("cv", [1.0, 0.5, 2.5])
def test_replica_gaps_have_the_thinned_streams_mean_and_spread(policy, cv):
    workload = _FLEET.with_changes(replicas=7, lb_policy=policy, arrival_cv=cv)
    rngs = [np.random.default_rng(child) for child in np.random.SeedSequence(3).spawn(2)]
    gaps = representative_replica_gaps(workload, rngs[0], rngs[1], 400_000)
    mean_gap = 1000.0 / workload.rate_rps
    share = 1.0 / workload.replicas
    # Round robin sums R gaps: cv^2 / R. Random sums Geometric(1/R) gaps: p cv^2 + 1 - p.
    expected_cv2 = cv * cv * share if policy == "round_robin" else share * cv * cv + 1 - share
    measured_cv2 = float(np.var(gaps) / np.mean(gaps) ** 2)
    assert np.mean(gaps) == pytest.approx(mean_gap * workload.replicas, rel=0.01), (
        f"{policy}: a replica's mean gap should be R times the stream's"
    )
    assert measured_cv2 == pytest.approx(expected_cv2, rel=0.03), (
        f"{policy}, cv={cv}: a replica's squared gap CV {measured_cv2:.4f}, "
        f"expected {expected_cv2:.4f}"
    )


def test_least_request_keeps_the_fleet_and_the_others_use_one_replica():
    for policy, representative in [
        ("random", True),
        ("round_robin", True),
        ("least_request", False),
        ("central_queue", False),
    ]:
        result = simulate_converged(_loaded(policy, True, 1.0), max_requests=40_000)
        assert result.representative_replica is representative, (
            f"{policy}: representative_replica={result.representative_replica}"
        )
        expected = 1 if representative else _FLEET.replicas
        assert result.replicas_simulated == expected, (
            f"{policy}: simulated {result.replicas_simulated} replicas, expected {expected}"
        )


def test_interval_covers_a_long_reference():
    workload = _loaded("round_robin", True, 1.5)
    reference = simulate(workload, 2_000_000, seed=99, replications=1, warmup_fraction=0.1)
    covered = 0
    seeds = range(10)
    for seed in seeds:
        result = simulate_converged(workload, seed=seed, rel_half_width=0.01)
        low, high = result.p99_ci_ms
        covered += low <= reference.p99_ms <= high
    # 95% intervals: 10 trials cover at least 8 times with probability ~0.99.
    assert covered >= 8, (
        f"the p99 interval covered a 2M-request reference ({reference.p99_ms:.3f} ms) in only "
        f"{covered} of {len(seeds)} seeds"
    )


def test_stops_at_the_first_run_when_it_has_converged():
    result = simulate_converged(_loaded("random", True, 1.0, load=0.5), rel_half_width=0.05)
    assert result.converged, f"expected a converged run: {result.note}"
    assert result.simulated_requests == converged.MIN_REQUESTS, (
        f"an easy workload should stop after its first run, spent {result.simulated_requests:,}"
    )
    assert result.p99_rel_half_width <= 0.05, f"interval ±{result.p99_rel_half_width:.2%}"
    assert result.note.startswith("Converged: p99 "), result.note


def test_runs_longer_when_the_first_run_falls_short():
    result = simulate_converged(
        _loaded("random", True, 2.0), rel_half_width=0.01, max_requests=1_000_000
    )
    assert result.converged, f"expected convergence within 1M requests: {result.note}"
    assert result.simulated_requests > converged.MIN_REQUESTS, "it should have run longer"
    assert result.p99_rel_half_width <= 0.01, f"interval ±{result.p99_rel_half_width:.2%}"


def test_budget_runs_out_and_says_not_converged_with_its_interval():
    result = simulate_converged(
        _loaded("random", True, 2.0), rel_half_width=0.001, max_requests=100_000
    )
    assert not result.converged, "a ±0.1% target cannot be met in 100k requests"
    assert result.simulated_requests <= 100_000, f"spent {result.simulated_requests:,}"
    low, high = result.p99_ci_ms
    assert low < result.p99_ms < high, f"interval {result.p99_ci_ms} around {result.p99_ms}"
    expected = f"Not converged: p99 within [{low:.3g}, {high:.3g}] ms"
    assert result.note.startswith(expected), f"note {result.note!r} should start {expected!r}"


@pytest.mark.parametrize(
    ("policy", "budget"),
    [
        ("round_robin", converged.LAB_MAX_REQUESTS_REPLICA),
        ("least_request", converged.LAB_MAX_REQUESTS_FLEET),
    ],
)
def test_the_labs_budget_is_spent_in_full_and_no_more(policy, budget):
    result = simulate_converged(_loaded(policy, True, 2.0), rel_half_width=0.001)
    assert not result.converged, "a ±0.1% target cannot be met in the Lab's budget"
    assert result.simulated_requests == budget, (
        f"{policy}: spent {result.simulated_requests:,} requests of a {budget:,} budget"
    )


def test_a_large_least_request_fleet_is_not_converged_in_the_labs_budget():
    workload = Workload(
        rate_rps=300_000,
        model_latency_ms=40,
        batch_window_ms=8,
        replicas=70,
        models_hosted=120,
        dynamic_batching=True,
        gpu=True,
        lb_policy="least_request",
    )
    result = simulate_converged(workload)
    assert not result.converged, f"{result.batches_per_batcher:.1f} batches per batcher"
    assert result.batches_per_batcher < converged.MIN_BATCHES_PER_BATCHER
    assert "batches per batcher" in result.note, result.note
    # A run from empty errs low; with so few batches per batcher it cannot bound the p99 above.
    low, high = result.p99_ci_ms
    assert math.isinf(high) and low < result.p99_ms, f"interval {result.p99_ci_ms}"
    assert result.note.startswith(f"Not converged: p99 at least {low:.3g} ms"), result.note


def test_same_seed_same_result_and_different_seeds_differ():
    workload = _loaded("round_robin", True, 1.0)
    first, again = simulate_converged(workload, seed=4), simulate_converged(workload, seed=4)
    for name in ("p50_ms", "p95_ms", "p99_ms", "p99_ci_ms", "simulated_requests", "note"):
        assert getattr(first, name) == getattr(again, name), f"{name} differs for one seed"
    assert np.array_equal(first.cdf_latency_ms, again.cdf_latency_ms), "the CDF differs"
    other = simulate_converged(workload, seed=5)
    assert other.p99_ms != first.p99_ms, "seeds 4 and 5 gave the same p99"


def test_unstable_is_infinite_and_not_simulated():
    workload = _FLEET.with_changes(rate_rps=_FLEET.capacity_rps * 1.01)
    result = simulate_converged(workload)
    assert math.isinf(result.p99_ms) and result.p99_ci_ms == (math.inf, math.inf)
    assert not result.is_stable and not result.converged, "an unstable design is not converged"
    assert result.simulated_requests == 0, "nothing should have been simulated"
    assert "unstable (∞)" in result.note, result.note


def test_utilization_batch_size_and_cdf_are_measured():
    workload = _loaded("round_robin", False, 1.0)
    result = simulate_converged(workload)
    offered = workload.rate_rps / workload.capacity_rps
    # Without batching every batch is one request and the busy share is the offered load.
    assert result.mean_batch_size == 1.0, f"mean batch {result.mean_batch_size}"
    assert result.slot_utilization == pytest.approx(offered, rel=0.03), (
        f"slot utilization {result.slot_utilization:.3f} vs offered load {offered:.3f}"
    )
    assert result.cdf_latency_ms.dtype == np.float32 and result.cdf_latency_ms.size == 250
    assert np.all(np.diff(result.cdf_latency_ms) >= 0), "the CDF's latencies must not decrease"
    assert result.cdf_share[-1] == pytest.approx(1.0), "the CDF must end at 1"
    assert result.p50_ms <= result.p95_ms <= result.p99_ms


def test_mser_finds_a_planted_transient():
    rng = np.random.default_rng(0)
    stationary = rng.exponential(1.0, 20_000) + 10.0
    ramp = np.linspace(0.0, 10.0, 2_000) + rng.exponential(1.0, 2_000)
    cut = mser_truncation(np.concatenate([ramp, stationary]))
    assert 1_500 <= cut <= 3_000, f"MSER-5 cut {cut} requests; the ramp ends at 2,000"
    assert mser_truncation(stationary) < 2_000, "a stationary series needs little warm-up"


def test_drift_flags_a_climbing_p99_and_not_a_steady_one():
    rng = np.random.default_rng(1)
    steady = rng.exponential(1.0, 100_000)
    drift, noise = p99_drift_ms(steady)
    assert abs(drift) <= noise, f"a steady series drifted {drift:.3f} (noise {noise:.3f})"
    climbing = steady * np.linspace(1.0, 1.3, steady.size)
    drift, noise = p99_drift_ms(climbing)
    assert drift > noise, f"a climbing series drifted only {drift:.3f} (noise {noise:.3f})"
    assert batch_means_half_width(steady) > 0


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"seed": -1}, "seed must be a whole number"),
        ({"rel_half_width": 0.0}, "rel_half_width=0.0 is outside"),
        ({"rel_half_width": "2%"}, "rel_half_width must be a number"),
        ({"max_requests": 5_000}, "max_requests=5000 is outside"),
        ({"max_requests": 3_000_000}, "max_requests=3000000 is outside"),
    ],
)
def test_bad_arguments_say_what_is_wrong(arguments, message):
    with pytest.raises(ValueError, match=message):
        simulate_converged(_FLEET, **arguments)


def test_result_is_frozen():
    result = simulate_converged(_loaded("random", False, 1.0))
    assert isinstance(result, ConvergedSim)
    with pytest.raises(AttributeError):
        result.p99_ms = 0.0  # type: ignore[misc]


@pytest.mark.parametrize(
    ("low_ms", "high_ms", "expected"),
    [
        (30.1, 31.9, "30.1–31.9"),
        (31.70, 31.74, "31.70–31.74"),
        (1234.2, 1234.4, "1,234.2–1,234.4"),
        (31.7, 31.7000001, "≈31.7"),
    ],
)
def test_an_interval_never_reads_as_the_same_number_twice(low_ms, high_ms, expected):
    text = converged.interval_ms_text(low_ms, high_ms)
    assert text == expected, f"the interval {low_ms}–{high_ms} ms reads {text!r}, not {expected!r}"
