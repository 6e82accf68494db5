"""Analytic TTFT, TPOT and end-to-end latency of a continuously batching LLM engine.

One replica with Poisson arrivals at rate λ (the deployment's rate over its replicas), prompt
lengths P and output lengths O (lognormal, ``lengths``), iteration times from the roofline of
``iteration``, and vLLM's scheduler (token budget B per iteration, chunked prefill).

- Decoding. Each request decodes for O − 1 iterations; a decoding request shares each iteration
  with the N others decoding, so an iteration takes t_d(N + 1) plus the time prefill chunks
  add. A prompt is prefilled in chunks of c = min(P, B − N − 1) tokens, each adding
  Δ(c) = t(N + 1 + c) − t_d(N + 1); prefill therefore takes a share u = λ E[(P / c) Δ(c)] of the
  engine's time and the mean iteration seen while decoding is T = t_d(N + 1) / (1 − u). Little's
  law closes the loop: N = λ E[O − 1] T, solved for N by bisection (Orca, Yu et al., OSDI 2022;
  Sarathi-Serve, Agrawal et al., OSDI 2024, for chunked prefill).
- Time to first token. Prompts queue first come first served for the prefill share of the
  budget: a full iteration prefills B − N tokens in t_full, τ = t_full / (B − N) per token, so
  the prefill queue is M/G/1 with service Pτ and load ρ = λ E[P] τ. Its wait has mean
  λ τ² E[P²] / (2 (1 − ρ)) (Pollaczek–Khinchine) and is taken as 0 with probability 1 − ρ and
  exponential otherwise. TTFT = request overhead + the rest of the running iteration (uniform)
  + that wait + the request's own prefill, P / c iterations of t(N + c).
- Slots. At most C = min(max running sequences, KV tokens / tokens a running sequence holds)
  sequences run; when N + ρ approaches C requests also wait for a slot (Erlang C, M/M/C, on the
  request's residence time).
- TPOT of a request is its decode time over O − 1: mean T, variance from the prefill chunks
  that land in its window (compound Poisson) and from N's drift over the window; taken as gamma.
  End-to-end is TTFT + (O − 1) TPOT, normal per output length, over the output distribution.

Unstable (ρ ≥ 1, u ≥ 1, no fixed point below the budget or the slots) is ∞ with
``is_stable=False``. ``approximate`` marks where the checks against ``simulate_llm`` (tuned on
one grid, reported on another: ``scripts/llm_accuracy.py``, docs/llm_model.md) found this model
more than 15% off: loads near a limit, very short outputs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sdlab_model.llm.calibration import DEFAULT_EFFICIENCY
from sdlab_model.llm.iteration import EngineEfficiency, iteration_cost
from sdlab_model.llm.kv_cache import kv_capacity
from sdlab_model.llm.lengths import NODES, length_nodes
from sdlab_model.llm.workload import LlmWorkload
from sdlab_model.queues.erlang import erlang_c_array

APPROXIMATE_PREFILL_LOAD = 0.8
"""Prefill load ρ above which the M/G/1 wait is flagged approximate (tuned on the tuning grid)."""
APPROXIMATE_SLOT_LOAD = 0.8
"""Share of the running slots in use above which the estimate is flagged approximate."""
APPROXIMATE_SHORT_OUTPUT = 4.0
"""Mean output tokens below which TPOT (a mean over few iterations) is flagged approximate."""
QUANTILES = (0.50, 0.95, 0.99)
_BISECTIONS = 60
_WH_FLOOR = 1e-9


@dataclass(frozen=True)
class LlmEstimate:
    """The analytic model's answer for one workload (times in ms; ∞ when unstable)."""

    workload: LlmWorkload
    ttft_ms: tuple[float, float, float]
    tpot_ms: tuple[float, float, float]
    e2e_ms: tuple[float, float, float]
    running_sequences: float
    prefill_load: float
    slot_load: float
    slots: float
    kv_tokens: int
    binding: str
    is_stable: bool
    approximate: bool
    goodput_rps: float
    output_tokens_per_s: float
    output_tokens_per_s_per_gpu: float
    usd_per_hour: float | None
    usd_per_million_output_tokens: float | None

    @property
    def ttft_p99_ms(self) -> float:
        return self.ttft_ms[2]

    @property
    def tpot_p99_ms(self) -> float:
        return self.tpot_ms[2]

    @property
    def e2e_p99_ms(self) -> float:
        return self.e2e_ms[2]

    @property
    def meets_targets(self) -> bool:
        """Whether every p99 is within its target."""
        w = self.workload
        return (
            self.ttft_p99_ms <= w.ttft_p99_target_ms
            and self.tpot_p99_ms <= w.tpot_p99_target_ms
            and self.e2e_p99_ms <= w.e2e_p99_target_ms
        )


