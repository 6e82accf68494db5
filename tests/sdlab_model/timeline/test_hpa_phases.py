"""The HPA's 3x step (15 replicas, 70% target, 45 s cold start) over 25 pairs of sync phase and
metrics-server scrape phase, against an enumeration written here independently of the model, at
metrics-server's default 15 s window and at 30 s and 10 s (its least).

Sources: kubernetes/kubernetes ``pkg/controller/podautoscaler/replica_calculator.go`` at commit
00067268967ec95a40035bd666374a1caf48dd1a (``GetResourceReplicas``: the 10% tolerance; on a
scale-up, ignored pods count at 0% and a rebalanced ratio inside the tolerance or below 1 keeps
the scale; ``groupPods``: within the CPU initialization period a pod is ignored while
``metric.Timestamp.Before(readyTransition + metric.Window)``),
``pkg/controller/podautoscaler/config/v1alpha1/defaults.go`` at 85643c0f9306 (lines 40-42 the
15 s sync, 46-48 the 5 min downscale stabilization, 49-51 the 5 min CPU initialization period,
58-60 the 0.1 tolerance); metrics-server's ``--metric-resolution`` (15 s in its manifest, at
least 10 s): the interval between scrapes and the CPU rate's window W.

The enumeration, by hand (C = one replica's capacity; 10.5 C before t = 30 s, 31.5 C after):

- Syncs at p, p + 15, ... (p = sync phase); scrapes at q, q + W, ... (q = scrape phase, in
  [0, W)). A sync at t reads the newest scrape s <= t, whose CPU rate is the busy share over
  [s - W, s). Below, W = 15 s unless said.
- A replica decided at d serves from d + 45 and is counted from the first scrape s >= d + 45 + W
  (ready + one window, inside the 5 min initialization period).
- At a sync: u = busy share; with uncounted replicas and u / 0.7 > 1 the ratio is rebalanced,
  r = u x counted / (0.7 x total); no change when |1 - r| <= 0.1 or r < 1, else ceil(r x total);
  without uncounted replicas, ceil(u / 0.7 x counted) unless |1 - u / 0.7| <= 0.1. A lower
  recommendation keeps the scale (the 5 min stabilization holds the recommendation that set it);
  the +100% per 15 s limit (15 -> 30, 22 -> 44, 32 -> 64) never binds on these three.
- So with the step at t = 30 on a scrape boundary only when q = 0: the first window wholly after
  the step ends at 45 + q if q > 0 (u = 1: 15 / 0.7 -> 22), and the window that straddles it
  gives u = 0.7 + 0.3 x (q' / 15) where q' seconds of it are after 30: q = 12 sees 12 s at
  t = 42 -> u = 0.94 -> ceil(20.14) = 21 (the issue's 21), q = 6 sees 6 s -> 18, q = 9 -> 19,
  q = 3 -> 3 s, u = 0.76, ratio 1.086 inside the tolerance: no change.
- After a scale-up at d, the new pods count from the scrape at d + 60 + ((q - p) mod 15) and
  the next sync at or after it: d + 60 when p = q, else d + 75. That is why a run's ladder
  steps are 60 or 75 s apart; a straddling window adds a small scale-up 15 s before the
  full-window one (18 then 22, 19 then 22).
"""

from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest

from sdlab_model.timeline import (
    AutoscalerConfig,
    ColdStart,
    TimelineInputs,
    TrafficShape,
    run_timeline,
)
from sdlab_model.timeline.hpa_phases import hpa_band, hpa_decisions, phase_grid_s
from sdlab_model.timeline.model import hpa_scale_up_gaps_s
from sdlab_model.workload import Workload

PHASES = (0, 3, 6, 9, 12)


def _inputs(window_s: float = 15.0) -> TimelineInputs:
    base = Workload(replicas=15, dynamic_batching=False, lb_policy="central_queue")
    per_replica = base.with_changes(replicas=1).capacity_rps
    scaler = AutoscalerConfig(
        kind="hpa", min_replicas=15, max_replicas=100, hpa_metric_window_s=window_s
    )
    return TimelineInputs(
        workload=base,
        traffic=TrafficShape(kind="step", base_rate_rps=10.5 * per_replica, factor=3, at_s=30),
        autoscaler=scaler,
        cold_start=ColdStart(node_provision_s=45, model_size_gb=0, load_bandwidth_gbps=1),
        duration_s=300,
    )


def _rebalanced(u: float, counted: int, total: int) -> int:
    """``GetResourceReplicas`` on a busy share ``u`` at a 0.7 target with a 0.1 tolerance."""
    ratio = u / 0.7
    if total > counted and ratio > 1.0:
        rebalanced = u * counted / (0.7 * total)
        if abs(1 - rebalanced) <= 0.1 or rebalanced < 1.0:
            return total
        return math.ceil(rebalanced * total - 1e-9)
    if abs(1 - ratio) <= 0.1:
        return total
    return math.ceil(ratio * counted - 1e-9)


