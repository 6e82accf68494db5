"""The M/D/c queue: exact waiting-time distribution (Crommelin–Franx) and its exponential tail.

Without batching the lab's fleet is an M/D/c queue: Poisson arrivals at rate ``lambda``, one FCFS
queue, ``c`` servers, a deterministic service time ``D``. Time is measured here in units of ``D``
(so the offered load is ``a = lambda D = rho c``); callers scale by ``D``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sdlab_model.queues import kernels

_TAIL_MASS = 1e-15
"""Probability left beyond the truncated state space of the exact solution (below double noise)."""

MAX_STATES = 2_500
"""Largest truncated state space the exact solution uses (utilization up to about 0.994)."""

GTH_MAX_SERVERS = 256
"""Up to here the chain is solved by GTH state reduction (``_mdc_kernel``, work ``~ n^2 c / 2``),
above by one dense LU solve (``n^3 / 3``, but in tuned BLAS). Measured on this project's 2-core
machine at 1,738 and 2,500 states: GTH 0.26 s and 0.6 s at c = 256 against 0.5 s and 1.6 s
dense; at c = 512 GTH was no faster (0.6 s and 1.3 s against 0.5 s and 1.9 s)."""

_SMALL_LOG_FACTORIALS = np.array([math.lgamma(n + 1.0) for n in range(32)])


def log_factorial(n: np.ndarray) -> np.ndarray:
    """``ln n!`` for whole ``n >= 0``: a table below 32, Stirling's series (error < 1e-16) above."""
    n = np.asarray(n, dtype=float)
    small = n < 32
    m = np.where(small, 40.0, n) + 1.0  # lgamma(m), with m >= 33 where the series is used
    inv = 1.0 / m
    inv2 = inv * inv
    series = (
        (m - 0.5) * np.log(m)
        - m
        + 0.5 * math.log(2.0 * math.pi)
        + inv * (1 / 12 - inv2 * (1 / 360 - inv2 * (1 / 1260 - inv2 / 1680)))
    )
    return np.where(small, _SMALL_LOG_FACTORIALS[np.minimum(n, 31).astype(np.int64)], series)


_log_factorials = log_factorial(np.arange(64))
"""``log_factorial(0 .. N)``, grown on demand by ``log_factorial_run``: the Poisson terms of the
batching model and of ``MdcWait`` are summed over ranges of the same few hundred ``n``."""
_log_factorials.setflags(write=False)


def log_factorial_run(lo: int, hi: int) -> np.ndarray:
    """``log_factorial(n)`` for ``n = lo .. hi``, from the table (the same values: elementwise)."""
    global _log_factorials
    table = _log_factorials
    if hi >= table.size:
        # Replaced, never written in place, so a thread still reading the old table is safe.
        table = log_factorial(np.arange(max(hi + 1, 2 * table.size)))
        table.setflags(write=False)
        _log_factorials = table
    return table[lo : hi + 1]


def poisson_pmf(mean: float, lo: int, hi: int) -> np.ndarray:
    """``P(Poisson(mean) = n)`` for ``n = lo .. hi`` (inclusive)."""
    n = np.arange(lo, hi + 1, dtype=float)
    if mean <= 0.0:
        return (n == 0).astype(float)
    if lo < 0:
        return np.exp(n * math.log(mean) - mean - log_factorial(n))
    return np.exp(n * math.log(mean) - mean - log_factorial_run(lo, hi))


