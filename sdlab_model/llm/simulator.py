"""The token-level simulator: one replica's engine, iteration by iteration, on seeded traffic.

``simulate_llm`` draws arrivals at the replica's rate (Poisson, or the deployment's Gamma gaps
split by a random router: ``_gaps_ms``) and lognormal prompt and output
lengths (one ``SeedSequence`` stream each; or whole rows of a measured ``length_sample``, from
the prompts' stream), serves them through the compiled scheduler of
``_engine_kernel`` (vLLM's: token budget, chunked prefill, admission by KV blocks, preemption by
recompute; the first ``prefix_cache_hit_share`` of each prompt's tokens, rounded down, from a
prefix cache), and reports TTFT, TPOT and end-to-end percentiles the way vLLM's benchmark does
(TPOT over requests with at least two output tokens: (finish − first token) / (output − 1)).

Run length: ``requests`` first; the p99 intervals are batch means over the measured requests
in arrival order (``BATCHES`` consecutive batches, the first ``warmup_share`` dropped). While
either interval is wider than ``rel_half_width`` of its p99 the run is repeated with twice the
requests, up to ``max_requests``; then the result says "not converged". A run whose waits keep
growing (the last quarter's mean TTFT more than twice the second quarter's and more than a
second above it) is unstable: the rate exceeds what the engine serves.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sdlab_model.llm.calibration import DEFAULT_EFFICIENCY
from sdlab_model.llm.iteration import EngineEfficiency
from sdlab_model.llm.lengths import draw_lengths
from sdlab_model.llm.workload import LlmWorkload
from sdlab_model.simulation.simulator import t_quantile_975

BATCHES = 20
PERCENTILES = (50.0, 95.0, 99.0)


@dataclass(frozen=True)
class Percentiles:
    """p50, p95, p99 of one latency (ms) and the p99's 95% interval by batch means."""

    p50_ms: float
    p95_ms: float
    p99_ms: float
    p99_low_ms: float
    p99_high_ms: float

    @property
    def relative_half_width(self) -> float:
        """Half the p99 interval's width over the p99."""
        return (self.p99_high_ms - self.p99_low_ms) / 2.0 / self.p99_ms


@dataclass(frozen=True)
class LlmSimResult:
    """What one simulation measured, and whether it can be trusted."""

    workload: LlmWorkload
    seed: int
    requests: int
    ttft: Percentiles
    tpot: Percentiles
    e2e: Percentiles
    throughput_rps: float
    output_tokens_per_s: float
    mean_batch_tokens: float
    preemptions: int
    is_stable: bool
    converged: bool
    note: str


def _percentiles(values: np.ndarray) -> Percentiles:
    p50, p95, p99 = np.percentile(values, PERCENTILES)
    batches = np.array_split(values, BATCHES)
    batch_p99 = np.array([np.percentile(batch, 99.0) for batch in batches])
    half = t_quantile_975(BATCHES - 1) * float(np.std(batch_p99, ddof=1)) / math.sqrt(BATCHES)
    return Percentiles(float(p50), float(p95), float(p99), float(p99 - half), float(p99 + half))


def _infinite() -> Percentiles:
    return Percentiles(math.inf, math.inf, math.inf, math.inf, math.inf)


def _gaps_ms(rng: np.random.Generator, workload: LlmWorkload, count: int) -> np.ndarray:
    """One replica's arrival gaps: exponential (Poisson), or the deployment's Gamma gaps thinned
    by a random router, a geometric number of them summed (a Gamma with that many shapes)."""
    cv = workload.arrival_cv
    if cv == 1.0:
        return rng.exponential(1000.0 / workload.rate_per_replica_rps, count)
    spanned = rng.geometric(1.0 / workload.replicas, count)
    return rng.gamma(spanned / (cv * cv), 1000.0 / workload.rate_rps * cv * cv)


