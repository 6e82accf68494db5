"""Compiled per-cell loops of the fleet model's tail formulas.

They are ``mdc.decay_rate`` (Newton), ``mdc_grid.log_tail_constant`` and
``batching.quantile_from_table`` (bilinear table lookups), and ``batching.mixture_quantile``
(safeguarded Newton on a mixture of closed-form survival functions).

Loaded lazily (``sdlab_model.queues.kernels``) by ``mdc``, ``mdc_grid`` and ``batching`` so that
``import sdlab_model`` neither imports numba nor compiles anything; ``python3 dev.py run``
compiles these into numba's disk cache before the server starts
(``sdlab_model.queues.warmup``). A leaf: it imports no other module of the model.

Why compiled: one fresh ``evaluate`` runs these on 3 to 32 cells, inside iterative loops (up to
40 Newton steps of a dozen array operations each). On arrays that small numpy's cost is its
per-call overhead, not arithmetic; a loop over cells does the same arithmetic without it. Each
kernel is the numpy formula it replaced, written per cell in the same order of operations and
with the same stopping rules, so results agree with it to rounding (a sum over classes even adds
in numpy's pairwise order; ``tests/sdlab_model/queues/test_tail_kernel.py`` keeps the numpy
versions as references). Heatmap grids (thousands of cells) run the same loops.

Compiled with numpy's error model: a division by zero gives ``inf`` or ``nan`` as in numpy,
not an exception. With ``NUMBA_DISABLE_JIT=1`` the same functions run as plain Python (correct,
slow on grids).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

_SQRT2 = math.sqrt(2.0)
_SQRT_2PI = math.sqrt(2.0 * math.pi)

_PAIRWISE_BLOCK = 128
"""numpy's ``PW_BLOCKSIZE``: up to it, a sum runs over 8 partial sums (see ``_block_sum``)."""


def compile_kernel(function):
    """``njit(cache=True, nogil=True, error_model="numpy")``, or uncached where none is writable."""
    try:
        return njit(cache=True, nogil=True, error_model="numpy")(function)
    except RuntimeError:
        return njit(cache=False, nogil=True, error_model="numpy")(function)


@compile_kernel
def _block_sum(values: np.ndarray, start: int, count: int) -> float:
    """numpy's pairwise sum of ``values[start : start + count]`` for up to ``_PAIRWISE_BLOCK``
    terms, in its order of additions: left to right below 8, else over 8 partial sums."""
    if count < 8:
        total = 0.0
        for i in range(start, start + count):
            total += values[i]
        return total
    r0 = values[start]
    r1 = values[start + 1]
    r2 = values[start + 2]
    r3 = values[start + 3]
    r4 = values[start + 4]
    r5 = values[start + 5]
    r6 = values[start + 6]
    r7 = values[start + 7]
    i = 8
    while i < count - count % 8:
        r0 += values[start + i]
        r1 += values[start + i + 1]
        r2 += values[start + i + 2]
        r3 += values[start + i + 3]
        r4 += values[start + i + 4]
        r5 += values[start + i + 5]
        r6 += values[start + i + 6]
        r7 += values[start + i + 7]
        i += 8
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < count:
        total += values[start + i]
        i += 1
    return total


@compile_kernel
def row_sum(values: np.ndarray) -> float:
    """``values.sum()`` of a 1-d array, bit for bit up to ``_PAIRWISE_BLOCK`` terms (the model
    sums at most 12 classes). Beyond, numpy halves recursively; this adds its blocks left to
    right (the same to rounding; no recursion, which numba's disk cache cannot load)."""
    total = 0.0
    for start in range(0, values.size, _PAIRWISE_BLOCK):
        total += _block_sum(values, start, min(_PAIRWISE_BLOCK, values.size - start))
    return total


