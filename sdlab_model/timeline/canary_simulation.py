"""A Monte Carlo of the canary judges: simulated canaries, request by request count, to check
what ``canary_judges`` states (``scripts/canary_judges.py``, docs/canary.md).

Each simulated canary gets, at every metric interval, Poisson request counts for the canary and
the baseline at their rates, and binomial bad counts among them; each judge then runs as its tool
does, on the counts themselves (the z-test's pooled shares, Kayenta's per-interval shares with
their real ties, a threshold judge's per-interval share past its limit). Nothing here is shared
with the calculations it checks but the judges' constants.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from sdlab_model.timeline import canary_judges, sequential_tests
from sdlab_model.timeline.canary import CanaryPlan, Streams

_NORMAL = NormalDist()
JUDGES = ("sequential", "repeated", "kayenta", "flagger", "argo")


@dataclass(frozen=True)
class Simulated:
    """One judge's simulated outcome, as ``canary_judges.JudgeOutcome``, over ``trials``."""

    false_alarm: float
    detected: float
    mean_s: float | None
    p90_s: float | None
    trials: int


def _counts(rng, rate_rps: float, interval_s: float, share: float, shape) -> tuple:
    requests = rng.poisson(rate_rps * interval_s, shape)
    return requests, rng.binomial(requests, share)


def _z_test_first(canary, baseline, thresholds: np.ndarray) -> np.ndarray:
    """First look (0-based) at which the pooled z-test on the counts so far passes that look's
    threshold, −1 if none."""
    n1, x1, n0, x0 = (np.cumsum(counts, axis=1) for counts in (*canary, *baseline))
    with np.errstate(divide="ignore", invalid="ignore"):
        pooled = (x1 + x0) / (n1 + n0)
        spread = np.sqrt(pooled * (1.0 - pooled) * (1.0 / n1 + 1.0 / n0))
        z = (x1 / n1 - x0 / n0) / spread
    z = np.where(np.isfinite(z), z, -np.inf)
    return _first(z > thresholds)


def _first(passed: np.ndarray) -> np.ndarray:
    return np.where(passed.any(axis=1), passed.argmax(axis=1), -1)


def _kayenta_first(canary, baseline, looks: int) -> np.ndarray:
    """Mann–Whitney at the step's end on the per-interval shares (ties as midranks, the tie-
    corrected normal approximation), one-sided at Kayenta's level: −1 or the last look."""
    (n1, x1), (n0, x0) = canary, baseline
    with np.errstate(divide="ignore", invalid="ignore"):
        c = np.where(n1 > 0, x1 / n1, 0.0)
        b = np.where(n0 > 0, x0 / n0, 0.0)
    u = (c[:, :, None] > b[:, None, :]).sum(axis=(1, 2)) + 0.5 * (
        c[:, :, None] == b[:, None, :]
    ).sum(axis=(1, 2))
    pooled = np.sort(np.concatenate([c, b], axis=1), axis=1)
    total = pooled.shape[1]
    # Tie groups: run lengths of equal values along each sorted row.
    starts = np.concatenate(
        [np.ones((pooled.shape[0], 1), bool), pooled[:, 1:] != pooled[:, :-1]], axis=1
    )
    group = np.cumsum(starts, axis=1) - 1 + (np.arange(pooled.shape[0]) * total)[:, None]
    sizes = np.bincount(group.ravel(), minlength=pooled.shape[0] * total).reshape(-1, total)
    ties = (sizes**3 - sizes).sum(axis=1)
    m = n = looks
    null_variance = m * n / 12.0 * ((total + 1) - ties / (total * (total - 1)))
    quantile = _NORMAL.inv_cdf(1.0 - (1.0 - canary_judges.KAYENTA_CONFIDENCE) / 2.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        passed = (u - m * n / 2.0) > quantile * np.sqrt(null_variance)
    passed &= null_variance > 0
    return np.where(passed, looks - 1, -1)


def _threshold_first(requests, past, limit: float, needed: int) -> np.ndarray:
    failed = past > limit * requests
    return _first(np.cumsum(failed, axis=1) >= needed)


def _summary(null_first: np.ndarray, alt_first: np.ndarray, interval_s: float) -> Simulated:
    flagged = alt_first >= 0
    looks = int(max(alt_first.max(initial=0), null_first.max(initial=0))) + 1
    by_look = np.cumsum(np.bincount(alt_first[flagged], minlength=looks)) / alt_first.size
    times = (alt_first[flagged] + 1) * interval_s
    return Simulated(
        float((null_first >= 0).mean()),
        float(flagged.mean()),
        float(times.mean()) if flagged.any() else None,
        canary_judges.p90_between_looks(by_look, interval_s),
        null_first.size,
    )


def simulate_judges(
    streams: Streams, plan: CanaryPlan, *, trials: int = 10_000, seed: int = 0, chunk: int = 2_000
) -> dict[str, Simulated]:
    """Each judge's simulated false-alarm rate and detection times on ``streams`` over one step
    of ``plan``, from ``trials`` canaries without and ``trials`` with the regression. One random
    stream per input (``SeedSequence(seed).spawn``)."""
    looks, interval = canary_judges.looks_in(plan.window_s, plan.interval_s)
    constant = sequential_tests.obrien_fleming_constant(looks, plan.false_alarm)
    thresholds = {
        "sequential": constant * np.sqrt(looks / np.arange(1, looks + 1)),
        "repeated": np.full(looks, _NORMAL.inv_cdf(1.0 - plan.false_alarm)),
    }
    limit = 1.0 - canary_judges.FLAGGER_MIN_SUCCESS
    needed = {"flagger": canary_judges.FLAGGER_FAILED_CHECKS}
    needed["argo"] = canary_judges.ARGO_FAILURE_LIMIT + 1
    has_baseline = streams.baseline_share is not None
    first: dict[str, list[list[np.ndarray]]] = {judge: [[], []] for judge in JUDGES}
    rng_null, rng_alt = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    for done in range(0, trials, chunk):
        shape = (min(chunk, trials - done), looks)
        for case, (rng, share, limit_share) in enumerate(
            (
                (rng_null, streams.canary_null_share, streams.limit_null_share),
                (rng_alt, streams.canary_share, streams.limit_share),
            )
        ):
            canary = _counts(rng, streams.canary_rate_rps, interval, share, shape)
            past = rng.binomial(canary[0], limit_share)
            for judge in ("flagger", "argo"):
                first[judge][case].append(_threshold_first(canary[0], past, limit, needed[judge]))
            if has_baseline:
                baseline = _counts(
                    rng, streams.baseline_rate_rps, interval, streams.baseline_share, shape
                )
                for judge, threshold in thresholds.items():
                    first[judge][case].append(_z_test_first(canary, baseline, threshold))
                first["kayenta"][case].append(_kayenta_first(canary, baseline, looks))
    return {
        judge: _summary(np.concatenate(null), np.concatenate(alt), interval)
        for judge, (null, alt) in first.items()
        if null
    }
