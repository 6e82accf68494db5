"""The compiled tail kernels agree with the numpy code they replaced, and the check has teeth.

``numpy_reference`` holds main's numpy ``decay_rate``, ``log_tail_constant`` and
``mixture_quantile`` (before ``_tail_kernel``). The public functions, now compiled loops, must
give the same values within 1e-12 relative (the golden test's tolerance), with ``nan`` and
``inf`` where the numpy gave them, on random cells plus the edges: ``a >= c``, ``a -> 0``,
``rho -> 1``, loads and server counts outside the tail-constant table, a window of zero. A mutant
kernel (one Newton step short, or a bilinear weight on the wrong node), run as plain Python in
place of the compiled one, must make the same comparison fail.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
import numpy_reference  # beside this file (pytest puts the folder on the path)
import pytest

from sdlab_model.queues import _tail_kernel, batching, mdc, mdc_grid

ROOT = Path(__file__).resolve().parents[3]
RELATIVE_TOLERANCE = 1e-12
SEED = 20261201


def _mismatches(name: str, actual: np.ndarray, expected: np.ndarray) -> list[str]:
    """Cells where ``actual`` and ``expected`` differ beyond the tolerance (``nan`` == ``nan``)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, f"{name}: shape {actual.shape} != {expected.shape}"
    both_nan = np.isnan(actual) & np.isnan(expected)
    same_inf = np.isinf(expected) & (actual == expected)
    with np.errstate(invalid="ignore"):
        close = np.abs(actual - expected) <= RELATIVE_TOLERANCE * np.abs(expected)
    bad = np.flatnonzero(~(both_nan | same_inf | close))
    return [f"{name}[{i}]: {actual.flat[i]!r} != numpy {expected.flat[i]!r}" for i in bad[:5]]


def _decay_cells() -> tuple[np.ndarray, np.ndarray]:
    """Random (fractional) server counts and loads, plus the edge cells."""
    rng = np.random.default_rng(SEED)
    servers = np.concatenate((rng.uniform(1.0, 300.0, 120), np.floor(rng.uniform(1, 64, 40))))
    rho = np.concatenate((rng.uniform(0.0, 1.2, 80), 1.0 - 10.0 ** -rng.uniform(1, 12, 80)))
    edge_servers = np.array([1.0, 1.0, 4.0, 32.0, 32.0, 32.0, 256.0, 1.0, 8.0, 1e4, 2.5, 32.0])
    edge_load = np.array([0.0, 1e-300, 1e-12, 32.0, 40.0, 32.0 * (1 - 1e-9), 256 * (1 - 1e-13)])
    edge_load = np.concatenate((edge_load, [1.0 - 1e-15, 8.0 * 0.5, 1e4 * 0.999, 2.5, np.inf]))
    return (
        np.concatenate((servers, edge_servers)),
        np.concatenate((servers * rho, edge_load)),
    )


def _decay_rate_mismatches() -> list[str]:
    servers, load = _decay_cells()
    grid = (servers[:40, None], load[None, :40])  # broadcasting, as the callers do
    return [
        *_mismatches("cells", mdc.decay_rate(servers, load), _reference_decay(servers, load)),
        *_mismatches("grid", mdc.decay_rate(*grid), _reference_decay(*grid)),
        *_mismatches(
            "scalar", mdc.decay_rate(np.array(4.0), np.array(3.0)), _reference_decay(4, 3)
        ),
    ]


def _reference_decay(servers, load):
    with np.errstate(invalid="ignore", divide="ignore"):
        return numpy_reference.decay_rate_numpy(servers, load)


def _log_tail_constant_mismatches() -> list[str]:
    rng = np.random.default_rng(SEED + 1)
    servers = np.concatenate((rng.uniform(0.5, 1.2 * mdc_grid.SERVER_NODES[-1], 300), [1, 2, 1e6]))
    rho = np.concatenate((rng.uniform(0.0, 1.0, 150), 1.0 - 10.0 ** -rng.uniform(0, 14, 150)))
    rho = np.concatenate((rho, [0.0, 0.5, 1.0]))
    expected = numpy_reference.log_tail_constant_numpy(servers, rho)
    grid = (servers[:30, None], rho[None, ::10])
    return [
        *_mismatches("cells", mdc_grid.log_tail_constant(servers, rho), expected),
        *_mismatches(
            "grid",
            mdc_grid.log_tail_constant(*grid),
            numpy_reference.log_tail_constant_numpy(*grid),
        ),
    ]


def _mixture_mismatches() -> list[str]:
    rng = np.random.default_rng(SEED + 2)
    found = []
    for classes in (1, 2, 5, 8, 12):
        rows = 40
        tau = rng.uniform(0.0, 20.0, (rows, classes)) * (rng.random((rows, classes)) > 0.15)
        sd = 10.0 ** rng.uniform(-3, 1, (rows, classes))
        # No window, and below the atom limit (1e-9 sd). Just above it the closed form cancels
        # (rounding grows by sd / tau), so there the two agree only to ~1e-16 sd / tau.
        tau[:3] = sd[:3] * np.array([0.0, 5e-10, 1e-3])[:, None]
        first_share = rng.uniform(1.0 / 64.0, 1.0, (rows, classes))
        mean = rng.uniform(0.5, 30.0, (rows, classes))
        weight = rng.dirichlet(np.ones(classes), rows)
        for tail in (0.01, 10.0 ** -rng.uniform(0.5, 4, (rows, 1))):
            args = (tau, first_share, mean, sd, weight, tail)
            found += _mismatches(
                f"{classes} classes, tail {np.shape(tail)}",
                batching.mixture_quantile(*args),
                numpy_reference.mixture_quantile_numpy(*args),
            )
    return found


