"""Group-sequential tests: the chance a z-test looked at every interval first passes its
boundary at each look, and the O'Brien–Fleming boundary that holds its false alarms over a
whole step.

Two ways to the same chances: ``crossing_by_look`` carries the z-statistic's score as a Gaussian
random walk on a grid (accurate when each look sees many bad requests), and
``counts_crossing_by_look`` carries the bad-request counts themselves (exact but for the request
counts taken at their means; affordable while the counts are few). ``canary_judges`` picks one.
"""

from __future__ import annotations

import functools
import math
from statistics import NormalDist

import numpy as np

from sdlab_model.timeline.poisson_counts import log_poisson

_NORMAL = NormalDist()

GRID_PER_SD = 8
"""Grid points per standard deviation of one look's increment in the recursion."""


def score_drift(
    baseline_share: float,
    canary_share: float,
    canary_rate_rps: float,
    baseline_rate_rps: float,
    interval_s: float,
) -> tuple[float, float]:
    """Drift and spread per look of the z-test's score ``S_k = √k·Z_k``, Brownian in ``k``.

    With ``D`` the canary's bad share minus the baseline's after ``k`` looks, ``Var D =
    v₁/(kΔ)`` (``v₁ = p₁q₁/r₁ + p₀q₀/r₀``) and the pooled test divides by ``√(v₀/(kΔ))``
    (``v₀ = p̄q̄(1/r₁ + 1/r₀)``, ``p̄`` the rate-weighted share), so ``S_k`` gains
    ``μ = (p₁ − p₀)√(Δ/v₀)`` a look with spread ``σ = √(v₁/v₀)`` (1 under no regression).
    """
    p1, p0, r1, r0 = canary_share, baseline_share, canary_rate_rps, baseline_rate_rps
    pooled = (r1 * p1 + r0 * p0) / (r1 + r0)
    null_variance = pooled * (1.0 - pooled) * (1.0 / r1 + 1.0 / r0)
    variance = p1 * (1.0 - p1) / r1 + p0 * (1.0 - p0) / r0
    return (p1 - p0) * math.sqrt(interval_s / null_variance), math.sqrt(variance / null_variance)


def crossing_by_look(
    drift: float, spread: float, boundary: float | np.ndarray, looks: int
) -> np.ndarray:
    """Chance a random walk ``S_k = S_{k−1} + N(drift, spread²)`` from 0 first passes
    ``boundary`` (one value, or one per look) at each look ``k = 1..looks``: recursive
    numerical integration (Armitage, McPherson & Rowe 1969, "Repeated significance tests on
    accumulating data", JRSS A 132(2)), the density of the walks not yet stopped carried on a
    grid of ``spread / GRID_PER_SD`` and convolved with the step's normal density at each look.

    Approximations: the grid (its error in a crossing chance is under 1e-3 at 8 points per
    sd); walks more than 10 sd·√looks below 0 are dropped (under 1e-20 of them return).
    """
    boundaries = np.broadcast_to(np.asarray(boundary, dtype=float), (looks,))
    top = float(boundaries.max())
    h = spread / GRID_PER_SD
    # Walks more than 10 spreads·√looks below 0 are dropped: they would have to climb as far
    # again, against a drift that is ≤ 0 wherever walks go down there at all.
    size = max(2, math.ceil(top / h + 10.0 * GRID_PER_SD * math.sqrt(looks)))
    # Grid point g holds x = low + g·h and stands for the cell of width h around it. At look k
    # the boundary falls in cell cuts[k], a share past[k] of which lies beyond it (linearly);
    # the cells above are past it. The highest boundary is a cell edge.
    low = top - (size - 0.5) * h
    position = (boundaries - low) / h + 0.5  # in cells, from the lower edge of cell 0
    cuts = np.minimum(np.floor(position + 1e-9).astype(int), size)
    past = np.clip(cuts + 1.0 - position, 0.0, 1.0)
    first = math.floor((drift - 8.0 * spread) / h)
    offsets = np.arange(first, math.ceil((drift + 8.0 * spread) / h) + 1)
    kernel = np.exp(-0.5 * ((offsets * h - drift) / spread) ** 2)
    kernel /= kernel.sum()
    density = np.zeros(size)
    start, part = divmod(-low / h, 1.0)  # 0 lies between two grid points: split its mass
    density[int(start)] = 1.0 - part
    density[min(int(start) + 1, size - 1)] += part
    crossing = np.zeros(looks)
    for look in range(looks):
        if density.sum() < 1e-15:
            break  # every walk has passed
        moved = np.convolve(density, kernel)  # moved[m] is grid index m + first
        cut = int(cuts[look]) - first
        if 0 <= cut < moved.size and cuts[look] < size:
            straddling = moved[cut]
            moved[cut] = straddling * (1.0 - past[look])
            crossing[look] = straddling * past[look] + moved[cut + 1 :].sum()
            cut += 1  # the straddling cell's remainder stays
        else:
            crossing[look] = moved[max(cut, 0) :].sum()
        density = np.zeros(size)
        g_from = max(0, first)
        m_from, m_to = g_from - first, min(cut, moved.size)
        if m_to > m_from:
            density[g_from : g_from + m_to - m_from] = moved[m_from:m_to]
    return crossing


