"""The exact M/D/c solve's compiled loop: state reduction (GTH) of the chain ``Q' = (Q + A - c)^+``.

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
"""

from __future__ import annotations

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
