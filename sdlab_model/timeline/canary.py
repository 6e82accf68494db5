"""Canary rollout: a new version takes a growing share of traffic, and how soon a judge sees a
regression.

A rollout is a list of steps; at each step the new version (the *canary*) gets a share ``p`` of
the live requests for one window, and the old version the rest. The canary runs either on its own
replicas or on the same replicas as the old version (*shared*). Optionally a copy of a share
``q`` of the old version's live requests is also sent to the canary (*shadow* traffic): its
answers are discarded, but it is load the canary carries and more requests to judge it by.

The canary is compared with a *baseline*: either the rest of live traffic, or (Spinnaker's advice)
a baseline deployment of the canary's size started with it, which gets the same share ``p`` of
live requests. For each step this module gives:

- the workload each version sees and its p99 from the queueing model
  (``sdlab_model.queues.queueing.latency``), and the replicas and dollars the rollout adds;
- for three regressions — an error-rate rise (0.1% → 0.2%), a p99 regression that slows every
  request (+x%), and one confined to the slowest share ``s`` of requests (those slowed by x%) —
  what each judge of ``sdlab_model.timeline.canary_judges`` does: its false-alarm rate over the
  step, the chance it flags the regression within the step, and the mean and 90th-percentile
  time to flag it.

A latency judge counts requests past a line: past the baseline's p99 for the sequential z-test
and Kayenta's judge (1% of the baseline's by definition), past the p99 limit for a threshold judge
(an interval fails when over 1% of its requests are past it, i.e. its p99 is).

Sources (read 2026-11-30 and 2026-12-02):

- Spinnaker, "Best practices for configuring canary",
  https://spinnaker.io/guides/user/canary/best-practices: compare the canary with a baseline of
  the same size deployed at the same time, not with production.
- Spinnaker Deck's canary help: "The recommended interval is at least 30 minutes"
  (``canary.help.ts``): the default window.
- Argo Rollouts, "Canary Deployment Strategy", https://argoproj.github.io/argo-rollouts/features/canary,
  and argoproj/argo-rollouts PR #1430 (``dynamicStableScale``, off by default): with traffic
  routing the canary's replicas are scaled to its traffic weight and the stable version stays at
  full size — the "own replicas" sizing here.
- The judges' own sources are in ``canary_judges``.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Literal

from sdlab_model.advice.search import price_per_replica_hour
from sdlab_model.latency import LatencyResult
from sdlab_model.params import NUMERIC_BY_NAME
from sdlab_model.queues import queueing
from sdlab_model.timeline import canary_judges
from sdlab_model.timeline.canary_judges import JudgeOutcome
from sdlab_model.workload import Workload

_RATE = NUMERIC_BY_NAME["rate_rps"]
_REPLICAS = NUMERIC_BY_NAME["replicas"]
SECONDS_PER_HOUR = 3600.0

BASELINE_TAIL_SHARE = 0.01
"""Share of the baseline's requests slower than its own p99: 1%, by definition of the p99."""


@dataclass(frozen=True)
class Bound:
    """The model's range and default of one canary input (``page_params`` declares its widget)."""

    minimum: float
    maximum: float
    default: float


STEP_SHARE = Bound(0.0001, 1.0, 0.01)
"""A step's share of live traffic: above 0 (a step with no canary traffic tests nothing)."""
DEFAULT_STEP_SHARES = (0.01, 0.05, 0.25, 1.0)
"""1 → 5 → 25 → 100%, the progression of the issue (and of most canary examples)."""
MAX_STEPS = 10
WINDOW_S = Bound(60.0, 7 * 24 * 3600.0, 1800.0)
"""Each step's window: 30 minutes by default (Spinnaker's recommended minimum)."""
METRIC_INTERVAL_S = Bound(1.0, 600.0, 60.0)
"""How often a judge gets a new point of a metric: Prometheus's ``scrape_interval`` defaults to
1 min and Flagger's checks to ``interval: 1m`` (prometheus.io, "Configuration"; docs.flagger.app);
10-60 s is the usual range."""
SHADOW_SHARE = Bound(0.0, 1.0, 0.0)
BASELINE_ERROR_RATE = Bound(1e-6, 0.5, 0.001)
REGRESSED_ERROR_RATE = Bound(1e-6, 0.999, 0.002)
"""0.1% → 0.2%: the issue's example of an error-rate regression."""
P99_REGRESSION = Bound(0.01, 3.0, 0.20)
"""+20%: the issue's example of a latency regression (relative: 0.2 is +20%)."""
TAIL_SHARE = Bound(0.001, 1.0, 0.02)
"""The slowest 2% of requests slowed, for the tail-confined regression. At 1% or less the
p99 itself does not move (the 99% fastest requests are unchanged), and no p99 judge can see it."""
FALSE_ALARM = Bound(0.001, 0.5, 0.05)
"""The sequential z-test's false-alarm budget over a whole step: 5%."""

