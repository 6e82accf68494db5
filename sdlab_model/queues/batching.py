"""The dynamically batched queue: batch formation (Triton's rule) feeding a queue of batches.

With dynamic batching a request's end-to-end time is its batch-formation wait ``F`` (from its
arrival until its batch is dispatched), the wait ``Q`` for a free server, and the service
``D(b) = s (f + (1 - f) b)`` of its batch of ``b``. Everything here is vectorized over numpy arrays
of rates and server counts, so the point model and the heatmap grid run the same formulas.

The model has two regimes, told apart by ``saturation = b_sat / b_window``:

- **window-limited** (``saturation`` small): servers are usually free when a batch closes, so a
  batch closes when its oldest request has waited the window or when ``B`` have gathered. This is
  modelled closely and checked against simulation.
- **server-limited** (``saturation`` near or above 1): servers are the bottleneck and each free
  server takes whatever has piled up; batch sizes then oscillate from server to server. The
  formulas still give a number (and the right mean batch size), but it is flagged approximate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from sdlab_model.queues import kernels, mdc
from sdlab_model.queues.mdc_grid import log_tail_constant

SATURATION_LIMIT = 0.3
"""Above this ``b_sat / b_window`` the batcher is server-limited and the model approximate."""

SATURATION_LIMIT_FLAT_BATCHES = 0.5
"""The same limit where a batch costs nearly the same whatever its size (``f >= 0.9``, e.g. the
GPU default): server-limited batch sizes swing, but their service times barely do."""

FLAT_BATCH_OVERHEAD_SHARE = 0.9

MIN_ACCURATE_SERVERS = 4
"""With fewer servers a busy server delays whole batches; the model is flagged approximate."""

NEWTON_STEPS = 30
"""Newton steps of one quantile solve (a mixture of classes gets twice as many)."""


@dataclass(frozen=True)
class BatchedLatency:
    """Arrays (one entry per cell) of the batched queue's latency and its parts, in ms."""

    quantile_ms: np.ndarray
    formation_and_service_ms: np.ndarray
    compute_ms: np.ndarray
    queue_ms: np.ndarray
    mean_batch_size: np.ndarray
    server_utilization: np.ndarray
    saturation: np.ndarray
    is_accurate: np.ndarray


def saturation_limit(overhead_share: float) -> float:
    """Largest ``b_sat / b_window`` where simulation kept the model within 15% (>= 4 servers)."""
    flat = overhead_share >= FLAT_BATCH_OVERHEAD_SHARE
    return SATURATION_LIMIT_FLAT_BATCHES if flat else SATURATION_LIMIT


