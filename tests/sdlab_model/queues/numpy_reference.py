"""The numpy implementations that the compiled kernels replaced, kept as references.

Copied verbatim from main at 49c514c (``mdc.decay_rate``, ``mdc_grid.log_tail_constant``,
``batching.mixture_quantile``, ``batching.quantile_from_table``) apart from their names;
``test_tail_kernel.py`` beside this file checks that ``sdlab_model.queues._tail_kernel`` agrees
with them. ``unbatched_quantile_numpy`` and ``batched_quantile_numpy`` (with its
``_saturation_hold_ms``) are ``fleet``'s from main at 1ccbc07 (names qualified with ``fleet.``);
``test_fleet_kernel.py`` checks ``sdlab_model.queues._fleet_kernel`` against them.
"""

from __future__ import annotations

import math

import numpy as np

from sdlab_model.queues import batching, fleet, mdc, mdc_grid
from sdlab_model.queues.batching import NEWTON_STEPS as _NEWTON_STEPS
from sdlab_model.queues.batching import TABLE_FIRST_SHARE as _TABLE_FIRST_SHARE
from sdlab_model.queues.batching import TABLE_SPREAD as _TABLE_SPREAD
from sdlab_model.queues.batching import (
    _formation_service_sf,
    _safeguarded_newton,
)
from sdlab_model.queues.batching import standard_quantile_table as _standard_quantile_table

_SERVERS, _LOAD_V, _LOG_C = mdc_grid.KERNEL_TABLE


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


def unbatched_quantile_numpy(
    workload, rate_per_ms: np.ndarray, replicas: np.ndarray, q: float | np.ndarray
):
    """Without batching: one replica is a GI/D/c queue, taken as M/D/(k c) at ``k`` x the rate.

    The p99 wait comes from the tabulated exact M/D/c tail (``sdlab_model.queues.mdc_grid``) at
    ``k c`` servers (fractional ``k c`` interpolates between whole ones). ``q``: one quantile,
    or one per cell (see ``_tails``).
    """
    x, r, c = fleet._replica_view(workload, rate_per_ms, replicas)
    s = workload.single_request_ms
    shape = fleet.arrival_shape(workload, r)
    pooled = np.maximum(c * shape, 1.0)
    rho = x * s / c
    stable = rho < 1.0
    rho_safe = np.where(stable, rho, 0.5)
    eta = mdc.decay_rate(pooled, pooled * rho_safe)
    log_excess = mdc_grid.log_tail_constant(pooled, rho_safe) - fleet._tails(q, x.shape).log_tail
    wait = np.where(stable, np.maximum(0.0, log_excess) / eta * s, np.inf)
    ones = np.ones(x.shape)
    return fleet.FleetLatency(
        quantile_ms=s + wait,
        compute_ms=s * ones,
        queue_ms=wait,
        mean_batch_size=ones,
        utilization=rho,
        saturation=0.0 * ones,
        pooled_servers=pooled,
    )


