"""A brief overload, simulated: does the system come back when the burst is over?

Fresh requests arrive at ``base_multiple`` x capacity, then at ``burst_multiple`` x for
``burst_s`` seconds, then at the base again. The fixed point (``retries``) says where a steady
state can sit; this says which one the system is in after the burst. Retrying without a budget
on a deadline without a queue limit, the attempts stay at ``(1 + n)`` x the fresh rate and
goodput at zero long after the burst (a metastable failure); a budget or a limit sized to the
deadline lets it recover within a few seconds.

Source: Bronson, Aghayev, Charapko, Zhu, "Metastable failures in distributed systems",
HotOS 2021 (the retry storm sustained after its trigger is gone).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sdlab_model.overload.outcome import Outcome
from sdlab_model.overload.policy import OverloadPolicy, Station
from sdlab_model.overload.simulate import run_attempts
from sdlab_model.workload import Workload


@dataclass(frozen=True)
class BurstRun:
    """Per window of ``window_s``: its start (s), attempts and goodput, both x capacity."""

    window_start_s: tuple[float, ...]
    attempts: tuple[float, ...]
    goodput: tuple[float, ...]
    burst_from_s: float
    burst_to_s: float

    def after_burst(self, settle_s: float) -> tuple[float, float]:
        """Mean attempts and goodput (x capacity) over the windows from ``settle_s`` after the
        burst's end."""
        start = np.array(self.window_start_s)
        after = start >= self.burst_to_s + settle_s
        return float(np.mean(np.array(self.attempts)[after])), float(
            np.mean(np.array(self.goodput)[after])
        )


def _piecewise_poisson(rng, rate_per_ms, spans_ms) -> np.ndarray:
    """Poisson arrival times over consecutive spans, each at its own rate."""
    pieces, start = [], 0.0
    for rate, span in zip(rate_per_ms, spans_ms, strict=True):
        count = rng.poisson(rate * span)
        pieces.append(np.sort(rng.uniform(start, start + span, count)))
        start += span
    return np.concatenate(pieces)


def simulate_burst(
    workload: Workload,
    policy: OverloadPolicy,
    base_multiple: float = 0.75,
    burst_multiple: float = 2.0,
    burst_s: float = 2.0,
    before_s: float = 10.0,
    after_s: float = 20.0,
    window_s: float = 2.0,
    seed: int = 0,
) -> BurstRun:
    """One queue of ``workload`` under ``policy`` through a burst, measured in windows."""
    if not 0 < window_s <= before_s + burst_s + after_s:
        raise ValueError(f"window_s={window_s!r} must be above 0 and within the run")
    station = Station.of(workload)
    per_queue_ms = station.capacity_rps / station.queues / 1000.0
    arrivals_stream, backoff_stream = np.random.SeedSequence(seed).spawn(2)
    fresh = _piecewise_poisson(
        np.random.default_rng(arrivals_stream),
        (base_multiple * per_queue_ms, burst_multiple * per_queue_ms, base_multiple * per_queue_ms),
        (before_s * 1000.0, burst_s * 1000.0, after_s * 1000.0),
    )
    arrival, outcome, response, _ = run_attempts(
        station, policy, fresh, np.random.default_rng(backoff_stream)
    )
    good_ms = min(workload.p99_target_ms, policy.deadline_ms or np.inf)
    good = (outcome == Outcome.SERVED) & (response <= good_ms)
    total_ms = (before_s + burst_s + after_s) * 1000.0
    edges = np.arange(0.0, total_ms + 1e-9, window_s * 1000.0)
    per_window = window_s * per_queue_ms * 1000.0
    attempts, _ = np.histogram(arrival, edges)
    served, _ = np.histogram(arrival[good], edges)
    return BurstRun(
        window_start_s=tuple(edges[:-1] / 1000.0),
        attempts=tuple(attempts / per_window),
        goodput=tuple(served / per_window),
        burst_from_s=before_s,
        burst_to_s=before_s + burst_s,
    )
