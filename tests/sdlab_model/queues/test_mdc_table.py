"""The M/D/c tail-constant table (``sdlab_model/queues/data/mdc_tail_constant.npz``): its shape, its
nodes, and its entries against the exact solution it was built from."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from sdlab_model.queues import mdc_grid
from sdlab_model.queues.mdc_grid import LOAD_NODES_V, LOG_TAIL_CONSTANT, SERVER_NODES

BUILD_SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "build_mdc_table.py"


def _load_build_script():
    spec = importlib.util.spec_from_file_location("build_mdc_table", BUILD_SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build = _load_build_script()


def test_table_shapes_agree():
    assert SERVER_NODES.ndim == 1 and LOAD_NODES_V.ndim == 1, "nodes must be 1-D"
    assert LOG_TAIL_CONSTANT.shape == (SERVER_NODES.size, LOAD_NODES_V.size), (
        f"table shape {LOG_TAIL_CONSTANT.shape}, want (servers {SERVER_NODES.size}, "
        f"load nodes {LOAD_NODES_V.size})"
    )
    assert SERVER_NODES.size >= 2 and LOAD_NODES_V.size >= 2, "interpolation needs 2 nodes a side"


def test_nodes_strictly_increase_and_all_values_are_finite():
    assert np.all(np.diff(SERVER_NODES) > 0), f"server nodes not increasing: {SERVER_NODES}"
    assert np.all(np.diff(LOAD_NODES_V) > 0), "load nodes not strictly increasing"
    assert SERVER_NODES[0] == 1, f"the table must start at 1 server, starts at {SERVER_NODES[0]}"
    for name, values in (("load nodes", LOAD_NODES_V), ("ln C", LOG_TAIL_CONSTANT)):
        assert np.all(np.isfinite(values)), f"{name} hold {np.sum(~np.isfinite(values))} non-finite"
    assert LOG_TAIL_CONSTANT.min() >= build.LOG_FLOOR, "ln C below the build script's floor"


def test_nodes_are_the_build_scripts():
    assert SERVER_NODES.tolist() == list(build.SERVER_NODES), "server nodes differ from the script"
    np.testing.assert_allclose(
        LOAD_NODES_V, build.LOAD_NODES_V, rtol=1e-14, err_msg="load nodes differ from the script"
    )


def test_random_entries_equal_the_exact_solution():
    # Seeded sample of cheap cells (few servers, utilization up to 0.9: a millisecond each); the
    # full table takes the build script about 15 minutes. Over all such cells a re-solve agrees
    # with the table to 2e-10 (the table's 12 significant digits, the exact p99's own precision).
    rng = np.random.default_rng(20260301)
    rows = np.flatnonzero(SERVER_NODES <= 100)
    utilization = np.array([build.utilization_at(float(v)) for v in LOAD_NODES_V])
    columns = np.flatnonzero(utilization <= 0.9)
    for i, j in zip(rng.choice(rows, 40), rng.choice(columns, 40), strict=True):
        servers, rho = int(SERVER_NODES[i]), float(utilization[j])
        exact = build.log_tail_constant(servers, rho)
        stored = float(LOG_TAIL_CONSTANT[i, j])
        assert stored == pytest.approx(exact, rel=1e-9, abs=1e-9), (
            f"table[{i}, {j}] (c = {servers}, rho = {rho:.4f}) holds ln C = {stored!r}, "
            f"the exact solution gives {exact!r}"
        )


def test_the_script_writes_what_the_grid_reads(tmp_path):
    written = tmp_path / "table.npz"
    rows = LOG_TAIL_CONSTANT[:3]
    build.write_table(written, SERVER_NODES[:3].tolist(), LOAD_NODES_V, rows.tolist())
    servers, load_v, log_c = mdc_grid.load_table(written)
    assert servers.tolist() == SERVER_NODES[:3].tolist(), "server nodes changed on the way"
    assert load_v.tobytes() == LOAD_NODES_V.tobytes(), "load nodes not bit-identical"
    assert log_c.tobytes() == rows.tobytes(), "ln C not bit-identical after a write and a read"
    first = written.read_bytes()
    build.write_table(written, SERVER_NODES[:3].tolist(), LOAD_NODES_V, rows.tolist())
    assert written.read_bytes() == first, "rewriting the same values changed the file's bytes"


def test_a_missing_table_says_what_and_how_to_rebuild(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"missing.*build_mdc_table\.py"):
        mdc_grid.load_table(tmp_path / "absent.npz")