@compile_kernel
def decay_rate_cells(servers: np.ndarray, offered_load: np.ndarray) -> np.ndarray:
    """``mdc.decay_rate`` over 1-d arrays: Newton on ``c ln(1 + x/a) - x``; ``nan`` if ``a >= c``.

    Every cell steps until all have settled (the numpy loop's rule, kept so that results match
    it: near saturation, where g is flat, a settled cell's further steps still move it; stopping
    each cell on its own moved some by up to 1e-3 relative at 1 - rho ~ 1e-13).
    """
    n = servers.size
    c_safe = np.empty(n)
    a_safe = np.empty(n)
    eta = np.empty(n)
    for i in range(n):
        if offered_load[i] < servers[i]:
            c_safe[i] = servers[i]
            a_safe[i] = max(offered_load[i], 1e-300)
        else:
            c_safe[i] = 2.0
            a_safe[i] = 1.0
        gap = c_safe[i] - a_safe[i]
        eta[i] = max(2.0 * a_safe[i] * gap / c_safe[i], gap)
    for _ in range(40):
        settled = True
        for i in range(n):
            log_term = c_safe[i] * math.log1p(eta[i] / a_safe[i])
            value = log_term - eta[i]
            slope = c_safe[i] / (a_safe[i] + eta[i]) - 1.0
            # At g's maximum the slope is 0: double instead (the root lies further right).
            step = value / slope if slope < 0.0 else -eta[i]
            eta[i] = eta[i] - step
            # Settled when the step is tiny, or g is down to its rounding noise (1 - rho ~ 1e-9).
            if not (abs(step) <= 1e-11 * eta[i] or abs(value) <= 1e-14 * log_term):
                settled = False
        if settled:
            break
    for i in range(n):
        if not offered_load[i] < servers[i]:
            eta[i] = np.nan
    return eta


@compile_kernel
def _clamp(x: float, low: float, high: float) -> float:
    """``np.minimum(np.maximum(x, low), high)``: ``nan`` stays ``nan``."""
    if x < low:
        x = low
    if x > high:
        x = high
    return x


@compile_kernel
def _interval(nodes: np.ndarray, x: float) -> int:
    """``clip(searchsorted(nodes, x, side="right") - 1, 0, nodes.size - 2)``; ``nan`` sorts last."""
    lo, hi = 0, nodes.size
    while lo < hi:
        mid = (lo + hi) // 2
        if x < nodes[mid]:
            hi = mid
        else:
            lo = mid + 1
    return min(max(lo - 1, 0), nodes.size - 2)


@compile_kernel
def log_tail_constant_cells(
    servers: np.ndarray,
    utilization: np.ndarray,
    server_nodes: np.ndarray,
    load_nodes: np.ndarray,
    table: np.ndarray,
) -> np.ndarray:
    """``mdc_grid.log_tail_constant`` over 1-d arrays: bilinear in ``c`` and ``v(rho)``."""
    out = np.empty(servers.size)
    for k in range(servers.size):
        rho = _clamp(utilization[k], 1e-300, 1.0 - 1e-12)
        u = math.log(4.0 * rho) if rho < 0.5 else -math.log1p(-rho)
        u = _clamp(u, load_nodes[0], load_nodes[-1])
        c = _clamp(servers[k], server_nodes[0], server_nodes[-1])
        i = _interval(server_nodes, c)
        j = _interval(load_nodes, u)
        wc = (c - server_nodes[i]) / (server_nodes[i + 1] - server_nodes[i])
        wu = (u - load_nodes[j]) / (load_nodes[j + 1] - load_nodes[j])
        out[k] = (
            (1 - wc) * (1 - wu) * table[i, j]
            + wc * (1 - wu) * table[i + 1, j]
            + (1 - wc) * wu * table[i, j + 1]
            + wc * wu * table[i + 1, j + 1]
        )
    return out


@compile_kernel
def quantile_from_table_cells(
    tau: np.ndarray,
    first_share: np.ndarray,
    mean: np.ndarray,
    sd: np.ndarray,
    table: np.ndarray,
    spread_nodes: np.ndarray,
    log_spread_nodes: np.ndarray,
    share_nodes: np.ndarray,
    log_share_nodes: np.ndarray,
) -> np.ndarray:
    """``batching.quantile_from_table`` over 1-d arrays: bilinear in ``ln(tau / sd)`` (with 0 as
    the first node) and ``ln first_share``. The ``log_`` nodes are numpy's logs of the nodes
    (of ``spread_nodes[1:]``), passed in so that they are the very values it interpolated on."""
    out = np.empty(tau.size)
    for k in range(tau.size):
        a = _clamp(tau[k] / sd[k], 0.0, spread_nodes[-1])
        p = _clamp(first_share[k], share_nodes[0], 1.0)
        la = math.log(spread_nodes[1] if a < spread_nodes[1] else a)
        i = _interval(log_spread_nodes, la)
        step_a = log_spread_nodes[i + 1] - log_spread_nodes[i]
        wa = _clamp((la - log_spread_nodes[i]) / step_a, 0.0, 1.0)
        i = i + 1  # table rows: 0 is a = 0
        if a < spread_nodes[1]:
            wa = a / spread_nodes[1]
            i = 0
        lp = math.log(p)
        j = _interval(log_share_nodes, lp)
        step_p = log_share_nodes[j + 1] - log_share_nodes[j]
        wp = _clamp((lp - log_share_nodes[j]) / step_p, 0.0, 1.0)
        g = (
            (1 - wa) * (1 - wp) * table[i, j]
            + wa * (1 - wp) * table[i + 1, j]
            + (1 - wa) * wp * table[i, j + 1]
            + wa * wp * table[i + 1, j + 1]
        )
        out[k] = mean[k] + sd[k] * g * (1.0 + a)
    return out


