"""Traffic over time: the offered request rate at each step of a timeline.

Five shapes, each a function of time from a base rate:

- ``constant``: the base rate throughout.
- ``step``: the base rate, then ``factor`` times it from ``at_s`` on.
- ``spike``: ``factor`` times the base rate from ``at_s`` for ``spike_duration_s``, the base rate
  either side.
- ``diurnal``: a day as one cosine, lowest at the start of the period and highest half a period
  later, with ``peak_to_trough`` the ratio of the highest rate to the lowest; its mean is the
  base rate (so a diurnal day carries as many requests as a constant one).
- ``uploaded``: a CSV of (time in seconds, requests per second) rows; the rate holds each row's
  value until the next row's time (a step function, as a load generator's schedule does), the
  last row's to the end.

A rate is piecewise constant over one step of the timeline: the value at the step's start.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

TrafficKind = Literal["constant", "step", "spike", "diurnal", "uploaded"]
TRAFFIC_KINDS: tuple[str, ...] = ("constant", "step", "spike", "diurnal", "uploaded")
TRAFFIC_LABELS: dict[str, str] = {
    "constant": "Constant",
    "step": "Step (×k at t)",
    "spike": "Spike (×k for d s)",
    "diurnal": "Diurnal (a day)",
    "uploaded": "Uploaded CSV",
}
MAX_FACTOR = 100.0
"""Largest step or spike multiplier: beyond a hundredfold the question is capacity planning."""
MAX_PEAK_TO_TROUGH = 100.0
MAX_UPLOAD_BYTES = 1_000_000
MAX_UPLOAD_ROWS = 100_000
MAX_RATE_RPS = 500_000.0
"""The lab's largest request rate (the Request rate slider's maximum)."""
SECONDS_PER_DAY = 86_400.0


@dataclass(frozen=True)
class UploadedTrace:
    """A measured rate schedule: times (s, increasing from 0) and rates (req/s) at those times."""

    times_s: tuple[float, ...]
    rates_rps: tuple[float, ...]
    source: str = "uploaded CSV"

    def __post_init__(self) -> None:
        if len(self.times_s) != len(self.rates_rps) or not self.times_s:
            raise ValueError("times_s and rates_rps must be non-empty and of equal length")
        if self.times_s[0] != 0.0:
            raise ValueError(f"times_s must start at 0, got {self.times_s[0]!r}")
        if any(b <= a for a, b in zip(self.times_s, self.times_s[1:], strict=False)):
            raise ValueError("times_s must increase strictly")
        if any(not (0.0 <= r <= MAX_RATE_RPS) for r in self.rates_rps):
            raise ValueError(f"every rate must be in [0, {MAX_RATE_RPS:g}] req/s")

    @property
    def duration_s(self) -> float:
        """The last row's time: the trace says nothing after it (its rate holds)."""
        return self.times_s[-1]


@dataclass(frozen=True)
class TrafficShape:
    """One traffic shape over time. Invalid values raise ``ValueError`` naming field and range."""

    kind: str = "step"
    base_rate_rps: float = 200.0
    factor: float = 3.0
    at_s: float = 60.0
    spike_duration_s: float = 120.0
    peak_to_trough: float = 4.0
    period_s: float = SECONDS_PER_DAY
    uploaded: UploadedTrace | None = field(default=None, compare=True)

    def __post_init__(self) -> None:
        if self.kind not in TRAFFIC_KINDS:
            raise ValueError(f"kind={self.kind!r} is not one of {', '.join(TRAFFIC_KINDS)}")
        _check_range("base_rate_rps", self.base_rate_rps, 0.0, MAX_RATE_RPS)
        _check_range("factor", self.factor, 0.0, MAX_FACTOR)
        _check_range("at_s", self.at_s, 0.0, 10 * SECONDS_PER_DAY)
        _check_range("spike_duration_s", self.spike_duration_s, 0.0, 10 * SECONDS_PER_DAY)
        _check_range("peak_to_trough", self.peak_to_trough, 1.0, MAX_PEAK_TO_TROUGH)
        _check_range("period_s", self.period_s, 60.0, 10 * SECONDS_PER_DAY)
        if self.kind == "uploaded" and self.uploaded is None:
            raise ValueError("kind='uploaded' needs an uploaded trace")

    def rates_rps(self, times_s: np.ndarray) -> np.ndarray:
        """The offered rate (req/s) at each of ``times_s``, vectorized."""
        t = np.asarray(times_s, dtype=float)
        base = self.base_rate_rps
        if self.kind == "constant":
            return np.full(t.shape, base)
        if self.kind == "step":
            return np.where(t >= self.at_s, base * self.factor, base)
        if self.kind == "spike":
            inside = (t >= self.at_s) & (t < self.at_s + self.spike_duration_s)
            return np.where(inside, base * self.factor, base)
        if self.kind == "diurnal":
            # Mean `base`, max/min = peak_to_trough: base * (1 - a cos), a = (r - 1) / (r + 1).
            swing = (self.peak_to_trough - 1.0) / (self.peak_to_trough + 1.0)
            return base * (1.0 - swing * np.cos(2.0 * math.pi * t / self.period_s))
        trace = self.uploaded
        assert trace is not None  # checked at construction
        times = np.asarray(trace.times_s)
        index = np.searchsorted(times, t, side="right") - 1
        return np.asarray(trace.rates_rps)[np.clip(index, 0, len(times) - 1)]

    def peak_rate_rps(self, duration_s: float) -> float:
        """The highest rate over ``[0, duration_s)`` (exact for every shape)."""
        if self.kind in ("step", "spike"):
            reached = self.at_s < duration_s and (self.kind == "step" or self.spike_duration_s > 0)
            return self.base_rate_rps * max(1.0, self.factor) if reached else self.base_rate_rps
        if self.kind == "diurnal":
            swing = (self.peak_to_trough - 1.0) / (self.peak_to_trough + 1.0)
            if duration_s >= self.period_s / 2:
                return self.base_rate_rps * (1.0 + swing)
            return float(np.max(self.rates_rps(np.array([0.0, duration_s]))))
        if self.kind == "uploaded":
            trace = self.uploaded
            assert trace is not None
            return max(
                r for t, r in zip(trace.times_s, trace.rates_rps, strict=True) if t < duration_s
            )
        return self.base_rate_rps


