"""The HPA's decisions as a band over its sync phase and metrics-server's scrape phase.

The timeline's HPA syncs every sync period and metrics-server scrapes every metric window, both
from t = 0 (at the defaults, syncs at 15 s, 30 s, ... each read the CPU rate of the 15 s just
before it): the controller's clock and metrics-server's line up. In a cluster neither lines up
with the traffic nor with each other:

- kube-controller-manager resyncs each HPA every ``--horizontal-pod-autoscaler-sync-period``
  (15 s, ``pkg/controller/podautoscaler/config/v1alpha1/defaults.go`` lines 40-42) from when it
  started: a phase ``p`` puts syncs at ``p, p + 15, ...``.
- metrics-server scrapes every ``--metric-resolution`` (``hpa_metric_window_s``, 15 s by
  default) on its own clock, phase ``q``;
  each pod's CPU metric is the rate over the window between its last two scrapes, stamped with
  the last (``Timestamp``, ``Window``). A sync reads the newest scrape at or before it: a rate
  up to one interval old.
- ``groupPods`` in ``replica_calculator.go`` (kubernetes/kubernetes at commit 00067268967e)
  ignores a pod within its CPU initialization period whose metric ``Timestamp`` is before its
  Ready transition + ``Window``: a new pod counts from the first scrape one window after it
  turned ready (``model.hpa_metric_delay_s``), not from the first sync after that.

``hpa_decisions`` runs the model at one pair of phases (phases 0 and 0 are the timeline's own
run); ``hpa_band`` runs a grid of them (five sync phases spread over the sync period, five
scrape phases over the metric window: at most 25 runs whatever the window) and gives each
scale-up's time and size, and the gaps between scale-ups, as the fewest, the most common and
the most.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, replace

from sdlab_model.timeline.model import TimelineInputs, kernel_arguments

PHASES_PER_PERIOD = 5
"""Phases spread over the sync period, and over the metric window: 25 pairs at most."""
SCALE_UPS = 3
"""Scale-ups a band describes: the first three of a step response."""
BAND_SPAN_S = 4 * 3600.0
"""A band runs the timeline's first four hours only: 25 runs of a whole day at 1 s steps took
~0.5 s of a page's rerun, and the first scale-ups of a step come within minutes of it."""


@dataclass(frozen=True)
class PhaseRun:
    """The HPA's decisions (time, new total) at one sync phase and one scrape phase."""

    sync_phase_s: float
    scrape_phase_s: float
    decisions: tuple[tuple[float, int], ...]

    def scale_ups(self, count: int = SCALE_UPS) -> tuple[tuple[float, int], ...]:
        """The first ``count`` decisions that raised the replica count."""
        ups, total = [], None
        for time_s, replicas in self.decisions:
            if total is None or replicas > total:
                ups.append((time_s, replicas))
            total = replicas
        return tuple(ups[:count])


@dataclass(frozen=True)
class Spread:
    """The fewest, the most common (the smallest of any tie) and the most of some values."""

    low: float
    common: float
    high: float
    common_count: int

    @classmethod
    def of(cls, values: list[float]) -> Spread:
        counts = Counter(values)
        top = max(counts.values())
        common = min(value for value, count in counts.items() if count == top)
        return cls(min(values), common, max(values), top)


@dataclass(frozen=True)
class HpaBand:
    """Scale-up times, sizes and gaps over a grid of (sync, scrape) phases."""

    runs: tuple[PhaseRun, ...]
    best: PhaseRun
    """The run that asks for the most replica-seconds over the timeline (for capacity soonest
    and most; the first of any tie)."""
    times_s: tuple[Spread, ...]
    totals: tuple[Spread, ...]
    gaps_s: Spread
    """Seconds between consecutive scale-ups of a run, pooled over the runs."""

    def runs_with_totals(self, totals: tuple[int, ...]) -> int:
        """How many runs scale up to exactly these totals first."""
        return sum(tuple(n for _, n in run.scale_ups(len(totals))) == totals for run in self.runs)