def _enumerate(p: int, q: int, ups: int = 3, window: int = 15) -> list[tuple[int, int]]:
    """One phase pair by hand, in capacity units (C = 1), 1 s at a time, until ``ups``
    scale-ups, with metrics-server scraping every ``window`` s (see the module docstring)."""
    cohorts: list[tuple[int, int]] = []  # (decided at, replicas added)
    total, backlog, busy, found = 15, 0.0, [], []
    for t in range(300):
        if t > 0 and (t - p) % 15 == 0:
            scrape = t - (t - q) % window
            rates = busy[max(0, scrape - window) : max(0, scrape)] or busy[:1]
            u = sum(rates) / len(rates)
            counted = 15 + sum(n for d, n in cohorts if d + 45 + window <= scrape)
            wanted = min(_rebalanced(u, counted, total), max(total + 4, 2 * total))
            if wanted > total:
                cohorts.append((t, wanted - total))
                found.append((t, wanted))
                total = wanted
                if len(found) == ups:
                    return found
        ready = 15 + sum(n for d, n in cohorts if d + 45 <= t)
        rate = 10.5 if t < 30 else 31.5
        served = min(backlog + rate, ready)
        backlog += rate - served
        busy.append(served / ready)
    return found


def _spread(values):
    counts = Counter(values)
    top = max(counts.values())
    return min(values), min(v for v, c in counts.items() if c == top), max(values), top


@pytest.fixture(scope="module")
def band():
    return hpa_band(_inputs())


WINDOWS = (15, 30, 10)
"""Metric windows the band is enumerated at: the default, a longer one, metrics-server's least."""


