"""A Monte Carlo of fan-out and hedging, to check the order statistics and the hedged tail.

Each request draws every leaf's latency independently (``LeafLatency.sample``); with hedging, a
leaf still out at the delay gets a second copy with its own draw, the first answer wins and the
other is cancelled at that moment. The request is done when ``done_share`` of its leaves are.
Numpy, vectorized over a chunk of requests at a time (memory bounded by ``chunk_leaves``), and
seeded: the same arguments give the same numbers.

A quantile's 95% interval is distribution-free: the order statistics of ranks
``n q -/+ 1.96 sqrt(n q (1 - q))`` (the binomial count of requests below the true quantile).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sdlab_model.tail.fanout import leaves_needed
from sdlab_model.tail.leaf import LeafLatency
from sdlab_model.tail.tied import TiedLeaf

_Z95 = 1.959963984540054
_CHUNK_LEAVES = 4_000_000


@dataclass(frozen=True)
class SimQuantile:
    """A simulated quantile (ms) and its 95% interval."""

    estimate: float
    low: float
    high: float

    def contains(self, value: float) -> bool:
        """Whether ``value`` is inside the interval."""
        return self.low <= value <= self.high


@dataclass(frozen=True)
class TailSim:
    """What ``simulate_tail`` measured: request quantiles, the share hedged and the extra work."""

    requests: int
    fanout: int
    quantiles: dict[float, SimQuantile]
    hedged_share: float
    extra_work: float


def quantile_interval(latencies: np.ndarray, q: float) -> SimQuantile:
    """The ``q``-th sample quantile with its distribution-free 95% interval (sorted input)."""
    n = latencies.size
    spread = _Z95 * math.sqrt(n * q * (1.0 - q))
    low = max(0, math.floor(n * q - spread) - 1)
    high = min(n - 1, math.ceil(n * q + spread))
    estimate = latencies[min(n - 1, max(0, math.ceil(n * q) - 1))]
    return SimQuantile(float(estimate), float(latencies[low]), float(latencies[high]))


def _chunk(
    leaf: LeafLatency,
    rng: np.random.Generator,
    shape: tuple[int, int],
    done: int,
    delay_ms: float | None,
) -> tuple[np.ndarray, int, float, float]:
    """One chunk: each request's latency, copies hedged, work with hedging, work without."""
    first = leaf.sample(rng, shape)
    answered = first
    work = first
    hedged = 0
    if delay_ms is not None:
        late = first > delay_ms
        hedged = int(late.sum())
        second = delay_ms + leaf.sample(rng, hedged)
        answered = first.copy()
        answered[late] = np.minimum(first[late], second)
        # the first copy runs until the answer, the second from the delay until then
        work = np.where(late, 2.0 * answered - delay_ms, first)
    latency = np.partition(answered, done - 1, axis=1)[:, done - 1]
    return latency, hedged, float(work.sum()), float(first.sum())


def simulate_tail(
    leaf: LeafLatency,
    fanout: int,
    requests: int,
    seed: int,
    delay_ms: float | None = None,
    done_share: float = 1.0,
    quantiles: tuple[float, ...] = (0.5, 0.95, 0.99, 0.999),
) -> TailSim:
    """Simulate ``requests`` requests to ``fanout`` leaves, hedged after ``delay_ms`` if given."""
    if requests < 1 or fanout < 1:
        raise ValueError(f"need at least one request and one leaf, got {requests}, {fanout}")
    done = leaves_needed(fanout, done_share)
    rng = np.random.default_rng(seed)
    per_chunk = max(1, _CHUNK_LEAVES // fanout)
    latencies, hedged, work, plain = [], 0, 0.0, 0.0
    for start in range(0, requests, per_chunk):
        rows = min(per_chunk, requests - start)
        latency, copies, chunk_work, chunk_plain = _chunk(leaf, rng, (rows, fanout), done, delay_ms)
        latencies.append(latency)
        hedged += copies
        work += chunk_work
        plain += chunk_plain
    ordered = np.sort(np.concatenate(latencies))
    return TailSim(
        requests=requests,
        fanout=fanout,
        quantiles={q: quantile_interval(ordered, q) for q in quantiles},
        hedged_share=hedged / (requests * fanout),
        extra_work=work / plain - 1.0,
    )


@dataclass(frozen=True)
class TiedSim:
    """What ``simulate_tied`` measured: the request's quantiles and the share of leaf requests
    whose two copies both ran."""

    requests: int
    fanout: int
    quantiles: dict[float, SimQuantile]
    duplicated_share: float


def simulate_tied(
    tied: TiedLeaf,
    fanout: int,
    requests: int,
    seed: int,
    quantiles: tuple[float, ...] = (0.5, 0.95, 0.99, 0.999),
) -> TiedSim:
    """Simulate ``requests`` requests to ``fanout`` tied leaves: each leaf's two waits drawn
    independently (``QueuedLeaf.sample_wait``), the second copy ``delay_ms`` late, the first to
    start served once; both run when their starts are within ``message_ms``. The same
    assumptions as ``TiedLeaf``: it checks the arithmetic, not the independence of the waits."""
    if requests < 1 or fanout < 1:
        raise ValueError(f"need at least one request and one leaf, got {requests}, {fanout}")
    leaf = tied.leaf
    rng = np.random.default_rng(seed)
    per_chunk = max(1, _CHUNK_LEAVES // fanout)
    latencies, duplicated = [], 0
    for start in range(0, requests, per_chunk):
        shape = (min(per_chunk, requests - start), fanout)
        first = leaf.sample_wait(rng, shape)
        second = tied.delay_ms + leaf.sample_wait(rng, shape)
        duplicated += int(np.count_nonzero(np.abs(first - second) < tied.message_ms))
        answered = np.minimum(first, second) + rng.exponential(leaf.service_ms, shape)
        latencies.append(answered.max(axis=1))
    ordered = np.sort(np.concatenate(latencies))
    return TiedSim(
        requests=requests,
        fanout=fanout,
        quantiles={q: quantile_interval(ordered, q) for q in quantiles},
        duplicated_share=duplicated / (requests * fanout),
    )
