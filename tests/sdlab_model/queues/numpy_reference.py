"""The numpy implementations that ``sdlab_model.queues._tail_kernel`` replaced, kept as references.

Copied verbatim from main at 49c514c (``mdc.decay_rate``, ``mdc_grid.log_tail_constant``,
``batching.mixture_quantile``, ``batching.quantile_from_table``) apart from their names;
``test_tail_kernel.py`` beside this file checks that the compiled kernels agree with them.
"""

from __future__ import annotations

import numpy as np

from sdlab_model.queues.batching import (
    _NEWTON_STEPS,
    _TABLE_FIRST_SHARE,
    _TABLE_SPREAD,
    _formation_service_sf,
    _safeguarded_newton,
    _standard_quantile_table,
)
from sdlab_model.queues.mdc_grid import _LOAD_V, _LOG_C, _SERVERS


def decay_rate_numpy(servers: np.ndarray, offered_load: np.ndarray) -> np.ndarray:
    """Tail decay rate ``eta`` (per unit of D) of the M/D/c wait: ``eta = c ln(1 + eta / a)``.

    ``P(W > t) ~ C e^(-eta t)``. The positive root exists for ``a < c``. Newton on the concave
    ``g(x) = c ln(1 + x/a) - x`` starts at ``max(2a(c - a)/c, c - a)``: the first is the
    heavy-traffic root of g's quadratic expansion, which lies left of the root (``ln(1 + y) >=
    y - y^2/2``); the second is g's maximum. From there each Newton step lands right of the root
    and then decreases monotonically to it. Vectorized; ``nan`` where ``a >= c``.

    Sources: the Cramér–Lundberg exponent of the E_c/D/1 Lindley walk (M/D/c with cyclic
    assignment); Tijms, *A First Course in Stochastic Models* (2003) §9.4.
    """
    c = np.asarray(servers, dtype=float)
    a = np.asarray(offered_load, dtype=float)
    c, a = np.broadcast_arrays(c, a)
    stable = a < c
    a_safe = np.where(stable, np.maximum(a, 1e-300), 1.0)
    c_safe = np.where(stable, c, 2.0)
    gap = c_safe - a_safe
    eta = np.maximum(2.0 * a_safe * gap / c_safe, gap)
    for _ in range(40):
        log_term = c_safe * np.log1p(eta / a_safe)
        value = log_term - eta
        slope = c_safe / (a_safe + eta) - 1.0
        # At g's maximum the slope is 0: double instead (the root lies further right).
        falling = slope < 0.0
        step = np.where(falling, value / np.where(falling, slope, -1.0), -eta)
        eta = eta - step
        # Done when the step is tiny, or when g is down to its rounding noise (1 - rho ~ 1e-9).
        settled = (np.abs(step) <= 1e-11 * eta) | (np.abs(value) <= 1e-14 * log_term)
        if settled.all():
            break
    return np.where(stable, eta, np.nan)


def log_tail_constant_numpy(servers: np.ndarray, utilization: np.ndarray) -> np.ndarray:
    """``ln C`` at ``(c, rho)``: bilinear in ``c`` and the load coordinate ``v`` between nodes.

    ``v = ln(4 rho)`` below ``rho = 1/2`` and ``-ln(1 - rho)`` above: at light load ``ln C``
    follows ``ln P(W > 0) ~ c ln rho``, near saturation the tail grows like ``1 / (1 - rho)``.
    Linear in ``c`` (not ``ln c``) because for many servers ``ln C ~ -c I(rho)``, linear in ``c``.
    Outside the table (``rho < 0.001`` or ``rho > 0.995``, or more servers than the last node)
    the nearest node is used: below 0.001 the p99 wait is 0 anyway; near 1, ``C`` tends to its
    heavy-traffic limit and changes slowly.
    """
    c, rho = np.broadcast_arrays(np.asarray(servers, float), np.asarray(utilization, float))
    # np.minimum(np.maximum(...)) is np.clip without its wrapper's cost (a hot path).
    rho = np.minimum(np.maximum(rho, 1e-300), 1.0 - 1e-12)
    u = np.where(rho < 0.5, np.log(4.0 * rho), -np.log1p(-rho))
    u = np.minimum(np.maximum(u, _LOAD_V[0]), _LOAD_V[-1])
    c = np.minimum(np.maximum(c, _SERVERS[0]), _SERVERS[-1])
    i = np.minimum(np.maximum(np.searchsorted(_SERVERS, c, side="right") - 1, 0), _SERVERS.size - 2)
    j = np.minimum(np.maximum(np.searchsorted(_LOAD_V, u, side="right") - 1, 0), _LOAD_V.size - 2)
    wc = (c - _SERVERS[i]) / (_SERVERS[i + 1] - _SERVERS[i])
    wu = (u - _LOAD_V[j]) / (_LOAD_V[j + 1] - _LOAD_V[j])
    return (
        (1 - wc) * (1 - wu) * _LOG_C[i, j]
        + wc * (1 - wu) * _LOG_C[i + 1, j]
        + (1 - wc) * wu * _LOG_C[i, j + 1]
        + wc * wu * _LOG_C[i + 1, j + 1]
    )