Placement = Literal["own", "shared"]
BaselineKind = Literal["live", "same-size"]

ERROR_RATE = "error rate"
P99_EVERY_REQUEST = "p99, every request slower"
P99_SLOWEST = "p99, slowest requests slower"


def _check(name: str, value: float, bound: Bound) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if not bound.minimum <= value <= bound.maximum:
        raise ValueError(
            f"{name}={value!r} is outside the allowed range [{bound.minimum:g}, {bound.maximum:g}]"
        )


@dataclass(frozen=True)
class CanaryPlan:
    """How the new version is rolled out, how it is judged, and what regression it may have.

    Shares are fractions (0.05 is 5%). ``p99_regression`` is relative (0.2: +20%). Invalid
    values raise ``ValueError`` naming field, value and range.
    """

    step_shares: tuple[float, ...] = DEFAULT_STEP_SHARES
    window_s: float = WINDOW_S.default
    interval_s: float = METRIC_INTERVAL_S.default
    placement: Placement = "own"
    baseline: BaselineKind = "live"
    shadow_share: float = SHADOW_SHARE.default
    baseline_error_rate: float = BASELINE_ERROR_RATE.default
    regressed_error_rate: float = REGRESSED_ERROR_RATE.default
    p99_regression: float = P99_REGRESSION.default
    tail_share: float = TAIL_SHARE.default
    false_alarm: float = FALSE_ALARM.default

    def __post_init__(self) -> None:
        shares = self.step_shares
        if not isinstance(shares, tuple) or not 1 <= len(shares) <= MAX_STEPS:
            raise ValueError(
                f"step_shares must be a tuple of 1 to {MAX_STEPS} shares, got "
                f"{len(shares) if isinstance(shares, tuple) else type(shares).__name__}"
            )
        for index, share in enumerate(shares):
            _check(f"step_shares[{index}]", share, STEP_SHARE)
        if any(later <= earlier for earlier, later in itertools.pairwise(shares)):
            raise ValueError(f"step_shares={shares!r} must increase from step to step")
        _check("window_s", self.window_s, WINDOW_S)
        _check("interval_s", self.interval_s, METRIC_INTERVAL_S)
        if self.interval_s > self.window_s:
            raise ValueError(
                f"interval_s={self.interval_s!r} is longer than window_s={self.window_s!r}: "
                "a judge would see no point within the step"
            )
        if self.placement not in ("own", "shared"):
            raise ValueError(f"placement={self.placement!r} is not one of 'own', 'shared'")
        if self.baseline not in ("live", "same-size"):
            raise ValueError(f"baseline={self.baseline!r} is not one of 'live', 'same-size'")
        _check("shadow_share", self.shadow_share, SHADOW_SHARE)
        _check("baseline_error_rate", self.baseline_error_rate, BASELINE_ERROR_RATE)
        _check("regressed_error_rate", self.regressed_error_rate, REGRESSED_ERROR_RATE)
        if self.regressed_error_rate <= self.baseline_error_rate:
            raise ValueError(
                f"regressed_error_rate={self.regressed_error_rate!r} must be above "
                f"baseline_error_rate={self.baseline_error_rate!r}: a regression raises it"
            )
        _check("p99_regression", self.p99_regression, P99_REGRESSION)
        _check("tail_share", self.tail_share, TAIL_SHARE)
        _check("false_alarm", self.false_alarm, FALSE_ALARM)


