"""Erlang B and C, and the FCFS M/M/c waiting and response-time quantiles they give.

These are the exponential-service results the deterministic-service model is checked against:
the lab's servers run near-constant inference times (M/D/c), and M/M/c overstates their p99.
"""

from __future__ import annotations

import math

import numpy as np


def erlang_b(servers: int, offered_load: float) -> float:
    """Blocking probability of M/M/c/c (Erlang B), by the recursion ``B_k = aB/(k + aB)``.

    The recursion never forms ``a**c`` or ``c!``, so it is stable for thousands of servers.

    Sources: A. K. Erlang (1917); the recursion as in Kleinrock, *Queueing Systems* vol. 1
    (1975), and any teletraffic handbook (ITU-D, *Teletraffic Engineering Handbook*, ch. 4).
    """
    if servers < 1 or int(servers) != servers:
        raise ValueError(f"servers={servers!r} must be a whole number of at least 1")
    if not offered_load >= 0:
        raise ValueError(f"offered_load={offered_load!r} must be a number of at least 0")
    blocking = 1.0
    for k in range(1, int(servers) + 1):
        blocking = offered_load * blocking / (k + offered_load * blocking)
    return blocking


def erlang_c(servers: int, offered_load: float) -> float:
    """Probability that an arrival waits in M/M/c (Erlang C); 1 at or beyond capacity.

    ``C = B / (1 - rho (1 - B))`` with ``rho = a / c`` and ``B`` the Erlang B value.

    Sources: Kleinrock (1975) eq. 3.40; Gross & Harris, *Fundamentals of Queueing Theory*, §2.3.
    """
    blocking = erlang_b(servers, offered_load)
    rho = offered_load / servers
    if rho >= 1.0:
        return 1.0
    return blocking / (1.0 - rho * (1.0 - blocking))


_SCALAR_CELLS = 32
"""Up to this many cells, Erlang B runs cell by cell on Python floats: a numpy step costs
microseconds whatever the cells, so one cell's 256-slot recursion took milliseconds."""


def erlang_b_array(servers: np.ndarray, offered_load: np.ndarray) -> np.ndarray:
    """Erlang B over broadcast arrays: one recursion pass up to the largest server count (cell
    by cell for a few cells: the same float operations, so the same values)."""
    c, a = np.broadcast_arrays(np.asarray(servers, dtype=np.int64), np.asarray(offered_load, float))
    if a.size <= _SCALAR_CELLS and c.size and c.min() >= 1 and (a >= 0).all():
        values = [erlang_b(int(ck), float(ak)) for ck, ak in zip(c.flat, a.flat, strict=True)]
        return np.array(values, dtype=float).reshape(a.shape)
    blocking = np.ones(a.shape)
    out = np.ones(a.shape)
    for k in range(1, int(c.max(initial=1)) + 1):
        blocking = a * blocking / (k + a * blocking)
        out = np.where(c == k, blocking, out)
    return out


def erlang_c_array(servers: np.ndarray, offered_load: np.ndarray) -> np.ndarray:
    """Erlang C over broadcast arrays; 1 where the offered load reaches the server count."""
    c, a = np.broadcast_arrays(np.asarray(servers, dtype=np.int64), np.asarray(offered_load, float))
    blocking = erlang_b_array(c, a)
    rho = a / c
    with np.errstate(divide="ignore", invalid="ignore"):
        waiting = blocking / (1.0 - rho * (1.0 - blocking))
    return np.where(rho < 1.0, waiting, 1.0)


def mmc_wait_quantile_ms(servers: int, rate_rps: float, mean_service_ms: float, q: float) -> float:
    """The ``q`` quantile of the FCFS queueing delay in M/M/c (ms); ``inf`` if unstable.

    ``P(W > t) = C(c, a) exp(-(c mu - lambda) t)``, so ``t_q = ln(C / (1 - q)) / (c mu - lambda)``
    when ``C > 1 - q`` and 0 otherwise.

    Sources: Kleinrock (1975) §3.5; Gross & Harris §2.3 (waiting-time distribution of M/M/c).
    """
    lam, mu = rate_rps / 1000.0, 1.0 / mean_service_ms
    decay = servers * mu - lam
    if decay <= 0.0:
        return math.inf
    waiting = erlang_c(servers, lam / mu)
    return max(0.0, math.log(waiting / (1.0 - q)) / decay) if waiting > 1.0 - q else 0.0


def mmc_response_survival(
    t_ms: float, servers: int, rate_rps: float, mean_service_ms: float
) -> float:
    """``P(W + S > t)`` in FCFS M/M/c: the wait's atom and exponential tail convolved with S.

    With ``p = C(c, a)``, ``g = c mu - lambda``: ``(1 - p) e^(-mu t) + p P(Exp(g) + Exp(mu) > t)``
    and ``P(Exp(g) + Exp(mu) > t) = (g e^(-mu t) - mu e^(-g t)) / (g - mu)`` (or
    ``(1 + mu t) e^(-mu t)`` when ``g = mu``).

    Sources: Gross & Harris §2.3 (sojourn time of M/M/c); the hypoexponential survival function.
    """
    lam, mu = rate_rps / 1000.0, 1.0 / mean_service_ms
    decay = servers * mu - lam
    if decay <= 0.0:
        return 1.0
    waiting = erlang_c(servers, lam / mu)
    if abs(decay - mu) < 1e-12 * mu:
        both = (1.0 + mu * t_ms) * math.exp(-mu * t_ms)
    else:
        both = (decay * math.exp(-mu * t_ms) - mu * math.exp(-decay * t_ms)) / (decay - mu)
    return (1.0 - waiting) * math.exp(-mu * t_ms) + waiting * both


def mmc_response_quantile_ms(
    servers: int, rate_rps: float, mean_service_ms: float, q: float
) -> float:
    """The ``q`` quantile of the FCFS M/M/c response time W + S (ms); ``inf`` if unstable.

    The survival function (``mmc_response_survival``) is continuous and strictly decreasing, so
    bisection on ``[0, hi]`` converges to the exact quantile; 200 halvings reach double precision.
    """
    lam, mu = rate_rps / 1000.0, 1.0 / mean_service_ms
    if servers * mu - lam <= 0.0:
        return math.inf
    target = 1.0 - q
    hi = mean_service_ms
    while mmc_response_survival(hi, servers, rate_rps, mean_service_ms) > target:
        hi *= 2.0
    lo = 0.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mmc_response_survival(mid, servers, rate_rps, mean_service_ms) > target:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-13 * hi:
            break
    return 0.5 * (lo + hi)


def mmc_p99_ms(servers: int, rate_rps: float, mean_service_ms: float) -> float:
    """p99 of the FCFS M/M/c response time (ms): the exponential-service twin of the lab's model."""
    return mmc_response_quantile_ms(servers, rate_rps, mean_service_ms, 0.99)