def _table_quantile_mismatches() -> list[str]:
    rng = np.random.default_rng(SEED + 4)
    cells = 400
    sd = 10.0 ** rng.uniform(-3, 1, cells)
    # tau / sd from 0 and below the first node (1e-4) to beyond the last (1e6).
    tau = sd * np.concatenate(([0.0, 1e-6, 1e-4, 1e6, 1e8], 10.0 ** rng.uniform(-5, 7, cells - 5)))
    # first_share below the table (1/512), on it, and 1.
    first_share = np.concatenate(([1e-4, 1.0 / 512.0, 1.0], 10.0 ** rng.uniform(-3, 0, cells - 3)))
    mean = rng.uniform(0.5, 30.0, cells)
    found = []
    for tail in (0.01, 0.05):
        args = (tau, first_share, mean, sd, tail)
        found += _mismatches(
            f"tail {tail}",
            batching.quantile_from_table(*args),
            numpy_reference.quantile_from_table_numpy(*args),
        )
    scalar = (0.5, 0.25, 3.0, 0.1, 0.01)
    expected = numpy_reference.quantile_from_table_numpy(*scalar)
    return found + _mismatches("scalar", batching.quantile_from_table(*scalar), expected)


def test_decay_rate_matches_the_numpy_newton():
    mismatches = _decay_rate_mismatches()
    assert not mismatches, f"compiled decay_rate differs from numpy: {mismatches}"


def test_log_tail_constant_matches_the_numpy_interpolation():
    mismatches = _log_tail_constant_mismatches()
    assert not mismatches, f"compiled log_tail_constant differs from numpy: {mismatches}"


def test_mixture_quantile_matches_the_numpy_newton():
    mismatches = _mixture_mismatches()
    assert not mismatches, f"compiled mixture_quantile differs from numpy: {mismatches}"


def test_quantile_from_table_matches_the_numpy_interpolation():
    mismatches = _table_quantile_mismatches()
    assert not mismatches, f"compiled quantile_from_table differs from numpy: {mismatches}"


def test_row_sum_adds_in_numpys_order():
    rng = np.random.default_rng(SEED + 3)
    for width in range(1, 20):
        rows = rng.normal(size=(50, width)) * 10.0 ** rng.uniform(-6, 6, (50, width))
        sums = [_tail_kernel.row_sum(row) for row in rows]
        assert np.array_equal(sums, rows.sum(axis=-1)), f"sum of {width} terms differs from numpy"


MUTANTS = {
    # name: (kernel replaced, the comparison that must notice, [(old, new) source edits])
    "decay rate one Newton step short": (
        "decay_rate_cells",
        _decay_rate_mismatches,
        [
            (
                "    for _ in range(40):\n",
                "    last_steps = np.zeros(n)\n    for _ in range(40):\n",
            ),
            (
                "            eta[i] = eta[i] - step\n",
                "            eta[i] = eta[i] - step\n            last_steps[i] = step\n",
            ),
            (
                "        if settled:\n            break\n",
                "        if settled:\n            eta += last_steps\n            break\n",
            ),
        ],
    ),
    "mixture quantile one Newton step short": (
        "mixture_quantile_rows",
        _mixture_mismatches,
        [
            (
                "            t = step\n            if not moving:\n                break\n",
                "            if not moving:\n                break\n            t = step\n",
            )
        ],
    ),
    "tail constant with a corner on the wrong node": (
        "log_tail_constant_cells",
        _log_tail_constant_mismatches,
        [("+ (1 - wc) * wu * table[i, j + 1]", "+ (1 - wc) * wu * table[i + 1, j]")],
    ),
    "table quantile with a corner on the wrong node": (
        "quantile_from_table_cells",
        _table_quantile_mismatches,
        [("+ (1 - wa) * wp * table[i, j + 1]", "+ (1 - wa) * wp * table[i + 1, j]")],
    ),
}


@pytest.mark.parametrize("mutation", sorted(MUTANTS))
def test_a_mutated_kernel_is_caught(mutation, monkeypatch):
    kernel, mismatches_of, edits = MUTANTS[mutation]
    source = inspect.getsource(_tail_kernel)
    for old, new in edits:
        assert source.count(old) == 1, f"{mutation}: target not unique: {old!r}"
        source = source.replace(old, new)
    namespace = {"__name__": "mutant_tail_kernel"}
    exec(compile(source.replace("@compile_kernel\n", ""), "mutant", "exec"), namespace)
    monkeypatch.setattr(_tail_kernel, kernel, namespace[kernel])
    assert mismatches_of(), f"the comparison did not notice the mutant: {mutation}"


def test_compile_falls_back_when_no_cache_directory_is_writable(monkeypatch):
    calls = []

    def fake_njit(*, cache, nogil, error_model):
        assert nogil and error_model == "numpy", "kernels release the GIL, divide as numpy does"
        calls.append(cache)
        if cache:
            raise RuntimeError("cannot cache function: no locator available")
        return lambda function: function

    monkeypatch.setattr(_tail_kernel, "njit", fake_njit)
    function = getattr(_tail_kernel._clamp, "py_func", _tail_kernel._clamp)  # the JIT may be off
    compiled = _tail_kernel.compile_kernel(function)
    assert calls == [True, False], f"expected a cached try then an uncached compile, got {calls}"
    assert compiled is function, "the fallback should compile the same function"