def decay_rate(servers: np.ndarray, offered_load: np.ndarray) -> np.ndarray:
    """Tail decay rate ``eta`` (per unit of D) of the M/D/c wait: ``eta = c ln(1 + eta / a)``.

    ``P(W > t) ~ C e^(-eta t)``. The positive root exists for ``a < c``. Newton on the concave
    ``g(x) = c ln(1 + x/a) - x`` starts at ``max(2a(c - a)/c, c - a)``: the first is the
    heavy-traffic root of g's quadratic expansion, which lies left of the root (``ln(1 + y) >=
    y - y^2/2``); the second is g's maximum. From there each Newton step lands right of the root
    and then decreases monotonically to it. Every cell steps until all have settled (at most 40
    steps). Vectorized, by a compiled loop over cells (``_tail_kernel.decay_rate_cells``); ``nan``
    where ``a >= c``.

    Sources: the Cramér–Lundberg exponent of the E_c/D/1 Lindley walk (M/D/c with cyclic
    assignment); Tijms, *A First Course in Stochastic Models* (2003) §9.4.
    """
    decay_rate_cells = kernels.module(kernels.TAIL).decay_rate_cells
    c, a = np.broadcast_arrays(np.asarray(servers, dtype=float), np.asarray(offered_load, float))
    # Fresh copies: a read-only view would compile the kernel once more.
    eta = decay_rate_cells(np.array(c, order="C").ravel(), np.array(a, order="C").ravel())
    return eta.reshape(c.shape)


def dense_stationary(arrivals: np.ndarray, servers: int, states: int) -> np.ndarray:
    """Stationary law of ``Q' = (Q + A - c)^+`` on ``0 .. states - 1`` by one dense solve.

    ``arrivals[m] = P(A = m)``, ``m = 0 .. servers + states``. The balance equations of states
    ``1 .. states - 1`` (mass that would leave the truncated space is dropped) plus
    ``sum q = 1``, solved by LU with partial pivoting; tiny negative rounding is clipped to 0.
    """
    c = servers
    rows = np.arange(1, states)[:, None]
    cols = np.arange(states)[None, :]
    offset = rows + c - cols
    matrix = np.where(offset >= 0, arrivals[np.clip(offset, 0, None)], 0.0)
    matrix[np.arange(states - 1), np.arange(1, states)] -= 1.0
    system = np.vstack((matrix, np.ones(states)))
    rhs = np.zeros(states)
    rhs[-1] = 1.0
    queue_pmf = np.maximum(np.linalg.solve(system, rhs), 0.0)
    return queue_pmf / queue_pmf.sum()


