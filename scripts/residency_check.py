"""The residency model against simulation, and card 5's placements. Prints three tables.

1. Che's approximation against a simulated LRU cache of models on random Zipf reference streams
   (independent references, as Che assumes): hit ratio over cache sizes x skews x model counts.
2. The packed fleet's p99 with residency (``packed_latency``) against the simulator
   (``simulate_packed``) on random cells. The accuracy flags were set on the tuning grid
   (``--grid tune``, seed 5); the report grid (``--grid test``, seed 11, the default) is new to
   them. A cell passes when within 15% of the simulated p99 or flagged approximate.
3. Card 5 (``multi-model-scale``): each placement's p99, cost and hit ratio, analytic and
   simulated (95% interval), the design the lab recommends, simulated at the replicas it needs,
   and the walkthrough's answer as the page prints it.
4. Model-aware routing's p99 (``routed_latency``) against the simulator (``simulate_routed``) on
   random fleets: within 5% (unbatched) or 15% (batched) of the simulated p99, or flagged
   approximate. Its flags are the fleet model's own limits, not tuned here, so every cell is
   out of sample.

    PYTHONPATH=. python scripts/residency_check.py [--grid test|tune] [--cells 16] [--quick]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from sdlab_model.assessment import evaluate
from sdlab_model.params import NUMERIC_BY_NAME
from sdlab_model.residency import ResidencyInputs, overall_hit_ratio, packed_latency
from sdlab_model.residency.placement import (
    PLACEMENT_LABELS,
    Placement,
    fewest_replicas_meeting,
    plan_residency,
)
from sdlab_model.residency.routing import route_models, routed_latency
from sdlab_model.residency.simulated import simulate_packed, simulate_routed
from sdlab_model.scenarios import SCENARIO_BY_ID, WALKTHROUGH, walkthrough_numbers
from sdlab_model.simulation.simulator import simulate, simulate_lru_hit_ratio

CACHE_SIZES = (1, 2, 5, 10, 20, 50)
SKEWS = (0.6, 0.8, 1.0, 1.2, 1.5)
MODEL_COUNTS = (20, 120, 500)
HIT_RATIO_TOLERANCE = 0.02
P99_TOLERANCE = 0.15
GRID_SEEDS = {"tune": 5, "test": 11}
ROUTED_SEEDS = {"tune": 7, "test": 13}
CARD_REQUESTS = 2_000_000
"""Requests per simulated card-5 design (four replications), the simulator's budget per call."""
CARD_SEEDS = (101, 102)
MAX_RATE_RPS = NUMERIC_BY_NAME["rate_rps"].maximum