def share_slower_than(latency: LatencyResult, line_ms: float) -> float:
    """Share of requests slower than ``line_ms``: ``ln S(t)`` interpolated linearly between the
    p50 (S = 50%), p95 (5%) and p99 (1%), continued past them with the slope beside them, at
    most 1.

    Approximations: an exponential tail between and beyond the quantiles (the M/D/c waiting
    time's tail is exactly ``C·e^(−ηt)``, Crommelin 1932); below the p50 a rough shape, used
    only by regressions of more than ~+50% every request.
    """
    if not latency.is_stable or latency.p95_ms is None or latency.p50_ms is None:
        raise ValueError("the share past a line needs a stable latency with p50, p95 and p99")
    points = [(latency.p50_ms, math.log(0.5)), (latency.p95_ms, math.log(0.05))]
    points.append((latency.p99_ms, math.log(0.01)))
    points = [points[0]] + [b for a, b in itertools.pairwise(points) if b[0] > a[0]]
    if len(points) == 1:
        return 1.0 if line_ms < points[0][0] else 0.0
    index = 1
    while index < len(points) - 1 and line_ms > points[index][0]:
        index += 1
    (t0, s0), (t1, s1) = points[index - 1], points[index]
    return min(1.0, math.exp(s0 + (s1 - s0) * (line_ms - t0) / (t1 - t0)))


def regressed_share_slower_than(
    latency: LatencyResult, line_ms: float, regression: float, tail_share: float | None
) -> float:
    """The share past ``line_ms`` once requests are slowed by ``regression`` (0.2: +20%): every
    request (``tail_share`` None), or only the slowest ``tail_share`` of them. A slowed request
    is past the line when it was past ``line / (1 + x)``; only the slowest ``s`` are slowed, so
    the share is ``S(max(line/(1 + x), t_s))``, ``t_s`` the latency the slowest ``s`` exceed,
    or ``S(line)`` if the line is below ``t_s`` already."""
    moved = line_ms / (1.0 + regression)
    if tail_share is None:
        return share_slower_than(latency, moved)
    before = share_slower_than(latency, line_ms)
    if before >= tail_share:
        return before
    return max(before, min(tail_share, share_slower_than(latency, moved)))


@dataclass(frozen=True)
class Streams:
    """What the judges of one metric see in one step: the bad shares and request rates.

    ``baseline_share`` is None when there is no baseline to compare with (the 100% step; a
    same-size baseline above 50%): only the threshold judges, which look at the canary alone,
    judge then.
    """

    metric: str
    baseline_share: float | None
    canary_null_share: float
    """The canary's bad share with no regression (not the baseline's where loads differ)."""
    canary_share: float
    limit_null_share: float
    """The canary's share past the threshold judges' limit with no regression."""
    limit_share: float
    canary_rate_rps: float
    baseline_rate_rps: float


@dataclass(frozen=True)
class Verdicts:
    """Each judge's outcome on one metric of one step (None: the judge has nothing to compare
    with)."""

    streams: Streams
    sequential: JudgeOutcome | None
    repeated: JudgeOutcome | None
    """The fixed-window z-test repeated at every look: false alarms without a correction."""
    kayenta: JudgeOutcome | None
    flagger: JudgeOutcome
    argo: JudgeOutcome
    note: str = ""

    @property
    def outcomes(self) -> tuple[JudgeOutcome, ...]:
        judged = (self.sequential, self.repeated, self.kayenta, self.flagger, self.argo)
        return tuple(outcome for outcome in judged if outcome is not None)


def judge(streams: Streams, plan: CanaryPlan) -> Verdicts:
    """Every judge of ``canary_judges`` on ``streams`` over one step of ``plan``."""
    s = streams
    common = (plan.interval_s, plan.window_s)
    flagger, argo = (
        canary_judges.threshold_judge(
            name,
            s.limit_null_share,
            s.limit_share,
            s.canary_rate_rps,
            *common,
            1.0 - canary_judges.FLAGGER_MIN_SUCCESS,
            checks,
        )
        for name, checks in (
            (canary_judges.FLAGGER, canary_judges.FLAGGER_FAILED_CHECKS),
            (canary_judges.ARGO, canary_judges.ARGO_FAILURE_LIMIT + 1),
        )
    )
    if s.baseline_share is None:
        return Verdicts(s, None, None, None, flagger, argo, "no baseline to compare with")
    rates = (s.canary_rate_rps, s.baseline_rate_rps)
    shares = (s.baseline_share, s.canary_null_share, s.canary_share)
    sequential = canary_judges.sequential_z_test(*shares, *rates, *common, plan.false_alarm)
    repeated = canary_judges.repeated_z_test(*shares, *rates, *common, plan.false_alarm)
    kayenta = canary_judges.kayenta_judge(*shares, *rates, *common)
    return Verdicts(s, sequential, repeated, kayenta, flagger, argo)