def batched_quantile_numpy(
    workload,
    rate_per_ms: np.ndarray,
    replicas: np.ndarray,
    q: float | np.ndarray,
    classes=None,
    use_table: bool = False,
):
    """``fleet.batched_quantile`` as numpy array operations (see its docstring)."""
    if workload.is_central_queue:  # one batcher for every model
        classes = fleet.ModelClasses(np.ones(1), np.ones(1))
    else:
        classes = classes or fleet.model_classes(workload)
    x_cells, r, c_cells = fleet._replica_view(workload, rate_per_ms, replicas)
    cell_shape = x_cells.shape
    x = x_cells.reshape(-1, 1)  # cells x 1
    c = c_cells.reshape(-1, 1)
    shape = fleet.arrival_shape(workload, r).reshape(-1, 1)
    p = classes.share.reshape(1, -1)  # 1 x classes
    n = classes.count.reshape(1, -1)
    weight = classes.weight.reshape(1, -1)
    s, f = workload.single_request_ms, workload.batch_overhead_share
    size_cap = float(workload.effective_max_batch_size)
    window = float(workload.batch_window_ms)
    tails = fleet._tails(q, cell_shape, int(size_cap))
    tail = tails.tail

    def service(b):
        return s * (f + (1.0 - f) * b)

    x_j = x * p
    scv_j = p / shape + (1.0 - p)
    b_window = batching._window_batch(x_j, window, size_cap)
    hold_ms = _saturation_hold_ms(x, c, x_j, np.broadcast_to(n, x_j.shape), s, f, size_cap)
    b_saturated = 1.0 + x_j * hold_ms
    batch = np.minimum(size_cap, np.maximum(b_window, b_saturated))
    saturation_j = b_saturated / b_window

    # ``fill_load`` is a full batch's formation tail for Poisson arrivals; with evenly spaced
    # arrivals it would be ``B - 1 - tail B`` arrivals' worth. In between, interpolate by the CV.
    poisson_fill = tails.poisson_fill
    even_fill = size_cap - 1.0 - tail * size_cap
    fill = even_fill + (poisson_fill - even_fill) * np.sqrt(scv_j)
    fill_ms = np.maximum(fill, 0.0) / np.maximum(x_j, 1e-300)
    tau = np.minimum(window, fill_ms)
    # Where busy slots, not the window, set a model's batch size, its oldest request waits for
    # a slot: the holding time, or until a full batch has gathered if that comes first.
    slot_limited = saturation_j >= fleet.SLOT_LIMITED_SATURATION
    tau = np.where(slot_limited, np.maximum(tau, np.minimum(hold_ms, fill_ms)), tau)
    spread = np.where(
        b_window < size_cap,
        np.minimum(scv_j * x_j * window, ((size_cap - b_window) / 2.5) ** 2),
        0.0,
    )
    biased = np.minimum(size_cap, batch + spread / batch)
    mean_s = service(biased)
    sd_s = np.maximum(s * (1.0 - f) * np.sqrt(spread), 1e-3 * s)
    if use_table and classes.share.size == 1 and np.ndim(tail) == 0:
        formation_and_service = batching.quantile_from_table(
            tau[:, 0], 1.0 / batch[:, 0], mean_s[:, 0], sd_s[:, 0], tail
        )
    else:
        formation_and_service = batching.mixture_quantile(
            tau, 1.0 / batch, mean_s, sd_s, np.broadcast_to(weight, tau.shape), tail
        )
    formation_and_service = np.maximum(formation_and_service, service(1.0))

    batch_rate = n * x_j / batch  # per class, batches per ms
    total_batch_rate = batch_rate.sum(axis=1)
    mean_service = (batch_rate * service(batch)).sum(axis=1) / total_batch_rate
    c = c[:, 0]
    utilization = total_batch_rate * mean_service / c
    full_batch_load = x[:, 0] * service(size_cap) / (c * size_cap)
    saturation = (weight * saturation_j).sum(axis=1)
    blend = np.minimum(np.maximum(saturation, 0.0), 1.0) ** 2
    queue_load = utilization - (utilization - full_batch_load) * blend
    # Whitt's QNA hybrid for the merged batch stream's gap SCV.
    mix = batch_rate / total_batch_rate[:, None]
    stream_scv = scv_j / batch
    nu = 1.0 / (n * (mix / n) ** 2).sum(axis=1)  # streams of equal rate within a class
    u_clip = np.minimum(np.maximum(queue_load, 0.0), 1.0)
    hybrid = 1.0 / (1.0 + 4.0 * (1.0 - u_clip) ** 2 * (nu - 1.0))
    merged_scv = hybrid * (mix * stream_scv).sum(axis=1) + (1.0 - hybrid)
    batch_shape = 1.0 / merged_scv

    pooled = np.maximum(c * shape[:, 0], 1.0)
    stable = queue_load < 1.0
    u_safe = np.where(stable, queue_load, 0.5)
    log_tail = tails.log_tail if np.ndim(tails.log_tail) == 0 else tails.log_tail.reshape(-1)
    log_excess = mdc_grid.log_tail_constant(pooled, u_safe) - log_tail
    phases = c * batch_shape
    eta = mdc.decay_rate(phases, phases * u_safe) / mean_service
    queue = np.where(log_excess > 0.0, log_excess / eta, 0.0)
    queue = np.where(stable, queue, np.inf)

    compute = np.minimum((weight * mean_s).sum(axis=1), formation_and_service)
    mean_batch = x[:, 0] / total_batch_rate
    return fleet.FleetLatency(
        quantile_ms=(formation_and_service + queue).reshape(cell_shape),
        compute_ms=compute.reshape(cell_shape),
        queue_ms=queue.reshape(cell_shape),
        mean_batch_size=mean_batch.reshape(cell_shape),
        utilization=utilization.reshape(cell_shape),
        saturation=saturation.reshape(cell_shape),
        pooled_servers=pooled.reshape(cell_shape),
    )


