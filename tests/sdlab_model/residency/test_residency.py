"""The residency model: Che against simulated LRU, exactness without misses, inputs, placements."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from sdlab_model.queues import queueing
from sdlab_model.residency import ResidencyInputs, hit_ratios, overall_hit_ratio, packed_latency
from sdlab_model.residency.placement import plan_residency
from sdlab_model.residency.simulated import cache_settings
from sdlab_model.scenarios import SCENARIO_BY_ID
from sdlab_model.simulation import simulator
from sdlab_model.simulation.simulator import simulate_lru_hit_ratio
from sdlab_model.workload import Workload

CARD5 = SCENARIO_BY_ID["multi-model-scale"].workload()


def _zipf(models: int, skew: float) -> np.ndarray:
    shares = np.arange(1, models + 1, dtype=float) ** -skew
    return shares / shares.sum()


@pytest.mark.parametrize(
    ("models", "skew", "cache"), [(20, 1.0, 5), (120, 0.8, 20), (120, 1.2, 2), (500, 1.5, 50)]
)
def test_che_is_within_two_points_of_a_simulated_lru_cache(models, skew, cache):
    shares = _zipf(models, skew)
    sizes = np.ones(models)
    analytic = overall_hit_ratio(shares, sizes, cache)
    simulated = simulate_lru_hit_ratio(shares, sizes, cache, 60_000, seed=7)
    assert abs(analytic - simulated) <= 0.02, (
        f"{models} models, skew {skew}, cache {cache}: Che {analytic:.4f} vs LRU {simulated:.4f}"
    )


def test_a_cache_of_one_model_hits_exactly_when_the_last_reference_was_the_same_model():
    shares = _zipf(20, 1.5)
    hits = hit_ratios(shares, np.ones(20), 1.0)
    assert np.allclose(hits, shares), "one resident model: hit ratio must be the model's share"
    assert overall_hit_ratio(shares, np.ones(20), 1.0) == pytest.approx(float(np.sum(shares**2)))


def test_more_memory_never_lowers_a_hit_ratio():
    shares = _zipf(120, 1.0)
    ratios = [overall_hit_ratio(shares, np.full(120, 2.0), gb) for gb in (4, 10, 20, 60, 200)]
    assert all(b >= a for a, b in itertools.pairwise(ratios)), f"ratios {ratios}"
    assert overall_hit_ratio(shares, np.full(120, 2.0), 240) == 1.0, "all fit: every hit"


def _all_fit(workload: Workload) -> ResidencyInputs:
    # 80 GB, 4 reserved: 76 GB hold weights; every model at 76 / models GB fits exactly.
    return ResidencyInputs(
        accelerator="gcp-a2-ultragpu-1g", model_size_gb=76.0 / workload.models_hosted
    )


@pytest.mark.parametrize(
    "workload",
    [
        CARD5,
        CARD5.with_changes(dynamic_batching=False, rate_rps=20_000),
        SCENARIO_BY_ID["registry-canary"].workload().with_changes(lb_policy="random"),
    ],
)
def test_with_memory_for_every_model_the_p99_is_the_fleet_models_exactly(workload):
    inputs = _all_fit(workload)
    result = packed_latency(workload, inputs)
    fleet = queueing.latency(workload)
    assert result.p99_ms == fleet.p99_ms, f"{result.p99_ms!r} != fleet {fleet.p99_ms!r}"
    assert result.hit_ratio == 1.0 and result.load_wait_share == 0.0, "nothing may miss"
    assert result.accuracy == fleet.accuracy, "the fleet model's own accuracy carries over"


def test_with_memory_for_every_model_the_simulation_is_the_plain_simulation_bit_for_bit():
    workload = CARD5.with_changes(rate_rps=8_000, replicas=3, models_hosted=12)
    cache = cache_settings(workload, _all_fit(workload))
    # A fresh SeedSequence each: spawning children advances the one it is called on.
    plain = simulator._simulate_trace(workload, 20_000, np.random.SeedSequence(3))
    resident = simulator._simulate_trace(
        workload, 20_000, np.random.SeedSequence(3), residency=cache
    )
    assert np.array_equal(plain.completion_ms, resident.completion_ms), "completions differ"
    assert np.array_equal(plain.batch_sizes, resident.batch_sizes), "batches differ"
    assert not np.any(resident.batch_load_ms), "a model was loaded though all fit"


def test_a_tighter_cache_loads_models_and_slows_the_tail():
    workload = CARD5.with_changes(rate_rps=1_600, replicas=8, models_hosted=40)
    roomy = packed_latency(workload, ResidencyInputs(model_size_gb=0.5))
    tight = packed_latency(workload, ResidencyInputs(model_size_gb=1.0, load_overhead_ms=20))
    assert tight.hit_ratio < roomy.hit_ratio, "half the room must hold fewer models"
    assert tight.p99_ms > roomy.p99_ms, f"p99 {tight.p99_ms} should exceed {roomy.p99_ms}"
    assert tight.p99_is_load_time, "with over 1% of requests waiting for loads, say so"


def test_a_model_larger_than_the_memory_has_no_p99():
    result = packed_latency(CARD5, ResidencyInputs(model_size_gb=30))
    assert math.isinf(result.p99_ms) and not result.is_stable, "30 GB cannot fit in 20 GB"
    assert "does not fit" in result.note, result.note


def test_card_five_recommends_a_placement_that_meets_the_target():
    plan = plan_residency(CARD5, ResidencyInputs(), sweep=False)
    assert plan.recommended is not None, "some placement of card 5 meets 70 ms"
    chosen = plan.placement(plan.recommended)
    others = [p for p in plan.placements if p.replicas_to_meet is not None]
    assert all(chosen.usd_per_hour_to_meet <= p.usd_per_hour_to_meet for p in others), (
        "the recommendation must be the cheapest placement that meets the target"
    )
    dedicated = plan.placement("dedicated")
    assert dedicated.replicas >= CARD5.models_hosted, "dedicated needs a replica per model"


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"model_size_gb": 0}, "model_size_gb"),
        ({"load_gb_per_s": float("nan")}, "load_gb_per_s"),
        ({"accelerator": "aws-c7i-4xlarge"}, "accelerator"),
        ({"model_sizes_gb": (1.0, 500.0)}, "model_sizes_gb"),
    ],
)
def test_bad_inputs_are_refused_with_the_field_named(changes, field):
    with pytest.raises(ValueError, match=field):
        ResidencyInputs(**changes)


def test_inputs_round_trip_through_text_and_bad_text_gives_notices():
    inputs = ResidencyInputs(model_size_gb=1.5, load_gb_per_s=8, model_sizes_gb=(7.0, 2.5))
    again, notices = ResidencyInputs.from_strings(inputs.to_strings())
    assert again == inputs and not notices, f"round trip gave {again} with {notices}"
    odd, notices = ResidencyInputs.from_strings(
        {"model_size_gb": ["1e9"], "accelerator": "tpu", "model_sizes_gb": "2,x,900"}
    )
    assert odd.model_size_gb == 80 and odd.model_sizes_gb == (2.0, 80.0), f"got {odd}"
    assert len(notices) == 3, f"one notice per bad value expected, got {notices}"
