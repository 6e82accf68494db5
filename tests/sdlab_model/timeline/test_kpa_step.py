"""The KPA's step response at 2,000 req/s x5 (issue 25), against a hand computation from
Knative Serving's source: the model's swings between 2 and 100 replicas are what Knative's
``Scale`` does with these inputs, not a departure from it.

Source read: knative/serving at commit 98e5ef90aa7033797aa0a61ef97f3ff7e49a3944:

- ``pkg/autoscaler/scaling/autoscaler.go`` ``Scale`` (lines 149-313): the max scale-up and
  scale-down bounds ``ceil(1000 x ready)`` and ``floor(ready / 2)`` of the *ready* pods
  (189-194); ``dspc = ceil(stable / target)``, ``dppc = ceil(panic / target)`` (196-197), each
  kept within those bounds (207-208); activation scale only when above 1 (210-218, default 1);
  panic when ``dppc / ready >= panic threshold`` (220), extended at every tick still over it and
  ended only at a tick not over it more than a stable window after the last one that was
  (222-236); while panicking, the larger of the two counts and never below the highest count of
  this panic (238-257: "We do not scale down while in panic mode"); the scale-down delay window
  only when ``scale-down-delay`` > 0 (259-276, default 0).
- ``pkg/autoscaler/scaling/multiscaler.go`` line 36: ``tickInterval = 2 * time.Second``.
- ``pkg/autoscaler/config/config.go`` lines 37 (``BucketSize = 1s``) and 42-68 (max scale-up
  rate 1000, max scale-down rate 2, panic window 10%, panic threshold 200%, stable window 60 s,
  target utilization 0.7, scale-down delay 0).
- ``pkg/reconciler/autoscaling/resources/metric.go`` line 49: the panic window is
  ``stable window x percentage / 100``, rounded to a second: 6 s.
- ``pkg/autoscaler/metrics/collector.go`` lines 190-207 and 271-296 with
  ``pkg/autoscaler/aggregation/bucketing.go`` ``WindowAverage`` (lines 185-231): the stable and
  panic values are plain averages over the window's 1 s buckets.

Not modelled: scale to zero and its grace period (the minimum here is 2 replicas), the
activator's buffering, and the panic a freshly started autoscaler begins in (autoscaler.go
95-114; the timeline's service has been running before t = 0).

The inputs: the Timeline page's defaults (the lab's default workload, the KPA's knobs at
Knative's defaults, 35 s node provisioning + 2 GB at 2 GB/s = 36 s cold start, 2 to 100
replicas, 1 s steps, 600 s) with the issue's 2,000 req/s and a x5 step at the page's default
t = 60 s.
"""

from __future__ import annotations

import math

import pytest

from sdlab_model.timeline import AutoscalerConfig, TimelineInputs, TrafficShape, run_timeline
from sdlab_model.timeline.model import kpa_panic_window_s, time_in_system_s
from sdlab_model.workload import Workload

TICK_S = 2
PANIC_WINDOW_S = 6
STABLE_WINDOW_S = 60
COLD_S = 36
MAX_REPLICAS = 100


def _inputs() -> TimelineInputs:
    return TimelineInputs(
        workload=Workload(rate_rps=2000),
        traffic=TrafficShape(kind="step", base_rate_rps=2000, factor=5, at_s=60),
        autoscaler=AutoscalerConfig(kind="kpa"),
    )


def _decisions(result) -> dict[int, int]:
    return {int(t): int(n) for t, n in zip(result.times_s, result.decisions, strict=True) if n >= 0}