@compile_kernel
def _normal_sf_pdf(z: float) -> tuple[float, float]:
    """``batching._normal_sf_pdf`` for one value (A&S 7.1.26 for erfc, one exponential)."""
    x = z / _SQRT2
    t = 1.0 / (1.0 + 0.3275911 * abs(x))
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    gauss = math.exp(-x * x)
    upper = 0.5 * poly * gauss
    return (upper if z >= 0.0 else 1.0 - upper), gauss / _SQRT_2PI


@compile_kernel
def _formation_service_sf(
    t: float, tau: float, first_share: float, mean: float, sd: float
) -> tuple[float, float]:
    """``batching._formation_service_sf`` for one class at one point: ``P(F + S > t)``, density."""
    z_atom = (t - tau - mean) / sd
    z1 = (t - mean) / sd
    sf_atom, pdf_atom = _normal_sf_pdf(z_atom)
    sf1, pdf1 = _normal_sf_pdf(z1)
    if tau > 1e-9 * sd:
        antiderivative = (z1 * sf1 - pdf1) - (z_atom * sf_atom - pdf_atom)
        uniform_sf = sd / tau * antiderivative
        uniform_pdf = (sf_atom - sf1) / tau
    else:
        uniform_sf = sf1
        uniform_pdf = pdf1 / sd
    survival = first_share * sf_atom + (1.0 - first_share) * uniform_sf
    density = first_share * pdf_atom / sd + (1.0 - first_share) * uniform_pdf
    return survival, density


@compile_kernel
def mixture_quantile_rows(
    tau: np.ndarray,
    first_share: np.ndarray,
    mean: np.ndarray,
    sd: np.ndarray,
    weight: np.ndarray,
    tail: np.ndarray,
    max_steps: int,
) -> np.ndarray:
    """``batching.mixture_quantile`` over rows x classes (2-d, C order) and one tail per row.

    Per row: safeguarded Newton on the mixture's survival function from the weighted start,
    until the step is within 1e-8 relative or the tail within 1e-6 (the numpy loop's rule; its
    rows never mix, so a row iterated alone takes the same steps).
    """
    rows, classes = tau.shape
    out = np.empty(rows)
    terms = np.empty(classes)
    slopes = np.empty(classes)
    for r in range(rows):
        lo = np.inf
        hi = -np.inf
        for j in range(classes):
            lo = min(lo, mean[r, j] - 8.0 * sd[r, j])
            hi = max(hi, mean[r, j] + tau[r, j] + 8.0 * sd[r, j])
            terms[j] = weight[r, j] * (mean[r, j] + tau[r, j] * (1.0 - tail[r]))
        t = _clamp(row_sum(terms), lo, hi)
        for _ in range(max_steps):
            for j in range(classes):
                survival, density = _formation_service_sf(
                    t, tau[r, j], first_share[r, j], mean[r, j], sd[r, j]
                )
                terms[j] = weight[r, j] * survival
                slopes[j] = weight[r, j] * density
            excess = row_sum(terms) - tail[r]
            slope = row_sum(slopes)
            # One step of batching._safeguarded_newton.
            if excess > 0.0:
                lo = t
            else:
                hi = t
            step = 0.5 * (lo + hi)
            if slope != 0.0:
                newton = t + excess / slope
                if newton > lo and newton < hi and math.isfinite(newton):
                    step = newton
            moving = abs(step - t) > 1e-8 * step and abs(excess) > 1e-6
            t = step
            if not moving:
                break
        out[r] = t
    return out