def parse_trace_csv(text: str, *, source: str = "uploaded CSV") -> UploadedTrace:
    """An ``UploadedTrace`` from CSV text: a header ``time_s,rate_rps`` then one row per change.

    Times in seconds from 0, increasing; rates in requests per second, 0 to 500,000. At most
    1 MB and 100,000 rows. Raises only ``ValueError``, with a reason a person can act on (the row
    number and what is wrong).
    """
    if len(text) > MAX_UPLOAD_BYTES:
        raise ValueError(f"the file is over {MAX_UPLOAD_BYTES // 1000:,} kB")
    try:
        rows = [row for row in csv.reader(io.StringIO(text)) if any(cell.strip() for cell in row)]
    except csv.Error as error:
        raise ValueError(f"not a CSV file ({error})") from None
    if not rows:
        raise ValueError("the file is empty")
    header = [cell.strip().lower() for cell in rows[0]]
    if header != ["time_s", "rate_rps"]:
        shown = ",".join(rows[0])[:60]
        raise ValueError(f"the header must be 'time_s,rate_rps'; got {shown!r}")
    body = rows[1:]
    if not body:
        raise ValueError("the file has a header but no rows")
    if len(body) > MAX_UPLOAD_ROWS:
        raise ValueError(f"the file has {len(body):,} rows; at most {MAX_UPLOAD_ROWS:,}")
    times: list[float] = []
    rates: list[float] = []
    for number, row in enumerate(body, start=2):
        if len(row) != 2:
            raise ValueError(f"row {number} has {len(row)} cells; each row needs 2 (time, rate)")
        time_s = _cell(row[0], number, "time_s")
        rate = _cell(row[1], number, "rate_rps")
        if time_s < 0:
            raise ValueError(f"row {number}: time_s {time_s:g} is negative")
        if not 0 <= rate <= MAX_RATE_RPS:
            raise ValueError(f"row {number}: rate_rps {rate:g} is outside 0–{MAX_RATE_RPS:,.0f}")
        if times and time_s <= times[-1]:
            raise ValueError(
                f"row {number}: time_s {time_s:g} does not come after {times[-1]:g} "
                "(times must increase)"
            )
        times.append(time_s)
        rates.append(rate)
    if times[0] != 0.0:
        raise ValueError(f"the first row's time_s must be 0 (the start), got {times[0]:g}")
    return UploadedTrace(tuple(times), tuple(rates), source)


def trace_to_csv(trace: UploadedTrace) -> str:
    """The inverse of ``parse_trace_csv``."""
    lines = ["time_s,rate_rps"]
    lines += [f"{t:g},{r:g}" for t, r in zip(trace.times_s, trace.rates_rps, strict=True)]
    return "\n".join(lines) + "\n"


def _cell(text: str, number: int, name: str) -> float:
    try:
        value = float(text.strip())
    except ValueError:
        raise ValueError(f"row {number}: {name} {text.strip()[:30]!r} is not a number") from None
    if not math.isfinite(value):
        raise ValueError(f"row {number}: {name} must be a finite number")
    return value


def _check_range(name: str, value: float, low: float, high: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    if not (low <= value <= high) or not math.isfinite(value):
        raise ValueError(f"{name}={value!r} is outside the allowed range [{low:g}, {high:g}]")
