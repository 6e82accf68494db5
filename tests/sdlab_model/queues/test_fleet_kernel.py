"""The compiled fleet quantiles agree with the numpy versions, and the check has teeth.

``numpy_reference.batched_quantile_numpy`` and ``unbatched_quantile_numpy`` are main's numpy
``fleet.batched_quantile`` and ``fleet.unbatched_quantile`` (before ``_fleet_kernel``). Every
field of the result must agree within 1e-12 relative (the golden test's tolerance), with ``inf``
and ``nan`` where numpy had them, on random workloads and cells plus the edges: unstable cells,
one and twelve model classes, the central queue, bursty and smooth arrivals, ``use_table`` on
and off, one quantile per cell, cells where the holding time needs the bisection. A mutant
kernel, run as plain Python in place of the compiled one, must make the same comparison fail.
"""

from __future__ import annotations

import inspect
from dataclasses import fields

import numpy as np
import numpy_reference  # beside this file (pytest puts the folder on the path)
import pytest

from sdlab_model import Workload
from sdlab_model.params import CHOICE_BY_NAME
from sdlab_model.queues import _fleet_kernel, batching, fleet

RELATIVE_TOLERANCE = 1e-12
SEED = 20261202
POLICIES = CHOICE_BY_NAME["lb_policy"].choices


def _random_workloads(rng: np.random.Generator, count: int) -> list[Workload]:
    """Batching on, every policy; one model or many (up to 12 classes), CPU and GPU."""
    workloads = []
    for index in range(count):
        workloads.append(
            Workload(
                model_latency_ms=float(10.0 ** rng.uniform(0.3, 2.3)),
                batch_window_ms=float(rng.choice([0.0, rng.uniform(0.1, 20.0)])),
                models_hosted=int(rng.choice([1, 2, 5, 40, 200])),
                popularity_skew=float(rng.uniform(0.0, 2.0)),
                gpu=bool(index % 2),
                max_batch_size=int(rng.choice([2, 8, 32, 64])),
                cpu_workers_per_replica=int(rng.integers(1, 9)),
                gpu_instances_per_replica=int(rng.integers(1, 5)),
                arrival_cv=float(rng.choice([1.0, rng.uniform(0.3, 3.0)])),
                lb_policy=POLICIES[index % len(POLICIES)],
            )
        )
    return workloads


def _capacity_per_ms(workload: Workload, replicas: np.ndarray) -> np.ndarray:
    """The fleet's rate (per ms) with every slot on full batches."""
    size = workload.effective_max_batch_size
    slots = replicas * workload.slots_per_replica
    return slots * size / workload.batch_service_ms(size)


def _mismatches(name: str, actual: fleet.FleetLatency, expected: fleet.FleetLatency) -> list[str]:
    """Fields and cells where the two results differ beyond the tolerance."""
    found = []
    for field in fields(fleet.FleetLatency):
        a, e = getattr(actual, field.name), getattr(expected, field.name)
        if np.shape(a) != np.shape(e):
            found.append(f"{name}.{field.name}: shape {np.shape(a)} != numpy {np.shape(e)}")
            continue
        a, e = np.asarray(a, dtype=float), np.asarray(e, dtype=float)
        both_nan = np.isnan(a) & np.isnan(e)
        same_inf = np.isinf(e) & (a == e)
        with np.errstate(invalid="ignore"):
            close = np.abs(a - e) <= RELATIVE_TOLERANCE * np.abs(e)
        bad = np.flatnonzero(~(both_nan | same_inf | close))
        found += [f"{name}.{field.name}[{i}]: {a.flat[i]!r} != {e.flat[i]!r}" for i in bad[:3]]
    return found


def _compare(name: str, *args, **options) -> list[str]:
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        actual = fleet.batched_quantile(*args, **options)
        expected = numpy_reference.batched_quantile_numpy(*args, **options)
    return _mismatches(name, actual, expected)


def _compare_unbatched(name: str, *args) -> list[str]:
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        actual = fleet.unbatched_quantile(*args)
        expected = numpy_reference.unbatched_quantile_numpy(*args)
    return _mismatches(name, actual, expected)


def _cases() -> list[tuple[Workload, np.ndarray, np.ndarray]]:
    """``(workload, fleet rates per ms, replica counts)``: random, plus one and twelve classes
    and the central queue with bursty arrivals; rates from light load to past capacity."""
    rng = np.random.default_rng(SEED)
    workloads = _random_workloads(rng, 14)
    workloads += [
        Workload(),
        Workload(models_hosted=200, popularity_skew=1.0),
        Workload(lb_policy="central_queue", arrival_cv=2.5, models_hosted=30),
    ]
    cases = []
    for workload in workloads:
        replicas = np.floor(10.0 ** rng.uniform(0.0, 1.5, 10))
        rates = _capacity_per_ms(workload, replicas) * 10.0 ** rng.uniform(-2.0, 0.3, 10)
        cases.append((workload, rates, replicas))
    return cases


def _batched_quantile_mismatches() -> list[str]:
    found = []
    for index, (workload, rates, replicas) in enumerate(_cases()):
        for use_table in (False, True):
            name = f"{index} {workload} table={use_table}"
            found += _compare(f"{name} cells", workload, rates, replicas, 0.99, use_table=use_table)
            grid = (rates[None, :5], replicas[:3, None])  # broadcasting, as p99_grid does
            found += _compare(f"{name} grid", workload, *grid, 0.95, use_table=use_table)
        # One quantile per cell (the point model's p50, p95, p99 in one call), and 0-d cells.
        quantiles = np.array([0.5, 0.95, 0.99, 0.999])
        found += _compare(f"{index} per-cell q", workload, rates[:4], replicas[:4], quantiles)
        found += _compare(f"{index} 0-d", workload, np.array(rates[0]), np.array(replicas[0]), 0.99)
    return found