@lru_cache(maxsize=256)
def fill_load(max_batch_size: int, tail: float) -> float:
    """Arrivals' worth of time ``mu = lambda t`` within which a full batch's tail request leaves.

    In a batch that fills (``B`` requests before the window ends), the request in position ``p``
    waits for ``B - p`` more arrivals. Over a random request,
    ``P(F > t) = E[(B - 1 - N)^+] / B`` with ``N ~ Poisson(lambda t)``. This returns the ``mu``
    where that equals ``tail`` (by bisection: the left side falls as ``mu`` grows).
    """
    size = int(max_batch_size)
    if size <= 1:
        return 0.0
    ahead = (size - 1 - np.arange(size - 1)).astype(float)
    # mdc.poisson_pmf(mean, 0, size - 2) with its mean-free parts computed once (the same
    # values): a new batch size is a fresh evaluate's cost, 64 steps of it.
    arrivals = np.arange(size - 1, dtype=float)
    log_factorials = mdc.log_factorial_run(0, size - 2)
    target = tail * size
    lo, hi = 0.0, 4.0 * size + 40.0
    for _ in range(64):
        mid = 0.5 * (lo + hi)  # > 0: poisson_pmf's mean > 0 branch
        pmf = np.exp(arrivals * math.log(mid) - mid - log_factorials)
        if float(np.dot(pmf, ahead)) > target:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def _erfc_scaled(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(erfc(|x|) e^{x^2}, e^{-x^2})``: Abramowitz & Stegun 7.1.26, absolute error < 1.5e-7."""
    t = 1.0 / (1.0 + 0.3275911 * np.abs(x))
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    return poly, np.exp(-x * x)


def _normal_sf_pdf(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Standard normal survival function and density, sharing one exponential."""
    poly, gauss = _erfc_scaled(z / math.sqrt(2.0))
    upper = 0.5 * poly * gauss
    return np.where(z >= 0.0, upper, 1.0 - upper), gauss / math.sqrt(2.0 * math.pi)


def _formation_service_sf(t, tau, first_share, mean, sd):
    """``P(F + S > t)`` and its density, with ``F`` = ``tau`` w.p. ``first_share``, else
    ``Uniform(0, tau)``, and ``S ~ Normal(mean, sd)`` independent of ``F``.

    The uniform part integrates the normal tail over the window in closed form:
    ``(1/tau) int_0^tau P(S > t - x) dx = (sd/tau) [J(z1) - J(z0)]`` with
    ``J(z) = z sf(z) - pdf(z)`` (an antiderivative of the normal survival function),
    ``z1 = (t - mean)/sd``,
    ``z0 = z1 - tau/sd``.
    """
    z_atom = (t - tau - mean) / sd
    z1 = (t - mean) / sd
    # Both points in one call (the same elementwise arithmetic, half the numpy calls).
    (sf_atom, sf1), (pdf_atom, pdf1) = _normal_sf_pdf(np.stack((z_atom, z1)))
    wide = tau > 1e-9 * sd
    tau_safe = np.where(wide, tau, 1.0)
    # z0 = z_atom: the window's far end is the atom's position.
    antiderivative = (z1 * sf1 - pdf1) - (z_atom * sf_atom - pdf_atom)
    uniform_sf = np.where(wide, sd / tau_safe * antiderivative, sf1)
    uniform_pdf = np.where(wide, (sf_atom - sf1) / tau_safe, pdf1 / sd)
    survival = first_share * sf_atom + (1.0 - first_share) * uniform_sf
    density = first_share * pdf_atom / sd + (1.0 - first_share) * uniform_pdf
    return survival, density


def _quantile_of_sum(tau, first_share, mean, sd, tail):
    """Solve ``P(F + S > t) = tail`` per cell: Newton, safeguarded by a shrinking bracket.

    Only cells not yet converged are iterated, so the few slow ones (where the atom at ``tau``
    makes the survival function nearly a step) do not cost the whole grid.
    """
    shape = np.broadcast(tau, first_share, mean, sd).shape
    tau, first_share, mean, sd = (
        np.array(v, dtype=float).ravel() for v in np.broadcast_arrays(tau, first_share, mean, sd)
    )
    lo = mean - 8.0 * sd
    hi = mean + tau + 8.0 * sd
    t = np.minimum(np.maximum(mean + tau * (1.0 - tail), lo), hi)
    active = np.arange(t.size)
    for _ in range(NEWTON_STEPS):
        ta, la, ha = t[active], lo[active], hi[active]
        survival, density = _formation_service_sf(
            ta, tau[active], first_share[active], mean[active], sd[active]
        )
        excess = survival - tail
        step, la, ha = _safeguarded_newton(ta, la, ha, excess, density)
        t[active], lo[active], hi[active] = step, la, ha
        # The normal tail is good to ~1e-7 absolute, so a probability within 1e-6 is converged.
        moving = (np.abs(step - ta) > 1e-8 * step) & (np.abs(excess) > 1e-6)
        active = active[moving]
        if active.size == 0:
            break
    return t.reshape(shape)


TABLE_SPREAD = np.concatenate(([0.0], np.geomspace(1e-4, 1e6, 301)))
"""``standard_quantile_table``'s nodes in ``a = tau / sd`` (its rows)."""
TABLE_FIRST_SHARE = np.geomspace(1.0 / 512.0, 1.0, 145)
"""``standard_quantile_table``'s nodes in ``p = first_share`` (its columns)."""
QUANTILE_TABLE_NODES = (
    TABLE_SPREAD,
    np.log(TABLE_SPREAD[1:]),  # a = 0 is the first row, ahead of these
    TABLE_FIRST_SHARE,
    np.log(TABLE_FIRST_SHARE),
)
"""The table's nodes as ``_tail_kernel.quantile_from_table_cells`` takes them: each axis's
nodes and numpy's logs of them, so that the kernel interpolates on the very same values."""


@lru_cache(maxsize=8)
def standard_quantile_table(tail: float) -> np.ndarray:
    """``g(a, p)``: the ``tail`` quantile of ``F + S`` in units of ``sd`` above ``mean``.

    With ``z = (t - mean) / sd`` the survival function of ``F + S`` depends only on
    ``a = tau / sd`` and ``p = first_share``, so one table over ``(a, p)`` serves every cell.
    Stored as ``g / (1 + a)``, which stays bounded as the window outgrows the service spread.
    """
    a, p = np.meshgrid(TABLE_SPREAD, TABLE_FIRST_SHARE, indexing="ij")
    z = _quantile_of_sum(a, p, np.zeros(a.shape), np.ones(a.shape), tail)
    return z / (1.0 + a)


def quantile_from_table(tau, first_share, mean, sd, tail):
    """``_quantile_of_sum`` by bilinear interpolation of ``standard_quantile_table``.

    For grids: no iteration per cell. ``tests/sdlab_model/queues/test_fleet.py`` checks it against
    the solver (within 0.1% of ``t`` over random cells). A compiled loop over cells
    (``_tail_kernel.quantile_from_table_cells``), in log ``a`` (``a = 0`` the first node) and
    log ``p``.
    """
    quantile_from_table_cells = kernels.module(kernels.TAIL).quantile_from_table_cells
    table = standard_quantile_table(float(tail))
    tau, first_share, mean, sd = np.broadcast_arrays(tau, first_share, mean, sd)
    # Fresh C-ordered copies: a read-only or strided view would compile the kernel once more.
    cells = (np.array(v, dtype=float, order="C").ravel() for v in (tau, first_share, mean, sd))
    return quantile_from_table_cells(*cells, table, *QUANTILE_TABLE_NODES).reshape(tau.shape)


def mixture_quantile(tau, first_share, mean, sd, weight, tail):
    """Solve ``sum_j weight_j P(F_j + S_j > t) = tail`` per row (classes on the last axis).

    Each class is ``_formation_service_sf``'s ``F + S``; the rows are cells. Newton on the
    mixture's survival function, safeguarded by a shrinking bracket, iterating only the rows not
    yet converged. With one class it is ``_quantile_of_sum``. ``tail`` is one value or a column
    (one per row); rows never mix, so a row's result does not depend on the others. A compiled
    loop over rows (``_tail_kernel.mixture_quantile_rows``) running ``_formation_service_sf`` and
    ``_safeguarded_newton`` per cell.
    """
    mixture_quantile_rows = kernels.module(kernels.TAIL).mixture_quantile_rows
    tau, first_share, mean, sd, weight = np.broadcast_arrays(tau, first_share, mean, sd, weight)
    row_shape, classes = tau.shape[:-1], tau.shape[-1]
    # Fresh C-ordered copies: a read-only or strided view would compile the kernel once more.
    tau, first_share, mean, sd, weight = (
        np.array(v, dtype=float, order="C").reshape(-1, classes)
        for v in (tau, first_share, mean, sd, weight)
    )
    row_tail = np.broadcast_to(np.reshape(tail, -1) if np.ndim(tail) else tail, row_shape)
    row_tail = np.array(row_tail, dtype=float, order="C").reshape(-1)
    steps = 2 * NEWTON_STEPS
    t = mixture_quantile_rows(tau, first_share, mean, sd, weight, row_tail, steps)
    return t.reshape(row_shape)


def _window_batch(lam: np.ndarray, window: float, size_cap: float) -> np.ndarray:
    """Requests a window collects when servers are free: ``1 + lambda W``, capped at ``B``."""
    return np.minimum(size_cap, 1.0 + lam * window)


def _formation_and_service(lam, batch, s, f, size_cap, window, fill, tail):
    """Steps 2-4 of ``batched_latency``: the ``1 - tail`` quantile of ``F + S`` and ``E[S]``."""
    window_arrivals = lam * window
    b_window = _window_batch(lam, window, size_cap)
    tau = np.minimum(window, fill / np.maximum(lam, 1e-300))
    spread = np.where(
        b_window < size_cap, np.minimum(window_arrivals, ((size_cap - b_window) / 2.5) ** 2), 0.0
    )
    biased = np.minimum(size_cap, batch + spread / batch)
    mean_s = s * (f + (1.0 - f) * biased)
    sd_s = np.maximum(s * (1.0 - f) * np.sqrt(spread), 1e-3 * s)  # smooths the atom for Newton
    quantile = _quantile_of_sum(tau, 1.0 / batch, mean_s, sd_s, tail)
    # Never below one request's own service time.
    return np.maximum(quantile, s * (f + (1.0 - f))), mean_s


def batched_latency(
    rate_per_ms: np.ndarray,
    servers: np.ndarray,
    single_request_ms: float,
    overhead_share: float,
    max_batch_size: int,
    batch_window_ms: float,
    q: float,
) -> BatchedLatency:
    """The ``q`` quantile of end-to-end latency under dynamic batching, per cell (ms).

    Steps (``lambda`` per ms, ``s`` single-request time, ``f`` fixed share, ``B``, ``W``, ``c``):

    1. Mean batch size ``b = min(B, max(b_w, b_sat))``: the window collects ``b_w = 1 + lambda W``
       (capped at ``B``); busy servers force ``b_sat = lambda s f / (c - lambda s (1 - f))``, the
       size at which ``c`` servers just keep up (``lambda D(b) = c b``).
    2. Formation ``F``: the batch's first request waits ``tau = min(W, mu_q / lambda)``, where
       ``mu_q`` is ``fill_load`` (a full batch's tail wait); a share ``1/b`` of requests are first,
       the others arrived uniformly later.
    3. Service ``S = D(b')``, ``b'`` the size-biased batch size (a request sits in a larger batch
       than the average batch): mean ``b + var/b``, ``var = min(lambda W, ((B - b_w)/2.5)^2)``
       (Poisson spread, squeezed by the cap ``B``), normal.
    4. The ``q`` quantile of ``F + S`` by safeguarded Newton on the closed-form survival function.
    5. Queue for a server: batches arrive about every ``b`` arrivals (Erlang-``b`` gaps) at ``c``
       servers with utilization ``u = lambda D(b) / (c b)`` (blended towards the full-batch load
       ``rho`` as batches become server-limited, where ``u -> 1`` by construction of ``b_sat``);
       its wait tail ``C e^(-eta t)`` has
       ``eta D(b) = b c ln(1 + eta / lambda)`` (the Erlang-``b`` arrival transform, as for M/D/c
       with ``b c`` phases) and ``C`` the exact M/D/c tail constant at ``(c, u)``. Its ``q``
       quantile is added.

    Approximations:
        Servers assumed free when a batch closes (window-limited regime); ``F`` and ``S``
        independent; ``S`` normal; the two waits added at the same quantile (slightly
        pessimistic). ``is_accurate`` is False where simulation showed these break: ``c < 4`` or
        ``b_sat / b_w`` at or above ``saturation_limit(f)`` (0.3, or 0.5 when ``f >= 0.9``).

    Sources:
        Triton Inference Server dynamic batcher (``max_queue_delay_microseconds``). The
        Erlang-arrival decay rate: Tijms, *A First Course in Stochastic Models* (2003) §9.4.
        Abramowitz & Stegun 7.1.26 (normal tail). Calibrated and checked against
        ``sdlab_model.simulation.simulator`` by ``scripts/accuracy_report.py``.
    """
    lam = np.asarray(rate_per_ms, dtype=float)
    c = np.asarray(servers, dtype=float)
    lam, c = np.broadcast_arrays(lam, c)
    s, f = float(single_request_ms), float(overhead_share)
    size_cap = float(max_batch_size)
    window = float(batch_window_ms)
    tail = 1.0 - q

    def service(b):
        return s * (f + (1.0 - f) * b)

    b_window = _window_batch(lam, window, size_cap)
    with np.errstate(divide="ignore", invalid="ignore"):
        b_saturated = lam * s * f / (c - lam * s * (1.0 - f))
    b_saturated = np.where(b_saturated > 0.0, b_saturated, np.inf)
    batch = np.minimum(size_cap, np.maximum(b_window, b_saturated))
    saturation = b_saturated / b_window

    # Steps 2-4 depend on the rate and the batch size only. Where the window sets the batch size
    # (most cells of a heatmap) that is the rate alone, so solve once per rate and broadcast;
    # re-solve just the cells where busy servers make batches larger.
    rate_only = np.asarray(rate_per_ms, dtype=float)
    fixed = (s, f, size_cap, window, fill_load(int(max_batch_size), tail), tail)
    by_rate = _formation_and_service(rate_only, _window_batch(rate_only, window, size_cap), *fixed)
    formation_and_service, mean_s = (np.array(np.broadcast_to(part, lam.shape)) for part in by_rate)
    # Cells beyond full-batch capacity are unstable (their queue is inf below): not worth solving.
    within_capacity = lam * service(size_cap) < c * size_cap
    server_limited = (batch > b_window) & within_capacity
    if np.any(server_limited):
        formation_and_service[server_limited], mean_s[server_limited] = _formation_and_service(
            lam[server_limited], batch[server_limited], *fixed
        )

    utilization = lam * service(batch) / (c * batch)
    # Server-limited batches keep the servers just busy (utilization -> 1 at b_sat); the backlog
    # then depends on how far the load is from full-batch capacity, so blend towards that.
    full_batch_load = lam * service(size_cap) / (c * size_cap)
    blend = np.clip(saturation, 0.0, 1.0) ** 2
    queue_load = utilization - (utilization - full_batch_load) * blend
    stable = queue_load < 1.0
    u_safe = np.where(stable, queue_load, 0.5)
    log_excess = log_tail_constant(c, u_safe) - math.log(tail)
    queue = np.zeros(np.broadcast(lam, c).shape)
    waits = log_excess > 0.0  # elsewhere the queue's tail is below the quantile: no wait
    if np.any(waits):
        batch_w = np.broadcast_to(batch, queue.shape)[waits]
        phases = batch_w * np.broadcast_to(c, queue.shape)[waits]
        eta = mdc.decay_rate(phases, phases * u_safe[waits]) / service(batch_w)
        queue[waits] = log_excess[waits] / eta
    queue = np.where(stable, queue, np.inf)

    compute = np.minimum(mean_s, formation_and_service)
    accurate = (c >= MIN_ACCURATE_SERVERS) & (saturation < saturation_limit(f))
    return BatchedLatency(
        quantile_ms=formation_and_service + queue,
        formation_and_service_ms=formation_and_service,
        compute_ms=compute,
        queue_ms=queue,
        mean_batch_size=batch,
        server_utilization=utilization,
        saturation=saturation,
        is_accurate=accurate,
    )


def _safeguarded_newton(t, low, high, excess, slope):
    """One step of Newton's method on a falling tail, kept inside its bracket.

    ``excess`` is the tail at ``t`` minus the wanted probability: positive means the root lies
    above ``t``, so ``t`` becomes the bracket's low end (else its high end). The Newton step is
    taken where it lands inside the bracket, the midpoint otherwise. Returns the new point and
    bracket.
    """
    low = np.where(excess > 0.0, t, low)
    high = np.where(excess > 0.0, high, t)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        newton = t + excess / slope
    inside = (newton > low) & (newton < high) & np.isfinite(newton)
    return np.where(inside, newton, 0.5 * (low + high)), low, high