@dataclass(frozen=True, eq=False)
class MdcWait:
    """Exact waiting-time law of M/D/c, in units of the service time ``D``.

    ``queue_pmf[n] = P((N - c)^+ = n)`` for the number in system ``N`` at an arbitrary time.

    Method (Crommelin 1932; Franx 2001): observed ``D`` apart, the number in system is a Markov
    chain ``N' = (N - c)^+ + A`` with ``A ~ Poisson(a)`` (everyone in service at the start has
    left by the end, and with FCFS the waiting ones have started). So ``Q = (N - c)^+`` satisfies
    ``Q' = (Q + A - c)^+``, whose stationary law is that of ``Q`` at an arbitrary time (PASTA:
    also as an arrival sees it). For ``x = kD + y`` (``0 <= y < D``),
    ``P(W <= x) = P(Q + Poisson(a (1 - y/D)) <= (k+1) c - 1)``: the arrival starts within ``x``
    iff at most ``(k+1) c - 1`` are ahead of it once the arrivals of the next ``D - y`` are added.

    The chain is solved by GTH state reduction (Grassmann, Taksar & Heyman 1985;
    ``sdlab_model.queues._mdc_kernel``), or for more than ``GTH_MAX_SERVERS`` servers by a dense
    LU solve of its balance equations.

    Approximations: none beyond truncating the state space where the remaining probability is
    below 1e-15 (``MAX_STATES`` bounds it; ``is_exact`` is False where that bound cut deeper).

    Sources: C. D. Crommelin, "Delay probability formulae when the holding times are constant",
    P.O. Elect. Engrs. J. 25 (1932); G. J. Franx, "A simple solution for the M/D/c waiting time
    distribution", Oper. Res. Lett. 29 (2001) 221–229; W. K. Grassmann, M. I. Taksar,
    D. P. Heyman, "Regenerative analysis and steady state distributions for Markov chains",
    Oper. Res. 33 (1985) 1107–1116.
    """

    servers: int
    offered_load: float
    queue_pmf: np.ndarray
    decay_rate: float
    is_exact: bool

    @classmethod
    def solve(cls, servers: int, offered_load: float) -> MdcWait:
        """Solve the truncated chain ``Q' = (Q + A - c)^+``: GTH state reduction up to
        ``GTH_MAX_SERVERS`` servers, one dense linear solve above (the same chain; the two agree
        to 1e-12 in every entry where both were compared)."""
        c, a = int(servers), float(offered_load)
        if not 0.0 <= a < c:
            raise ValueError(f"offered_load={a!r} must be in [0, servers={c}) for a stable queue")
        if a == 0.0:
            return cls(c, a, np.array([1.0]), math.inf, True)
        eta = float(decay_rate(np.array(c), np.array(a)))
        # Q's law decays like r^n with r = a / (a + eta) (the pole of its generating function).
        ratio = a / (a + eta)
        needed = math.ceil(math.log(_TAIL_MASS) / math.log(ratio)) + 16 if ratio > 0 else 16
        states = min(max(needed, 16), MAX_STATES)
        pmf = poisson_pmf(a, 0, c + states)
        if c <= GTH_MAX_SERVERS:
            queue_pmf = kernels.module(kernels.MDC).stationary_gth(pmf, c, states)
        else:
            queue_pmf = dense_stationary(pmf, c, states)
        return cls(c, a, queue_pmf, eta, needed <= MAX_STATES)

    def wait_cdf(self, x: float) -> float:
        """``P(W <= x)`` for the wait ``W`` in units of ``D``: for ``x = kD + y``, the sum over
        the queue's states ``n`` of ``q_n P(Poisson(a (1 - y/D)) <= (k + 1) c - 1 - n)``
        (compiled: ``_mdc_kernel.wait_cdf``)."""
        return kernels.module(kernels.MDC).wait_cdf(
            self.queue_pmf, self.servers, self.offered_load, float(x), _SMALL_LOG_FACTORIALS
        )

    def wait_quantile(self, probability: float) -> float:
        """The ``probability`` quantile of ``W`` (units of ``D``), to 1e-10 relative.

        Bracketed by doubling, then the Illinois variant of regula falsi (superlinear on the
        smooth pieces of the CDF, never leaving the bracket); compiled
        (``_mdc_kernel.wait_quantile``).
        """
        return kernels.module(kernels.MDC).wait_quantile(
            self.queue_pmf,
            self.servers,
            self.offered_load,
            float(probability),
            _SMALL_LOG_FACTORIALS,
        )

    @property
    def wait_probability(self) -> float:
        """``P(W > 0) = sum_n q_n P(Poisson(a) >= c - n)``, summed directly so tiny values keep
        their relative precision (``1 - P(W <= 0)`` would cancel to zero below 1e-16)."""
        c, a = self.servers, self.offered_load
        if a == 0.0:
            return 0.0
        states = self.queue_pmf.size
        top = max(c, int(a + 40.0 * math.sqrt(a) + 40.0))
        pmf = poisson_pmf(a, 0, top)
        survival = np.cumsum(pmf[::-1])[::-1]  # survival[m] = P(A >= m), m = 0 .. top
        need = c - np.arange(states)  # P(A >= c - n)
        tail = np.where(need <= 0, 1.0, survival[np.clip(need, 0, top)])
        return float(min(1.0, np.dot(self.queue_pmf, tail)))

    @property
    def mean_wait(self) -> float:
        """``E[W]`` in units of ``D``, by Little's law on the waiting line: ``E[Q] / lambda``."""
        if self.offered_load == 0.0:
            return 0.0
        return float(np.dot(np.arange(self.queue_pmf.size), self.queue_pmf)) / self.offered_load
