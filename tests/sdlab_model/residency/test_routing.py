"""Model-aware routing: the placement's invariants, the kernel's routing, the model against it."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdlab_model.residency import ResidencyInputs
from sdlab_model.residency.placement import PLACEMENT_IDS, plan_residency
from sdlab_model.residency.routing import route_models, routed_latency
from sdlab_model.residency.simulated import cache_settings, simulate_routed
from sdlab_model.scenarios import SCENARIO_BY_ID
from sdlab_model.simulation import _sim_kernel, simulator
from sdlab_model.simulation.simulator import HolderRouting
from sdlab_model.workload import Workload

CARD5 = SCENARIO_BY_ID["multi-model-scale"].workload()
ROOT = Path(__file__).resolve().parents[3]


@settings(max_examples=40, deadline=None)
@given(
    models=st.integers(2, 200),
    replicas=st.integers(1, 120),
    skew=st.sampled_from([0.0, 0.6, 1.0, 1.5]),
    size_gb=st.sampled_from([0.5, 2.0, 7.0, 15.0]),
    per_replica_rps=st.sampled_from([50.0, 500.0, 4000.0]),
)
def test_every_model_is_held_within_each_replicas_memory_and_hot_models_on_more(
    models, replicas, skew, size_gb, per_replica_rps
):
    workload = CARD5.with_changes(
        models_hosted=models,
        replicas=replicas,
        popularity_skew=skew,
        rate_rps=min(per_replica_rps * replicas, 1e6),
    )
    inputs = ResidencyInputs(model_size_gb=size_gb)
    routing = route_models(workload, inputs)
    if not routing.feasible:
        per_replica = math.floor(inputs.usable_memory_gb / size_gb + 1e-9)
        assert models > replicas * per_replica, (
            f"infeasible although every model fits once: {routing.note}"
        )
        return
    counts = routing.holders_per_model
    assert np.all(counts >= 1), f"a model on no replica: {counts}"
    assert np.all(np.diff(counts) <= 0), f"a colder model on more replicas: {counts}"
    assert np.all(routing.replica_memory_gb <= inputs.usable_memory_gb * (1 + 1e-9)), (
        f"a replica holds {routing.replica_memory_gb.max()} GB of {inputs.usable_memory_gb} GB"
    )
    for model in range(models):
        held = routing.holders(model)
        assert np.unique(held).size == held.size == counts[model], f"model {model}: {held}"
    per_replica = np.bincount(routing.holder_replicas, minlength=replicas) * size_gb
    assert np.allclose(per_replica, routing.replica_memory_gb), "memory books disagree"
    assert routing.replica_rate_rps.sum() == pytest.approx(workload.rate_rps, rel=1e-9), (
        "the replicas' rates must add up to the fleet's"
    )
    result = routed_latency(workload, inputs, routing)
    assert result.p99_ms > 0 and (math.isfinite(result.p99_ms) == result.is_stable), result


def test_card_5_hot_models_get_many_replicas_and_cold_ones_one():
    routing = route_models(CARD5, ResidencyInputs())
    counts = routing.holders_per_model
    # The hottest model's 18.6% of 300k req/s is 13 replicas' fair shares and a bit.
    assert counts[0] == 14 and counts[-1] == 1, f"holders per model: {counts[:5]} … {counts[-3:]}"
    assert np.bincount(routing.holder_replicas).max() <= 10, "more than 10 models of 2 GB in 20 GB"


def test_a_fleet_too_small_to_hold_every_model_once_is_infeasible_not_wrong():
    workload = CARD5.with_changes(replicas=5)  # 120 models x 2 GB = 240 GB > 5 x 20 GB
    routing = route_models(workload, ResidencyInputs())
    assert not routing.feasible and "cannot hold" in routing.note, routing.note
    result = routed_latency(workload, ResidencyInputs(), routing)
    assert math.isinf(result.p99_ms) and not result.is_stable, result


def _kernel_inputs(workload: Workload, count: int, seed: int):
    rng = np.random.default_rng(seed)
    arrival_ms = np.cumsum(rng.exponential(1000.0 / workload.rate_rps, count))
    routing = simulator.routing_draws(workload, rng, count)
    return arrival_ms, routing


def test_routing_with_every_model_on_every_replica_is_the_unrouted_fleet_to_the_bit():
    # Holder k of every model is replica k, so random and least request pick the same replica
    # as without routing: the kernel's routing must change nothing else.
    inputs = ResidencyInputs(model_size_gb=4.0)
    for policy in ("random", "least_request"):
        workload = CARD5.with_changes(
            rate_rps=6000.0, replicas=6, models_hosted=12, lb_policy=policy
        )
        arrival_ms, routing = _kernel_inputs(workload, 20_000, seed=3)
        every = HolderRouting(
            np.tile(np.arange(6, dtype=np.int64), 12), np.arange(0, 6 * 13, 6, dtype=np.int64)
        )
        cache = cache_settings(workload, inputs)
        plain = simulator.run_trace(workload, arrival_ms, None, routing, cache)
        routed = simulator.run_trace(workload, arrival_ms, None, routing, cache, every)
        assert np.array_equal(plain.completion_ms, routed.completion_ms), policy
        assert np.array_equal(plain.batch_load_ms, routed.batch_load_ms), policy


@pytest.mark.parametrize("policy", ["round_robin", "random", "least_request"])
def test_the_plain_python_kernel_routes_exactly_like_the_compiled_one(policy):
    workload = CARD5.with_changes(rate_rps=20_000.0, replicas=16, lb_policy=policy)
    inputs = ResidencyInputs()
    routing = route_models(workload, inputs)
    assert routing.feasible, routing.note
    holders = HolderRouting(routing.holder_replicas, routing.holder_start)
    arrival_ms, (model_of, _, _) = _kernel_inputs(workload, 6_000, seed=5)
    first, second = simulator.holder_draws(model_of, holders, np.random.default_rng(6))
    cache = cache_settings(workload, inputs)
    limit, window, service = simulator._queue_settings(workload)
    outputs = []
    for kernel in (_sim_kernel.run_fleet, _sim_kernel._run_fleet):
        count = arrival_ms.size
        out = [np.empty(count), np.empty(count), np.empty(count, dtype=np.int64)]
        out += [np.empty(count, dtype=np.int64), np.zeros(count)]
        batches = kernel(
            arrival_ms, model_of, first, second, simulator._POLICY_CODES[policy],
            workload.replicas, workload.slots_per_replica, workload.models_hosted, limit,
            window, service, np.empty(0), out[0], out[1], out[2], out[3],
            cache.model_size_gb, cache.load_ms, cache.pinned, cache.cache_gb, out[4],
            holders.holder_replicas, holders.holder_start,
        )  # fmt: skip
        # Per-batch arrays hold garbage past the last batch: compare what the kernel wrote.
        outputs.append((batches, out[0], out[1], *(part[:batches] for part in out[2:])))
    assert outputs[0][0] == outputs[1][0], "batch counts differ"
    for compiled, plain in zip(outputs[0][1:], outputs[1][1:], strict=True):
        assert np.array_equal(compiled, plain), f"{policy}: compiled and plain kernels differ"


@pytest.mark.parametrize("policy", ["round_robin", "random", "least_request"])
def test_a_request_only_reaches_replicas_that_hold_its_model(policy):
    # Each replica's memory holds its own models and no more: a request sent to any other
    # replica would load its model there, so a hit ratio of exactly 1 means routing held.
    workload = CARD5.with_changes(rate_rps=30_000.0, replicas=12, lb_policy=policy)
    inputs = ResidencyInputs()
    sim = simulate_routed(workload, inputs, n_requests=40_000, replications=2)
    assert sim.batch_hit_ratio == 1.0 and sim.load_wait_share == 0.0, (
        f"{policy}: {sim.batch_hit_ratio:.4f} of batches found their model resident"
    )


def test_holders_that_leave_a_model_out_are_refused_with_a_message():
    workload = CARD5.with_changes(rate_rps=6000.0, replicas=2, models_hosted=3)
    holders = HolderRouting(np.array([0, 1], dtype=np.int64), np.array([0, 1, 2, 2]))
    with pytest.raises(ValueError, match="every model needs at least one replica"):
        simulator.simulate_residency(
            workload, cache_settings(workload, ResidencyInputs()), 2_000, holders=holders
        )


# (workload changes, requests): card 5 at the count that meets its target and above, a smaller
# fleet of cold models, and one without batching.
CHECK_CELLS = [
    (dict(replicas=26), 600_000),
    (dict(replicas=40), 400_000),
    (dict(rate_rps=20_000.0, replicas=10, models_hosted=40, popularity_skew=0.8), 300_000),
    (dict(rate_rps=3_000.0, replicas=8, models_hosted=20, dynamic_batching=False), 200_000),
]


@pytest.mark.parametrize(("changes", "requests"), CHECK_CELLS)
def test_the_routed_p99_is_within_target_of_simulation_or_flagged(changes, requests):
    workload = CARD5.with_changes(**changes)
    inputs = ResidencyInputs()
    model = routed_latency(workload, inputs)
    sim = simulate_routed(workload, inputs, n_requests=requests, seed=21)
    tolerance = 0.05 if workload.effective_max_batch_size == 1 else 0.15
    error = model.p99_ms / sim.p99_ms - 1.0
    assert abs(error) <= tolerance or model.accuracy == "approximate", (
        f"{changes}: model {model.p99_ms:.2f} ms vs simulated {sim.p99_ms:.2f} ms "
        f"({error:+.1%}), flagged {model.accuracy}"
    )
    assert model.hit_ratio == sim.batch_hit_ratio == 1.0, "steady state: every model resident"


def test_plan_residency_lists_model_aware_routing_and_card_5_picks_it():
    plan = plan_residency(CARD5, ResidencyInputs(), sweep=False)
    assert tuple(p.id for p in plan.placements) == PLACEMENT_IDS, "a placement is missing"
    routed = plan.placement("model_aware")
    assert routed.hit_ratio == 1.0 and routed.load_wait_share == 0.0, routed
    cheapest = min(plan.placements, key=lambda p: p.usd_per_hour_to_meet)
    assert plan.recommended == cheapest.id == "model_aware", (
        f"recommended {plan.recommended}; costs "
        f"{[(p.id, p.usd_per_hour_to_meet) for p in plan.placements]}"
    )
    fewer = CARD5.with_changes(replicas=routed.replicas_to_meet - 1)
    assert routed_latency(fewer, ResidencyInputs()).p99_ms > CARD5.p99_target_ms, (
        "one replica fewer must miss the target, or the count is not the fewest"
    )


_ROUTED_FINGERPRINT = """
import hashlib, sys
import numpy as np
from sdlab_model.residency import ResidencyInputs
from sdlab_model.residency.routing import route_models
from sdlab_model.residency.simulated import cache_settings
from sdlab_model.scenarios import SCENARIO_BY_ID
from sdlab_model.simulation import simulator
card = SCENARIO_BY_ID["multi-model-scale"].workload()
digests = []
for policy in ("round_robin", "random", "least_request"):
    workload = card.with_changes(rate_rps=20_000.0, replicas=16, lb_policy=policy)
    routing = route_models(workload, ResidencyInputs())
    holders = simulator.HolderRouting(routing.holder_replicas, routing.holder_start)
    cache = cache_settings(workload, ResidencyInputs())
    trace = simulator._simulate_trace(
        workload, 3_000, np.random.SeedSequence(8), "deterministic", cache, holders
    )
    digests.append(hashlib.sha256(trace.completion_ms.tobytes()).hexdigest())
print(" ".join(digests))
"""


def test_routed_runs_are_identical_to_the_bit_with_the_jit_disabled():
    # The fleet kernel and its routing helpers as plain Python (NUMBA_DISABLE_JIT=1) against
    # the compiled ones, as the simulator's other kernels are checked.
    def digests(extra_env: dict[str, str]) -> str:
        done = subprocess.run(
            [sys.executable, "-c", _ROUTED_FINGERPRINT],
            cwd=ROOT,
            env={**os.environ, **extra_env},
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, f"fingerprint script failed:\n{done.stderr}"
        return done.stdout.strip().splitlines()[-1]

    assert digests({"NUMBA_DISABLE_JIT": "1"}) == digests({}), (
        "routed completions differ between the compiled and the interpreted kernel"
    )
