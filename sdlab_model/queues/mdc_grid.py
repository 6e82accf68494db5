"""The M/D/c p99 over many cells at once: the exact tail constant, tabulated and interpolated.

``sdlab_model.queues.mdc.MdcWait`` solves one queue exactly in a few milliseconds; a heatmap needs
tens of thousands. The p99 wait is written as ``W99 = max(0, ln(C / 0.01)) / eta``: ``eta`` (the
exact decay rate) is cheap to compute for every cell, and ``C`` (the constant that puts the
exponential tail through the exact p99) varies smoothly with the server count and the utilization,
so it is tabulated once from the exact solution (``scripts/build_mdc_table.py``) and interpolated.
The table is data, ``sdlab_model/queues/data/mdc_tail_constant.npz``, read once when this module
loads.
"""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable

import numpy as np

from sdlab_model.queues import kernels, mdc

TABLE_FILE = resources.files(__package__) / "data" / "mdc_tail_constant.npz"
"""The tabulated ``ln C``, written by scripts/build_mdc_table.py."""

_TABLE_NAMES = ("SERVER_NODES", "LOAD_NODES_V", "LOG_TAIL_CONSTANT")


def load_table(source: Traversable = TABLE_FILE) -> tuple[np.ndarray, ...]:
    """``(SERVER_NODES, LOAD_NODES_V, LOG_TAIL_CONSTANT)`` from the table file, read-only.

    ``LOG_TAIL_CONSTANT[i, j]`` is ``ln C`` at ``SERVER_NODES[i]`` servers and load coordinate
    ``LOAD_NODES_V[j]`` (see ``log_tail_constant``); the p99 wait is ``max(0, ln(C / 0.01)) / eta``
    in units of ``D``.
    """
    try:
        with source.open("rb") as stream, np.load(stream, allow_pickle=False) as table:
            missing = [name for name in _TABLE_NAMES if name not in table.files]
            if missing:
                raise ValueError(f"the M/D/c tail-constant table {source} lacks {missing}")
            arrays = tuple(table[name] for name in _TABLE_NAMES)
    except FileNotFoundError as error:
        raise FileNotFoundError(
            f"the M/D/c tail-constant table {source} is missing: sdlab_model needs this data file "
            "(installed as package data; python3 scripts/build_mdc_table.py rebuilds it)"
        ) from error
    for array in arrays:
        array.flags.writeable = False
    return arrays


SERVER_NODES, LOAD_NODES_V, LOG_TAIL_CONSTANT = load_table()

KERNEL_TABLE = (SERVER_NODES.astype(float), LOAD_NODES_V, LOG_TAIL_CONSTANT)
"""The table as the compiled kernels take it (``_tail_kernel.log_tail_constant_cells``): server
nodes as floats, load nodes, ``ln C``."""


def log_tail_constant(servers: np.ndarray, utilization: np.ndarray) -> np.ndarray:
    """``ln C`` at ``(c, rho)``: bilinear in ``c`` and the load coordinate ``v`` between nodes.

    ``v = ln(4 rho)`` below ``rho = 1/2`` and ``-ln(1 - rho)`` above: at light load ``ln C``
    follows ``ln P(W > 0) ~ c ln rho``, near saturation the tail grows like ``1 / (1 - rho)``.
    Linear in ``c`` (not ``ln c``) because for many servers ``ln C ~ -c I(rho)``, linear in ``c``.
    Outside the table (``rho < 0.001`` or ``rho > 0.995``, or more servers than the last node)
    the nearest node is used: below 0.001 the p99 wait is 0 anyway; near 1, ``C`` tends to its
    heavy-traffic limit and changes slowly. A compiled loop over cells
    (``_tail_kernel.log_tail_constant_cells``).
    """
    log_tail_constant_cells = kernels.module(kernels.TAIL).log_tail_constant_cells
    c, rho = np.broadcast_arrays(np.asarray(servers, float), np.asarray(utilization, float))
    # Fresh copies: a read-only view would compile the kernel once more.
    c_cells, rho_cells = np.array(c, order="C").ravel(), np.array(rho, order="C").ravel()
    log_c = log_tail_constant_cells(c_cells, rho_cells, *KERNEL_TABLE)
    return log_c.reshape(c.shape)


def p99_wait_units(servers: np.ndarray, utilization: np.ndarray) -> np.ndarray:
    """p99 of the M/D/c wait in units of the service time; ``inf`` where ``rho >= 1``.

    Approximations: interpolation of the exact tail constant; within 1% of the exact end-to-end
    p99 (tests/sdlab_model/test_grid.py checks it on random cells).
    Sources: see ``sdlab_model.queues.mdc`` (Crommelin 1932; Franx 2001) and
    scripts/build_mdc_table.py.
    """
    c, rho = np.broadcast_arrays(np.asarray(servers, float), np.asarray(utilization, float))
    stable = rho < 1.0
    rho_safe = np.where(stable, rho, 0.5)
    eta = mdc.decay_rate(c, c * rho_safe)
    wait = np.maximum(0.0, log_tail_constant(c, rho_safe) - np.log(0.01)) / eta
    return np.where(stable, wait, np.inf)