def _unbatched_quantile_mismatches() -> list[str]:
    """The same workloads without batching, at the same share of their capacity."""
    found = []
    for index, (batched, rates, replicas) in enumerate(_cases()):
        workload = batched.with_changes(dynamic_batching=False)
        load = rates / _capacity_per_ms(batched, replicas)
        rates = load * _capacity_per_ms(workload, replicas)
        name = f"{index} {workload} unbatched"
        found += _compare_unbatched(f"{name} cells", workload, rates, replicas, 0.99)
        grid = (rates[None, :5], replicas[:3, None])
        found += _compare_unbatched(f"{name} grid", workload, *grid, 0.95)
        quantiles = np.array([0.5, 0.95, 0.99, 0.999])
        found += _compare_unbatched(
            f"{name} per-cell q", workload, rates[:4], replicas[:4], quantiles
        )
        found += _compare_unbatched(f"{name} 0-d", workload, np.array(rates[0]), np.array(1.0), 0.5)
    return found


def _all_mismatches() -> list[str]:
    return _batched_quantile_mismatches() + _unbatched_quantile_mismatches()


def test_unbatched_quantile_matches_the_numpy_version():
    mismatches = _unbatched_quantile_mismatches()
    assert not mismatches, f"compiled unbatched_quantile differs from numpy: {mismatches}"


def test_batched_quantile_matches_the_numpy_version():
    mismatches = _batched_quantile_mismatches()
    assert not mismatches, f"compiled batched_quantile differs from numpy: {mismatches}"


def test_the_comparison_covers_the_regimes_it_claims():
    """Unstable cells, busy cells (the holding time bisected) and many classes are among them."""
    unstable = bisected = many_classes = 0
    for workload, rates, replicas in _cases():
        parts = fleet.batched_quantile(workload, rates, replicas, 0.99)
        unstable += int(np.isinf(parts.quantile_ms).sum())
        if workload.is_central_queue:
            per_replica, slots = rates, replicas * workload.slots_per_replica
        else:
            per_replica, slots = rates / replicas, workload.slots_per_replica
        bisected += int(np.sum(per_replica * workload.single_request_ms > slots))
        classes = fleet.model_classes(workload).share.size
        many_classes += not workload.is_central_queue and classes == fleet.MAX_MODEL_CLASSES
    assert unstable >= 10, f"only {unstable} unstable cells among the compared ones"
    assert bisected >= 20, f"only {bisected} cells where the holding time is bisected"
    assert many_classes >= 2, f"only {many_classes} workloads of {fleet.MAX_MODEL_CLASSES} classes"


MUTANTS = {
    # name: [(old, new) source edits of _fleet_kernel]
    "holding-time bisection one step short": [
        ("    for _ in range(steps):\n", "    for _ in range(steps - 1):\n")
    ],
    "saturation weighted by one model's share, not its class's": [
        (
            "            weighted[i, j] = weight[j] * saturation_j[i, j]\n",
            "            weighted[i, j] = share[j] * saturation_j[i, j]\n",
        )
    ],
    "QNA hybrid without the square": [
        ("4.0 * (idle * idle) * (nu - 1.0)", "4.0 * idle * (nu - 1.0)"),
    ],
    "round robin taken as random": [
        ("            if policy == POLICY_ROUND_ROBIN:\n", "            if policy == -1:\n"),
    ],
    "unbatched wait below zero kept": [
        ("_maximum(0.0, log_excess) / eta[i] * s", "log_excess / eta[i] * s"),
    ],
    "slot-limited wait ignored": [
        (
            "            if saturation_j[i, j] >= SLOT_LIMITED_SATURATION:\n",
            "            if saturation_j[i, j] >= 2.0 * SLOT_LIMITED_SATURATION:\n",
        )
    ],
}


@pytest.mark.parametrize("mutation", sorted(MUTANTS))
def test_a_mutated_kernel_is_caught(mutation, monkeypatch):
    source = inspect.getsource(_fleet_kernel)
    for old, new in MUTANTS[mutation]:
        assert source.count(old) == 1, f"{mutation}: target not unique: {old!r}"
        source = source.replace(old, new)
    namespace = {"__name__": "mutant_fleet_kernel"}
    exec(compile(source.replace("@compile_kernel\n", ""), "mutant", "exec"), namespace)
    for kernel in ("batched_quantile_cells", "unbatched_quantile_cells"):
        monkeypatch.setattr(_fleet_kernel, kernel, namespace[kernel])
    assert _all_mismatches(), f"the comparison did not notice the mutant: {mutation}"


def test_fill_load_is_main_s_bit_for_bit():
    """``batching.fill_load`` computes ``poisson_pmf``'s mean-free parts once: the same numbers."""
    rng = np.random.default_rng(SEED + 1)
    sizes = np.concatenate(([1, 2, 3, 32, 64, 65, 256], rng.integers(2, 300, 25)))
    for size in sizes:
        for tail in (0.5, 0.05, 0.01, float(10.0 ** rng.uniform(-4, -0.2))):
            now = batching.fill_load.__wrapped__(int(size), tail)
            before = numpy_reference.fill_load_numpy(int(size), tail)
            assert now == before, f"fill_load({size}, {tail}) = {now!r}, main gave {before!r}"


def test_the_kernel_s_slot_limited_threshold_is_the_fleet_s():
    assert _fleet_kernel.SLOT_LIMITED_SATURATION == fleet.SLOT_LIMITED_SATURATION, (
        "_fleet_kernel's copy of SLOT_LIMITED_SATURATION no longer matches fleet's"
    )