def che_table(references: int, seed: int) -> float:
    """Print Che against simulated LRU; return the largest absolute difference."""
    print(f"\n## 1. Che's approximation vs simulated LRU ({references:,} references per cell)\n")
    print("| models | skew | cache (models) | Che | simulated | |difference| |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    worst = 0.0
    for models in MODEL_COUNTS:
        for skew in SKEWS:
            shares = np.arange(1, models + 1, dtype=float) ** -skew
            shares /= shares.sum()
            sizes = np.ones(models)
            for cache in (c for c in CACHE_SIZES if c < models):
                analytic = overall_hit_ratio(shares, sizes, cache)
                simulated = simulate_lru_hit_ratio(shares, sizes, cache, references, seed)
                error = abs(analytic - simulated)
                worst = max(worst, error)
                print(
                    f"| {models} | {skew:g} | {cache} | {analytic:.4f} | {simulated:.4f} "
                    f"| {error:.4f} |"
                )
    verdict = "within" if worst <= HIT_RATIO_TOLERANCE else "OUTSIDE"
    print(f"\nLargest difference {worst:.4f}: {verdict} {HIT_RATIO_TOLERANCE} absolute.")
    return worst


def _random_cells(seed: int, count: int):
    """Random workloads whose analytic p99 is finite with some requests waiting for loads."""
    card = SCENARIO_BY_ID["multi-model-scale"].workload()
    rng = np.random.default_rng(seed)
    cells = []
    for _ in range(5000):
        models = int(rng.choice([10, 20, 40, 80]))
        replicas = int(rng.choice([2, 4, 8]))
        per_replica = float(rng.choice([200, 500, 1000, 3000]))
        workload = card.with_changes(
            rate_rps=per_replica * replicas,
            replicas=replicas,
            models_hosted=models,
            popularity_skew=float(rng.choice([0.8, 1.0, 1.2, 1.5])),
            dynamic_batching=bool(rng.random() < 0.7),
        )
        inputs = ResidencyInputs(
            model_size_gb=float(rng.choice([0.5, 1, 2, 4])),
            load_overhead_ms=float(rng.choice([5, 20, 50])),
        )
        pinned = int(rng.choice([0, 0, 2]))
        result = packed_latency(workload, inputs, pinned)
        if result.is_stable and 0.002 < result.load_wait_share < 0.5 and result.utilization < 0.9:
            cells.append((workload, inputs, pinned, result))
            if len(cells) == count:
                break
    return cells


def p99_table(grid: str, count: int, requests: int) -> tuple[int, int]:
    """Print the p99 check and its three counts; return (cells passing, cells)."""
    seed = GRID_SEEDS[grid]
    print(f"\n## 2. p99 with residency vs simulation (grid '{grid}', seed {seed})\n")
    print(
        "| models | skew | replicas | req/s | batching | GB | overhead ms | pinned | "
        "waits for a load (model / sim) | hit (model / sim) | p99 model | p99 sim (95% CI) "
        "| error | flag | pass |"
    )
    print("| " + " | ".join(["---:"] * 15) + " |")
    passing = within_unflagged = flagged = outside_unflagged = 0
    cells = _random_cells(seed, count)
    for index, (workload, inputs, pinned, result) in enumerate(cells):
        sim = simulate_packed(workload, inputs, pinned, n_requests=requests, seed=1000 + index)
        error = result.p99_ms / sim.p99_ms - 1.0
        within = abs(error) <= P99_TOLERANCE
        is_flagged = result.accuracy == "approximate"
        ok = within or is_flagged
        passing += ok
        within_unflagged += within and not is_flagged
        flagged += is_flagged
        outside_unflagged += not within and not is_flagged
        low, high = sim.p99_ci_ms
        print(
            f"| {workload.models_hosted} | {workload.popularity_skew:g} | {workload.replicas} "
            f"| {workload.rate_rps:,.0f} | {'on' if workload.dynamic_batching else 'off'} "
            f"| {inputs.model_size_gb:g} | {inputs.load_overhead_ms:g} | {pinned} "
            f"| {result.load_wait_share:.3f} / {sim.load_wait_share:.3f} "
            f"| {result.hit_ratio:.3f} / {sim.batch_hit_ratio:.3f} | {result.p99_ms:.1f} "
            f"| {sim.p99_ms:.1f} ({low:.1f}–{high:.1f}) | {error:+.1%} | {result.accuracy} "
            f"| {'yes' if ok else 'NO'} |"
        )
    print(
        f"\n{passing} of {len(cells)} cells within {P99_TOLERANCE:.0%} of simulation or flagged "
        f"approximate: {within_unflagged} within and not flagged, {flagged} flagged, "
        f"{outside_unflagged} outside and not flagged (must be 0)."
    )
    return passing, len(cells)


def _money(value: float) -> str:
    return "cannot meet it" if not math.isfinite(value) else f"${value:,.2f}/h"


def _ms(value: float) -> str:
    return "unstable (∞)" if not math.isfinite(value) else f"{value:,.1f} ms"


def _simulated(workload, inputs, placement: Placement, seed: int) -> str:
    """The placement simulated at ``workload``'s replicas, as table text. Dedicated: the model
    whose p99 is the placement's bound, on its own replicas. Unstable: two run lengths, whose
    p99s grow with the run where the queue grows without bound."""
    if placement.id == "dedicated":
        return _dedicated_check(workload, seed)
    if placement.id == "model_aware":
        return _sim_text(simulate_routed(workload, inputs, n_requests=CARD_REQUESTS, seed=seed))
    if math.isfinite(placement.p99_ms):
        result = simulate_packed(
            workload, inputs, placement.pinned_models, n_requests=CARD_REQUESTS, seed=seed
        )
        return _sim_text(result)
    runs = [
        simulate_packed(workload, inputs, placement.pinned_models, n_requests=n, seed=seed)
        for n in (CARD_REQUESTS // 10, CARD_REQUESTS)
    ]
    return (
        f"{_ms(runs[0].p99_ms)} at {CARD_REQUESTS // 10:,} requests, {_ms(runs[1].p99_ms)} at "
        f"{CARD_REQUESTS:,}: grows with the run"
    )


def _dedicated_check(workload, seed: int) -> str:
    """The model with the highest p99 on the replicas ``dedicated_placement`` gives it,
    simulated on its own (its p99 is the dedicated placement's bound)."""
    single = workload.with_changes(models_hosted=1)
    rates = np.maximum(workload.rate_rps * workload.model_shares, 1.0)
    counts, p99s = fewest_replicas_meeting(single, rates, workload.p99_target_ms)
    worst = int(np.argmax(np.where(counts > 0, p99s, -np.inf)))
    fleet = single.with_changes(rate_rps=float(rates[worst]), replicas=int(counts[worst]))
    result = simulate(fleet, n_requests=CARD_REQUESTS, seed=seed, replications=4)
    low, high = result.p99_ci_ms
    return (
        f"model {worst + 1} ({fleet.rate_rps:,.0f} req/s on {fleet.replicas} "
        f"replica{'s' if fleet.replicas != 1 else ''}): "
        f"{_ms(result.p99_ms)} ({low:,.1f}–{high:,.1f})"
    )


def _sim_text(result) -> str:
    low, high = result.p99_ci_ms
    return f"{_ms(result.p99_ms)} ({low:,.1f}–{high:,.1f}), hit {result.batch_hit_ratio:.3f}"


def card_five(accelerator: str) -> None:
    """Print card 5's placements on one GPU type, analytic and simulated, and the recommended
    design simulated at the replicas it needs."""
    card = SCENARIO_BY_ID["multi-model-scale"].workload()
    inputs = ResidencyInputs(accelerator=accelerator)
    plan = plan_residency(card, inputs)
    print(
        f"\n## 3. Card 5 on {inputs.accelerator_name}: {card.models_hosted} models of "
        f"{inputs.model_size_gb:g} GB, {card.rate_rps:,.0f} req/s, {card.replicas} replicas, "
        f"p99 target {card.p99_target_ms:g} ms; {plan.usable_memory_gb:g} GB for weights, "
        f"{plan.models_fit_per_replica} models fit per replica\n"
    )
    print(
        "| placement | replicas | cost | p99 (model) | accuracy | hit ratio (model) | "
        f"simulated p99 (95% CI), hit ratio, seed {CARD_SEEDS[0]} | waits for a load | meets | "
        "replicas to meet | cost to meet |"
    )
    print("| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | --- | ---: | ---: |")
    for p in plan.placements:
        bound = "≤ " if p.p99_is_bound else ""
        pinned = f" ({p.pinned_models} pinned)" if p.id == "packed_pinned" else ""
        sim_text = _simulated(card, inputs, p, CARD_SEEDS[0])
        print(
            f"| {p.label}{pinned} | {p.replicas} | {_money(p.usd_per_hour)} "
            f"| {bound}{_ms(p.p99_ms)} | {p.accuracy} | {p.hit_ratio:.3f} | {sim_text} "
            f"| {p.load_wait_share:.1%} | {'yes' if p.meets_target else 'no'} "
            f"| {p.replicas_to_meet or 'none up to 500'} | {_money(p.usd_per_hour_to_meet)} |"
        )
    chosen = PLACEMENT_LABELS[plan.recommended] if plan.recommended else "none meets the target"
    memory = plan.memory_for_target_gb
    print(f"\nRecommended: {chosen}.")
    if plan.recommended == "model_aware":
        _recommended_routed(card, inputs, plan.placement("model_aware"))
    print(
        "Memory for the target (packed LRU at these replicas): "
        + (
            f"{memory:.1f} GB"
            if memory is not None
            else "none: even with every model resident the fleet misses the target"
        )
    )
    if plan.packing_stops_paying_gb is not None:
        print(
            f"Packing costs more than dedicated from {plan.packing_stops_paying_gb:g} GB a model."
        )
    elif plan.packing_pays_everywhere:
        print("Packing costs less than dedicated at every model size tried.")


def _recommended_routed(card, inputs: ResidencyInputs, routed: Placement) -> None:
    """The recommended routed design at the replicas it needs: its placement, model and
    simulated p99 on two seeds."""
    sized = card.with_changes(replicas=routed.replicas_to_meet)
    routing = route_models(sized, inputs)
    model = routed_latency(sized, inputs, routing)
    full = sized.effective_max_batch_size
    busiest = routing.replica_rate_rps.max() / 1000.0 * sized.batch_service_ms(full) / full
    counts = routing.holders_per_model
    print(
        f"At {sized.replicas} replicas ({_money(routed.usd_per_hour_to_meet)}): the hottest "
        f"model on {counts[0]} replicas, {int((counts == 1).sum())} models on one, at most "
        f"{int(np.bincount(routing.holder_replicas).max())} a replica; the busiest replica "
        f"needs {busiest / sized.slots_per_replica:.1%} of its slots on full batches. "
        f"Model p99 {_ms(model.p99_ms)} ({model.accuracy})."
    )
    for seed in CARD_SEEDS:
        sim = simulate_routed(sized, inputs, n_requests=CARD_REQUESTS, seed=seed)
        print(f"  simulated, seed {seed}, {CARD_REQUESTS:,} requests: {_sim_text(sim)}")


def walkthrough_answer() -> None:
    """Step 5's answer as the Lab prints it (queueing model, default residency inputs)."""
    step = next(s for s in WALKTHROUGH if s.card_id == "multi-model-scale")
    card = SCENARIO_BY_ID[step.card_id].workload()
    assessment = evaluate(card, "queueing")
    _, answer = step.render(walkthrough_numbers(card, assessment))
    print(f"\n## Walkthrough step {step.step}, the answer as the page prints it\n\n{answer}")
    print(f"\nStage: {assessment.stage.title}. Card: {SCENARIO_BY_ID[step.card_id].summary}")


def _routed_cells(seed: int, count: int):
    """Random fleets with many models whose routed placement is feasible and stable."""
    card = SCENARIO_BY_ID["multi-model-scale"].workload()
    rng = np.random.default_rng(seed)
    cells = []
    for _ in range(5000):
        replicas = int(rng.choice([4, 8, 16, 30, 60]))
        workload = card.with_changes(
            replicas=replicas,
            models_hosted=int(rng.choice([10, 20, 40, 80, 120])),
            popularity_skew=float(rng.choice([0.6, 0.8, 1.0, 1.2])),
            dynamic_batching=bool(rng.random() < 0.7),
            lb_policy=str(rng.choice(["round_robin", "random", "least_request"])),
        )
        capacity = workload.capacity_rps
        rate = min(capacity * rng.uniform(0.1, 0.9), MAX_RATE_RPS)
        workload = workload.with_changes(rate_rps=float(rate))
        inputs = ResidencyInputs(model_size_gb=float(rng.choice([1, 2, 4])))
        result = routed_latency(workload, inputs)
        if result.is_stable:
            cells.append((workload, inputs, result))
            if len(cells) == count:
                break
    return cells


def routed_table(grid: str, count: int) -> tuple[int, int]:
    """Print model-aware routing's p99 against simulation; return (cells passing, cells)."""
    seed = ROUTED_SEEDS[grid]
    print(f"\n## 4. Model-aware routing's p99 vs simulation (grid '{grid}', seed {seed})\n")
    print(
        "| models | skew | replicas | req/s | batching | policy | p99 model | "
        "p99 sim (95% CI) | hit sim | error | flag | pass |"
    )
    print("| " + " | ".join(["---:"] * 12) + " |")
    passing = within = flagged = outside = 0
    cells = _routed_cells(seed, count)
    for index, (workload, inputs, model) in enumerate(cells):
        sim = simulate_routed(workload, inputs, n_requests=CARD_REQUESTS, seed=2000 + index)
        error = model.p99_ms / sim.p99_ms - 1.0
        tolerance = 0.05 if workload.effective_max_batch_size == 1 else P99_TOLERANCE
        is_within, is_flagged = abs(error) <= tolerance, model.accuracy == "approximate"
        passing += is_within or is_flagged
        within += is_within and not is_flagged
        flagged += is_flagged
        outside += not is_within and not is_flagged
        low, high = sim.p99_ci_ms
        print(
            f"| {workload.models_hosted} | {workload.popularity_skew:g} | {workload.replicas} "
            f"| {workload.rate_rps:,.0f} | {'on' if workload.dynamic_batching else 'off'} "
            f"| {workload.lb_policy} | {model.p99_ms:.1f} | {sim.p99_ms:.1f} "
            f"({low:.1f}–{high:.1f}) | {sim.batch_hit_ratio:.3f} | {error:+.1%} "
            f"| {model.accuracy} | {'yes' if is_within or is_flagged else 'NO'} |"
        )
    print(
        f"\n{passing} of {len(cells)} cells within target (5% unbatched, 15% batched) or flagged "
        f"approximate: {within} within and not flagged, {flagged} flagged, {outside} outside and "
        "not flagged (must be 0)."
    )
    return passing, len(cells)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", choices=tuple(GRID_SEEDS), default="test")
    parser.add_argument("--cells", type=int, default=16)
    parser.add_argument("--references", type=int, default=200_000)
    parser.add_argument("--requests", type=int, default=160_000)
    parser.add_argument("--quick", action="store_true", help="card 5 only")
    parser.add_argument("--routed-cells", type=int, default=12)
    args = parser.parse_args()
    started = time.perf_counter()
    if not args.quick:
        che_table(args.references, seed=3)
        p99_table(args.grid, args.cells, args.requests)
    for accelerator in ("aws-g5-xlarge", "gcp-a2-ultragpu-1g"):
        card_five(accelerator)
    walkthrough_answer()
    if not args.quick:
        routed_table(args.grid, args.routed_cells)
    print(f"\n({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
