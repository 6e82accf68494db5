"""Canary judges: how often each kind of judge flags a healthy canary, and how soon a sick one.

A judge watches one metric of the canary for one rollout step of ``window_s`` seconds and gets a
new point every ``interval_s`` (the metric interval): ``K = ⌊window_s / interval_s⌋`` looks. Each
request is *bad* (failed; or slower than a latency line) with probability ``baseline_share`` on
the baseline and ``canary_share`` on the canary; requests arrive as Poisson streams at
``canary_rate_rps`` and ``baseline_rate_rps``. Three kinds of judge, each as real tools run
them, and one to compare them with:

- ``sequential_z_test``: at every look, a one-sided pooled two-proportion z-test on the counts
  so far, against an O'Brien–Fleming boundary ``Z_k > C·√(K/k)`` whose constant ``C`` holds the
  false alarms over the whole step to the stated rate (Jennison & Turnbull, *Group Sequential
  Methods*, 2000, ch. 2). ``repeated_z_test``, for comparison, repeats a fixed-window test at
  every look (``Z_k > z₁₋α`` at each): its false alarms go well past α, the criticism of
  issue 25.
- ``kayenta_judge``: Kayenta's ``NetflixACAJudge`` classifies a metric with
  ``MannWhitneyClassifier(tolerance = 0.25, confLevel = 0.98)``: a Mann–Whitney U test of the
  canary's per-interval values against the baseline's, "High" when the 98% confidence interval of
  the shift lies above 0, a one-sided 1% test (github.com/spinnaker/kayenta,
  ``kayenta-judge/.../classifiers/metric/MannWhitneyClassifier.scala``). A canary score is
  produced once per canary interval ("The frequency at which a canary score is generated. The
  recommended interval is at least 30 minutes", Spinnaker Deck's ``canary.help.ts``; Kayenta's
  standalone analysis runs lifetime / interval judgements): with the default 30-minute step,
  once, at its end (modelled so at any step length). The tolerance's bounds around the
  Hodges–Lehmann estimate are left out.
- ``threshold_judge``: Flagger and Argo Rollouts check the canary alone against a fixed limit at
  every interval. Flagger's built-in ``request-success-rate`` check has ``thresholdRange.min: 99``
  and ``request-duration`` (the p99) a ``max`` in ms, both with ``interval: 1m``, and the
  analysis rolls back once ``threshold`` checks have failed (``threshold: 5`` in its docs'
  examples; docs.flagger.app/usage/metrics). Argo Rollouts fails a metric when its failed
  measurements exceed ``failureLimit`` (``analysis/analysis.go``, ``assessMetricStatus``:
  ``result.Failed > metric.FailureLimit``), an integer that is 0 when not set: the first failed
  check.

Each gives a ``JudgeOutcome``: the false-alarm rate over the step, the chance it flags the
regression within the step, and the mean and 90th-percentile time to flag. None of them is a Monte
Carlo; ``scripts/canary_judges.py`` is the Monte Carlo that checks them (docs/canary.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from sdlab_model.timeline.poisson_counts import (
    poisson_below,
    poisson_support,
)
from sdlab_model.timeline.sequential_tests import (
    counts_crossing_by_look,
    crossing_by_look,
    obrien_fleming_constant,
    score_drift,
)

_NORMAL = NormalDist()

MAX_LOOKS = 240
"""Looks per step a judge is modelled with: a longer step is judged every ``window/240`` (the
recursion's cost grows with the looks; 240 is 4 hours at one look a minute)."""
SEQUENTIAL_TEST = (
    "pooled two-proportion z-test on the counts so far, at every look, against an "
    "O'Brien–Fleming boundary"
)

KAYENTA_CONFIDENCE = 0.98
"""``NetflixACAJudge``'s ``confLevel``: a two-sided 98% interval, so a one-sided 1% test."""

FLAGGER_MIN_SUCCESS = 0.99
"""Flagger's ``request-success-rate`` ``thresholdRange.min: 99`` (percent)."""
FLAGGER_FAILED_CHECKS = 5
"""Flagger's ``analysis.threshold: 5``: failed checks before it rolls back."""
ARGO_FAILURE_LIMIT = 0
"""Argo Rollouts' ``failureLimit`` default: the analysis fails at the first failed measurement."""
P99_LIMIT_MARGIN = 0.10
"""The p99 limit a threshold judge is given: the fleet's p99 before the rollout +10% (Flagger's
``request-duration`` takes an absolute ``max`` in ms; an operator sets it a little above what the
old version does)."""
SEQUENTIAL = "sequential z-test"
REPEATED = "fixed-window z-test at every look"
KAYENTA = "Kayenta (Mann–Whitney, 98%)"
FLAGGER = f"Flagger ({FLAGGER_FAILED_CHECKS} failed checks)"
ARGO = f"Argo Rollouts (failureLimit {ARGO_FAILURE_LIMIT})"


@dataclass(frozen=True)
class JudgeOutcome:
    """One judge on one metric over one step: false alarms, and when a regression is flagged.

    Times are from the start of the step, in whole metric intervals (a judge acts on a point).
    ``mean_s`` is over the canaries flagged within the step; ``p90_s`` is when 90% of them are
    flagged (``p90_between_looks``), None when fewer than 90% are ("not within this step").
    """

    judge: str
    false_alarm: float
    """Chance a canary with no regression is flagged somewhere in the step."""
    detected: float
    """Chance a regressed canary is flagged within the step."""
    mean_s: float | None
    p90_s: float | None
    looks: int
    interval_s: float
    rough: bool = False
    """True where the figures rest on an approximation that few bad requests loosen (a point or
    two; docs/canary.md): ``ROUGH_STEP_COUNT`` and ``ROUGH_LOOK_COUNT``."""


ROUGH_STEP_COUNT = 100
"""Bad canary requests expected over a step below which a z-test's Brownian figures are rough."""
ROUGH_LOOK_COUNT = 5
"""Bad requests expected per interval, on either version, below which Kayenta's are rough
(Cochran's rule of five for a normal approximation of counts)."""


def looks_in(window_s: float, interval_s: float) -> tuple[int, float]:
    """The looks a judge gets in a step and the interval between them (``MAX_LOOKS`` at most)."""
    interval = max(interval_s, window_s / MAX_LOOKS)
    return max(1, math.floor(window_s / interval + 1e-9)), interval


def _outcome(
    judge: str,
    null_by_look: np.ndarray,
    alt_by_look: np.ndarray,
    interval_s: float,
    rough: bool = False,
) -> JudgeOutcome:
    """A judge's outcome from its chance of first flagging at each look, without and with the
    regression."""
    detected = min(1.0, float(alt_by_look.sum()))  # a sum of chances can round past 1
    times = interval_s * np.arange(1, alt_by_look.size + 1)
    mean_s = float((alt_by_look * times).sum() / detected) if detected > 1e-12 else None
    p90_s = p90_between_looks(np.cumsum(alt_by_look), interval_s)
    return JudgeOutcome(
        judge,
        min(1.0, float(null_by_look.sum())),
        detected,
        mean_s,
        p90_s,
        alt_by_look.size,
        interval_s,
        rough,
    )


P90 = 0.9


def p90_between_looks(flagged_by_look: np.ndarray, interval_s: float) -> float | None:
    """When 90% of regressed canaries have been flagged, from the share flagged by each look:
    interpolated linearly between the two looks around 90% (a judge flags only at a look, so a
    quantile on the looks alone would jump a whole interval on a tiny change of chance), no
    earlier than the first look that flags any; None when fewer than 90% are flagged within the
    step."""
    if flagged_by_look[-1] < P90:
        return None
    k = int(np.searchsorted(flagged_by_look, P90 - 1e-12))
    if k == 0:
        return interval_s
    below, above = flagged_by_look[k - 1], flagged_by_look[k]
    if below <= 0.0:
        return interval_s * (k + 1)  # nothing is flagged before this look
    return interval_s * (k + (P90 - below) / (above - below))


def _z_test_walks(
    shares: tuple[float, float, float],
    rates: tuple[float, float],
    interval_s: float,
    thresholds: np.ndarray,
) -> tuple[list[np.ndarray], str]:
    """Each look's chance of a first pass of ``thresholds`` (z per look), without and with the
    regression: summed over the counts where they are few enough, else the Brownian walk; and
    which of the two it was."""
    baseline_share, *canary_shares = shares
    looks = thresholds.size
    walks = [
        counts_crossing_by_look(baseline_share, share, *rates, interval_s, thresholds)
        for share in canary_shares
    ]
    if all(walk is not None for walk in walks):
        return walks, "counts"
    boundary = thresholds * np.sqrt(np.arange(1.0, looks + 1))
    walks = []
    for share in canary_shares:
        drift, spread = score_drift(baseline_share, share, *rates, interval_s)
        walks.append(crossing_by_look(drift, spread, boundary, looks))
    return walks, "Brownian"


def _brownian_is_rough(method: str, bad_requests: float) -> bool:
    return method == "Brownian" and bad_requests < ROUGH_STEP_COUNT


def sequential_z_test(
    baseline_share: float,
    canary_null_share: float,
    canary_share: float,
    canary_rate_rps: float,
    baseline_rate_rps: float,
    interval_s: float,
    window_s: float,
    false_alarm: float,
) -> JudgeOutcome:
    """The sequential z-test's outcome (the module docstring).

    ``canary_null_share`` is the canary's bad share with no regression (the baseline's, unless
    the two versions run on different loads). The boundary's constant is set, as a tool sets it,
    for ``false_alarm`` over the step on the Brownian approximation; the outcome's
    ``false_alarm`` is the chance the judge really flags a canary at ``canary_null_share``:
    summed over the bad-request counts where they are few (``counts_crossing_by_look``; there
    the skewed counts can move it a point or two from the target), by the Brownian walk
    (``crossing_by_look``) where they are many.
    """
    looks, interval = looks_in(window_s, interval_s)
    constant = obrien_fleming_constant(looks, false_alarm)
    thresholds = constant * np.sqrt(looks / np.arange(1.0, looks + 1))
    walks, method = _z_test_walks(
        (baseline_share, canary_null_share, canary_share),
        (canary_rate_rps, baseline_rate_rps),
        interval,
        thresholds,
    )
    rough = _brownian_is_rough(method, canary_rate_rps * canary_null_share * interval * looks)
    return _outcome(SEQUENTIAL, walks[0], walks[1], interval, rough)


def repeated_z_test(
    baseline_share: float,
    canary_null_share: float,
    canary_share: float,
    canary_rate_rps: float,
    baseline_rate_rps: float,
    interval_s: float,
    window_s: float,
    false_alarm: float,
) -> JudgeOutcome:
    """The same z-test at a fixed-window level, ``Z_k > z₁₋α`` at every look: what a judge
    that looks every interval with a test sized for one window does (issue 25's criticism).
    Its false alarms over the step are far above ``false_alarm``; computed as
    ``sequential_z_test``'s."""
    looks, interval = looks_in(window_s, interval_s)
    thresholds = np.full(looks, _NORMAL.inv_cdf(1.0 - false_alarm))
    walks, method = _z_test_walks(
        (baseline_share, canary_null_share, canary_share),
        (canary_rate_rps, baseline_rate_rps),
        interval,
        thresholds,
    )
    rough = _brownian_is_rough(method, canary_rate_rps * canary_null_share * interval * looks)
    return _outcome(REPEATED, walks[0], walks[1], interval, rough)


def interval_failure_chance(
    rate_rps: float, interval_s: float, share: float, limit: float
) -> float:
    """Chance an interval's bad share exceeds ``limit``: its bad count ``X`` and good count
    ``G`` are independent Poisson counts, and it fails when ``X > limit·(X + G)``, i.e.
    ``G < X·(1 − limit)/limit``. Exact up to ``poisson_below``'s approximation."""
    requests = rate_rps * interval_s
    if share <= 0.0:
        return 0.0
    bad, weights = poisson_support(requests * share)
    below = poisson_below(bad * (1.0 - limit) / limit, requests * (1.0 - share))
    return float(np.clip((weights * below).sum(), 0.0, 1.0))


def _nth_failure_by_look(failure: float, needed: int, looks: int) -> np.ndarray:
    """Chance the ``needed``-th failed check comes at look ``k`` (negative binomial)."""
    k = np.arange(1, looks + 1, dtype=float)
    out = np.zeros(looks)
    if failure <= 0.0:
        return out
    if failure >= 1.0:
        out[needed - 1 :] = 0.0
        if needed <= looks:
            out[needed - 1] = 1.0
        return out
    valid = k >= needed
    kv = k[valid]
    log_choose = (
        np.frompyfunc(math.lgamma, 1, 1)(kv).astype(float)
        - math.lgamma(needed)
        - np.frompyfunc(math.lgamma, 1, 1)(kv - needed + 1.0).astype(float)
    )
    out[valid] = np.exp(
        log_choose + needed * math.log(failure) + (kv - needed) * math.log1p(-failure)
    )
    return out


def threshold_judge(
    name: str,
    canary_null_share: float,
    canary_share: float,
    canary_rate_rps: float,
    interval_s: float,
    window_s: float,
    limit: float,
    failed_checks: int,
) -> JudgeOutcome:
    """A threshold judge: each interval fails when the canary's bad share is above ``limit``
    (a success rate under ``1 − limit``, or a p99 above a line past which ``limit`` of requests
    lie); it rolls back at the ``failed_checks``-th failed interval. The intervals' counts are
    independent, so the outcome is exact (``interval_failure_chance``, negative binomial)."""
    looks, interval = looks_in(window_s, interval_s)
    by_look = [
        _nth_failure_by_look(
            interval_failure_chance(canary_rate_rps, interval, share, limit), failed_checks, looks
        )
        for share in (canary_null_share, canary_share)
    ]
    return _outcome(name, by_look[0], by_look[1], interval)


def _rate_values(rate_rps: float, interval_s: float, share: float) -> tuple[np.ndarray, np.ndarray]:
    """An interval's bad share as a judge reads it (bad count over the interval's expected
    requests) and its probabilities."""
    requests = rate_rps * interval_s
    if share <= 0.0:
        return np.zeros(1), np.ones(1)
    counts, weights = poisson_support(requests * share)
    return counts / requests, weights


def _expected_zero_ties(zero_c: float, zero_b: float, m: int, n: int) -> float:
    """``E[t³ − t]`` for ``t`` the zeros among ``m`` canary values (each zero with chance
    ``zero_c``) and ``n`` baseline values (``zero_b``): ``E[t(t−1)(t−2)] + 3E[t(t−1)]``, the
    factorial moments of a sum of two binomials."""
    pairs = m * (m - 1) * zero_c**2 + 2 * m * n * zero_c * zero_b + n * (n - 1) * zero_b**2
    triples = (
        m * (m - 1) * (m - 2) * zero_c**3
        + 3 * m * (m - 1) * n * zero_c**2 * zero_b
        + 3 * m * n * (n - 1) * zero_c * zero_b**2
        + n * (n - 1) * (n - 2) * zero_b**3
    )
    return triples + 3.0 * pairs


def _mann_whitney_pass(canary, baseline, m: int, n: int, quantile: float) -> float:
    """Chance ``U − mn/2 > z·σ₀`` for ``m`` canary and ``n`` baseline values drawn from the two
    discrete distributions: ``U`` normal with Lehmann's moments (1951, "Consistency and
    unbiasedness of certain nonparametric tests", Ann. Math. Statist. 22), ``σ₀`` the null
    spread with the expected tie correction of the zero values (only they tie: the judge's
    shares are over each interval's own request count)."""
    (c, cw), (b, bw) = canary, baseline
    order = np.argsort(b)
    b, bw = b[order], bw[order]
    below_b = np.concatenate(([0.0], np.cumsum(bw)))
    # For each canary value: P(B < c) + ½P(B = c).
    left = below_b[np.searchsorted(b, c, "left")]
    right = below_b[np.searchsorted(b, c, "right")]
    over_b = left + 0.5 * (right - left)
    order_c = np.argsort(c)
    cs, cws = c[order_c], cw[order_c]
    below_c = np.concatenate(([0.0], np.cumsum(cws)))
    left_c = below_c[np.searchsorted(cs, b, "left")]
    right_c = below_c[np.searchsorted(cs, b, "right")]
    under_c = 1.0 - left_c - 0.5 * (right_c - left_c)  # P(C > b) + ½P(C = b)
    theta = float((cw * over_b).sum())
    canary_pair = float((bw * under_c**2).sum())  # E over B of P(C > B)², two canary values
    baseline_pair = float((cw * over_b**2).sum())
    mean = m * n * theta
    variance = (
        m
        * n
        * (
            theta * (1.0 - theta)
            + (m - 1) * (canary_pair - theta**2)
            + (n - 1) * (baseline_pair - theta**2)
        )
    )
    ties = _expected_zero_ties(float(cw[c == 0.0].sum()), float(bw[b == 0.0].sum()), m, n)
    total = m + n
    null_variance = m * n / 12.0 * ((total + 1) - ties / (total * (total - 1)))
    if null_variance <= 0.0:
        return 0.0  # every value tied: U is mn/2 and the test never rejects
    threshold = m * n / 2.0 + quantile * math.sqrt(null_variance)
    if variance <= 1e-12 * (m * n) ** 2:
        return float(mean > threshold)  # one version's values all above the other's
    return 1.0 - _NORMAL.cdf((threshold - mean) / math.sqrt(variance))


def kayenta_judge(
    baseline_share: float,
    canary_null_share: float,
    canary_share: float,
    canary_rate_rps: float,
    baseline_rate_rps: float,
    interval_s: float,
    window_s: float,
) -> JudgeOutcome:
    """The Kayenta-style judge (the module docstring): one Mann–Whitney test at the step's end
    on the ``K`` per-interval bad shares of each version.

    Approximations: ``U`` normal with its exact moments under the two count distributions
    (30 values a side by default), each interval's share taken over its expected request count.
    """
    looks, interval = looks_in(window_s, interval_s)
    quantile = _NORMAL.inv_cdf(1.0 - (1.0 - KAYENTA_CONFIDENCE) / 2.0)
    baseline = _rate_values(baseline_rate_rps, interval, baseline_share)
    chances = [
        _mann_whitney_pass(
            _rate_values(canary_rate_rps, interval, share), baseline, looks, looks, quantile
        )
        for share in (canary_null_share, canary_share)
    ]
    by_look = [np.zeros(looks), np.zeros(looks)]
    by_look[0][-1], by_look[1][-1] = chances
    fewest = interval * min(canary_rate_rps * canary_null_share, baseline_rate_rps * baseline_share)
    return _outcome(KAYENTA, by_look[0], by_look[1], interval, fewest < ROUGH_LOOK_COUNT)


def judge_descriptions(false_alarm: float) -> dict[str, str]:
    """What each judge does, for a reader (the page's notes under the tables)."""
    return {
        SEQUENTIAL: (
            f"a {SEQUENTIAL_TEST}, set so a healthy canary is flagged {false_alarm:.0%} of the "
            "time over the whole step (recursive integration of the counts as a Brownian walk; "
            "approximate where a step sees few bad requests, checked by a Monte Carlo)"
        ),
        REPEATED: (
            f"the same z-test at {1 - false_alarm:.0%} with no correction for looking every "
            "interval: what a judge sized for one window does when it looks every minute, for "
            "comparison"
        ),
        KAYENTA: (
            "Kayenta's default judge: a Mann–Whitney test of the per-interval values at 98% "
            "(one-sided 1%), once a canary interval (Spinnaker recommends at least 30 minutes): "
            "here once, at the end of the step"
        ),
        FLAGGER: (
            f"Flagger's built-in checks: each interval fails when the success rate is under "
            f"{FLAGGER_MIN_SUCCESS:.0%} or the p99 over its limit; rolls back at the "
            f"{FLAGGER_FAILED_CHECKS}th failed check (its analysis threshold)"
        ),
        ARGO: (
            "Argo Rollouts' analysis with the same per-interval checks and its default "
            "failure limit of 0: the first failed check aborts"
        ),
    }