@dataclass(frozen=True)
class CanaryStep:
    """One step of the rollout: who serves what, how fast, what it costs, what the judges do."""

    share: float
    start_s: float
    end_s: float
    canary_live_rps: float
    shadow_rps: float
    baseline_rps: float
    """Live requests the baseline the canary is compared with serves (0: none)."""
    canary_replicas: int
    """Replicas running the canary (in a shared fleet: all of them)."""
    baseline_replicas: int
    """Replicas running the old version (0 at 100% on own replicas: it is retired)."""
    extra_replicas: int
    """Replicas beyond the fleet the workload had before the rollout."""
    extra_usd_per_hour: float
    canary_latency: LatencyResult
    baseline_latency: LatencyResult | None
    """None when there is no baseline to compare with."""
    verdicts: tuple[Verdicts, ...]
    """Error rate, p99 with every request slower, p99 with the slowest slower (in that order;
    the p99 ones absent when the canary's queue is unstable)."""
    notes: tuple[str, ...]

    @property
    def canary_rps(self) -> float:
        """Everything the canary serves: live requests plus shadow copies."""
        return self.canary_live_rps + self.shadow_rps

    @property
    def extra_usd(self) -> float:
        """What the extra replicas cost over this step's window."""
        return self.extra_usd_per_hour * (self.end_s - self.start_s) / SECONDS_PER_HOUR


@dataclass(frozen=True)
class CanaryRollout:
    """A whole rollout: the steps in order, the plan and workload it came from."""

    workload: Workload
    plan: CanaryPlan
    steps: tuple[CanaryStep, ...]
    p99_limit_ms: float
    """The threshold judges' p99 limit: the fleet's p99 before the rollout, +10%
    (``canary_judges.P99_LIMIT_MARGIN``)."""

    @property
    def duration_s(self) -> float:
        return self.steps[-1].end_s

    @property
    def extra_usd(self) -> float:
        return sum(step.extra_usd for step in self.steps)


def _at(workload: Workload, rate_rps: float, replicas: int) -> tuple[Workload, str | None]:
    """``workload`` at another rate and replica count, clamped to the model's input ranges."""
    rate = min(max(rate_rps, _RATE.minimum), _RATE.maximum)
    count = int(min(max(replicas, _REPLICAS.minimum), _REPLICAS.maximum))
    note = None
    if rate != rate_rps:
        note = (
            f"{rate_rps:.3g} req/s is outside the queueing model's {_RATE.minimum:g}–"
            f"{_RATE.maximum:g} req/s; its p99 is computed at {rate:g} req/s"
        )
    return workload.with_changes(rate_rps=rate, replicas=count), note


@dataclass(frozen=True)
class _Placement:
    """Where one step's versions run, and their p99s."""

    canary_replicas: int
    baseline_replicas: int
    extra_replicas: int
    canary_latency: LatencyResult
    baseline_latency: LatencyResult | None
    baseline_rps: float
    notes: tuple[str, ...]


def _placement(workload: Workload, plan: CanaryPlan, share: float) -> _Placement:
    """Replicas and p99s of one step. Own replicas follow Argo Rollouts' default: the canary is
    scaled to its share of the load and the old version stays at full size until 100%; a
    same-size baseline is one more deployment of the canary's size with the canary's share."""
    rate, fleet = workload.rate_rps, workload.replicas
    shadow_rps = rate * plan.shadow_share * (1.0 - share)
    canary_rps = rate * share + shadow_rps
    same_size = plan.baseline == "same-size" and share <= 0.5
    baseline_rps = rate * share if same_size else rate * (1.0 - share)
    notes: list[str] = []
    if plan.placement == "shared":
        shared, note = _at(workload, rate + shadow_rps, fleet)
        canary_latency = queueing.latency(shared)
        baseline_latency = canary_latency if baseline_rps > 0.0 else None
        counts = (fleet, fleet, 0)
        notes.append(
            "Both versions share every replica's queue, so they see the same p99; the model "
            "counts their batches together (each version's own batcher fills more slowly)."
        )
    else:
        canary_replicas = max(1, math.ceil(fleet * (canary_rps / rate) - 1e-9))
        canary_workload, note = _at(workload, canary_rps, canary_replicas)
        canary_latency = queueing.latency(canary_workload)
        baseline_latency = None
        if same_size:
            baseline_latency = queueing.latency(_at(workload, baseline_rps, canary_replicas)[0])
        elif baseline_rps > 0.0:
            baseline_workload, baseline_note = _at(workload, baseline_rps, fleet)
            baseline_latency = queueing.latency(baseline_workload)
            if baseline_note:
                notes.append(f"Baseline: {baseline_note}.")
        old = fleet if share < 1.0 else 0
        extra_baseline = canary_replicas if same_size else 0
        counts = (canary_replicas, old, canary_replicas + old + extra_baseline - fleet)
    if note:
        notes.append(f"Canary: {note}.")
    if plan.baseline == "same-size" and not same_size and share < 1.0:
        notes.append(
            f"At {share:.0%} there is no room for a baseline of the canary's size; the canary "
            "is compared with the rest of live traffic."
        )
    if share >= 1.0:
        baseline_rps, baseline_latency = 0.0, None
    return _Placement(*counts, canary_latency, baseline_latency, baseline_rps, tuple(notes))