@functools.lru_cache(maxsize=64)
def obrien_fleming_constant(looks: int, false_alarm: float) -> float:
    """``C`` such that a driftless unit walk passes ``C·√looks`` (``Z_k > C·√(looks/k)``) at
    some look with chance ``false_alarm``: the Illinois variant of regula falsi on the log of
    ``crossing_by_look``'s chance, between the one-look value ``z₁₋α`` (too low for several
    looks) and 2·z₁₋α + 1; stops within 1e-5."""

    def excess(constant: float) -> float:
        passed = crossing_by_look(0.0, 1.0, constant * math.sqrt(looks), looks).sum()
        return math.log(max(passed, 1e-300)) - math.log(false_alarm)

    low = _NORMAL.inv_cdf(1.0 - false_alarm)
    high = 2.0 * low + 1.0
    f_low, f_high = excess(low), excess(high)
    if f_low <= 0.0:
        return low  # one look
    side = 0
    for _ in range(60):
        middle = high - f_high * (high - low) / (f_high - f_low)
        f_middle = excess(middle)
        if f_middle > 0.0:
            low, f_low = middle, f_middle
            if side == -1:
                f_high /= 2.0
            side = -1
        else:
            high, f_high = middle, f_middle
            if side == 1:
                f_low /= 2.0
            side = 1
        if high - low < 1e-5 or abs(f_middle) < 1e-7:
            return middle
    return middle


COUNTS_STATE_LIMIT = 1e6
"""Pairs of counts × looks up to which ``counts_crossing_by_look`` sums over the bad-request
counts themselves; beyond, the counts are many and the Brownian walk (``crossing_by_look``),
accurate there, is used instead."""


def _poisson_kernel(mean: float) -> np.ndarray:
    """A Poisson(``mean``) count's probabilities from 0 to 10 sd above its mean."""
    if mean <= 0.0:
        return np.ones(1)
    return np.exp(log_poisson(np.arange(int(mean + 10.0 * math.sqrt(mean) + 12)), mean))


class _CountStep:
    """Adds a Poisson count along one axis of an array of chances, by FFT convolution (the mass
    pushed past the array's end is dropped; rounding's tiny negatives are clipped)."""

    def __init__(self, kernel: np.ndarray, size: int, axis: int) -> None:
        self.size, self.axis = size, axis
        self.length = 1 << (size + kernel.size - 2).bit_length()  # a power of two: fast FFTs
        self.spectrum = np.fft.rfft(kernel, self.length)
        shape = [1, 1]
        shape[axis] = -1
        self.spectrum = self.spectrum.reshape(shape)

    def __call__(self, alive: np.ndarray) -> np.ndarray:
        spectrum = np.fft.rfft(alive, self.length, axis=self.axis) * self.spectrum
        moved = np.fft.irfft(spectrum, self.length, axis=self.axis)
        moved = moved[: self.size] if self.axis == 0 else moved[:, : self.size]
        return np.maximum(moved, 0.0)


def counts_crossing_by_look(
    baseline_share: float,
    canary_share: float,
    canary_rate_rps: float,
    baseline_rate_rps: float,
    interval_s: float,
    thresholds: np.ndarray,
) -> np.ndarray | None:
    """Chance the pooled z-test on the bad-request counts so far first passes ``thresholds[k]``
    at look ``k``, summed over the counts themselves: each version's bad requests in a look are
    Poisson (a thinned Poisson stream), so the chance of every pair of running counts not yet
    flagged is carried from look to look, one Poisson step per version, and the pairs past the
    look's threshold are taken out. None past ``COUNTS_STATE_LIMIT``.

    Approximation: each version's request count is its mean (its spread, under 1% after a
    minute at 200 req/s, barely moves the z-statistic); counts past 10 sd above their mean at
    the last look are dropped."""
    looks = thresholds.size
    sizes = []
    for rate, share in ((canary_rate_rps, canary_share), (baseline_rate_rps, baseline_share)):
        final = rate * share * interval_s * looks
        sizes.append(int(final + 10.0 * math.sqrt(final) + 12))
    rows, columns = sizes
    if rows * columns * looks > COUNTS_STATE_LIMIT:
        return None
    add_canary = _CountStep(
        _poisson_kernel(canary_rate_rps * canary_share * interval_s), rows, axis=0
    )
    add_baseline = _CountStep(
        _poisson_kernel(baseline_rate_rps * baseline_share * interval_s), columns, axis=1
    )
    x1 = np.arange(rows, dtype=float)[:, None]
    x0 = np.arange(columns, dtype=float)[None, :]
    alive = np.zeros((rows, columns))
    alive[0, 0] = 1.0
    crossing = np.zeros(looks)
    for look in range(looks):
        alive = add_baseline(add_canary(alive))
        n1 = canary_rate_rps * interval_s * (look + 1)
        n0 = baseline_rate_rps * interval_s * (look + 1)
        pooled = (x1 + x0) / (n1 + n0)
        with np.errstate(divide="ignore", invalid="ignore"):
            z = (x1 / n1 - x0 / n0) / np.sqrt(pooled * (1.0 - pooled) * (1.0 / n1 + 1.0 / n0))
        passed = np.nan_to_num(z, nan=-np.inf) > thresholds[look]
        crossing[look] = alive[passed].sum()
        alive[passed] = 0.0
    return crossing
