"""``warm_up`` compiles the simulator's kernels for every argument type the judgement passes, so
that a server's first simulated design loads them instead of compiling in the server's thread."""

from __future__ import annotations

import os

import pytest

from sdlab_model import Workload
from sdlab_model.assessment import design_simulation, needs_simulation
from sdlab_model.simulation import _sim_kernel
from sdlab_model.simulation.warmup import warm_up

KERNELS = ("run_batching_queue", "run_fleet")


def _signatures() -> dict[str, int]:
    return {name: len(getattr(_sim_kernel, name).signatures) for name in KERNELS}


@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="no compilation to warm")
def test_warm_up_compiles_every_type_the_judgement_passes():
    warm_up()
    compiled = _signatures()
    assert all(compiled.values()), f"warm_up left a kernel uncompiled: {compiled}"
    simulated = [
        Workload(rate_rps=1900.0),
        Workload(rate_rps=1900.0, lb_policy="central_queue"),
        Workload(rate_rps=700.0, dynamic_batching=False, lb_policy="random"),
        Workload(rate_rps=1800.0, models_hosted=8, gpu=True, lb_policy="least_request"),
    ]
    for workload in simulated:
        design_simulation(workload)
    assert any(needs_simulation(w, "queueing") for w in simulated), "no design here simulates"
    after = _signatures()
    assert after == compiled, f"the judgement compiled new kernel types after warm_up: {after}"