def _scrape_phases(window: int) -> tuple[int, ...]:
    """Five scrape phases spread over the window, in whole seconds."""
    return tuple(window * i // 5 for i in range(5))


@pytest.fixture(scope="module", params=WINDOWS, ids=lambda w: f"{w}s-window")
def window_band(request):
    return request.param, hpa_band(_inputs(float(request.param)))


def test_the_grid_is_the_enumerated_one():
    assert tuple(float(p) for p in PHASES) == phase_grid_s(15.0, 1.0)
    for window in WINDOWS:
        assert phase_grid_s(float(window), 1.0) == _scrape_phases(window), f"{window} s grid"
    assert phase_grid_s(2.0, 1.0) == (0.0, 1.0), "a period of two steps has two phases"


def test_each_phase_pair_matches_the_enumeration(window_band):
    window, band = window_band
    by_pair = {(run.sync_phase_s, run.scrape_phase_s): run for run in band.runs}
    assert len(by_pair) == 25, f"{window} s window: {len(by_pair)} phase pairs"
    for p in PHASES:
        for q in _scrape_phases(window):
            got = [(int(t), n) for t, n in by_pair[(p, q)].scale_ups()]
            expected = _enumerate(p, q, window=window)
            assert got == expected, f"{window} s window, sync phase {p} s, scrape phase {q} s"


def test_the_band_matches_the_enumeration(window_band):
    window, band = window_band
    runs = [_enumerate(p, q, window=window) for p in PHASES for q in _scrape_phases(window)]
    for i in range(3):
        times, totals = [r[i][0] for r in runs], [r[i][1] for r in runs]
        assert _spread(times) == _spread_of(band.times_s[i]), f"{window} s: time {i + 1}"
        assert _spread(totals) == _spread_of(band.totals[i]), f"{window} s: total {i + 1}"
    gaps = [r[i + 1][0] - r[i][0] for r in runs for i in range(2)]
    assert _spread(gaps) == _spread_of(band.gaps_s), f"{window} s: gaps"
    assert band.runs_with_totals((21, 30, 43)) == sum(
        [n for _, n in r] == [21, 30, 43] for r in runs
    ), f"{window} s: runs to 21, 30, 43"


def _spread_of(spread):
    return spread.low, spread.common, spread.high, spread.common_count


def test_the_aligned_run_is_the_timelines_own_and_the_best(band):
    """Phases 0 and 0 are the timeline's run (22 at 45 s, 32 at 105 s, 46 at 165 s); the best
    run asks for the most replica-seconds, computed here from the enumerated decisions."""
    aligned = hpa_decisions(_inputs(), 0.0, 0.0)
    assert [(int(t), n) for t, n in aligned.scale_ups()] == [(45, 22), (105, 32), (165, 46)]
    areas = {}
    for run in band.runs:
        points = [(0.0, 15), *run.decisions, (300.0, 0)]
        areas[(run.sync_phase_s, run.scrape_phase_s)] = sum(
            n * (points[i + 1][0] - t) for i, (t, n) in enumerate(points[:-1])
        )
    best = max(areas.values())
    assert areas[(band.best.sync_phase_s, band.best.scrape_phase_s)] == best
    assert areas[(0.0, 0.0)] == best, "aligned clocks ask for capacity soonest here"


def test_a_30s_window_ladder_by_hand_is_the_timelines_own_run():
    """At a 30 s window, syncs at 15 s, 30 s, ... and scrapes at 30 s, 60 s, ...: the syncs at 30
    and 45 read [0, 30) (u = 0.7, no change); the sync at 60 reads [30, 60), saturated:
    ceil(15 / 0.7) = 22. The 7 new pods serve from 105 and count from the first scrape at or
    after 60 + 45 + 30 = 135, the one at 150: ceil(22 / 0.7) = 32 there (the backlog keeps them
    busy), and 46 at 150 + 75 -> the scrape at 240. Decisions 90 s apart, not 60 s."""
    by_hand = [(60, 22), (150, 32), (240, 46)]
    assert _enumerate(0, 0, window=30) == by_hand, "the enumeration departs from the hand count"
    aligned = hpa_decisions(_inputs(30.0), 0.0, 0.0)
    assert [(int(t), n) for t, n in aligned.scale_ups()] == by_hand, f"aligned {aligned}"
    timeline = run_timeline(_inputs(30.0))
    shown = [
        (int(t), int(n))
        for t, n in zip(
            timeline.decision_times_s, timeline.decisions[timeline.decisions >= 0], strict=True
        )
    ]
    assert shown[:3] == by_hand, f"the timeline's own run at a 30 s window: {shown}"


def test_the_best_case_at_a_30s_window_asks_for_the_most_replica_seconds():
    band = hpa_band(_inputs(30.0))
    areas = {}
    for p in PHASES:
        for q in _scrape_phases(30):
            points = [(0, 15), *_enumerate(p, q, ups=99, window=30), (300, 0)]
            areas[(p, q)] = sum(n * (points[i + 1][0] - t) for i, (t, n) in enumerate(points[:-1]))
    best = (band.best.sync_phase_s, band.best.scrape_phase_s)
    assert areas[best] == max(areas.values()), f"best {best}, areas {areas}"
    assert best != (0.0, 0.0), "at a 30 s window the aligned clocks are not the best case"


def test_the_ramps_pace_is_when_a_sync_first_counts_the_pods_it_added():
    """A pod decided at a sync d counts from d + 45 + W. At W = 15 every sync is a scrape: seen
    at d + 60, the ladder's 60 s. At W = 30 from d = 15 the scrape at 90 (75 s), from d = 30 the
    scrape at 120 (90 s): the by-hand ladder's 90 s gaps (60 -> 150 -> 240) are the second."""
    assert hpa_scale_up_gaps_s(_inputs()) == (60.0, 60.0), "15 s window"
    assert hpa_scale_up_gaps_s(_inputs(30.0)) == (75.0, 90.0), "30 s window"
    by_hand = _enumerate(0, 0, window=30)
    gaps = {b[0] - a[0] for a, b in itertools.pairwise(by_hand)}
    assert gaps <= {75, 90}, f"the 30 s ladder's gaps {gaps} are not among the pace's"


@pytest.mark.parametrize(("sync", "scrape"), [(15.0, 0.0), (0.0, -1.0), (0.0, 15.0)])
def test_phases_outside_a_period_are_refused(sync, scrape):
    with pytest.raises(ValueError, match="outside"):
        hpa_decisions(_inputs(), sync, scrape)


def test_a_scrape_phase_is_bounded_by_the_window_not_by_15s():
    assert hpa_decisions(_inputs(30.0), 0.0, 24.0).decisions, "a 24 s phase of a 30 s window"
    with pytest.raises(ValueError, match=r"scrape_phase_s=30.0 is outside \[0, 30\)"):
        hpa_decisions(_inputs(30.0), 0.0, 30.0)


@pytest.mark.parametrize("window", [9.99, 120.01, 0.0, -15.0, math.nan, math.inf, True, "15"])
def test_a_metric_window_outside_10_to_120s_is_refused(window):
    with pytest.raises(ValueError, match="hpa_metric_window_s") as raised:
        AutoscalerConfig(hpa_metric_window_s=window)
    message = str(raised.value)
    if isinstance(window, float) and math.isfinite(window):
        assert "[10, 120]" in message, f"the message does not give the range: {message}"


@pytest.mark.parametrize("window", [10.0, 15.0, 120.0])
def test_metric_windows_from_10_to_120s_are_accepted(window):
    assert AutoscalerConfig(hpa_metric_window_s=window).hpa_metric_window_s == window


def test_a_long_timelines_band_is_its_first_hours_band():
    from dataclasses import replace

    from sdlab_model.timeline.hpa_phases import BAND_SPAN_S

    day = replace(_inputs(), duration_s=86_400)
    first_hours = replace(_inputs(), duration_s=BAND_SPAN_S)
    long_band, short_band = hpa_band(day), hpa_band(first_hours)
    assert long_band.times_s == short_band.times_s and long_band.totals == short_band.totals
    assert all(run.decisions[-1][0] < BAND_SPAN_S for run in long_band.runs), "ran past the span"
