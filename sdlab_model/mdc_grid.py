"""The M/D/c p99 over many cells at once: the exact tail constant, tabulated and interpolated.

``sdlab_model.mdc.MdcWait`` solves one queue exactly in a few milliseconds; a heatmap needs tens of
thousands. The p99 wait is written as ``W99 = max(0, ln(C / 0.01)) / eta``: ``eta`` (the exact
decay rate) is cheap to compute for every cell, and ``C`` (the constant that puts the exponential
tail through the exact p99) varies smoothly with the server count and the utilization, so it is
tabulated once from the exact solution (``scripts/build_mdc_table.py``) and interpolated.
"""

from __future__ import annotations

import numpy as np

from sdlab_model import mdc
from sdlab_model.mdc_table import LOAD_NODES_V, LOG_TAIL_CONSTANT, SERVER_NODES

_SERVERS = np.asarray(SERVER_NODES, dtype=float)
_LOAD_V = np.asarray(LOAD_NODES_V, dtype=float)
_LOG_C = np.asarray(LOG_TAIL_CONSTANT, dtype=float)


def log_tail_constant(servers: np.ndarray, utilization: np.ndarray) -> np.ndarray:
    """``ln C`` at ``(c, rho)``: bilinear in ``c`` and the load coordinate ``v`` between nodes.

    ``v = ln(4 rho)`` below ``rho = 1/2`` and ``-ln(1 - rho)`` above: at light load ``ln C``
    follows ``ln P(W > 0) ~ c ln rho``, near saturation the tail grows like ``1 / (1 - rho)``.
    Linear in ``c`` (not ``ln c``) because for many servers ``ln C ~ -c I(rho)``, linear in ``c``.
    Outside the table (``rho < 0.001`` or ``rho > 0.995``, or more servers than the last node)
    the nearest node is used: below 0.001 the p99 wait is 0 anyway; near 1, ``C`` tends to its
    heavy-traffic limit and changes slowly.
    """
    c, rho = np.broadcast_arrays(np.asarray(servers, float), np.asarray(utilization, float))
    rho = np.clip(rho, 1e-300, 1.0 - 1e-12)
    u = np.where(rho < 0.5, np.log(4.0 * rho), -np.log1p(-rho))
    u = np.clip(u, _LOAD_V[0], _LOAD_V[-1])
    c = np.clip(c, _SERVERS[0], _SERVERS[-1])
    i = np.clip(np.searchsorted(_SERVERS, c, side="right") - 1, 0, _SERVERS.size - 2)
    j = np.clip(np.searchsorted(_LOAD_V, u, side="right") - 1, 0, _LOAD_V.size - 2)
    wc = (c - _SERVERS[i]) / (_SERVERS[i + 1] - _SERVERS[i])
    wu = (u - _LOAD_V[j]) / (_LOAD_V[j + 1] - _LOAD_V[j])
    return (
        (1 - wc) * (1 - wu) * _LOG_C[i, j]
        + wc * (1 - wu) * _LOG_C[i + 1, j]
        + (1 - wc) * wu * _LOG_C[i, j + 1]
        + wc * wu * _LOG_C[i + 1, j + 1]
    )


def p99_wait_units(servers: np.ndarray, utilization: np.ndarray) -> np.ndarray:
    """p99 of the M/D/c wait in units of the service time; ``inf`` where ``rho >= 1``.

    Approximations: interpolation of the exact tail constant; within 1% of the exact end-to-end
    p99 (tests/sdlab_model/test_grid.py checks it on random cells).
    Sources: see ``sdlab_model.mdc`` (Crommelin 1932; Franx 2001) and scripts/build_mdc_table.py.
    """
    c, rho = np.broadcast_arrays(np.asarray(servers, float), np.asarray(utilization, float))
    stable = rho < 1.0
    rho_safe = np.where(stable, rho, 0.5)
    eta = mdc.decay_rate(c, c * rho_safe)
    wait = np.maximum(0.0, log_tail_constant(c, rho_safe) - np.log(0.01)) / eta
    return np.where(stable, wait, np.inf)
