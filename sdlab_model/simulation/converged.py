"""A simulation run until its p99 has converged, on one representative replica where it can be.

``simulate`` serves a fixed number of requests; on a large fleet that buys each of its
replicas x models batchers only a handful of batches, and the p99 it reports is the start-up
transient. ``simulate_converged`` sizes the run by what convergence needs instead:

- Symmetry. Behind a random or round-robin balancer every replica sees the same kind of stream,
  so the fleet's latency distribution is one replica's. Random routing thins the arrival stream
  by 1/R (Poisson stays Poisson at rate/R; a Gamma renewal stream becomes one whose gap is the sum
  of a Geometric(1/R) number of gaps); round robin gives a replica every R-th arrival (a gap is
  the sum of R gaps). Each request's model is an independent Zipf draw either way. So one
  replica, simulated alone on that stream, stands for the fleet exactly, and the budget buys R
  times more batches per batcher. Least request couples the replicas (it compares two), so it
  keeps the whole fleet; the central queue is one queue already.
- Warm-up by MSER-5: the first requests are dropped up to the point that minimises the marginal
  standard error of the rest (batched in fives); a cut past the middle of the run means the run
  has not left its transient. MSER watches the mean, so the
  p99s of the remaining halves are compared too: if they differ beyond their noise, the first
  half counts as warm-up as well.
- The p99's 95% interval by batch means over one long run: the measured requests, in arrival
  order, are cut into ``MEANS_BATCHES`` consecutive batches; the interval is the pooled p99 ±
  ``t * sd / sqrt(k)`` of the batches' own p99s, with 20 batches, or 10 or 5 when the warm-up
  is longer than a batch (a batch should outlast the queue's memory). One run pays the warm-up
  once, where replications would each pay it, and the warm-up is the costly part on exactly the
  fleets that need this (card 5's runs were all transient).
- Stop rule: converged when the warm-up is over, the batcher a typical request meets has seen at
  least ``MIN_BATCHES_PER_BATCHER`` batches, and the interval's half-width is within
  ``rel_half_width`` of the p99. Otherwise a longer run is sized from the shortfall (simulated
  time for the warm-up and the batches, the square of the interval's ratio for its width), and
  when ``max_requests`` (every run's requests together) cannot pay for it the result says "not
  converged, p99 within [a, b]", or "p99 at least a" when the run was still climbing or its
  batchers saw too few batches to bound it above (a run from empty errs low).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sdlab_model.simulation.simulator import (
    MAX_REQUESTS_PER_CALL,
    Trace,
    arrival_gaps,
    percentiles,
    routing_draws,
    run_trace,
    t_quantile_975,
)
from sdlab_model.workload import Workload

LAB_MAX_REQUESTS_REPLICA = 160_000
"""The Lab's budget for one representative replica: requests of every run together. A replica
costs at most what the whole fleet does per request, but a first run that falls short is run
again inside the longer one, so this stays below the Lab's earlier 200,000."""
LAB_MAX_REQUESTS_FLEET = 140_000
"""The Lab's budget when the whole fleet is simulated: a long run costs more per request than
the five short ones the Lab ran before, so fewer requests keep the cost within theirs
(``scripts/convergence_check.py`` times both)."""
LAB_REL_HALF_WIDTH = 0.02
"""The Lab's target: the p99's 95% interval within ±2% of it."""
MEANS_BATCHES = 20
"""Batches of the batch-means interval (Law ch. 9 suggests 10 to 30)."""
MIN_MEANS_BATCHES = 5
"""Fewest batches of an interval: a run too short for 20 batches that each outlast its warm-up
states a wider interval from fewer, longer ones."""
MIN_BATCHES_PER_BATCHER = 20
"""Batches the batcher a typical request meets must have dispatched after warm-up."""
MIN_REQUESTS = 40_000
"""Shortest run: 20 batches of 2,000 requests, each p99 the 20th largest of its batch."""
PILOT_SHARE = 0.25
"""The first run's share of the budget at most; the rest pays for one longer run if needed."""
MSER_BATCH = 5
CDF_POINTS = 250
# Runs sized from an estimate overshoot a little, so the estimate's own noise rarely costs a run.
_SIZING_MARGIN = 1.25