def _time(cost: np.ndarray, tokens, pairs, kv):
    """The roofline iteration time (``IterationCost.iteration_ms``), cells along axis 0."""
    c = [cost[:, k].reshape((-1,) + (1,) * (np.ndim(tokens) - 1)) for k in range(7)]
    compute = c[0] * tokens + c[1] * pairs
    memory = c[2] + c[3] * kv
    return np.where(tokens > 0, c[6] + np.maximum(compute, memory) + c[4] + c[5] * tokens, 0.0)


def _cells(workloads, efficiency):
    """The per-workload inputs as arrays with the workloads along axis 0."""
    costs, budgets, slots, kv_tokens, rates, prompts, outputs = [], [], [], [], [], [], []
    for w in workloads:
        model = w.model
        capacity = kv_capacity(
            model,
            w.gpu,
            precision=w.precision,
            tensor_parallel=w.tensor_parallel,
            memory_utilization=w.gpu_memory_utilization,
            activation_reserve_gb=w.activation_reserve_gb,
            block_tokens=w.kv_block_tokens,
        )
        cost = iteration_cost(
            model,
            w.gpu,
            precision=w.precision,
            tensor_parallel=w.tensor_parallel,
            efficiency=efficiency,
        )
        costs.append(cost.as_tuple())
        budgets.append(w.max_batched_tokens)
        slots.append(w.max_running_sequences)
        kv_tokens.append(capacity.tokens)
        rates.append(w.rate_per_replica_rps / 1000.0)
        cap = max(2, min(model.max_context_tokens, capacity.tokens))
        prompts.append(length_nodes(w.prompt_tokens_mean, w.prompt_tokens_cv, cap - 1))
        outputs.append(length_nodes(w.output_tokens_mean, w.output_tokens_cv, cap))
    return (
        np.array(costs),
        np.array(budgets, dtype=float),
        np.array(slots, dtype=float),
        np.array(kv_tokens, dtype=float),
        np.array(rates),
        np.array(prompts),
        np.array(outputs),
    )


def _decode_state(cost, budget, rate, prompt, output, others):
    """Iteration times and prefill share with ``others`` sequences decoding (one per cell)."""
    mean_decodes = np.mean(np.maximum(output - 1.0, 0.0), axis=1)
    mean_prompt = prompt.mean(axis=1)
    context = mean_prompt + np.mean(np.maximum(output - 1.0, 0.0) * output / 2.0, axis=1) / (
        np.maximum(mean_decodes, 1e-9)
    )
    seen = others + 1.0
    t_decode = _time(cost, seen, seen * context, seen * context)
    chunk = np.minimum(prompt, np.maximum(budget - seen, 1.0)[:, None])
    chunks = prompt / chunk
    pairs = chunk * prompt / 2.0
    kv = chunk + prompt * (chunks - 1.0) / (2.0 * chunks)
    with_chunk = _time(
        cost,
        seen[:, None] + chunk,
        (seen * context)[:, None] + pairs,
        (seen * context)[:, None] + kv,
    )
    extra = chunks * (with_chunk - t_decode[:, None])
    share = rate * extra.mean(axis=1)
    return t_decode, share, extra, context, mean_decodes


def _solve_running(cost, budget, rate, prompt, output, limit):
    """N with N = λ E[O − 1] t_d(N + 1) / (1 − u(N)), by bisection below ``limit``."""

    def excess(n):
        t_decode, share, *_ = _decode_state(cost, budget, rate, prompt, output, n)
        mean_decodes = np.mean(np.maximum(output - 1.0, 0.0), axis=1)
        period = np.where(share < 1.0, t_decode / np.maximum(1.0 - share, 1e-12), np.inf)
        return n - rate * mean_decodes * period

    low = np.zeros_like(rate)
    high = np.maximum(limit, 0.0)
    feasible = excess(high) >= 0.0
    for _ in range(_BISECTIONS):
        middle = (low + high) / 2.0
        above = excess(middle) >= 0.0
        high = np.where(above, middle, high)
        low = np.where(above, low, middle)
    return high, feasible


