"""A brief overload, simulated: does the system come back when the burst is over?

Fresh requests arrive at ``base_multiple`` x capacity, then at ``burst_multiple`` x for
``burst_s`` seconds, then at the base again. The fixed point (``retries``) says where a steady
state can sit; this says which one the system is in after the burst. Retrying without a budget
on a deadline without a queue limit, the attempts stay at ``(1 + n)`` x the fresh rate and
goodput at zero long after the burst (a metastable failure); a budget or a limit sized to the
deadline lets it recover within a few seconds.

``Burst`` holds a burst's shape (validated, ``BURST_RANGES``), ``fit_burst`` shortens its spans
in proportion where a run would simulate more than ``MAX_BURST_ATTEMPTS`` attempts (the Overload
page's cap on one press), and ``BurstRun.recovery`` says whether and when a run came back to its
level before the burst.

Source: Bronson, Aghayev, Charapko, Zhu, "Metastable failures in distributed systems",
HotOS 2021 (the retry storm sustained after its trigger is gone).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from sdlab_model.overload.outcome import Outcome
from sdlab_model.overload.policy import OverloadPolicy, Station
from sdlab_model.overload.simulate import run_attempts
from sdlab_model.workload import Workload

BURST_RANGES: dict[str, tuple[float, float]] = {
    "base_multiple": (0.05, 0.95),
    "burst_multiple": (1.0, 5.0),
    "burst_s": (0.1, 30.0),
    "before_s": (1.0, 60.0),
    "after_s": (2.0, 120.0),
    "window_s": (0.05, 10.0),
}
"""Allowed values of each ``Burst`` field: fresh load x capacity before and after the burst
(below capacity, so there is a level to come back to) and during it; spans in seconds."""
MAX_BURST_ATTEMPTS = 1_000_000
"""Attempt slots one burst run may fill (its fresh requests x (1 + retries)): about 35 MB of
arrays and a fraction of a second of the kernel. Runs that would take more are shortened."""
RECOVERY_TOLERANCE = 0.1
"""A window is back when its attempts are within this share above, and its goodput this share
below, the level before the burst (or within four Poisson standard deviations, if wider)."""


@dataclass(frozen=True)
class Burst:
    """Fresh load at ``base_multiple`` x capacity for ``before_s``, ``burst_multiple`` x for
    ``burst_s``, then the base again for ``after_s``; measured in windows of ``window_s``."""

    base_multiple: float = 0.75
    burst_multiple: float = 2.0
    burst_s: float = 2.0
    before_s: float = 6.0
    after_s: float = 20.0
    window_s: float = 1.0

    def __post_init__(self) -> None:
        for name, (low, high) in BURST_RANGES.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"{name} must be a number, got {value!r}")
            if not low <= value <= high:
                raise ValueError(f"{name} = {value:g} is outside {low:g} to {high:g}")
        if 2.0 * self.window_s > self.before_s:
            raise ValueError(
                f"window_s = {self.window_s:g} must be at most half of before_s = "
                f"{self.before_s:g}, so the level before the burst is measured"
            )

    @property
    def total_s(self) -> float:
        return self.before_s + self.burst_s + self.after_s

    def fresh_per_capacity_s(self) -> float:
        """Fresh requests over the run, in seconds of one queue's capacity."""
        return self.base_multiple * (self.before_s + self.after_s) + (
            self.burst_multiple * self.burst_s
        )

    def run_arguments(self, factor: float = 1.0) -> dict[str, float]:
        """``simulate_burst``'s keyword arguments, every span ``factor`` times as long (a
        shortened run is not a ``Burst``: it may be shorter than a person may ask for)."""
        spans = {"burst_s", "before_s", "after_s", "window_s"}
        return {
            name: value * factor if name in spans else value for name, value in asdict(self).items()
        }


def attempt_slots(workload: Workload, policy: OverloadPolicy, burst: Burst) -> float:
    """The attempts a run may make at most, expected: its fresh requests x (1 + retries)."""
    station = Station.of(workload)
    per_queue_s = station.capacity_rps / station.queues
    return burst.fresh_per_capacity_s() * per_queue_s * (1 + policy.max_retries)


def fit_burst(
    workload: Workload,
    policies: tuple[OverloadPolicy, ...],
    burst: Burst,
    max_attempts: int = MAX_BURST_ATTEMPTS,
) -> float:
    """The factor (at most 1) by which ``burst``'s spans shrink so that no policy's run fills
    more than ``max_attempts`` attempt slots."""
    largest = max(attempt_slots(workload, policy, burst) for policy in policies)
    return 1.0 if largest <= max_attempts else max_attempts / largest


@dataclass(frozen=True)
class Recovery:
    """Whether a run came back after the burst: the level before it (attempts and goodput, x
    capacity), how long after the burst's end it was back (None: not by the end of the run),
    and the level over the last half of the time after the burst."""

    before_attempts: float
    before_goodput: float
    recovered_after_s: float | None
    end_attempts: float
    end_goodput: float
    base_multiple: float

    @property
    def attempts_per_request_before(self) -> float:
        """Attempts per fresh request before the burst (over 1: retrying already)."""
        return self.before_attempts / self.base_multiple


@dataclass(frozen=True)
class BurstRun:
    """Per window of ``window_s``: its start (s), attempts and goodput, both x capacity."""

    window_start_s: tuple[float, ...]
    attempts: tuple[float, ...]
    goodput: tuple[float, ...]
    burst_from_s: float
    burst_to_s: float
    window_capacity: float = 0.0
    """Attempts one queue serves in a window at capacity (what 1.0 counts)."""
    base_multiple: float = math.nan
    """Fresh load before and after the burst, x capacity."""

    def recovery(self) -> Recovery:
        """The level before the burst (its windows from half-way to the burst), the level over
        the last half of the time after it, and, where that is back within
        ``RECOVERY_TOLERANCE``, the time from the burst's end to the end of the first window
        back (within the tolerance or four Poisson standard deviations of a window)."""
        start = np.array(self.window_start_s)
        attempts, goodput = np.array(self.attempts), np.array(self.goodput)
        window = float(start[1] - start[0]) if start.size > 1 else self.burst_from_s
        before = (start >= self.burst_from_s / 2) & (start + window <= self.burst_from_s + 1e-9)
        level_attempts, level_goodput = (
            float(attempts[before].mean()),
            float(goodput[before].mean()),
        )

        def tolerance(level: float) -> float:
            counted = level * self.window_capacity
            return max(RECOVERY_TOLERANCE, 4.0 / math.sqrt(counted) if counted > 0 else 0.0)

        back = (attempts <= level_attempts * (1.0 + tolerance(level_attempts))) & (
            goodput >= level_goodput * (1.0 - tolerance(level_goodput))
        )
        after = np.flatnonzero(start >= self.burst_to_s - 1e-9)
        end = start >= self.burst_to_s + 0.5 * (start[-1] + window - self.burst_to_s)
        end_attempts, end_goodput = float(attempts[end].mean()), float(goodput[end].mean())
        settled = end_attempts <= level_attempts * (1.0 + RECOVERY_TOLERANCE) and (
            end_goodput >= level_goodput * (1.0 - RECOVERY_TOLERANCE)
        )
        returned = after[back[after]]
        recovered = (
            float(start[returned[0]] + window - self.burst_to_s)
            if settled and returned.size
            else None
        )
        return Recovery(
            level_attempts,
            level_goodput,
            recovered,
            end_attempts,
            end_goodput,
            self.base_multiple,
        )

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
        window_capacity=per_window,
        base_multiple=base_multiple,
    )