def run_engine(workload: LlmWorkload, efficiency: EngineEfficiency, requests: int, seed: int):
    """One run of ``requests`` requests: arrival, first token, finish (ms), lengths, counters."""
    from sdlab_model.llm import _engine_kernel

    model = workload.model
    capacity = workload.kv_capacity()
    if not capacity.fits:
        raise ValueError(f"{model.name} does not fit: no KV cache is left after the weights")
    cost = workload.iteration_cost(efficiency)
    arrival_stream, prompt_stream, output_stream = (
        np.random.default_rng(stream) for stream in np.random.SeedSequence(seed).spawn(3)
    )
    arrival_ms = np.cumsum(_gaps_ms(arrival_stream, workload, requests))
    cap = min(model.max_context_tokens, capacity.tokens)
    if workload.length_sample is not None:  # whole measured rows, from the prompts' stream
        prompt, output = workload.length_sample.draw(prompt_stream, requests, cap - 1, cap)
    else:
        prompt = draw_lengths(
            prompt_stream, workload.prompt_tokens_mean, workload.prompt_tokens_cv, requests, cap - 1
        )
        output = draw_lengths(
            output_stream, workload.output_tokens_mean, workload.output_tokens_cv, requests, cap
        )
    output = np.minimum(output, cap - prompt)
    # The last prompt token is always computed: it yields the first output token.
    cached = np.minimum(
        np.floor(workload.prefix_cache_hit_share * prompt).astype(np.int64), prompt - 1
    )
    first_ms = np.full(requests, -1.0)
    finish_ms = np.full(requests, -1.0)
    preempted = np.zeros(requests, dtype=np.int64)
    counters = _engine_kernel.serve(
        arrival_ms,
        prompt,
        output,
        cached,
        workload.max_running_sequences,
        workload.max_batched_tokens,
        capacity.blocks,
        workload.kv_block_tokens,
        np.array(cost.as_tuple()),
        first_ms,
        finish_ms,
        preempted,
    )
    return arrival_ms, first_ms, finish_ms, prompt, output, counters


def _grows(ttft_ms: np.ndarray) -> bool:
    quarter = len(ttft_ms) // 4
    second = float(np.mean(ttft_ms[quarter : 2 * quarter]))
    last = float(np.mean(ttft_ms[3 * quarter :]))
    return last > 2.0 * second and last > second + 1000.0


def simulate_llm(
    workload: LlmWorkload,
    efficiency: EngineEfficiency = DEFAULT_EFFICIENCY,
    *,
    seed: int = 0,
    requests: int = 4000,
    max_requests: int = 32_000,
    rel_half_width: float = 0.1,
    warmup_share: float = 0.1,
) -> LlmSimResult:
    """Simulate one replica until the p99 intervals are tight or ``max_requests`` is spent."""
    if not isinstance(requests, int) or requests < 8 * BATCHES:
        raise ValueError(f"requests must be a whole number >= {8 * BATCHES}, got {requests!r}")
    if not isinstance(max_requests, int) or max_requests < requests:
        raise ValueError(f"max_requests must be >= requests ({requests}), got {max_requests!r}")
    if not 0.0 <= warmup_share < 0.5:
        raise ValueError(f"warmup_share must be in [0, 0.5), got {warmup_share!r}")
    if workload.rate_rps <= 0:
        raise ValueError("rate_rps must be > 0 to simulate")
    overhead = efficiency.request_overhead_ms
    while True:
        arrival, first, finish, _, output, counters = run_engine(
            workload, efficiency, requests, seed
        )
        if counters[3]:
            return _unstable(workload, seed, requests, int(counters[1]), "a request cannot fit")
        start = int(requests * warmup_share)
        ttft = first[start:] - arrival[start:] + overhead
        if _grows(ttft):
            return _unstable(workload, seed, requests, int(counters[1]), "queue keeps growing")
        several = output[start:] >= 2
        tpot = (finish[start:] - first[start:])[several] / (output[start:][several] - 1)
        result = (_percentiles(ttft), _percentiles(tpot))
        tight = all(p.relative_half_width <= rel_half_width for p in result)
        if tight or 2 * requests > max_requests:
            break
        requests *= 2
    span_s = (finish.max() - arrival[0]) / 1000.0
    return LlmSimResult(
        workload=workload,
        seed=seed,
        requests=requests,
        ttft=result[0],
        tpot=result[1],
        e2e=_percentiles(finish[start:] - arrival[start:] + overhead),
        throughput_rps=requests / span_s,
        output_tokens_per_s=float(output.sum()) / span_s,
        mean_batch_tokens=float(counters[5]) / max(1, int(counters[0])),
        preemptions=int(counters[1]),
        is_stable=True,
        converged=tight,
        note="" if tight else "not converged: the p99 intervals are wider than asked",
    )


def _unstable(workload, seed, requests, preemptions, why) -> LlmSimResult:
    return LlmSimResult(
        workload=workload,
        seed=seed,
        requests=requests,
        ttft=_infinite(),
        tpot=_infinite(),
        e2e=_infinite(),
        throughput_rps=math.nan,
        output_tokens_per_s=math.nan,
        mean_batch_tokens=math.nan,
        preemptions=preemptions,
        is_stable=False,
        converged=False,
        note=f"unstable: {why}",
    )