def _saturation_hold_ms(x, c, x_j, n, s, f, size_cap, steps: int = 32):
    """The holding time ``T`` (ms) at which one replica's slots just keep up, per cell.

    A batch is its first request plus the ``x_j T`` that arrive while it is held, so a model
    sends ``x_j / (1 + x_j T)`` batches per ms (at least ``x_j / B``): a rare model still sends
    single requests however long the others wait. ``T`` solves
    ``x s (1 - f) + s f sum_j n_j max(x_j / B, x_j / (1 + x_j T)) = c``; with one model that is
    ``1 + x T = x s f / (c - x s (1 - f))``, the batch size at which slots keep up. Where single
    requests alone fit in the slots (``x s <= c``) that closed form is used (``T <= 0``: no
    holding needed); else bisection. ``inf`` where even full batches cannot keep up.
    """
    x1 = x[:, 0]
    c1 = c[:, 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        closed = s * f / (c1 - x1 * s * (1.0 - f)) - 1.0 / x1
    hold = np.where(c1 - x1 * s * (1.0 - f) > 0.0, closed, np.inf)
    busy = (x1 * s > c1) & (x1 * s * (f / size_cap + 1.0 - f) < c1)
    if not busy.any():
        return hold[:, None]
    rates, counts, slots, total = x_j[busy], n[busy], c1[busy], x1[busy]
    # The terms of ``excess`` that do not move with the holding time, computed once, as the
    # bisection's own expressions would (the same values bit for bit).
    fixed_load = total * s * (1.0 - f)
    overhead = s * f
    batch_floor = rates / size_cap
    if rates.shape[1] == 1 and total.size <= _SCALAR_BISECTION_CELLS:
        # One model class and a few cells: the same bisection on Python floats (IEEE arithmetic
        # and a correctly rounded sqrt, so the same numbers) without numpy's per-call cost.
        hold[busy] = [
            _bisect_hold_one(float(a), float(b), float(r), float(m), float(sl), overhead, steps)
            for a, b, r, m, sl in zip(
                fixed_load, batch_floor[:, 0], rates[:, 0], counts[:, 0], slots, strict=True
            )
        ]
        return hold[:, None]

    def excess(hold_ms):
        per_model = np.maximum(batch_floor, rates / (1.0 + rates * hold_ms[:, None]))
        return fixed_load + overhead * (counts * per_model).sum(axis=1) - slots

    lo = np.zeros(total.shape)
    hi = np.full(total.shape, 1e9)
    for _ in range(steps):
        mid = np.sqrt(np.maximum(lo, 1e-9) * hi)  # bisection on a log scale
        over = excess(mid) > 0.0
        lo = np.where(over, mid, lo)
        hi = np.where(over, hi, mid)
    hold[busy] = np.sqrt(np.maximum(lo, 1e-9) * hi)
    return hold[:, None]


_SCALAR_BISECTION_CELLS = 4
"""Up to this many busy cells (one model class) ``_saturation_hold_ms`` bisects in plain Python."""


def _bisect_hold_one(
    fixed_load: float,
    batch_floor: float,
    rate: float,
    count: float,
    slots: float,
    overhead: float,
    steps: int,
) -> float:
    """``_saturation_hold_ms``'s bisection for one cell of one model class, on floats."""
    lo, hi = 0.0, 1e9
    for _ in range(steps):
        mid = math.sqrt(max(lo, 1e-9) * hi)
        per_model = max(batch_floor, rate / (1.0 + rate * mid))
        if fixed_load + overhead * (count * per_model) - slots > 0.0:
            lo = mid
        else:
            hi = mid
    return math.sqrt(max(lo, 1e-9) * hi)


def fill_load_numpy(max_batch_size: int, tail: float) -> float:
    """``batching.fill_load`` (uncached) from main at 1ccbc07."""
    size = int(max_batch_size)
    if size <= 1:
        return 0.0
    ahead = size - 1 - np.arange(size - 1)

    def excess(mean: float) -> float:
        return float(np.dot(mdc.poisson_pmf(mean, 0, size - 2), ahead))

    lo, hi = 0.0, 4.0 * size + 40.0
    for _ in range(64):
        mid = 0.5 * (lo + hi)
        if excess(mid) > tail * size:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)
