"""Time ``evaluate`` per card with and without the residency model's packing numbers.

Issue 11, round two: the packing numbers ``evaluate`` needs (``assessment._packing_numbers``:
the dedicated, packed-LRU and pinned placements and their replica searches) must cost at most
5 ms, within the Lab's ~10 ms rerun budget. For each card this prints the best of ``--repeats``
runs of ``evaluate`` without those numbers (as before issue 11), with them, and the numbers
alone; then the same for card 5 on other accelerators and model sizes.

    PYTHONPATH=. python scripts/bench_residency.py [--repeats 30]
"""

from __future__ import annotations

import argparse
import time
from unittest import mock

from sdlab_model import SCENARIOS, assessment, evaluate
from sdlab_model.residency import ResidencyInputs
from sdlab_model.scenarios import SCENARIO_BY_ID

BUDGET_MS = 5.0


def _best_ms(run, repeats: int) -> float:
    run()  # warm caches (numba, lru tables) outside the timing
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best * 1e3


def _row(label: str, workload, residency, repeats: int) -> float:
    result = assessment.latency(workload)
    with mock.patch.object(assessment, "_packing_numbers", return_value=None):
        without = _best_ms(lambda: evaluate(workload, residency=residency), repeats)
    with_packing = _best_ms(lambda: evaluate(workload, residency=residency), repeats)
    alone = _best_ms(lambda: assessment._packing_numbers(workload, result, residency), repeats)
    print(f"| {label} | {without:.1f} | {with_packing:.1f} | {alone:.2f} |")
    return alone


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    print(
        "| case | evaluate without packing numbers (ms) | with them (ms) "
        "| packing numbers alone (ms) |"
    )
    print("| --- | ---: | ---: | ---: |")
    worst = 0.0
    for card in SCENARIOS:
        worst = max(worst, _row(card.id, card.workload(), None, args.repeats))
    card = SCENARIO_BY_ID["multi-model-scale"].workload()
    variants = (
        ("card 5, A100 80 GB", ResidencyInputs(accelerator="gcp-a2-ultragpu-1g")),
        ("card 5, 0.5 GB models", ResidencyInputs(model_size_gb=0.5)),
        ("card 5, 0.1 GB models", ResidencyInputs(model_size_gb=0.1)),
    )
    for label, inputs in variants:
        worst = max(worst, _row(label, card, inputs, args.repeats))
    verdict = "within" if worst <= BUDGET_MS else "OVER"
    print(f"\nSlowest packing numbers: {worst:.2f} ms ({verdict} the {BUDGET_MS:g} ms budget).")


if __name__ == "__main__":
    main()