@dataclass(frozen=True, eq=False)
class ConvergedSim:
    """What ``simulate_converged`` found, small enough to cache many of.

    Percentiles and ``p99_ci_ms`` (95%, batch means) come from the last run, after its warm-up.
    ``simulated_requests`` counts every run's requests (the CPU cost); ``measured_requests``,
    ``warmup_requests``, ``simulated_s`` and ``warmup_s`` describe the last run.
    ``batches_per_batcher``: batches dispatched after warm-up by the batcher a typical request
    meets (the mean over batchers weighted by their traffic). ``slot_utilization``: the busy
    share of the simulated slots over the measured span, at the batch sizes that formed.
    ``p99_drift_ms``: the last run's second-half p99 minus its first half's where they differ
    beyond their noise (then the first half counts as warm-up too), else 0. A run that has not
    converged while its p99 climbs or with fewer than ``MIN_BATCHES_PER_BATCHER`` batches per
    batcher states no upper bound: its interval is ``(low, inf)``, "p99 at least low".
    ``cdf_latency_ms`` / ``cdf_share``: ``CDF_POINTS`` points of the measured latencies' CDF
    (float32). Unstable workloads are not simulated: every percentile is ``inf``,
    ``is_stable`` and ``converged`` are False.
    """

    p50_ms: float
    p95_ms: float
    p99_ms: float
    p99_ci_ms: tuple[float, float]
    p99_drift_ms: float
    converged: bool
    is_stable: bool
    simulated_requests: int
    measured_requests: int
    warmup_requests: int
    simulated_s: float
    warmup_s: float
    batches_per_batcher: float
    representative_replica: bool
    replicas_simulated: int
    slot_utilization: float
    mean_batch_size: float
    cdf_latency_ms: np.ndarray
    cdf_share: np.ndarray
    seed: int
    note: str

    def error_text(self, model_p99_ms: float) -> str:
        """A model's p99 against this simulation's, e.g. '+4.1% vs simulation'."""
        if not math.isfinite(model_p99_ms):
            return "unstable where the simulation is not"
        return f"{100.0 * (model_p99_ms - self.p99_ms) / self.p99_ms:+.1f}% vs simulation"

    def interval_text(self) -> str | None:
        """'95% interval 30.1–31.9 ms', 'p99 at least 117 ms (not converged)', or None."""
        low, high = self.p99_ci_ms
        if not math.isfinite(low):
            return None
        if not math.isfinite(high):
            return f"p99 at least {low:.3g} ms (not converged)"
        if high <= low:
            return None
        return f"95% interval {interval_ms_text(low, high)} ms"

    @property
    def p99_rel_half_width(self) -> float:
        """The interval's half-width over the p99 (``inf`` when there is none)."""
        low, high = self.p99_ci_ms
        if not (math.isfinite(low) and math.isfinite(high) and self.p99_ms > 0):
            return math.inf
        return (high - low) / (2.0 * self.p99_ms)


@dataclass(frozen=True)
class _Plan:
    """What is simulated, and the traffic share of the batcher a typical request meets."""

    system: Workload
    representative: bool
    replicas_simulated: int
    typical_batcher_share: float


@dataclass(frozen=True)
class _Analysis:
    """One run's statistics after warm-up."""

    warmup: int
    warmup_over: bool
    drift_ms: float
    measured: np.ndarray
    p99_ms: float
    half_width_ms: float
    batches_per_batcher: float
    simulated_s: float
    warmup_s: float


