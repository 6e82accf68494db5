"""The SimPy fleet model in ``scripts/bench_simulator.py`` serves requests as the kernel does.

The benchmark's speed ratio means something only if both sides simulate the same system; the
script checks that on its own workload, and this test guards it on small fleets fast enough to
run with the suite.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from sdlab_model.simulation import simulator
from sdlab_model.workload import Workload

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_simulator.py"


def _load_script():
    spec = importlib.util.spec_from_file_location("bench_simulator", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench = _load_script()

SMALL_FLEET = Workload(
    lb_policy="least_request",
    replicas=3,
    cpu_workers_per_replica=2,
    models_hosted=3,
    popularity_skew=0.5,
    model_latency_ms=10.0,
    dynamic_batching=True,
    batch_window_ms=3.0,
    max_batch_size=4,
)


@pytest.mark.parametrize(
    "workload",
    [
        SMALL_FLEET,
        SMALL_FLEET.with_changes(dynamic_batching=False),
        SMALL_FLEET.with_changes(lb_policy="round_robin", batch_window_ms=0.0),
        SMALL_FLEET.with_changes(lb_policy="random", gpu=True, gpu_instances_per_replica=1),
    ],
    ids=["least_request", "least_request-no-batching", "round_robin-window-0", "random-gpu"],
)
def test_simpy_fleet_agrees_with_the_kernel(workload):
    workload = workload.with_changes(rate_rps=0.85 * workload.capacity_rps)
    arrival_ms, routing = bench._fleet_inputs(workload, 3_000, seed=7)
    trace = simulator.run_trace(workload, arrival_ms, None, routing)
    completion_ms = bench.simpy_fleet(workload, arrival_ms, routing)
    worst = float(np.nanmax(np.abs(completion_ms - trace.completion_ms)))
    assert np.array_equal(completion_ms, trace.completion_ms), (
        f"SimPy and the kernel differ by up to {worst:g} ms for {workload}"
    )
    # The load is high enough to exercise what the model has to get right: ready batches that
    # wait for a slot, and full batches.
    assert np.any(trace.dispatch_ms > arrival_ms + workload.batch_window_ms), "no batch waited"
    if workload.dynamic_batching:
        assert trace.batch_sizes.max() == workload.max_batch_size, "no batch was full"