def _error_streams(plan: CanaryPlan, canary_rps: float, baseline_rps: float) -> Streams:
    p0, p1 = plan.baseline_error_rate, plan.regressed_error_rate
    return Streams(
        ERROR_RATE, p0 if baseline_rps > 0 else None, p0, p1, p0, p1, canary_rps, baseline_rps
    )


def _p99_streams(
    plan: CanaryPlan, where: _Placement, canary_rps: float, limit_ms: float
) -> tuple[Streams, ...]:
    """The two p99 regressions' streams: requests past the baseline's p99 (for the judges that
    compare) and past ``limit_ms`` (for the threshold judges)."""
    canary, baseline = where.canary_latency, where.baseline_latency
    line = baseline.p99_ms if baseline is not None and baseline.is_stable else canary.p99_ms
    baseline_share = BASELINE_TAIL_SHARE if baseline is not None else None
    streams = []
    for metric, tail in ((P99_EVERY_REQUEST, None), (P99_SLOWEST, plan.tail_share)):
        streams.append(
            Streams(
                metric,
                baseline_share,
                share_slower_than(canary, line),
                regressed_share_slower_than(canary, line, plan.p99_regression, tail),
                share_slower_than(canary, limit_ms),
                regressed_share_slower_than(canary, limit_ms, plan.p99_regression, tail),
                canary_rps,
                where.baseline_rps,
            )
        )
    return tuple(streams)


def _step(
    workload: Workload, plan: CanaryPlan, share: float, start_s: float, limit_ms: float
) -> CanaryStep:
    rate = workload.rate_rps
    shadow_rps = rate * plan.shadow_share * (1.0 - share)
    canary_rps = rate * share + shadow_rps
    where = _placement(workload, plan, share)
    notes = list(where.notes)
    canary, baseline = where.canary_latency, where.baseline_latency
    if baseline is not None and canary.is_stable and baseline.is_stable:
        gap = canary.p99_ms / baseline.p99_ms - 1.0
        if abs(gap) >= 0.05:
            notes.append(
                f"With no regression at all the canary's p99 is {gap:+.0%} against the "
                "baseline's (different replicas and load): the judges' false alarms include it."
            )
    streams = [_error_streams(plan, canary_rps, where.baseline_rps)]
    if canary.is_stable:
        streams += _p99_streams(plan, where, canary_rps, limit_ms)
    else:
        notes.append("The canary's queue is unstable (∞): its p99 has no value to regress from.")
    return CanaryStep(
        share=share,
        start_s=start_s,
        end_s=start_s + plan.window_s,
        canary_live_rps=rate * share,
        shadow_rps=shadow_rps,
        baseline_rps=where.baseline_rps,
        canary_replicas=where.canary_replicas,
        baseline_replicas=where.baseline_replicas,
        extra_replicas=where.extra_replicas,
        extra_usd_per_hour=where.extra_replicas * price_per_replica_hour(workload),
        canary_latency=canary,
        baseline_latency=baseline,
        verdicts=tuple(judge(s, plan) for s in streams),
        notes=tuple(notes),
    )


def plan_rollout(workload: Workload, plan: CanaryPlan | None = None) -> CanaryRollout:
    """The rollout of ``plan`` on ``workload``'s fleet, step by step (the module docstring)."""
    plan = plan or CanaryPlan()
    before = queueing.latency(workload)
    limit_ms = before.p99_ms * (1.0 + canary_judges.P99_LIMIT_MARGIN)
    steps = tuple(
        _step(workload, plan, share, index * plan.window_s, limit_ms)
        for index, share in enumerate(plan.step_shares)
    )
    return CanaryRollout(workload, plan, steps, limit_ms)