def _normal_cdf(z):
    # Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7): numpy has no erf and scipy is not a dependency.
    x = np.abs(z) / math.sqrt(2.0)
    t = 1.0 / (1.0 + 0.3275911 * x)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    erf = 1.0 - poly * np.exp(-x * x)
    return 0.5 * (1.0 + np.sign(z) * erf)


def _gamma_cdf(x, mean, variance):
    """Gamma CDF with this mean and variance (Wilson–Hilferty); a step where variance is 0."""
    shape = mean * mean / np.maximum(variance, _WH_FLOOR)
    ratio = np.cbrt(np.maximum(x, 0.0) / mean)
    z = (ratio - (1.0 - 1.0 / (9.0 * shape))) / np.sqrt(1.0 / (9.0 * shape))
    return np.where(variance > _WH_FLOOR, _normal_cdf(z), (x >= mean).astype(float))


def _mixture_quantiles(cdf, low, high, weights):
    """Quantiles ``QUANTILES`` of a mixture: ``cdf(x)`` per node (cells × nodes), by bisection."""
    results = []
    for q in QUANTILES:
        lo, hi = low.copy(), high.copy()
        for _ in range(_BISECTIONS):
            middle = (lo + hi) / 2.0
            below = (cdf(middle[:, None]) * weights).sum(axis=1) < q
            lo = np.where(below, middle, lo)
            hi = np.where(below, hi, middle)
        results.append(hi)
    return np.stack(results, axis=1)


@dataclass(frozen=True)
class _Grid:
    """The model's arrays, one row per workload (see ``llm_grid``)."""

    ttft_ms: np.ndarray
    tpot_ms: np.ndarray
    e2e_ms: np.ndarray
    running: np.ndarray
    prefill_load: np.ndarray
    slot_load: np.ndarray
    slots: np.ndarray
    kv_from_cache: np.ndarray
    budget_load: np.ndarray
    memory_bound: np.ndarray
    stable: np.ndarray
    approximate: np.ndarray
    met_share: np.ndarray


def _ttft_parts(cost, budget, rate, prompt, n, context, period, efficiency):
    """TTFT's pieces per cell: own-prefill nodes, wait (mean, probability), load ρ."""
    mean_prompt = prompt.mean(axis=1)
    square_prompt = (prompt * prompt).mean(axis=1)
    free = np.maximum(budget - n - 1.0, 1.0)
    decode_pairs = (n + 1.0) * context
    full_pairs = decode_pairs + free * square_prompt / (2.0 * mean_prompt)
    t_full = _time(cost, n + 1.0 + free, full_pairs, decode_pairs + free)
    tau = t_full / free
    rho = rate * mean_prompt * tau
    wait = rate * tau * tau * square_prompt / (2.0 * np.maximum(1.0 - rho, 1e-12))
    own_free = np.maximum(budget - n, 1.0)[:, None]
    chunk = np.minimum(prompt, own_free)
    chunks = prompt / chunk
    own = chunks * _time(
        cost,
        n[:, None] + chunk,
        (n * context)[:, None] + chunk * prompt / 2.0,
        (n * context)[:, None] + chunk + prompt * (chunks - 1.0) / (2.0 * chunks),
    )
    return own + efficiency.request_overhead_ms, wait, rho