def _hand() -> dict[int, int]:
    """The first cycle's decisions, by hand. Steps are 1 s; a decision at a tick reads the
    steps before it; a step's concurrency is ``(backlog at start + at end) / 2 + served x T``
    (Little's law, ``T`` the model's time in system at the base rate).

    1. Per-pod target: containerConcurrency = 16 workers x max batch 32 = 512, x 0.7 = 358.4.
       One replica serves C = 512 / (20 ms x (0.8333 + 0.1667 x 32)) = 4,151.35 req/s, so two
       serve 8,302.7 < 10,000: from t = 60 the backlog grows by a = 10,000 - 2C = 1,697.3 per
       second. Before the step the concurrency is b = 2,000 T = 81.95; after it, with 2 ready
       pods saturated, step 60 + j holds (j + 0.5) a + s with s = 2C x T = 340.2.
    2. Tick 62: panic window = steps 56..61 = (4b + 2a + 2s) / 6 = 733.8 -> dppc = 3;
       3 / 2 ready < 200%: no panic; stable = ceil(147.1 / 358.4) = 1 -> the minimum, 2.
    3. Tick 60 + 2m (m = 2: steps 58..63 = (2b + 8a + 4s) / 6 = 2,517.2 -> 8, 8 / 2 = 4:
       panic begins); for m >= 3 the window's mean (j + 0.5) is 2m - 3, so
       dppc = ceil(((2m - 3) a + s) / 358.4): 16, 25, 35, 44, 54, 63, 72, 82, 91 and at t = 84
       101, held at the maximum 100. Each tick's count is above the last, so each is applied.
    4. A pod decided at d serves from d + 36: ready = 2 until t = 100, then 8 (d = 64),
       16 (66), 25 (68), 35 (70)... Backlog at the end of step 99 is 40a = 67,892; step 100
       (8 ready, 33,211 req/s) ends at 44,681, step 101 at 21,470, step 102 (16 ready) drains
       it. Concurrency of steps 98..103: 38.5a + s, 39.5a + s, 57,647, 34,436, 12,025,
       10,000 T = 409.8.
    5. Tick 104: panic mean of steps 98..103 = 39,598 -> 111 pods, 111 / 25 ready >= 2: the
       panic is extended to 104. Tick 106: steps 100..105 = 17,556 -> 49, 49 / 35 < 2; from
       then on the panic window holds 409.8 (2 pods) and never crosses again.
    6. Panic ends at the first tick more than 60 s after 104: 166 (autoscaler.go 230). Until
       then the count stays 100 (no decision). At 166 the stable window (steps 106..165) is
       409.8 -> 2 pods, bounded below by floor(100 / 2) = 50; then floor(ready / 2) each tick:
       25, 12, 6, 3 and 2 (floor(3 / 2) = 1, the minimum 2) at t = 176.
    7. From t = 176 two ready pods face 10,000 req/s with an empty backlog, as at t = 60: the
       cycle repeats every 176 - 60 = 116 s.
    """
    inputs = _inputs()
    capacity = inputs.capacity_per_replica_rps
    assert capacity == pytest.approx(512_000 / (20 * (5 / 6 + 32 / 6)), rel=1e-9)
    target = 16 * 32 * 0.7
    t_in = time_in_system_s(inputs)
    a, b, s = 10_000 - 2 * capacity, 2_000 * t_in, 2 * capacity * t_in
    decisions = {64: math.ceil((2 * b + 8 * a + 4 * s) / 6 / target)}
    for m in range(3, 13):
        decisions[60 + 2 * m] = min(MAX_REPLICAS, math.ceil(((2 * m - 3) * a + s) / target))
    ready_at = {d + COLD_S: n for d, n in decisions.items()}
    assert math.ceil((4 * b + 2 * a + 2 * s) / 6 / target) / 2 < 2, "tick 62: no panic"
    # The drain of steps 99..102 and the panic window at ticks 104 and 106.
    backlog = [40 * a]
    for ready in (8, 8):
        backlog.append(backlog[-1] + 10_000 - ready * capacity)
    conc = {
        98: 38.5 * a + s,
        99: 39.5 * a + s,
        100: (backlog[0] + backlog[1]) / 2 + 8 * capacity * t_in,
        101: (backlog[1] + backlog[2]) / 2 + 8 * capacity * t_in,
        102: backlog[2] / 2 + (backlog[2] + 10_000) * t_in,
    }
    conc.update({k: 10_000 * t_in for k in (103, 104, 105)})
    ready_104, ready_106 = ready_at[104], ready_at[106]  # totals decided at 68 and 70
    panic_104 = math.ceil(sum(conc[k] for k in range(98, 104)) / 6 / target)
    panic_106 = math.ceil(sum(conc[k] for k in range(100, 106)) / 6 / target)
    assert (panic_104, ready_104, panic_106, ready_106) == (111, 25, 49, 35)
    assert panic_104 / ready_104 >= 2 > panic_106 / ready_106, "the last tick over is 104"
    assert math.ceil(10_000 * t_in / target) == 2, "the settled fleet's concurrency: 2 pods"
    down, ready = 166, MAX_REPLICAS
    while ready > 2:
        ready = max(2, ready // 2)
        decisions[down] = ready
        down += TICK_S
    return decisions


def test_kpa_first_cycle_matches_the_hand_computation():
    result = run_timeline(_inputs())
    got = {t: n for t, n in _decisions(result).items() if t < 176 + TICK_S}
    assert got == _hand(), f"model {got}"


def test_kpa_holds_its_scale_while_panicking():
    result = run_timeline(_inputs())
    total = result.ready_replicas + result.starting_replicas
    assert all(total[84:166] == MAX_REPLICAS), "no scale-down from 84 until the panic ends"
    assert result.ready_replicas[84 + COLD_S] == MAX_REPLICAS, "all 100 serve one cold start on"


def test_kpa_repeats_the_cycle_every_116_seconds():
    decisions = _decisions(run_timeline(_inputs()))
    first = {t: n for t, n in decisions.items() if 60 < t <= 176}
    for cycle in (1, 2, 3):
        shift = 116 * cycle
        later = {t - shift: n for t, n in decisions.items() if 60 + shift < t <= 176 + shift}
        expected = {t: n for t, n in first.items() if t + shift < 600}
        assert later == expected, f"cycle {cycle + 1} differs from the first"


@pytest.mark.parametrize(
    ("stable_s", "percent", "expected_s"),
    [(60, 10, 6.0), (61, 10, 6.0), (65, 10, 7.0), (6, 1, 1.0), (75, 10, 8.0)],
)
def test_kpa_panic_window_rounds_to_a_second_as_knative_does(stable_s, percent, expected_s):
    # metric.go 49-52: Duration.Round(time.Second) (6.1 s -> 6, 6.5 s -> 7), never below 1 s.
    scaler = AutoscalerConfig(
        kind="kpa", kpa_stable_window_s=stable_s, kpa_panic_window_percentage=percent
    )
    assert kpa_panic_window_s(scaler) == expected_s
