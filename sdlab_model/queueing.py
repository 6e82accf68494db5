"""Queueing model of the serving fleet. PLACEHOLDER first cut (M/M/c via Erlang C) — to be replaced."""

from __future__ import annotations

import math

import numpy as np

from sdlab_model.latency import LatencyResult
from sdlab_model.workload import Workload


def erlang_c(servers: np.ndarray, offered_load: np.ndarray) -> np.ndarray:
    """P(wait) in M/M/c via the Erlang-B recursion; 1 where offered_load >= servers."""
    c = np.asarray(servers, dtype=np.int64)
    a = np.asarray(offered_load, dtype=float)
    c, a = np.broadcast_arrays(c, a)
    b = np.ones(a.shape)
    out = np.ones(a.shape)
    for k in range(1, int(c.max()) + 1):
        b = a * b / (k + a * b)
        out = np.where(c == k, b, out)
    rho = a / c
    with np.errstate(divide="ignore", invalid="ignore"):
        pw = out / (1.0 - rho * (1.0 - out))
    return np.where(rho < 1.0, pw, 1.0)


def latency(workload: Workload) -> LatencyResult:
    c = workload.servers
    s = workload.single_request_ms
    lam = workload.rate_rps / 1000.0
    capacity = workload.capacity_rps
    rho = workload.rate_rps / capacity
    if rho >= 1:
        p = math.inf
        q = math.inf
    else:
        pw = float(erlang_c(np.array(c), np.array(lam * s)))
        eta = c / s - lam
        q = max(0.0, math.log(pw / 0.01) / eta) if pw > 0.01 else 0.0
        p = s + q
    return LatencyResult(p, p, p, s, 0.0, q, capacity, rho, rho < 1, 1.0, "approximate", "placeholder")


def p99_grid(workload: Workload, rates_rps: np.ndarray, replicas: np.ndarray) -> np.ndarray:
    return np.array([[latency(workload.with_changes(rate_rps=float(r), replicas=int(n))).p99_ms
                      for r in rates_rps] for n in replicas])