def llm_grid(workloads, efficiency: EngineEfficiency = DEFAULT_EFFICIENCY) -> _Grid:
    """The analytic model for many workloads at once (one numpy pass; see the module doc)."""
    cost, budget, slot_cap, kv_tokens, rate, prompt, output = _cells(workloads, efficiency)
    blocks = np.array([w.kv_block_tokens for w in workloads], dtype=float)
    zero = np.zeros_like(rate)
    *_, context, mean_decodes = _decode_state(cost, budget, rate, prompt, output, zero)
    kv_slots = kv_tokens / (context + blocks / 2.0)
    slots = np.minimum(slot_cap, kv_slots)
    n, feasible = _solve_running(
        cost, budget, rate, prompt, output, np.minimum(slots, budget - 2.0) - 1.0
    )
    t_decode, share, extra, context, mean_decodes = _decode_state(
        cost, budget, rate, prompt, output, n
    )
    period = t_decode / np.maximum(1.0 - share, 1e-12)
    own, wait, rho = _ttft_parts(cost, budget, rate, prompt, n, context, period, efficiency)
    residence = own.mean(axis=1) + mean_decodes * period
    servers = np.maximum(np.floor(slots), 1.0)
    offered = rate * residence
    stable = feasible & (share < 1.0) & (rho < 1.0) & (offered < servers) & (kv_tokens > 0)
    slot_wait_probability = np.where(
        stable, erlang_c_array(servers.astype(int), np.minimum(offered, servers - 1e-9)), 1.0
    )
    slot_wait = slot_wait_probability * residence / np.maximum(servers - offered, 1e-12)
    waits = np.clip(rho + slot_wait_probability * (1.0 - rho), 1e-12, 1.0)
    wait_given = (wait + slot_wait) / waits
    busy = 1.0 - np.exp(-(n + rho))
    residual = np.array([0.0, 1.0 / 6.0, 0.5, 5.0 / 6.0])
    residual_weight = np.stack([1.0 - busy, busy / 3.0, busy / 3.0, busy / 3.0], axis=1)
    base = own[:, :, None] + residual[None, None, :] * period[:, None, None]
    base = base.reshape(len(rate), -1)
    ttft_weight = np.repeat(residual_weight[:, None, :], NODES, axis=1).reshape(len(rate), -1)
    ttft_weight = ttft_weight / NODES

    def ttft_cdf(x):
        late = np.maximum(x - base, 0.0)
        tail = waits[:, None] * np.exp(-late / wait_given[:, None])
        return np.where(x >= base, 1.0 - tail, 0.0)

    ttft = _mixture_quantiles(
        ttft_cdf, zero, base.max(axis=1) + 60.0 * wait_given + 1.0, ttft_weight
    )
    decodes = np.maximum(output - 1.0, 0.0)
    several = (output >= 1.5).astype(float)
    window = np.maximum(decodes, 1.0) * period[:, None]
    square_extra = (extra * extra).mean(axis=1)
    variance = rate[:, None] * window * square_extra[:, None] / np.maximum(decodes, 1.0) ** 2
    slope = (
        _time(cost, n + 2.0, (n + 2.0) * context, (n + 2.0) * context) - t_decode
    ) / np.maximum(1.0 - share, 1e-12)
    decode_span = (mean_decodes * period)[:, None]
    variance += (slope * slope * n)[:, None] * np.minimum(1.0, decode_span / window)
    tpot_weight = several / np.maximum(several.sum(axis=1, keepdims=True), 1.0)

    def tpot_cdf(x):
        return _gamma_cdf(x, period[:, None], variance)

    tpot_high = (period[:, None] + 30.0 * np.sqrt(variance)).max(axis=1) + 1.0
    tpot = _mixture_quantiles(tpot_cdf, zero, tpot_high, tpot_weight)
    ttft_mean = (base * ttft_weight).sum(axis=1) + waits * wait_given
    ttft_variance = (base * base * ttft_weight).sum(axis=1) - (base * ttft_weight).sum(axis=1) ** 2
    ttft_variance += waits * 2.0 * wait_given**2 - (waits * wait_given) ** 2
    e2e_mean = ttft_mean[:, None] + decodes * period[:, None]
    e2e_sd = np.sqrt(np.maximum(ttft_variance[:, None] + decodes**2 * variance, 1e-12))

    def e2e_cdf(x):
        return _normal_cdf((x - e2e_mean) / e2e_sd)

    e2e_high = (e2e_mean + 8.0 * e2e_sd).max(axis=1)
    e2e = _mixture_quantiles(e2e_cdf, zero, e2e_high, np.full_like(output, 1.0 / NODES))
    targets = np.array(
        [[w.ttft_p99_target_ms, w.tpot_p99_target_ms, w.e2e_p99_target_ms] for w in workloads]
    )
    met = (ttft_cdf(targets[:, :1]) * ttft_weight).sum(axis=1)
    met *= (tpot_cdf(targets[:, 1:2]) * tpot_weight).sum(axis=1) + (1.0 - several.mean(axis=1))
    met *= e2e_cdf(targets[:, 2:3]).mean(axis=1)
    budget_load = (n + 1.0 + rate * prompt.mean(axis=1) * period) / budget
    decode_compute = cost[:, 0] * (n + 1.0) + cost[:, 1] * (n + 1.0) * context
    memory_bound = cost[:, 2] + cost[:, 3] * (n + 1.0) * context >= decode_compute
    slot_load = offered / servers
    short = np.array([w.output_tokens_mean < APPROXIMATE_SHORT_OUTPUT for w in workloads])
    approximate = (rho > APPROXIMATE_PREFILL_LOAD) | (slot_load > APPROXIMATE_SLOT_LOAD) | short
    return _Grid(
        ttft_ms=np.where(stable[:, None], ttft, np.inf),
        tpot_ms=np.where(stable[:, None], tpot, np.inf),
        e2e_ms=np.where(stable[:, None], e2e, np.inf),
        running=n,
        prefill_load=rho,
        slot_load=slot_load,
        slots=slots,
        kv_from_cache=kv_slots < slot_cap,
        budget_load=budget_load,
        memory_bound=memory_bound,
        stable=stable,
        approximate=approximate & stable,
        met_share=np.where(stable, met, 0.0),
    )


