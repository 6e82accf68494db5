#!/usr/bin/env python3
"""Pin ``evaluate``'s results on random workloads, so a speed-up can show it changed nothing.

    python3 scripts/evaluate_golden.py [--count 200] [--seed 20261201] [--output FILE]

Writes ``tests/sdlab_model/data/evaluate_golden.json``: for each workload (drawn by
``random_workloads``), every field of ``evaluate(workload, model)`` for both models, flattened by
``assessment_record``. ``tests/sdlab_model/test_evaluate_golden.py`` recomputes them and compares
numbers within 1e-12 relative and everything else (texts, flags, counts) exactly, through a
SHA-256 digest that keeps the file small. It imports ``sdlab_model`` from the checkout it sits
in: run it at the commit whose results are the reference (it was run on a copy of main's a9e3888,
before ``evaluate`` was made cheaper), never after a change meant to keep them.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "tests" / "sdlab_model" / "data" / "evaluate_golden.json"


def random_workloads(count: int, seed: int) -> list:
    """``count`` workloads drawn over the sliders' ranges (log sliders log-uniformly), with
    batching, hardware and balancer policy each drawn too. Most rates are drawn as a share of
    the workload's capacity (0.02 to 1.2 of it, log-uniformly), so most cells are stable and
    some are not; a fifth are drawn over the whole rate slider. Half have Poisson arrivals and
    about a third host one model (the defaults)."""
    from sdlab_model.params import CHOICE_BY_NAME, NUMERIC_INPUTS
    from sdlab_model.workload import Workload

    rng = np.random.default_rng(seed)
    rate_spec = next(spec for spec in NUMERIC_INPUTS if spec.name == "rate_rps")
    workloads = []
    for _ in range(count):
        values: dict[str, Any] = {}
        for spec in NUMERIC_INPUTS:
            if spec.scale == "log":
                value = math.exp(rng.uniform(math.log(spec.minimum), math.log(spec.maximum)))
            else:
                value = rng.uniform(spec.minimum, spec.maximum)
            value = min(max(value, spec.minimum), spec.maximum)
            values[spec.name] = round(value) if spec.integer else float(value)
        # Keep the fleets the Lab's range of replicas can reach mostly modest.
        values["replicas"] = int(min(values["replicas"], rng.integers(1, 65)))
        values["dynamic_batching"] = bool(rng.integers(2))
        values["gpu"] = bool(rng.integers(2))
        choices = CHOICE_BY_NAME["lb_policy"].choices
        values["lb_policy"] = choices[int(rng.integers(len(choices)))]
        if rng.uniform() < 0.5:
            values["arrival_cv"] = 1.0
        if rng.uniform() < 0.3:  # the default: one model
            values["models_hosted"] = 1
        workload = Workload(**values)
        if rng.uniform() < 0.8:
            share = math.exp(rng.uniform(math.log(0.02), math.log(1.2)))
            rate = min(max(share * workload.capacity_rps, rate_spec.minimum), rate_spec.maximum)
            workload = workload.with_changes(rate_rps=float(rate))
        workloads.append(workload)
    return workloads


def flat_fields(value: Any, path: str = "") -> list[tuple[str, Any]]:
    """Every leaf of a (nested) result as ``(path, value)`` in field order: dataclasses, dicts
    (tuple keys joined by ``->``) and sequences are walked; numpy scalars become Python ones."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        items = [(field.name, getattr(value, field.name)) for field in dataclasses.fields(value)]
    elif isinstance(value, dict):
        items = [
            ("->".join(key) if isinstance(key, tuple) else str(key), v) for key, v in value.items()
        ]
    elif isinstance(value, (list, tuple)):
        items = [(str(index), item) for index, item in enumerate(value)]
    else:
        if isinstance(value, np.generic):
            value = value.item()
        return [(path, value)]
    leaves = [(path + ".", None)] if not items else []  # an empty container is still a leaf
    for name, item in items:
        leaves.extend(flat_fields(item, f"{path}.{name}" if path else name))
    return leaves


def assessment_record(assessment: Any) -> dict[str, Any]:
    """Every field of an ``Assessment`` but its workload, in two parts: ``floats``, the float
    leaves in field order (non-finite ones as text), and ``digest``, a SHA-256 of every leaf's
    path and of every other leaf's exact value (texts, flags, ints), so the file stays small."""
    floats: list[float | str] = []
    digest = hashlib.sha256()
    for path, value in flat_fields(assessment):
        if path == "workload" or path.startswith("workload."):
            continue
        if isinstance(value, float):
            floats.append(value if math.isfinite(value) else repr(value))
            digest.update(f"{path}=<float>\n".encode())
        else:
            digest.update(f"{path}={type(value).__name__}:{value!r}\n".encode())
    return {"floats": floats, "digest": digest.hexdigest()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from sdlab_model import evaluate

    cases = []
    for workload in random_workloads(args.count, args.seed):
        cases.append(
            {
                "workload": workload.to_dict(),
                "queueing": assessment_record(evaluate(workload, "queueing")),
                "teaching": assessment_record(evaluate(workload, "teaching")),
            }
        )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    document = {"seed": args.seed, "count": args.count, "cases": cases}
    args.output.write_text(json.dumps(document, separators=(",", ":")) + "\n")
    size_kb = args.output.stat().st_size / 1024
    print(f"wrote {len(cases)} workloads to {args.output} ({size_kb:.0f} KB)")


if __name__ == "__main__":
    main()
