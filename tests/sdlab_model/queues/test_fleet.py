"""The fleet as deployed: load-balancer policies, per-model batchers, bursty arrivals.

Model tests (``sdlab_model.queues.fleet`` through ``queueing.latency`` and ``p99_grid``) and checks
of the model against the simulator on the workloads issue 9 names.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from sdlab_model.params import LB_POLICIES
from sdlab_model.queues import batching, fleet, queueing
from sdlab_model.simulation.simulator import simulate
from sdlab_model.workload import Workload

PER_REPLICA_POLICIES = ("random", "round_robin", "least_request")


# --- central_queue is the model the lab had before load balancers -----------------------------

# Pinned 2026-11-30 from queueing.latency at commit 5b9a436, before lb_policy existed:
# (p50, p95, p99, accuracy, mean batch size).
_BEFORE_POLICIES = [
    (Workload(), (28.806261615794128, 34.747910004007586, 37.13424582165853, "validated", 2.0)),
    (
        Workload(dynamic_batching=False, rate_rps=1400, replicas=2),
        (20.0, 25.358478967834685, 29.172005408359134, "exact", 1.0),
    ),
    (
        Workload(gpu=True, rate_rps=50000, replicas=8),
        (4.977420981345999, 5.461358709917919, 5.592106170989057, "validated", 32.0),
    ),
    (
        Workload(rate_rps=20000, replicas=40, batch_window_ms=2.0),
        (123.7143857866983, 124.92215540823209, 125.2602573357047, "validated", 32.0),
    ),
    (
        Workload(dynamic_batching=False, gpu=True, rate_rps=4000, replicas=3),
        (2.5, 3.9078646235085115, 4.856166995046082, "exact", 1.0),
    ),
]


@pytest.mark.parametrize(("workload", "before"), _BEFORE_POLICIES)
def test_central_queue_is_the_previous_model_exactly(workload, before):
    central = queueing.latency(workload.with_changes(lb_policy="central_queue", models_hosted=50))
    now = (central.p50_ms, central.p95_ms, central.p99_ms, central.accuracy)
    if central.accuracy == "exact":
        # 2026-12-01: the exact M/D/c solve moved from a dense LU solve to GTH state reduction
        # (branch mdcfast); its pmf agrees to 1e-12, so its quantiles to ~1e-13 relative.
        assert now[:3] == pytest.approx(before[:3], rel=1e-12, abs=0.0), (
            f"central queue moved: {now} vs {before}"
        )
        assert (central.accuracy, central.mean_batch_size) == before[3:], f"{now} vs {before}"
        return
    assert (*now, central.mean_batch_size) == before, f"central queue moved: {now} vs {before}"


def test_central_queue_grid_is_the_previous_grid_exactly():
    # Pinned 2026-11-30 from queueing.p99_grid at commit 5b9a436.
    before = [
        [32.96657355778498, 84.56997880994211, math.inf],
        [32.96657355778498, 83.87453872032592, math.inf],
        [32.96657355778498, 83.87453872032592, 124.62326850615774],
    ]
    grid = queueing.p99_grid(
        Workload(lb_policy="central_queue"),
        np.array([100.0, 2000.0, 30000.0]),
        np.array([1, 4, 32]),
    )
    assert grid.tolist() == before, f"central-queue grid moved:\n{grid}"


@pytest.mark.parametrize("replicas", [1, 3, 12])
@pytest.mark.parametrize("gpu", [False, True])
def test_round_robin_without_batching_is_the_central_queue(replicas, gpu):
    # Erlang-R arrivals at each replica make the replicas one pooled M/D/(R c) queue.
    base = Workload(dynamic_batching=False, replicas=replicas, gpu=gpu, models_hosted=9)
    for share in (0.2, 0.6, 0.9):
        workload = base.with_changes(rate_rps=share * base.capacity_rps)
        spread = queueing.latency(workload)
        central = queueing.latency(workload.with_changes(lb_policy="central_queue"))
        assert (spread.p50_ms, spread.p95_ms, spread.p99_ms) == (
            central.p50_ms,
            central.p95_ms,
            central.p99_ms,
        ), f"round robin differs from the central queue at {share:.0%} of capacity"
        assert spread.accuracy == "exact", "the pooled queue is exact without batching"


def test_random_split_without_batching_is_one_exact_replica():
    fleet_wide = Workload(dynamic_batching=False, lb_policy="random", replicas=10, rate_rps=6000)
    one = Workload(
        dynamic_batching=False, lb_policy="central_queue", replicas=1, rate_rps=600
    )  # 16 workers at a tenth of the rate
    assert queueing.latency(fleet_wide).p99_ms == queueing.latency(one).p99_ms, (
        "a random split of Poisson arrivals is one replica's M/D/c queue at lambda / R"
    )


# --- replicas and models against the simulator -----------------------------------------------


@pytest.mark.parametrize("policy", PER_REPLICA_POLICIES)
def test_more_replicas_lower_the_p99_at_ten_thousand_requests(policy):
    # Issue 9's case: defaults (CPU, batching on), 10k req/s. The pooled batcher said adding
    # replicas never helps; per-replica batchers fill faster with fewer replicas but queue less
    # with more, and the simulation says the p99 falls.
    counts = (10, 20, 50, 100)
    model, simulated = [], []
    for count in counts:
        workload = Workload(rate_rps=10_000, replicas=count, lb_policy=policy)
        model.append(queueing.latency(workload).p99_ms)
        simulated.append(simulate(workload, n_requests=100_000, seed=3).p99_ms)
    assert all(b < a for a, b in itertools.pairwise(simulated)), (
        f"simulated p99 must fall with replicas under {policy}: {simulated}"
    )
    assert all(b < a for a, b in itertools.pairwise(model)), (
        f"model p99 must fall with replicas under {policy}: {model}"
    )


@pytest.mark.parametrize("policy", ["random", "round_robin"])
def test_models_hosted_move_the_batched_p99_as_simulated(policy):
    # 10 replicas at 5k req/s: each model's batcher sees its share, so more models make smaller
    # batches that fill and run faster (window-limited throughout, so the model is validated).
    p99 = {}
    for models in (1, 4, 16, 64):
        workload = Workload(rate_rps=5_000, replicas=10, lb_policy=policy, models_hosted=models)
        result = queueing.latency(workload)
        sim = simulate(workload, n_requests=200_000, seed=5)
        p99[models] = (result.p99_ms, sim.p99_ms)
        assert result.p99_ms == pytest.approx(sim.p99_ms, rel=0.15), (
            f"{models} models under {policy}: model {result.p99_ms:.1f} vs sim {sim.p99_ms:.1f}"
        )
    assert p99[1][0] != p99[16][0], "models hosted must change the batched p99"
    assert (p99[16][0] < p99[1][0]) == (p99[16][1] < p99[1][1]), (
        f"model and simulation must move the same way from 1 to 16 models: {p99}"
    )


@pytest.mark.parametrize("policy", LB_POLICIES)
def test_models_hosted_change_nothing_without_batching(policy):
    base = Workload(dynamic_batching=False, rate_rps=5_000, replicas=10, lb_policy=policy)
    one = queueing.latency(base)
    for models in (2, 40, 500):
        many = queueing.latency(base.with_changes(models_hosted=models, popularity_skew=1.3))
        assert many.p99_ms == one.p99_ms, f"{models} models moved the unbatched p99 ({policy})"
    if policy != "random":  # the random split draws replicas from the same stream as models
        sim_one = simulate(base, n_requests=40_000)
        sim_many = simulate(base.with_changes(models_hosted=40), n_requests=40_000)
        assert np.array_equal(sim_one.latencies_ms, sim_many.latencies_ms) or (
            policy == "least_request"
        ), "without batching a replica serves in arrival order, whatever the model"


# --- parts of the model ----------------------------------------------------------------------


def test_model_classes_keep_every_models_traffic():
    for models, skew in ((1, 1.0), (7, 0.0), (30, 1.0), (500, 1.2)):
        workload = Workload(models_hosted=models, popularity_skew=skew)
        classes = fleet.model_classes(workload)
        assert classes.count.sum() == models, "every model belongs to one class"
        assert classes.weight.sum() == pytest.approx(1.0, abs=1e-12), "shares must sum to 1"
        assert classes.share.size <= fleet.MAX_MODEL_CLASSES, "too many classes"
    assert fleet.model_classes(Workload(models_hosted=40, popularity_skew=0.0)).share.size == 1, (
        "an even split is one class"
    )


def test_replica_arrival_variability_by_policy():
    replicas = np.array([1.0, 4.0, 100.0])
    assert np.allclose(fleet.replica_arrival_scv("round_robin", replicas, 1.0), 1 / replicas)
    assert np.allclose(fleet.replica_arrival_scv("random", replicas, 1.0), 1.0)
    random_bursty = fleet.replica_arrival_scv("random", replicas, 3.0)
    assert np.allclose(random_bursty, 1.0 + 8.0 / replicas), "thinning brings a stream to Poisson"


def test_quantile_table_matches_the_solver():
    rng = np.random.default_rng(7)
    n = 4_000
    tau = np.exp(rng.uniform(math.log(1e-3), math.log(100), n))
    sd = np.exp(rng.uniform(math.log(1e-3), math.log(10), n))
    mean = np.exp(rng.uniform(0.0, math.log(200), n))
    first = 1.0 / np.exp(rng.uniform(0.0, math.log(300), n))
    solved = batching._quantile_of_sum(tau, first, mean, sd, 0.01)
    tabled = batching.quantile_from_table(tau, first, mean, sd, 0.01)
    worst = float(np.max(np.abs(tabled / solved - 1.0)))
    assert worst < 0.01, f"table vs solver at the p99: worst relative difference {worst:.4f}"


def test_least_request_and_bursty_batching_are_flagged():
    assert queueing.latency(Workload(lb_policy="least_request")).accuracy == "approximate"
    assert queueing.latency(Workload(arrival_cv=3.0, rate_rps=2000)).accuracy == "approximate"
    assert queueing.latency(Workload()).accuracy == "validated", "the default is validated"


@pytest.mark.parametrize("policy", LB_POLICIES)
@pytest.mark.parametrize("cv", [0.5, 1.0, 4.0])
def test_every_policy_is_finite_below_capacity_and_infinite_at_it(policy, cv):
    base = Workload(lb_policy=policy, arrival_cv=cv, replicas=6, models_hosted=12)
    for batching_on in (False, True):
        workload = base.with_changes(dynamic_batching=batching_on)
        below = queueing.latency(workload.with_changes(rate_rps=0.7 * workload.capacity_rps))
        assert below.is_stable and math.isfinite(below.p99_ms), f"{policy} cv {cv} not finite"
        assert below.p50_ms <= below.p95_ms <= below.p99_ms, "percentiles out of order"
        at = queueing.latency(workload.with_changes(rate_rps=min(500_000, workload.capacity_rps)))
        assert not at.is_stable and math.isinf(at.p99_ms), "at capacity the p99 is infinite"


_QUANTILE_CASES = [
    Workload(
        rate_rps=rate,
        replicas=replicas,
        dynamic_batching=batching_on,
        gpu=gpu,
        lb_policy=policy,
        models_hosted=models,
        arrival_cv=cv,
    )
    for rate, replicas, batching_on, gpu, policy, models, cv in (
        (200.0, 2, True, False, "round_robin", 1, 1.0),
        (5_000.0, 10, True, False, "random", 16, 1.0),
        (25_000.0, 6, True, True, "least_request", 8, 1.0),
        (3_000.0, 40, False, False, "round_robin", 1, 2.0),
        (900.0, 3, False, True, "random", 120, 1.0),
        (60_000.0, 9, True, True, "round_robin", 120, 0.5),
        (1_500.0, 5, True, False, "central_queue", 3, 3.0),
    )
]  # fmt: skip


@pytest.mark.parametrize("workload", _QUANTILE_CASES, ids=range(len(_QUANTILE_CASES)))
def test_quantiles_as_cells_of_one_call_equal_one_call_each(workload):
    """The point model computes p50, p95 and p99 as three cells of one call (a third of the
    work); each cell must be bit for bit what a call for that quantile alone gives."""
    rate, replicas = workload.rate_rps / 1000.0, float(workload.replicas)
    together = queueing._fleet_parts(
        workload, np.full(3, rate), np.full(3, replicas), np.array(queueing.QUANTILES)
    )
    for cell, q in enumerate(queueing.QUANTILES):
        alone = queueing._fleet_parts(workload, np.array(rate), np.array(replicas), q)
        for field in ("quantile_ms", "compute_ms", "queue_ms", "mean_batch_size", "saturation"):
            assert getattr(together, field)[cell] == getattr(alone, field), (
                f"{workload}, q={q}: {field} {getattr(together, field)[cell]!r} as a cell, "
                f"{getattr(alone, field)!r} alone"
            )
    latency = queueing.latency(workload)
    p99 = float(together.quantile_ms[-1])
    # (Where the exact M/D/n solve applies, the point model quotes it instead.)
    assert latency.p99_ms == p99 or latency.accuracy == "exact", (
        f"{workload}: the point model's p99 {latency.p99_ms!r} is not the p99 cell {p99!r}"
    )