def _binding(grid: _Grid, index: int) -> str:
    slot_name = "KV memory" if grid.kv_from_cache[index] else "running-sequence cap"
    loads = {
        "prefill compute": grid.prefill_load[index],
        slot_name: grid.slot_load[index],
        "token budget": grid.budget_load[index],
    }
    name = max(loads, key=loads.get)
    if loads[name] >= 0.5 or not grid.stable[index]:
        return name
    return "decode bandwidth" if grid.memory_bound[index] else "decode compute"


def llm_estimates(
    workloads, efficiency: EngineEfficiency = DEFAULT_EFFICIENCY
) -> list[LlmEstimate]:
    """``llm_latency`` for each workload, computed together."""
    workloads = list(workloads)
    grid = llm_grid(workloads, efficiency)
    estimates = []
    for index, w in enumerate(workloads):
        stable = bool(grid.stable[index])
        output_rate = w.rate_rps * w.output_tokens_mean if stable else math.nan
        price = w.gpu.usd_per_gpu_hour
        usd_per_hour = None if price is None else price * w.gpus
        per_million = None
        if usd_per_hour is not None and stable and output_rate > 0:
            per_million = usd_per_hour / (output_rate * 3600.0) * 1e6
        estimates.append(
            LlmEstimate(
                workload=w,
                ttft_ms=tuple(float(v) for v in grid.ttft_ms[index]),
                tpot_ms=tuple(float(v) for v in grid.tpot_ms[index]),
                e2e_ms=tuple(float(v) for v in grid.e2e_ms[index]),
                running_sequences=float(grid.running[index]),
                prefill_load=float(grid.prefill_load[index]),
                slot_load=float(grid.slot_load[index]),
                slots=float(grid.slots[index]),
                kv_tokens=int(
                    kv_capacity(
                        w.model,
                        w.gpu,
                        precision=w.precision,
                        tensor_parallel=w.tensor_parallel,
                        memory_utilization=w.gpu_memory_utilization,
                        activation_reserve_gb=w.activation_reserve_gb,
                        block_tokens=w.kv_block_tokens,
                    ).tokens
                ),
                binding=_binding(grid, index),
                is_stable=stable,
                approximate=bool(grid.approximate[index]),
                goodput_rps=float(w.rate_rps * grid.met_share[index]),
                output_tokens_per_s=output_rate,
                output_tokens_per_s_per_gpu=output_rate / w.gpus,
                usd_per_hour=usd_per_hour,
                usd_per_million_output_tokens=per_million,
            )
        )
    return estimates


def llm_latency(
    workload: LlmWorkload, efficiency: EngineEfficiency = DEFAULT_EFFICIENCY
) -> LlmEstimate:
    """TTFT, TPOT and end-to-end p50/p95/p99, throughput, goodput and cost of one workload."""
    return llm_estimates([workload], efficiency)[0]
