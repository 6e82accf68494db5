"""The exact M/D/c solve's compiled loops: state reduction (GTH) of the chain
``Q' = (Q + A - c)^+``, and the waiting time's CDF and quantiles from its solution.

Loaded lazily (``sdlab_model.queues.kernels``) by ``mdc`` so that ``import sdlab_model`` imports no
numba and compiles nothing. The compiled code is cached on disk where it can be, and
``python3 dev.py run`` compiles it into that cache before the server starts, so that no visitor
waits for the compiler.

Why a compiled kernel in the queues package: the elimination below is a triple loop whose work is
``~ n^2 (c + 1) / 2`` for ``n`` states and ``c`` servers, because the chain falls by at most ``c``
states a step; numpy can only express it one state at a time (``n`` Python iterations of small
array operations), and a dense LU solve costs ``n^3 / 3`` whatever ``c`` is. Compiled, a typical
Lab solve (``c = 32``, under 200 states) takes under a millisecond, and 30 ms at 1,738 states
where the dense solve took 0.4 s.

With ``NUMBA_DISABLE_JIT=1`` the same function runs as plain Python (correct, but seconds for a
few hundred states).

The wait's CDF is a sum over the queue's states of Poisson CDFs; its quantile, a root search of a
dozen or more CDFs. As small numpy calls (three quantiles: ~30 CDFs of ~8 calls each) that was
most of an exact evaluation; compiled, the search is one call (``scripts/bench_mdc.py``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


def _compile(function):
    """``njit(cache=True, nogil=True)``, or without the disk cache where none is writable."""
    try:
        return njit(cache=True, nogil=True)(function)
    except RuntimeError:
        return njit(cache=False, nogil=True)(function)


def _transitions(arrivals: np.ndarray, servers: int, states: int) -> np.ndarray:
    """``t[j, i] = P(i -> j)`` of the truncated chain (see ``stationary_gth``)."""
    c = servers
    n = states
    t = np.zeros((n, n))
    for j in range(1, n):
        for i in range(min(n, j + c + 1)):
            t[j, i] = arrivals[j + c - i]
    # To 0: whatever does not stay in 1 .. n - 1 (the queue empties, or the step overflows the
    # truncation). Taken as 1 minus the rest, as the dense solve's system implies: the computed
    # Poisson terms sum to 1 only within ~1e-13 at a ~ 250, which moves the solution by ~1e-12.
    for i in range(n):
        stay = 0.0
        for j in range(max(1, i - c), n):
            stay += t[j, i]
        t[0, i] = max(0.0, 1.0 - stay)
    return t


def _add_scaled(target: np.ndarray, weight: float, source: np.ndarray) -> None:
    """``target += weight * source`` (a loop from 0 over views compiles to vector instructions)."""
    if weight != 0.0:
        for i in range(target.shape[0]):
            target[i] += weight * source[i]


def _eliminate(t: np.ndarray, servers: int) -> None:
    """Censor out states ``n - 1`` down to 1 (GTH), in place; row ``k`` ends divided by ``s_k``."""
    c = servers
    for k in range(t.shape[0] - 1, 0, -1):
        low = max(1, k - c)
        s = t[0, k]
        for j in range(low, k):
            s += t[j, k]
        source = t[k, :k]
        source /= s
        # p_00 is never read again, so row 0 starts at column 1.
        add_scaled(t[0, 1:k], t[0, k], source[1:])
        for j in range(low, k):
            add_scaled(t[j, :k], t[j, k], source)


def _back_substitute(t: np.ndarray) -> np.ndarray:
    """``x_0 = 1``, ``x_k = sum_{i<k} x_i t[k, i]`` (``t[k]`` already over ``s_k``), normalized."""
    n = t.shape[0]
    x = np.empty(n)
    x[0] = 1.0
    norm = 1.0
    for k in range(1, n):
        row = t[k]
        value = 0.0
        for i in range(k):
            value += x[i] * row[i]
        x[k] = value
        norm += value
    for k in range(n):
        x[k] /= norm
    return x


def _stationary_gth(arrivals: np.ndarray, servers: int, states: int) -> np.ndarray:
    """Stationary law of ``Q' = (Q + A - c)^+`` truncated to ``0 .. states - 1``.

    ``arrivals[m] = P(A = m)`` for ``m = 0 .. servers + states - 1`` at least. A step that would
    leave the truncated space lands on state 0 instead: that chain's balance equations for states
    ``1 .. states - 1`` are those of the untruncated chain, the system ``mdc``'s dense solve
    solves.

    Method: GTH state reduction (Grassmann, Taksar & Heyman 1985). The top state ``k`` is
    censored out, ``p_ij += p_ik p_kj / s_k`` for ``i, j < k``, where ``s_k = sum_{j<k} p_kj``
    is summed rather than taken as ``1 - p_kk``: no subtraction anywhere, so every entry keeps
    its relative precision. Then ``x_0 = 1`` and ``x_k = sum_{i<k} x_i p_ik / s_k``. From state
    ``k`` the chain reaches only ``0`` and ``k - c ..``, and censoring keeps that shape, so
    eliminating ``k`` updates ``k`` x ``(min(c, k) + 1)`` entries: ``~ n^2 (c + 1) / 2`` in all.
    Storage is ``t[j, i] = p_ij`` (row ``j`` holds the moves *into* ``j``), so each update is a
    contiguous run.

    Sources: W. K. Grassmann, M. I. Taksar, D. P. Heyman, "Regenerative analysis and steady state
    distributions for Markov chains", Oper. Res. 33 (1985) 1107–1116; W. J. Stewart,
    *Introduction to the Numerical Solution of Markov Chains* (1994) §2.7.
    """
    t = transitions(arrivals, servers, states)
    eliminate(t, servers)
    return back_substitute(t)


add_scaled = _compile(_add_scaled)
transitions = _compile(_transitions)
eliminate = _compile(_eliminate)
back_substitute = _compile(_back_substitute)
stationary_gth = _compile(_stationary_gth)


def _log_factorial(n: int, small: np.ndarray) -> float:
    """``ln n!``: ``small[n]`` below 32, Stirling's series above (``mdc.log_factorial``'s)."""
    if n < 32:
        return small[n]
    m = n + 1.0
    inv = 1.0 / m
    inv2 = inv * inv
    return (
        (m - 0.5) * math.log(m)
        - m
        + 0.5 * math.log(2.0 * math.pi)
        + inv * (1 / 12 - inv2 * (1 / 360 - inv2 * (1 / 1260 - inv2 / 1680)))
    )


def _wait_cdf(queue_pmf: np.ndarray, servers: int, load: float, x: float, small) -> float:
    """``P(W <= x)`` of M/D/c (``mdc.MdcWait.wait_cdf``): for ``x = k + y``,
    ``sum_n q_n P(Poisson(load (1 - y)) <= (k + 1) c - 1 - n)``."""
    if x < 0.0:
        return 0.0
    whole = math.floor(x)
    top = int((whole + 1.0) * servers) - 1
    mean = load * (1.0 - (x - whole))
    states = queue_pmf.shape[0]
    total = 0.0
    if mean <= 0.0:  # no arrivals: P(0 <= m) = 1 for every m >= 0
        for n in range(min(states, top + 1)):
            total += queue_pmf[n]
        return min(1.0, total)
    # Mass below mean - 40 sd is under e^-800, so summing from there is exact in double precision.
    start = max(0, int(mean - 40.0 * math.sqrt(mean) - 40.0))
    if top < start:
        return 0.0
    log_mean = math.log(mean)
    cumulative = 0.0
    for m in range(start, top + 1):
        cumulative += math.exp(m * log_mean - mean - log_factorial(m, small))
        if top - m < states:
            total += queue_pmf[top - m] * min(cumulative, 1.0)
    return min(1.0, total)


def _wait_quantile(
    queue_pmf: np.ndarray, servers: int, load: float, probability: float, small
) -> float:
    """The ``probability`` quantile of ``W`` (``mdc.MdcWait.wait_quantile``), to 1e-10 relative:
    bracketed by doubling, then the Illinois variant of regula falsi (superlinear on the smooth
    pieces of the CDF, never leaving the bracket)."""
    if wait_cdf(queue_pmf, servers, load, 0.0, small) >= probability:
        return 0.0
    lo, hi = 0.0, 1.0
    while wait_cdf(queue_pmf, servers, load, hi, small) < probability:
        lo, hi = hi, 2.0 * hi
    f_lo = wait_cdf(queue_pmf, servers, load, lo, small) - probability
    f_hi = wait_cdf(queue_pmf, servers, load, hi, small) - probability
    side = 0
    x = hi
    f_x = f_hi
    for _ in range(100):
        x = (lo * f_hi - hi * f_lo) / (f_hi - f_lo)
        if not lo < x < hi:
            x = 0.5 * (lo + hi)
        f_x = wait_cdf(queue_pmf, servers, load, x, small) - probability
        if f_x < 0.0:
            lo, f_lo = x, f_x
            if side == -1:
                f_hi *= 0.5
            side = -1
        else:
            hi, f_hi = x, f_x
            if side == 1:
                f_lo *= 0.5
            side = 1
        if hi - lo <= 1e-10 * hi or f_x == 0.0:
            break
    return hi if f_x >= 0.0 else x


log_factorial = _compile(_log_factorial)
wait_cdf = _compile(_wait_cdf)
wait_quantile = _compile(_wait_quantile)