def mixture_quantile_numpy(tau, first_share, mean, sd, weight, tail):
    """Solve ``sum_j weight_j P(F_j + S_j > t) = tail`` per row (classes on the last axis).

    Each class is ``_formation_service_sf``'s ``F + S``; the rows are cells. Newton on the
    mixture's survival function, safeguarded by a shrinking bracket, iterating only the rows not
    yet converged. With one class it is ``_quantile_of_sum``. ``tail`` is one value or a column
    (one per row); rows never mix, so a row's result does not depend on the others.
    """
    tau, first_share, mean, sd, weight = (
        np.array(v, dtype=float) for v in np.broadcast_arrays(tau, first_share, mean, sd, weight)
    )
    lo = np.min(mean - 8.0 * sd, axis=-1)
    hi = np.max(mean + tau + 8.0 * sd, axis=-1)
    start = np.sum(weight * (mean + tau * (1.0 - tail)), axis=-1)
    t = np.minimum(np.maximum(start, lo), hi)
    row_tail = np.broadcast_to(np.reshape(tail, -1) if np.ndim(tail) else tail, t.shape)
    active = np.arange(t.size)
    rows = (t, lo, hi, tau, first_share, mean, sd, weight, row_tail)
    for _ in range(2 * _NEWTON_STEPS):
        # While every row is still moving, the arrays themselves (no copies by index).
        every = active.size == t.size
        ta, la, ha, tau_a, share_a, mean_a, sd_a, w, tail_a = (
            rows if every else (v[active] for v in rows)
        )
        survival, density = _formation_service_sf(ta[:, None], tau_a, share_a, mean_a, sd_a)
        # ndarray.sum is np.sum without its dispatch (the same reduction).
        excess = (w * survival).sum(axis=-1) - tail_a
        slope = (w * density).sum(axis=-1)
        step, la, ha = _safeguarded_newton(ta, la, ha, excess, slope)
        moving = (np.abs(step - ta) > 1e-8 * step) & (np.abs(excess) > 1e-6)
        if every:
            t, lo, hi = step, la, ha
            rows = (t, lo, hi, *rows[3:])
        else:
            t[active], lo[active], hi[active] = step, la, ha
        active = active[moving]
        if active.size == 0:
            break
    return t


def quantile_from_table_numpy(tau, first_share, mean, sd, tail):
    """``_quantile_of_sum`` by bilinear interpolation of ``_standard_quantile_table``.

    For grids: no iteration per cell. ``tests/sdlab_model/queues/test_fleet.py`` checks it against
    the solver (within 0.1% of ``t`` over random cells).
    """
    table = _standard_quantile_table(float(tail))
    tau, first_share, mean, sd = (
        np.asarray(v, dtype=float) for v in np.broadcast_arrays(tau, first_share, mean, sd)
    )
    a = np.minimum(np.maximum(tau / sd, 0.0), _TABLE_SPREAD[-1])  # np.clip, cheaper
    p = np.minimum(np.maximum(first_share, _TABLE_FIRST_SHARE[0]), 1.0)
    # Interpolate in log a (with a = 0 as the first node) and log p.
    la = np.log(np.maximum(a, _TABLE_SPREAD[1]))
    nodes_a = np.log(_TABLE_SPREAD[1:])
    i = np.minimum(np.maximum(np.searchsorted(nodes_a, la, side="right") - 1, 0), nodes_a.size - 2)
    wa = np.minimum(np.maximum((la - nodes_a[i]) / (nodes_a[i + 1] - nodes_a[i]), 0.0), 1.0)
    i = i + 1  # table rows: 0 is a = 0
    below = a < _TABLE_SPREAD[1]
    wa = np.where(below, a / _TABLE_SPREAD[1], wa)
    i = np.where(below, 0, i)
    lp = np.log(p)
    nodes_p = np.log(_TABLE_FIRST_SHARE)
    j = np.minimum(np.maximum(np.searchsorted(nodes_p, lp, side="right") - 1, 0), nodes_p.size - 2)
    wp = np.minimum(np.maximum((lp - nodes_p[j]) / (nodes_p[j + 1] - nodes_p[j]), 0.0), 1.0)
    g = (
        (1 - wa) * (1 - wp) * table[i, j]
        + wa * (1 - wp) * table[i + 1, j]
        + (1 - wa) * wp * table[i, j + 1]
        + wa * wp * table[i + 1, j + 1]
    )
    return mean + sd * g * (1.0 + a)