def representative_replica_gaps(
    workload: Workload, gaps_rng: np.random.Generator, count_rng: np.random.Generator, count: int
) -> np.ndarray:
    """``count`` gaps (ms) between the arrivals one replica of ``workload``'s fleet receives.

    Random routing keeps each arrival with probability 1/R, so a gap spans a Geometric(1/R)
    number of the stream's gaps; round robin keeps every R-th, so it spans R. The stream's gaps
    are Gamma(1/cv^2, mean * cv^2) (exponential at cv 1), and a sum of K of them is
    Gamma(K/cv^2, mean * cv^2): one draw per replica gap, whatever R.

    Approximations:
        None: the replica's stream has exactly the distribution it has inside the fleet.

    Sources:
        Cinlar, *Introduction to Stochastic Processes* (1975), ch. 4: thinning a Poisson
        process; a geometric sum of renewal gaps is a renewal gap.
    """
    replicas = workload.replicas
    mean_gap_ms = 1000.0 / workload.rate_rps
    if replicas == 1:
        return arrival_gaps(workload, gaps_rng, count, mean_gap_ms)
    if workload.lb_policy == "random" and workload.arrival_cv == 1.0:
        return arrival_gaps(workload, gaps_rng, count, mean_gap_ms * replicas)
    if workload.lb_policy == "random":
        spanned = count_rng.geometric(1.0 / replicas, count).astype(float)
    elif workload.lb_policy == "round_robin":
        spanned = np.full(count, float(replicas))
    else:
        raise ValueError(f"lb_policy={workload.lb_policy!r} has no representative replica")
    cv2 = workload.arrival_cv * workload.arrival_cv
    return gaps_rng.gamma(spanned / cv2, mean_gap_ms * cv2)


def _plan(workload: Workload) -> _Plan:
    shares = workload.model_shares
    if workload.is_central_queue:
        return _Plan(workload, False, workload.replicas, 1.0)
    # Traffic-weighted share of one batcher: sum of squared model shares over the replicas.
    concentration = float(np.sum(shares * shares))
    if workload.lb_policy in ("random", "round_robin") and workload.replicas > 1:
        return _Plan(workload.with_changes(replicas=1), True, 1, concentration)
    return _Plan(workload, False, workload.replicas, concentration / workload.replicas)


def _trace(
    workload: Workload, plan: _Plan, seed: int, count: int
) -> tuple[Trace, np.ndarray | None]:
    """``count`` arrivals served by the simulated system, and each one's model (``None`` for the
    central queue). A longer run with the same seed extends a shorter one: one stream per random
    input, each drawn in order."""
    gap_stream, count_stream, routing_stream = np.random.SeedSequence(seed).spawn(3)
    gaps_rng = np.random.default_rng(gap_stream)
    if plan.representative:
        count_rng = np.random.default_rng(count_stream)
        gaps_ms = representative_replica_gaps(workload, gaps_rng, count_rng, count)
    else:
        gaps_ms = arrival_gaps(workload, gaps_rng, count, 1000.0 / workload.rate_rps)
    if plan.system.is_central_queue:
        return run_trace(plan.system, np.cumsum(gaps_ms)), None
    routing = routing_draws(plan.system, np.random.default_rng(routing_stream), count)
    return run_trace(plan.system, np.cumsum(gaps_ms), None, routing), routing[0]


