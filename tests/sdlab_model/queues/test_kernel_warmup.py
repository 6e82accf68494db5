"""``warm_up`` compiles every queueing kernel for every argument type the model passes."""

from __future__ import annotations

import os

import numpy as np
import pytest

from sdlab_model import Workload, evaluate, p99_grid
from sdlab_model.queues import _fleet_kernel, _mdc_kernel, _tail_kernel
from sdlab_model.queues.warmup import warm_up

KERNELS = (
    (_tail_kernel, "decay_rate_cells"),
    (_tail_kernel, "log_tail_constant_cells"),
    (_tail_kernel, "mixture_quantile_rows"),
    (_tail_kernel, "quantile_from_table_cells"),
    (_fleet_kernel, "batched_quantile_cells"),  # its saturation_hold_cells is compiled into it
    (_fleet_kernel, "unbatched_quantile_cells"),
    (_mdc_kernel, "stationary_gth"),
)


def _signatures() -> dict[str, int]:
    """Compiled signatures per kernel."""
    return {name: len(getattr(module, name).signatures) for module, name in KERNELS}


@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="no compilation to warm")
def test_warm_up_compiles_every_type_the_model_passes():
    warm_up()
    compiled = _signatures()
    assert all(compiled.values()), f"warm_up left a kernel uncompiled: {compiled}"
    rates, replicas = np.geomspace(1.0, 1e4, 7), np.arange(1.0, 6.0)
    for workload in (
        Workload(),
        Workload(dynamic_batching=False, rate_rps=900.0),
        Workload(models_hosted=20, gpu=True),
        Workload(lb_policy="central_queue", arrival_cv=2.0),
    ):
        evaluate(workload, "queueing")
        p99_grid(workload, rates, replicas)
    after = _signatures()
    assert after == compiled, f"the model compiled new kernel types after warm_up: {after}"