def hpa_decisions(
    inputs: TimelineInputs, sync_phase_s: float, scrape_phase_s: float, arguments=None
) -> PhaseRun:
    """The HPA's decisions with syncs at ``sync_phase_s + k x period`` and metrics-server
    scrapes at ``scrape_phase_s + j x window`` (each phase in [0, its period), whole steps);
    ``arguments``: ``kernel_arguments(inputs)`` if already computed."""
    from sdlab_model.timeline import _stepper

    scaler = inputs.autoscaler
    if scaler.kind != "hpa":
        raise ValueError(f"phases apply to the HPA, not to {scaler.kind!r}")
    for name, phase, period in (
        ("sync_phase_s", sync_phase_s, scaler.hpa_sync_period_s),
        ("scrape_phase_s", scrape_phase_s, scaler.hpa_metric_window_s),
    ):
        if not 0.0 <= phase < period:
            raise ValueError(f"{name}={phase!r} is outside [0, {period:g})")
    arguments = arguments or kernel_arguments(inputs)
    ints = arguments[7].copy()
    step = inputs.step_s
    ints[_stepper.I_SYNC_PHASE] = round(sync_phase_s / step)
    ints[_stepper.I_SCRAPE_PHASE] = round(scrape_phase_s / step)
    decided = _stepper.run(*arguments[:7], ints, *arguments[8:])[-1]
    decisions = tuple((float(k * step), int(n)) for k, n in enumerate(decided) if n >= 0)
    return PhaseRun(float(sync_phase_s), float(scrape_phase_s), decisions)


def phase_grid_s(period_s: float, step_s: float) -> tuple[float, ...]:
    """``PHASES_PER_PERIOD`` phases spread over ``period_s``, each down to a whole step (the
    kernel's clock) and each once: 0, 3, 6, 9, 12 s for 15 s at 1 s steps."""
    spread = (period_s * i / PHASES_PER_PERIOD for i in range(PHASES_PER_PERIOD))
    return tuple(sorted({math.floor(phase / step_s + 1e-9) * step_s for phase in spread}))


def hpa_band(
    inputs: TimelineInputs,
    sync_phases_s: tuple[float, ...] | None = None,
    scrape_phases_s: tuple[float, ...] | None = None,
    scale_ups: int = SCALE_UPS,
) -> HpaBand:
    """``hpa_decisions`` at every pair of phases (by default ``phase_grid_s`` of the sync
    period and of the metric window), summarized over the first ``scale_ups`` scale-ups that
    every run reaches (none if some run never scales up), over the first ``BAND_SPAN_S`` of the
    timeline."""
    scaler, step = inputs.autoscaler, inputs.step_s
    if sync_phases_s is None:
        sync_phases_s = phase_grid_s(scaler.hpa_sync_period_s, step)
    if scrape_phases_s is None:
        scrape_phases_s = phase_grid_s(scaler.hpa_metric_window_s, step)
    if inputs.duration_s > BAND_SPAN_S:
        inputs = replace(inputs, duration_s=BAND_SPAN_S)
    arguments = kernel_arguments(inputs)
    runs = tuple(
        hpa_decisions(inputs, sync, scrape, arguments)
        for sync in sync_phases_s
        for scrape in scrape_phases_s
    )
    ups = [run.scale_ups(scale_ups) for run in runs]
    reached = min(len(u) for u in ups)
    times = tuple(Spread.of([u[i][0] for u in ups]) for i in range(reached))
    totals = tuple(Spread.of([float(u[i][1]) for u in ups]) for i in range(reached))
    gaps = [u[i + 1][0] - u[i][0] for u in ups for i in range(reached - 1)]
    best = max(runs, key=lambda run: _replica_seconds(run, inputs))
    gap_spread = Spread.of(gaps) if gaps else Spread(0.0, 0.0, 0.0, 0)
    return HpaBand(runs, best, times, totals, gap_spread)


def _replica_seconds(run: PhaseRun, inputs: TimelineInputs) -> float:
    """Replicas the HPA asked for, integrated over the timeline (each total until the next)."""
    total, since, area = inputs.initial_replicas, 0.0, 0.0
    for time_s, replicas in run.decisions:
        area += total * (time_s - since)
        total, since = replicas, time_s
    return area + total * (inputs.duration_s - since)
