"""The kernels' plain-Python twins give the compiled kernels' numbers bit for bit and import no
numba; a background compile hands every thread the twins until it is done, then the kernels."""

from __future__ import annotations

import subprocess
import sys
import threading
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest

from sdlab_model import Workload
from sdlab_model.queues import fleet, kernels, mdc

ROOT = Path(__file__).resolve().parents[3]
SEED = 20261201
WORKLOADS = (
    Workload(),
    Workload(models_hosted=200, popularity_skew=1.0, gpu=True),
    Workload(lb_policy="central_queue", arrival_cv=2.5, models_hosted=30),
    Workload(lb_policy="round_robin", arrival_cv=0.6, batch_window_ms=0.0),
    Workload(dynamic_batching=False),
    Workload(dynamic_batching=False, gpu=True, arrival_cv=2.0),
)


def _capacity_per_ms(workload: Workload, replicas: np.ndarray) -> np.ndarray:
    size = workload.effective_max_batch_size
    slots = replicas * workload.slots_per_replica
    return slots * size / workload.batch_service_ms(size)


def _results() -> list[np.ndarray]:
    """Every queueing kernel, through the functions that call it: the fleet's quantiles (with
    the tail kernels inside) from light load to past capacity, per cell and over a grid, with
    and without the quantile table; the exact M/D/c solve, its wait's CDF and quantiles."""
    rng = np.random.default_rng(SEED)
    results = []
    with np.errstate(all="ignore"):
        for workload in WORKLOADS:
            replicas = np.floor(10.0 ** rng.uniform(0.0, 1.5, 8))
            rates = _capacity_per_ms(workload, replicas) * 10.0 ** rng.uniform(-2.0, 0.3, 8)
            quantiles = rng.uniform(0.5, 0.999, 8)
            if workload.dynamic_batching:
                cells = [fleet.batched_quantile(workload, rates, replicas, quantiles)]
                for use_table in (False, True):
                    grid = (rates[None, :5], replicas[:3, None])
                    cells.append(fleet.batched_quantile(workload, *grid, 0.99, use_table=use_table))
            else:
                cells = [fleet.unbatched_quantile(workload, rates, replicas, quantiles)]
            results += [np.asarray(getattr(c, f.name)) for c in cells for f in fields(c)]
        for servers, load in ((1, 0.5), (8, 6.0), (16, 12.0), (64, 40.0)):
            wait = mdc.MdcWait.solve(servers, load)
            results.append(wait.queue_pmf)
            results.append(np.array([wait.wait_cdf(x) for x in (0.0, 0.3, 1.7, 4.2)]))
            results.append(np.array([wait.wait_quantile(q) for q in (0.5, 0.95, 0.99)]))
    return results


def test_the_plain_twins_give_the_compiled_kernels_numbers_bit_for_bit(monkeypatch):
    compiled = _results()
    twins = []
    monkeypatch.setattr(kernels, "module", lambda name: twins.append(name) or kernels.plain(name))
    plain = _results()
    assert set(twins) == kernels.KERNEL_MODULES, f"the twins run were {sorted(set(twins))}"
    assert len(plain) == len(compiled), "the two runs returned different numbers of results"
    differing = [
        index
        for index, (a, b) in enumerate(zip(compiled, plain, strict=True))
        if a.shape != b.shape or a.tobytes() != b.tobytes()
    ]
    assert not differing, f"the plain twins differ from the compiled kernels in {differing}"


def test_the_twins_import_no_numba():
    script = (
        "import sys\n"
        "from sdlab_model.queues import kernels\n"
        "for name in sorted(kernels.KERNEL_MODULES):\n"
        "    assert not hasattr(kernels.plain(name), 'numba'), name\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'numba')[:3])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, f"the script failed:\n{done.stderr}"
    assert done.stdout.strip() == "[]", f"making the twins imported numba: {done.stdout}"


def test_plain_refuses_a_module_that_is_not_a_kernel_module():
    with pytest.raises(ValueError, match=r"sdlab_model\.queues\.fleet"):
        kernels.plain("sdlab_model.queues.fleet")


@pytest.fixture
def fresh_kernels(monkeypatch):
    """``kernels`` as in a process that has started no background compile."""
    monkeypatch.setattr(kernels, "_compiler", None)
    monkeypatch.setattr(kernels, "_compiled", threading.Event())


def test_a_background_compile_hands_out_the_twins_until_it_is_done(fresh_kernels):
    release, compiles, seen_by_compiler = threading.Event(), [], []

    def compile_kernels():
        compiles.append(threading.current_thread().name)
        seen_by_compiler.append(kernels.module(kernels.FLEET))
        release.wait(30)

    compiled = kernels.module(kernels.FLEET)
    assert compiled is sys.modules[kernels.FLEET], "without a compile running, use the kernels"
    kernels.compile_in_background(compile_kernels)
    kernels.compile_in_background(compile_kernels)  # a second call starts nothing
    assert kernels.is_compiling(), "the compile should be running"
    assert kernels.module(kernels.FLEET) is kernels.plain(kernels.FLEET), (
        "while compiling, other threads should get the plain twin"
    )
    assert not kernels.wait_until_compiled(0.01), "the wait ended before the compile did"
    release.set()
    assert kernels.wait_until_compiled(30), "the compile did not finish"
    assert seen_by_compiler == [compiled], "the compiling thread should get the compiled module"
    assert compiles == ["sdlab-kernels"], f"compiled {len(compiles)} times: {compiles}"
    assert not kernels.is_compiling(), "the compile is done but is_compiling says not"
    assert kernels.module(kernels.FLEET) is compiled, "once compiled, the kernels should be used"