def mser_truncation(values: np.ndarray, batch: int = MSER_BATCH) -> int:
    """Warm-up length by MSER-``batch``: the prefix whose removal minimises the marginal
    standard error of the remaining batch means, searched over all but the last tenth (a cut
    past the middle means the run has not left its transient).

    Approximations:
        It looks at the mean; a transient that moves only the tail, not the mean, goes unseen.

    Sources:
        White, "An effective truncation heuristic for bias reduction in simulation output",
        *Simulation* 69(6), 1997; Franklin & White, "Stationarity tests and MSER-5", WSC 2008.
    """
    means_count = values.size // batch
    if means_count < 10:
        return 0
    means = values[: means_count * batch].reshape(means_count, batch).mean(axis=1)
    suffix_sum = np.cumsum(means[::-1])[::-1]
    suffix_square = np.cumsum((means * means)[::-1])[::-1]
    remaining = np.arange(means_count, 0, -1, dtype=float)
    spread = np.maximum(suffix_square - suffix_sum * suffix_sum / remaining, 0.0)
    statistic = spread / (remaining * remaining)
    # The statistic's last few values rest on a handful of means: too noisy to search.
    return int(np.argmin(statistic[: means_count - means_count // 10])) * batch


def batch_means_half_width(measured_ms: np.ndarray, batches: int = MEANS_BATCHES) -> float:
    """Half-width (ms) of the batch-means 95% interval for the p99 of ``measured_ms``.

    ``measured_ms`` in arrival order is cut into ``batches`` consecutive parts; the half-width
    is ``t_{0.975, k-1} * sd(part p99s) / sqrt(k)``.

    Approximations:
        Consecutive parts of one run are nearly, not exactly, independent; parts much longer
        than the queue's memory make the difference small.

    Sources:
        Law, *Simulation Modeling and Analysis* (5th ed.), ch. 9, the method of batch means.
    """
    part_p99 = [percentiles(part, (99,))[0] for part in np.array_split(measured_ms, batches)]
    return t_quantile_975(batches - 1) * float(np.std(part_p99, ddof=1)) / math.sqrt(batches)


def p99_drift_ms(measured_ms: np.ndarray, batches: int = MEANS_BATCHES) -> tuple[float, float]:
    """The second half's p99 minus the first half's, and the noise it is judged against (the
    two halves' batch-means half-widths added in quadrature, a 95% test of no drift)."""
    half = measured_ms.size // 2
    first, second = measured_ms[:half], measured_ms[half:]
    part_batches = max(batches // 2, MIN_MEANS_BATCHES)
    drift = percentiles(second, (99,))[0] - percentiles(first, (99,))[0]
    noise = math.hypot(
        batch_means_half_width(first, part_batches), batch_means_half_width(second, part_batches)
    )
    return drift, noise


def _per_batcher(workload, plan, trace, model_of, warmup) -> float:
    """Batches after warm-up of the batcher a typical request meets (traffic-weighted mean)."""
    measured_batches = trace.batch_first >= warmup
    if model_of is None:
        return float(np.count_nonzero(measured_batches))
    models = workload.models_hosted
    batches_by_model = np.bincount(model_of[trace.batch_first[measured_batches]], minlength=models)
    requests_by_model = np.bincount(model_of[warmup:], minlength=models)
    weights = requests_by_model / max(int(model_of.size - warmup), 1)
    return float(np.sum(weights * batches_by_model)) / plan.replicas_simulated


def _analyse(
    workload: Workload, plan: _Plan, trace: Trace, model_of: np.ndarray | None
) -> _Analysis:
    latency_ms = trace.latency_ms
    warmup = mser_truncation(latency_ms)
    # MSER watches the mean; a p99 that still climbs between the halves means a longer
    # transient (a fleet whose every batcher has seen a few batches): drop the first half too.
    drift_ms, noise_ms = p99_drift_ms(latency_ms[warmup:])
    # The tolerance keeps a p99 that is one exact value (a service time) from "drifting" by ulps.
    drifting = abs(drift_ms) > max(noise_ms, 1e-9 * float(np.max(latency_ms)))
    if drifting:
        warmup += (latency_ms.size - warmup) // 2
    measured = latency_ms[warmup:]
    # Batches shorter than the warm-up (the queue's memory) are correlated: use fewer, longer.
    means_batches = MEANS_BATCHES
    while means_batches > MIN_MEANS_BATCHES and warmup * means_batches > measured.size:
        means_batches //= 2
    return _Analysis(
        warmup=warmup,
        warmup_over=not drifting and 2 * warmup <= latency_ms.size,
        drift_ms=drift_ms if drifting else 0.0,
        measured=measured,
        p99_ms=percentiles(measured, (99,))[0],
        half_width_ms=batch_means_half_width(measured, means_batches),
        batches_per_batcher=_per_batcher(workload, plan, trace, model_of, warmup),
        simulated_s=float(trace.arrival_ms[-1]) / 1000.0,
        warmup_s=float(trace.arrival_ms[warmup]) / 1000.0,
    )


def _shortfall(analysis: _Analysis, rel_half_width: float) -> list[str]:
    """Why the run has not converged, as phrases for the note (empty when it has)."""
    reasons = []
    if analysis.drift_ms:
        reasons.append(
            f"its p99 still moved by {analysis.drift_ms:+.3g} ms between the halves of the run"
        )
    elif not analysis.warmup_over:
        reasons.append(
            f"its warm-up is not over ({analysis.warmup_s:.3g} of {analysis.simulated_s:.3g} "
            "simulated s)"
        )
    if analysis.batches_per_batcher < MIN_BATCHES_PER_BATCHER:
        reasons.append(
            f"{analysis.batches_per_batcher:.3g} batches per batcher, under "
            f"{MIN_BATCHES_PER_BATCHER}"
        )
    relative = analysis.half_width_ms / analysis.p99_ms if analysis.p99_ms > 0 else 0.0
    if relative > rel_half_width:
        reasons.append(f"interval ±{relative:.1%}, over ±{rel_half_width:.1%}")
    return reasons


def _longer_run(analysis: _Analysis, count: int, rel_half_width: float) -> int:
    """Requests a run needs to converge, from this run's shortfall (at least 1.5 x ``count``).

    At a fixed arrival rate requests are simulated time: the warm-up should end in the first
    quarter, the batches per batcher grow with the measured span, and the interval's width
    shrinks as one over its square root.
    """
    measured = analysis.measured.size
    needed = count
    if not analysis.warmup_over:
        needed = max(needed, 4 * analysis.warmup)
    if 0 < analysis.batches_per_batcher < MIN_BATCHES_PER_BATCHER:
        scale = MIN_BATCHES_PER_BATCHER / analysis.batches_per_batcher
        needed = max(needed, analysis.warmup + math.ceil(measured * scale))
    target_ms = rel_half_width * analysis.p99_ms
    if analysis.half_width_ms > target_ms > 0:
        scale = (analysis.half_width_ms / target_ms) ** 2
        needed = max(needed, analysis.warmup + math.ceil(measured * scale))
    return max(math.ceil(needed * _SIZING_MARGIN), math.ceil(1.5 * count))


def _first_run(plan: _Plan, max_requests: int) -> int:
    """Requests of the first run: enough simulated time for the typical batcher to receive
    ``2 * MIN_BATCHES_PER_BATCHER`` requests, if that is within ``PILOT_SHARE`` of the budget;
    else the whole budget at once, since a rerun would repeat the first run's requests."""
    wanted = math.ceil(2 * MIN_BATCHES_PER_BATCHER / plan.typical_batcher_share)
    if wanted > max(MIN_REQUESTS, int(PILOT_SHARE * max_requests)):
        return max_requests
    return min(max(wanted, MIN_REQUESTS), max_requests)


def _check_arguments(seed: object, rel_half_width: object, max_requests: object) -> None:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a whole number >= 0, got {seed!r}")
    if isinstance(rel_half_width, bool) or not isinstance(rel_half_width, (int, float)):
        raise ValueError(f"rel_half_width must be a number, got {rel_half_width!r}")
    if not 0.0 < rel_half_width < 1.0:
        raise ValueError(f"rel_half_width={rel_half_width!r} is outside the allowed range (0, 1)")
    if max_requests is None:
        return
    whole = isinstance(max_requests, (int, np.integer)) and not isinstance(max_requests, bool)
    if not whole or not MIN_REQUESTS <= max_requests <= MAX_REQUESTS_PER_CALL:
        raise ValueError(
            f"max_requests={max_requests!r} is outside the allowed range "
            f"[{MIN_REQUESTS:,}, {MAX_REQUESTS_PER_CALL:,}] (whole requests)"
        )


def simulate_converged(
    workload: Workload,
    *,
    seed: int = 0,
    rel_half_width: float = LAB_REL_HALF_WIDTH,
    max_requests: int | None = None,
) -> ConvergedSim:
    """Simulate ``workload`` until its p99's 95% interval is within ``rel_half_width`` of it, or
    until ``max_requests`` (every run together) cannot pay for a longer run.

    ``max_requests=None`` is the Lab's budget: ``LAB_MAX_REQUESTS_REPLICA`` when one
    representative replica is simulated, ``LAB_MAX_REQUESTS_FLEET`` when the whole fleet is.

    One representative replica for random and round-robin balancers, the whole fleet for least
    request and the central queue (see the module docstring). Each run starts empty; a longer
    run repeats the shorter one's arrivals and continues them. The same arguments always give
    the same result; the defaults are the Lab's.

    Approximations:
        Finite runs: the p99 carries the sampling error its interval states, and batch means of
        one run give a slightly narrow interval when the batches are short against the queue's
        memory. Warm-up is detected on the mean latency (MSER-5). Arrivals stop after the last
        request. Deterministic service, no model residency.

    Sources:
        Law, *Simulation Modeling and Analysis* (5th ed.), ch. 9 (batch means, sequential
        stopping on a relative half-width); White (1997) for MSER; Cinlar (1975) for thinning.
    """
    _check_arguments(seed, rel_half_width, max_requests)
    seed = int(seed)
    if workload.rate_rps >= workload.capacity_rps:
        return _unstable(workload, seed)
    plan = _plan(workload)
    if max_requests is None:
        max_requests = LAB_MAX_REQUESTS_REPLICA if plan.representative else LAB_MAX_REQUESTS_FLEET
    count = _first_run(plan, max_requests)
    spent = 0
    while True:
        trace, model_of = _trace(workload, plan, seed, count)
        spent += count
        analysis = _analyse(workload, plan, trace, model_of)
        reasons = _shortfall(analysis, rel_half_width)
        remaining = max_requests - spent
        longer = min(_longer_run(analysis, count, rel_half_width), remaining)
        if not reasons or longer <= count:
            break
        # A run too short to leave room for a longer one after it might as well take it all.
        count = remaining if remaining - longer < 1.5 * longer else longer
    return _result(workload, plan, trace, analysis, reasons, spent, seed)


def _slot_utilization(plan: _Plan, trace: Trace, warmup: int) -> float:
    """Busy share of the simulated slots between the first measured and the last arrival."""
    start_ms, end_ms = trace.arrival_ms[warmup], trace.arrival_ms[-1]
    if end_ms <= start_ms:
        return math.nan
    first = trace.batch_first
    busy_from = np.maximum(trace.dispatch_ms[first], start_ms)
    busy_to = np.minimum(trace.completion_ms[first], end_ms)
    busy_ms = float(np.sum(np.maximum(busy_to - busy_from, 0.0)))
    return busy_ms / (plan.system.servers * (end_ms - start_ms))


def _cdf(measured_ms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``CDF_POINTS`` order statistics of the measured latencies and their shares (float32)."""
    picks = np.unique(np.linspace(0, measured_ms.size - 1, CDF_POINTS).astype(np.int64))
    # One sort beats a partition at 250 indices (numpy selects them one after another).
    latency = np.sort(measured_ms)[picks].astype(np.float32)
    share = ((picks + 1) / measured_ms.size).astype(np.float32)
    latency.flags.writeable = False
    share.flags.writeable = False
    return latency, share


def _result(workload, plan, trace, analysis, reasons, spent, seed) -> ConvergedSim:
    p50, p95, p99 = percentiles(analysis.measured, (50, 95, 99))
    # Halves that disagree widen the interval by their difference. A p99 still climbing from
    # the empty start, or batchers that saw a few batches each (a fleet's transient lasts tens
    # of them), leave no upper bound this run can give.
    margin = analysis.half_width_ms + abs(analysis.drift_ms)
    open_above = analysis.drift_ms > 0 or analysis.batches_per_batcher < MIN_BATCHES_PER_BATCHER
    high = math.inf if reasons and open_above else p99 + margin
    interval = (p99 - margin, high)
    kept = trace.batch_first >= analysis.warmup
    sizes = trace.batch_sizes[kept]
    cdf_latency, cdf_share = _cdf(analysis.measured)
    return ConvergedSim(
        p50_ms=p50,
        p95_ms=p95,
        p99_ms=p99,
        p99_ci_ms=interval,
        p99_drift_ms=analysis.drift_ms,
        converged=not reasons,
        is_stable=True,
        simulated_requests=spent,
        measured_requests=int(analysis.measured.size),
        warmup_requests=analysis.warmup,
        simulated_s=analysis.simulated_s,
        warmup_s=analysis.warmup_s,
        batches_per_batcher=analysis.batches_per_batcher,
        representative_replica=plan.representative,
        replicas_simulated=plan.replicas_simulated,
        slot_utilization=_slot_utilization(plan, trace, analysis.warmup),
        mean_batch_size=float(np.mean(sizes)) if sizes.size else math.nan,
        cdf_latency_ms=cdf_latency,
        cdf_share=cdf_share,
        seed=seed,
        note=_note(workload, plan, analysis, interval, reasons),
    )


def _ms(value: float, extra_digits: int = 0) -> str:
    """'31.7', '1,234': three significant digits (or whole ms from 100), plus ``extra_digits``."""
    if abs(value) >= 100:
        return f"{value:,.{extra_digits}f}"
    return f"{value:#.{3 + extra_digits}g}" if extra_digits else f"{value:.3g}"


def interval_ms_text(low_ms: float, high_ms: float) -> str:
    """'30.1–31.9': with the fewest extra digits (up to two) that tell the two ends apart, or
    '≈31.7' where even those do not (never '31.7–31.7')."""
    for extra_digits in (0, 1, 2):
        low, high = _ms(low_ms, extra_digits), _ms(high_ms, extra_digits)
        if low != high:
            return f"{low}–{high}"
    return f"≈{_ms(low_ms)}"


def _note(workload, plan, analysis, interval, reasons) -> str:
    """One or two sentences a person reads beside the p99."""
    if plan.representative:
        who = (
            f"one representative replica of {workload.replicas} "
            f"({workload.lb_policy.replace('_', ' ')} gives each the same stream)"
        )
    elif workload.is_central_queue:
        who = "the one central queue"
    elif workload.replicas == 1:
        who = "the one replica"
    else:
        who = f"the whole fleet of {workload.replicas} (least request couples its replicas)"
    low, high = interval
    run = (
        f"Simulated {who}: {analysis.measured.size:,} requests measured over "
        f"{analysis.simulated_s - analysis.warmup_s:.3g} simulated s after "
        f"{analysis.warmup_s:.3g} s of warm-up, {analysis.batches_per_batcher:,.0f} batches per "
        "batcher."
    )
    if not reasons:
        p99 = _ms(analysis.p99_ms)
        return f"Converged: p99 {p99} ms, 95% interval {interval_ms_text(low, high)} ms. {run}"
    why = "; ".join(reasons)
    if math.isinf(high):
        return f"Not converged: p99 at least {_ms(low)} ms, still climbing ({why}). {run}"
    return f"Not converged: p99 within [{_ms(low)}, {_ms(high)}] ms ({why}). {run}"


def _unstable(workload: Workload, seed: int) -> ConvergedSim:
    rho = workload.rate_rps / workload.capacity_rps
    empty = np.empty(0, dtype=np.float32)
    empty.flags.writeable = False
    return ConvergedSim(
        p50_ms=math.inf,
        p95_ms=math.inf,
        p99_ms=math.inf,
        p99_ci_ms=(math.inf, math.inf),
        p99_drift_ms=0.0,
        converged=False,
        is_stable=False,
        simulated_requests=0,
        measured_requests=0,
        warmup_requests=0,
        simulated_s=0.0,
        warmup_s=0.0,
        batches_per_batcher=0.0,
        representative_replica=False,
        replicas_simulated=0,
        slot_utilization=1.0,
        mean_batch_size=float(workload.effective_max_batch_size),
        cdf_latency_ms=empty,
        cdf_share=empty,
        seed=seed,
        note=(
            f"Not simulated: unstable (∞). {workload.rate_rps:g} req/s is at or beyond capacity "
            f"({workload.capacity_rps:.4g} req/s, utilization {rho:.3g}); the queue grows "
            "without bound, so every percentile is infinite."
        ),
    )
