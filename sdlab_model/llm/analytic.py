"""Analytic TTFT, TPOT and end-to-end latency of a continuously batching LLM engine.

One replica with Poisson (or Gamma-gap, below) arrivals at rate λ (the deployment's rate over
its replicas), prompt
lengths P and output lengths O (lognormal, ``lengths``, or measured, ``length_sample``: each at
the same quantile nodes, independent of each other), iteration times t(·) from the roofline
of ``iteration``, and vLLM's scheduler (token budget B per iteration, chunked prefill).

- Iterations. The engine iterates back to back while anything runs. Each request decodes for
  O − 1 iterations, so by Little's law N = λ E[O − 1] T sequences decode at once, T the mean
  iteration. An iteration carries the N decodes and the prompts that arrived during the one
  before: k of them, k Poisson with mean λT, k E[P] tokens up to the budget left (B − N − 1).
  One roofline per k (the memory-bound slack of a decode iteration is shared by its prompts, so
  prompts are not additive) gives E[iteration | T]; T solves T = E[iteration | T], the smallest
  root, by a geometric scan and bisection (Orca, Yu et al., OSDI 2022; Sarathi-Serve, Agrawal et
  al., OSDI 2024, for chunked prefill). No root with N under the slots is unstable.
- Time to first token. A prompt waits for the prefill work ahead of it, then shares its first
  iteration with the prompts that arrived meanwhile (0, 1, 2 or more, Poisson). The work ahead
  is an M/G/1 queue with service P τ, τ the ms a prefill iteration of the usual size takes per
  prompt token (ρ_w = λ E[P] τ); its wait W is 0 with probability 1 − ρ_w and otherwise gamma
  with the Pollaczek–Khinchine mean and Takács' second moment. Not waiting, an arrival still
  finds a decode iteration running (uniform rest of it). TTFT = request overhead + that rest or
  W + own prefill, P / c iterations of t(N + c) (c the chunk, with the prompts sharing it).
  The budget's own limit is ρ = λ E[P] t_full / (B − N), t_full a full iteration: ρ ≥ 1 is
  unstable.
- Gamma gaps (cv c_a per replica, ``LlmWorkload.arrival_scv_per_replica``): the prefill queue
  waits by Allen–Cunneen, the M/G/1 wait × (c_a² + c_s²) / (1 + c_s²), the slot wait
  × (c_a² + 1) / 2, and TPOT's variance from prompts and from N × c_a² (a window's prompts vary
  c_a² times as much as Poisson ones); the prompts per iteration stay Poisson, and so does the
  chance of waiting: always flagged approximate.
- Prefix cache. A share s of each prompt's tokens comes from a prefix cache: prefill work is
  (1 − s) P tokens, each attending to the cached prefix too, while the KV cache holds all P
  (``_prefill``; the simulator starts each prompt s P tokens in).
- Slots. At most C = min(max running sequences, KV tokens / tokens a running sequence holds)
  run; requests wait for a slot too (Erlang C, M/M/C, on the residence time); offered load ≥ C
  is unstable.
- TPOT of a request is its decode time over O − 1: the decode-only iteration t_d(N + 1) (its
  floor) plus what prefill adds over its window, gamma (a few big chunks make it skewed, as a
  compound Poisson sum is). The window also takes the prompts that arrived during its own
  prefill. Its variance: the iteration mix's, over O − 1 iterations, inflated for lag-one
  correlation (a long iteration gathers more prompts for the next) and for the prefill queue's
  busy spells, plus N's drift.
- End-to-end is TTFT + (O − 1) TPOT, normal per output length, over the output distribution.

Unstable is ∞ with ``is_stable=False``. ``approximate`` marks where the checks against
``simulate_llm`` (tuned on one grid, reported on another: ``scripts/llm_accuracy.py``,
docs/llm_model.md) found this model more than 15% off: loads near a limit (the loop gain
dE[iteration]/dT above ``APPROXIMATE_LOOP_GAIN``), slots nearly full (or a KV cache that sets
them past ``APPROXIMATE_KV_SLOT_LOAD``: preemptions), very short outputs, and
length spreads wider than the grids checked (``APPROXIMATE_PROMPT_CV``, ``APPROXIMATE_OUTPUT_CV``),
and arrivals that are not Poisson.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from sdlab_model.llm.calibration import DEFAULT_EFFICIENCY
from sdlab_model.llm.catalog import gpu_by_id, model_by_id
from sdlab_model.llm.iteration import EngineEfficiency, iteration_cost
from sdlab_model.llm.kv_cache import kv_capacity
from sdlab_model.llm.lengths import NODE_WEIGHTS
from sdlab_model.llm.workload import LlmWorkload
from sdlab_model.queues.erlang import erlang_c_array

APPROXIMATE_LOOP_GAIN = 0.44
"""Loop gain (dE[iteration]/dT at the solution) above which estimates are flagged approximate:
on the tuning grid of ``scripts/llm_accuracy.py`` every point below it was within 15% of the
simulator but one (15.2%), and most above it were not (p99s too low under load: the model
misses how bursts of prompts line up)."""
APPROXIMATE_SLOT_LOAD = 0.8
"""Share of the running slots in use above which the estimate is flagged approximate."""
APPROXIMATE_KV_SLOT_LOAD = 0.4
"""Share of the slots in use above which the estimate is flagged approximate where the KV cache,
not the running-sequence cap, sets the slots: beyond it the engine starts preempting (recompute),
which this model leaves out (Llama 3.1 70B, TP 4, 33k KV tokens: TTFT p99 13% low at 40%, 63%
low at 52%; docs/llm_model.md)."""
APPROXIMATE_SHORT_OUTPUT = 4.0
"""Mean output tokens below which TPOT (a mean over few iterations) is flagged approximate."""
APPROXIMATE_PROMPT_CV = 0.5
"""Prompt spread (cv) above which estimates are flagged approximate: the tuning grid's spread.
Wider, the model's p99s fall short of the simulator's as the spread and the prompts grow (cv 0.7
with 3,000-token prompts at 30% load: TPOT 19% low; docs/llm_model.md)."""
APPROXIMATE_OUTPUT_CV = 1.0
"""Output spread (cv) above which estimates are flagged approximate: the widest any grid checked."""
APPROXIMATE_LENGTH_RANK_CORRELATION = 0.2
"""|Spearman| of a measured sample's prompt and output lengths above which estimates are flagged
approximate: the model draws the two independently, and no grid checked linked lengths. A stated
cut, not a tuned one (the simulator draws whole rows and is the check)."""
QUANTILES = (0.50, 0.95, 0.99)
_PERIOD_BISECTIONS = 24
"""Halvings of a bracket one scan step wide: T to a few parts in ten million."""
_SCAN = 10
_OTHERS = 3
_MAX_PROMPTS = 8
"""Prompts per iteration the model tells apart; more are lumped with 8 (their tokens are
capped at the budget anyway)."""
_GROUPS = 8
"""Prompt-length groups (of 4 neighbouring quantile nodes) the iteration mix is computed over."""
_WH_FLOOR = 1e-9
_GROUP_WEIGHTS = NODE_WEIGHTS.reshape(_GROUPS, -1).sum(axis=1)


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
    mean_wait_ms: float = math.inf
    """TTFT's queueing part: the mean wait for the prefill ahead and for a running slot."""
    mean_prefill_ms: float = math.inf
    """TTFT's own prefill, request overhead included, on average."""
    kv_tokens_in_use: float = math.inf
    """KV cache tokens the admitted sequences hold, on average (each its mean context and half
    a block): the slots in use times what a slot holds."""
    approximate_because: str = ""
    """Why the estimate is flagged approximate, in words ("" where it is not)."""

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


@lru_cache(maxsize=256)
def _replica(workload_key: tuple, efficiency: EngineEfficiency) -> tuple:
    """Roofline coefficients, KV tokens and context cap of one replica (cached: a heatmap's
    cells share them)."""
    model_id, gpu_id, precision, tp, utilization, reserve, block = workload_key
    model, gpu = model_by_id(model_id), gpu_by_id(gpu_id)
    capacity = kv_capacity(
        model,
        gpu,
        precision=precision,
        tensor_parallel=tp,
        memory_utilization=utilization,
        activation_reserve_gb=reserve,
        block_tokens=block,
    )
    cost = iteration_cost(
        model, gpu, precision=precision, tensor_parallel=tp, efficiency=efficiency
    )
    return cost.as_tuple(), capacity.tokens, max(2, min(model.max_context_tokens, capacity.tokens))


def _prefill(cells) -> tuple[np.ndarray, np.ndarray]:
    """Prefill work per prompt node, (1 − hit share) × P tokens computed (the rest comes from the
    prefix cache, yet stays in the KV cache), and the mean attention position of a computed
    token, (1 + share) E[P²] / (2 E[P]): it attends to the cached prefix before it."""
    prompt, fresh = cells[5], cells[7]
    position = (2.0 - fresh) * ((prompt * prompt) @ NODE_WEIGHTS) / (2.0 * (prompt @ NODE_WEIGHTS))
    return prompt * fresh[:, None], position


def _replica_key(w: LlmWorkload) -> tuple:
    return (
        w.model_id,
        w.gpu_id,
        w.precision,
        w.tensor_parallel,
        w.gpu_memory_utilization,
        w.activation_reserve_gb,
        w.kv_block_tokens,
    )


def _cells(workloads, efficiency):
    """The per-workload inputs as arrays with the workloads along axis 0: cost, budget, slots,
    KV tokens, rate, prompt and output nodes, the share of prompt tokens computed, and the
    squared cv of a replica's arrival gaps."""
    costs, budgets, slots, kv_tokens, rates, prompts, outputs = [], [], [], [], [], [], []
    fresh = [1.0 - w.prefix_cache_hit_share for w in workloads]
    scv = [w.arrival_scv_per_replica for w in workloads]
    for w in workloads:
        cost, tokens, cap = _replica(_replica_key(w), efficiency)
        costs.append(cost)
        budgets.append(w.max_batched_tokens)
        slots.append(w.max_running_sequences)
        kv_tokens.append(tokens)
        rates.append(w.rate_per_replica_rps / 1000.0)
        prompts.append(w.length_nodes("prompt", cap - 1))
        outputs.append(w.length_nodes("output", cap))
    return (
        np.array(costs),
        np.array(budgets, dtype=float),
        np.array(slots, dtype=float),
        np.array(kv_tokens, dtype=float),
        np.array(rates),
        np.array(prompts),
        np.array(outputs),
        np.array(fresh),
        np.array(scv),
    )


@dataclass(frozen=True)
class _State:
    """The engine at a mean iteration period T (ms), one row per cell (see ``_state``)."""

    period: np.ndarray
    running: np.ndarray
    context: np.ndarray
    free: np.ndarray
    t_decode: np.ndarray
    t_by_prompts: np.ndarray
    weights: np.ndarray
    next_period: np.ndarray


def _poisson(mean: np.ndarray, count: int) -> np.ndarray:
    """P(K = k) for k < count, and P(K >= count - 1) lumped in the last column."""
    pmf = np.empty((len(mean), count))
    pmf[:, 0] = np.exp(-mean)
    for k in range(1, count):
        pmf[:, k] = pmf[:, k - 1] * mean / k
    pmf[:, -1] = np.maximum(1.0 - pmf[:, :-1].sum(axis=1), 0.0)
    return pmf


def _state(cells, period: np.ndarray) -> _State:
    """Little's law N = λ E[O − 1] T, the decode-only iteration t_d(N + 1), and iterations
    carrying k prompts (k Poisson with mean λT: the prompts that arrived during the previous
    iteration): with the decodes, k·E[P] tokens (capped at the budget left), one roofline each.
    ``next_period`` is E[iteration time], the T this state implies."""
    cost, budget, _, _, rate, prompt, output, _, _ = cells
    work, position = _prefill(cells)
    mean_work = work @ NODE_WEIGHTS
    c = [cost[:, k] for k in range(7)]
    decodes = np.maximum(output - 1.0, 0.0)
    mean_decodes = decodes @ NODE_WEIGHTS
    mean_prompt = prompt @ NODE_WEIGHTS
    context = mean_prompt + (decodes * output / 2.0) @ NODE_WEIGHTS / np.maximum(mean_decodes, 1e-9)
    running = rate * mean_decodes * period
    seen = running + 1.0
    free = np.maximum(budget - seen, 1.0)
    decode_compute = c[0] * seen + c[1] * seen * context
    decode_memory = c[2] + c[3] * seen * context
    t_decode = c[6] + np.maximum(decode_compute, decode_memory) + c[4] + c[5] * seen
    k = np.arange(_MAX_PROMPTS + 1, dtype=float)[None, :, None]
    grouped = (work * NODE_WEIGHTS).reshape(len(rate), _GROUPS, -1).sum(axis=2) / _GROUP_WEIGHTS
    spread = (grouped - mean_work[:, None])[:, None, :]
    tokens = np.clip(k * mean_work[:, None, None] + np.sqrt(k) * spread, 0.0, free[:, None, None])
    compute = decode_compute[:, None, None] + tokens * (
        c[0][:, None, None] + c[1][:, None, None] * position[:, None, None]
    )
    memory = decode_memory[:, None, None] + c[3][:, None, None] * tokens
    allreduce = (c[4] + c[5] * seen)[:, None, None] + c[5][:, None, None] * tokens
    t_by_prompts = (c[6][:, None, None] + np.maximum(compute, memory) + allreduce) @ _GROUP_WEIGHTS
    weights = _poisson(rate * period, _MAX_PROMPTS + 1)
    return _State(
        period=period,
        running=running,
        context=context,
        free=free,
        t_decode=t_decode,
        t_by_prompts=t_by_prompts,
        weights=weights,
        next_period=(weights * t_by_prompts).sum(axis=1),
    )


def _solve_period(cells, limit: np.ndarray):
    """The smallest T with E[iteration time at T] = T and N below ``limit``; stable or not."""
    _, _, _, _, rate, _, output, _, _ = cells
    low = _state(cells, np.zeros_like(rate)).t_decode
    throughput = rate * (np.maximum(output - 1.0, 0.0) @ NODE_WEIGHTS)
    # With no decoding (one output token each) only the prefill share bounds T.
    high = np.where(throughput > 0, np.maximum(limit, 0.0) / np.maximum(throughput, 1e-300), np.inf)
    high = np.clip(high, low, low * 1e6)
    cost, budget, _, _, _, prompt, _, _, _ = cells
    decodes = np.maximum(output - 1.0, 0.0)
    mean_decodes = decodes @ NODE_WEIGHTS
    mean_prompt = prompt @ NODE_WEIGHTS
    context = mean_prompt + (decodes * output / 2.0) @ NODE_WEIGHTS / np.maximum(mean_decodes, 1e-9)
    work, position = _prefill(cells)
    grouped = (work * NODE_WEIGHTS).reshape(len(rate), _GROUPS, -1).sum(axis=2) / _GROUP_WEIGHTS
    from sdlab_model.llm import _analytic_kernel

    hi, stable = _analytic_kernel.solve_periods(
        np.ascontiguousarray(cost),
        budget,
        rate,
        mean_decodes,
        work @ NODE_WEIGHTS,
        position,
        context,
        np.ascontiguousarray(grouped),
        _GROUP_WEIGHTS,
        _MAX_PROMPTS,
        low,
        high,
        _SCAN,
        _PERIOD_BISECTIONS,
    )
    return _state(cells, hi), stable


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
    mean = np.maximum(mean, _WH_FLOOR)
    shape = mean * mean / np.maximum(variance, _WH_FLOOR)
    ratio = np.cbrt(np.maximum(x, 0.0) / mean)
    z = (ratio - (1.0 - 1.0 / (9.0 * shape))) / np.sqrt(1.0 / (9.0 * shape))
    return np.where(variance > _WH_FLOOR, _normal_cdf(z), (x >= mean).astype(float))


@dataclass(frozen=True)
class _Grid:
    """The model's arrays, one row per workload (see ``llm_grid``)."""

    ttft_ms: np.ndarray
    tpot_ms: np.ndarray
    e2e_ms: np.ndarray
    running: np.ndarray
    prefill_load: np.ndarray
    slot_load: np.ndarray
    loop_gain: np.ndarray
    wait_load: np.ndarray
    slots: np.ndarray
    kv_from_cache: np.ndarray
    budget_load: np.ndarray
    memory_bound: np.ndarray
    stable: np.ndarray
    approximate: np.ndarray
    met_share: np.ndarray
    wait_ms: np.ndarray
    prefill_ms: np.ndarray
    kv_in_use: np.ndarray


def _ttft_parts(cells, state: _State, efficiency: EngineEfficiency):
    """TTFT's pieces: own prefill per prompt node, the prefill queue's load ρ and mean wait."""
    cost, _, _, _, rate, _, _, _, scv = cells
    prompt, position = _prefill(cells)  # the tokens a prompt computes: its work
    mean_prompt = prompt @ NODE_WEIGHTS
    n, free, context = state.running, state.free, state.context
    decode_pairs = (n + 1.0) * context
    t_full = _time(cost, n + 1.0 + free, decode_pairs + free * position, decode_pairs + free)
    rho = rate * mean_prompt * t_full / free
    # Waiting prompts are served whole iterations at a time. A prefill iteration carries the
    # prompts that arrived during the last one (λT E[P] tokens given at least one), or the
    # prompt alone when it is longer, at most the budget left: a prompt's service S is its share
    # of that iteration, P t(batch) / batch, and ρ_w = λ E[S] the share of time prefill
    # iterations take. The queue is M/G/1 with service S; its wait includes the rest of the
    # prefill iteration an arrival may find running.
    arrivals = rate * state.period
    typical = mean_prompt * arrivals / np.maximum(-np.expm1(-arrivals), 1e-12)
    batch_tokens = np.clip(np.maximum(prompt, typical[:, None]), 1.0, free[:, None])
    t_batch = _time(
        cost,
        (n + 1.0)[:, None] + batch_tokens,
        decode_pairs[:, None] + batch_tokens * position[:, None],
        decode_pairs[:, None] + batch_tokens,
    )
    service = prompt * t_batch / batch_tokens
    rho_wait = np.minimum(rate * (service @ NODE_WEIGHTS), 0.98)
    idle = np.maximum(1.0 - rho_wait, 1e-12)
    wait = rate * ((service**2) @ NODE_WEIGHTS) / (2.0 * idle)
    # Takács: E[W²] = 2 E[W]² + λ E[S³] / (3 (1 − ρ)).
    wait_square = 2.0 * wait * wait + rate * ((service**3) @ NODE_WEIGHTS) / (3.0 * idle)
    # Gamma gaps: Allen–Cunneen's GI/G/1 wait, the M/G/1 one × (c_a² + c_s²) / (1 + c_s²).
    service_scv = ((service**2) @ NODE_WEIGHTS) / np.maximum(service @ NODE_WEIGHTS, 1e-12) ** 2
    bursts = (scv + service_scv - 1.0) / service_scv
    wait, wait_square = wait * bursts, wait_square * bursts * bursts
    # The prompts that arrived meanwhile share the tagged one's first iteration: 0, 1, or 2
    # or more of them, E[P] tokens each (how many: ``llm_grid``).
    others = np.arange(_OTHERS, dtype=float)[None, None, :]
    batch = prompt[:, :, None] + others * mean_prompt[:, None, None]
    chunk = np.minimum(batch, free[:, None, None])
    own = (batch / chunk) * _time(
        cost,
        n[:, None, None] + chunk,
        (n * context)[:, None, None] + chunk * position[:, None, None],
        (n * context)[:, None, None] + chunk,
    )
    return own + efficiency.request_overhead_ms, wait, wait_square, rho, rho_wait


def _residuals(state: _State, in_decode: np.ndarray):
    """Time left of a decode-only iteration an arrival finds running (with probability
    ``in_decode``; a prefill iteration in progress is part of the prefill queue's wait):
    uniform over it, two nodes, and no wait otherwise."""
    quarters = np.array([0.25, 0.75])
    nodes = np.concatenate(
        [np.zeros((len(in_decode), 1)), state.t_decode[:, None] * quarters[None, :]], axis=1
    )
    share = np.stack([1.0 - in_decode, in_decode / 2.0, in_decode / 2.0], axis=1)
    return nodes, share


def _tpot_moments(cells, state: _State, rho: np.ndarray, own_mean: np.ndarray):
    """TPOT per output node: what prefill adds to the decode-only iteration (mean, variance)
    over a window of O − 1 correlated iterations.

    The window also takes the prompts that arrived during the request's own prefill (they are
    prefilled in its first decode iterations): it gathers prefill work over O − 1 + S/T
    iterations, S the own prefill's time."""
    cost, _, _, _, rate, _, output, _, scv = cells
    times, weights, period = state.t_by_prompts, state.weights, state.period
    iteration_variance = (weights * (times - period[:, None]) ** 2).sum(axis=1)
    # A long iteration gathers more prompts for the next one: lag-one correlation φ, and the
    # variance of a mean over a window grows by (1 + φ) / (1 − φ).
    marginal = (weights[:, :-1] * np.diff(times, axis=1)).sum(axis=1)
    phi = np.clip(rate * marginal, 0.0, 0.95)
    window = np.maximum(output - 1.0, 1.0)
    gathering = 1.0 + (own_mean / period)[:, None] / window
    inflation = (1.0 + phi) / (1.0 - phi) / np.maximum(1.0 - rho, 0.05)
    # Gamma gaps: the prompts over a window vary c_a² times as much as Poisson ones.
    variance = (iteration_variance * inflation * scv)[:, None] * gathering / window
    n, context = state.running, state.context
    slope = _time(cost, n + 2.0, (n + 2.0) * context, (n + 2.0) * context) - state.t_decode
    decode_span = (np.maximum(output - 1.0, 0.0) @ NODE_WEIGHTS)[:, None]
    variance += (slope * slope * n * scv)[:, None] * np.minimum(1.0, decode_span / window)
    added = np.maximum(period - state.t_decode, 1e-6)[:, None] * gathering
    return added, variance


@dataclass(frozen=True)
class _TtftLaw:
    """TTFT per cell: a mixture over nodes ``base`` (own prefill, plus the rest of a running
    decode iteration when not waiting) of ``base + W``, W gamma(``wait_mean``, ``wait_sd``) on
    the nodes that wait (``node_waits`` 1) and 0 on the others."""

    base: np.ndarray
    weight: np.ndarray
    node_waits: np.ndarray
    wait_mean: np.ndarray
    wait_sd: np.ndarray

    def cdf(self, x: np.ndarray) -> np.ndarray:
        late = np.maximum(x - self.base, 0.0)
        waited = _gamma_cdf(late, self.wait_mean[:, None], self.wait_sd[:, None] ** 2)
        per_node = np.where(x >= self.base, 1.0 - self.node_waits * (1.0 - waited), 0.0)
        return (per_node * self.weight).sum(axis=1)

    def quantiles(self, quantiles) -> np.ndarray:
        from sdlab_model.llm._analytic_kernel import NodeLaw

        waits = self.node_waits > 0.0
        law = np.where(waits, NodeLaw.GAMMA, NodeLaw.STEP).astype(np.int64)
        mean = np.where(waits, self.wait_mean[:, None], 0.0)
        sd = np.where(waits, self.wait_sd[:, None], 0.0)
        return _mixture_quantiles(self.base, self.weight, law, mean, sd, quantiles)

    def moments(self) -> tuple[np.ndarray, np.ndarray]:
        """Mean and variance."""
        waiting = (self.weight * self.node_waits).sum(axis=1)
        mean = (self.base * self.weight).sum(axis=1) + waiting * self.wait_mean
        square = (self.base**2 * self.weight).sum(axis=1)
        square += 2.0 * (self.base * self.weight * self.node_waits).sum(axis=1) * self.wait_mean
        square += waiting * (self.wait_sd**2 + self.wait_mean**2)
        return mean, np.maximum(square - mean**2, 0.0)


def _ttft_law(cells, state: _State, efficiency: EngineEfficiency, slots: np.ndarray):
    """TTFT's law, the prefill loads, the slot queue, whether the cell is stable, and the mean
    wait (for the prefill ahead and for a slot)."""
    _, _, _, kv_tokens, rate, _, output, _, scv = cells
    own_by_others, wait, wait_square, rho, rho_wait = _ttft_parts(cells, state, efficiency)
    count = len(rate)
    own = own_by_others.reshape(count, -1)
    arrived = _poisson(rate * state.period, _OTHERS)
    own_weight = (NODE_WEIGHTS[None, :, None] * arrived[:, None, :]).reshape(count, -1)
    own_mean = (own * own_weight).sum(axis=1)
    residence = own_mean + (np.maximum(output - 1.0, 0.0) @ NODE_WEIGHTS) * state.period
    servers = np.maximum(np.floor(slots), 1.0)
    offered = rate * residence
    stable = (rho < 1.0) & (offered < servers) & (kv_tokens > 0)
    # Waiting for a running slot: Erlang C over the slots, on the residence time.
    waiting = np.where(
        stable, erlang_c_array(servers.astype(int), np.minimum(offered, servers - 1e-9)), 1.0
    )
    slot_wait = waiting * residence / np.maximum(servers - offered, 1e-12)
    slot_wait *= (scv + 1.0) / 2.0  # Allen–Cunneen for Gamma gaps
    waits = np.clip(rho_wait + waiting * (1.0 - rho_wait), 1e-12, 1.0)
    wait_mean = (wait + slot_wait) / waits
    slot_square = 2.0 * slot_wait * slot_wait / np.maximum(waiting, 1e-12)
    wait_square_given = (wait_square + slot_square + 2.0 * wait * slot_wait) / waits
    wait_sd = np.sqrt(np.maximum(wait_square_given - wait_mean**2, 0.0))
    busy = 1.0 - np.exp(-(state.running + rate * own_mean))
    residual, residual_weight = _residuals(state, np.maximum(busy - rho_wait, 0.0))
    # Not waiting: the rest of a decode iteration, then the next one with the prompts that came
    # during an iteration. Waiting W: those that came during the wait join as well.
    arrived_waiting = _poisson(rate * (state.period + wait_mean), _OTHERS)
    waited_weight = (NODE_WEIGHTS[None, :, None] * arrived_waiting[:, None, :]).reshape(count, -1)
    not_waited = (residual_weight[:, None, :] * own_weight[:, :, None]).reshape(count, -1)
    base = np.concatenate(
        [(own[:, :, None] + residual[:, None, :]).reshape(count, -1), own], axis=1
    )
    law = _TtftLaw(
        base=base,
        weight=np.concatenate(
            [not_waited * (1.0 - waits)[:, None], waited_weight * waits[:, None]], axis=1
        ),
        node_waits=np.concatenate(
            [np.zeros((count, base.shape[1] - own.shape[1])), np.ones_like(own)], axis=1
        ),
        wait_mean=wait_mean,
        wait_sd=wait_sd,
    )
    return law, own_mean, rho, rho_wait, offered / servers, stable, wait + slot_wait


@dataclass(frozen=True)
class _TpotLaw:
    """TPOT per output-length node: the decode-only iteration (``floor``) plus what prefill
    chunks add, gamma (``added``, ``variance``): a few large chunks in a window make it skewed,
    as a compound Poisson sum is. Requests with one output token have no TPOT (weight 0)."""

    floor: np.ndarray
    added: np.ndarray
    variance: np.ndarray
    weight: np.ndarray

    def cdf(self, x: np.ndarray) -> np.ndarray:
        return (_gamma_cdf(x - self.floor, self.added, self.variance) * self.weight).sum(axis=1)

    def quantiles(self, quantiles) -> np.ndarray:
        from sdlab_model.llm._analytic_kernel import NodeLaw

        law = np.full(self.floor.shape, int(NodeLaw.GAMMA), dtype=np.int64)
        sd = np.sqrt(self.variance)
        return _mixture_quantiles(self.floor, self.weight, law, self.added, sd, quantiles)


def _tpot_law(cells, state: _State, rho: np.ndarray, own_mean: np.ndarray) -> _TpotLaw:
    output = cells[6]
    added, variance = _tpot_moments(cells, state, rho, own_mean)
    weight = (output >= 1.5) * NODE_WEIGHTS
    weight = weight / np.maximum(weight.sum(axis=1, keepdims=True), 1e-12)
    floor = np.broadcast_to(state.t_decode[:, None], variance.shape).copy()
    return _TpotLaw(floor=floor, added=added, variance=variance, weight=weight)


def _e2e_law(ttft: _TtftLaw, tpot: _TpotLaw, output: np.ndarray):
    """End-to-end per output-length node: TTFT + (O − 1) TPOT, normal with their moments."""
    ttft_mean, ttft_variance = ttft.moments()
    decodes = np.maximum(output - 1.0, 0.0)
    mean = ttft_mean[:, None] + decodes * (tpot.floor + tpot.added)
    sd = np.sqrt(np.maximum(ttft_variance[:, None] + decodes**2 * tpot.variance, 1e-12))
    return mean, sd


def _e2e_quantiles(mean, sd, quantiles) -> np.ndarray:
    from sdlab_model.llm._analytic_kernel import NodeLaw

    weight = np.broadcast_to(NODE_WEIGHTS, mean.shape).copy()
    law = np.full(mean.shape, int(NodeLaw.NORMAL), dtype=np.int64)
    return _mixture_quantiles(np.zeros_like(mean), weight, law, mean, sd, quantiles)


def _mixture_quantiles(base, weight, law, mean, sd, quantiles) -> np.ndarray:
    """Quantiles of per-cell mixtures (``_analytic_kernel.mixture_quantiles``), cells × q."""
    from sdlab_model.llm import _analytic_kernel

    arrays = [np.ascontiguousarray(a, dtype=float) for a in (base, weight)]
    law = np.ascontiguousarray(law, dtype=np.int64)
    mean, sd = (
        np.ascontiguousarray(np.broadcast_to(a, base.shape), dtype=float) for a in (mean, sd)
    )
    return np.stack(
        [_analytic_kernel.mixture_quantiles(*arrays, law, mean, sd, q) for q in quantiles], axis=1
    )


def llm_grid(
    workloads,
    efficiency: EngineEfficiency = DEFAULT_EFFICIENCY,
    quantiles=QUANTILES,
    *,
    with_e2e: bool = True,
) -> _Grid:
    """The analytic model for many workloads at once (one numpy pass; see the module doc).

    ``with_e2e=False`` skips the end-to-end quantiles (NaN) and their share in goodput, for
    heatmaps that draw TTFT and TPOT only."""
    cells = _cells(workloads, efficiency)
    cost, budget, slot_cap, kv_tokens, rate, _, output, _, _ = cells
    blocks = np.array([w.kv_block_tokens for w in workloads], dtype=float)
    per_slot = _state(cells, np.zeros_like(rate)).context + blocks / 2.0
    kv_slots = kv_tokens / per_slot
    slots = np.minimum(slot_cap, kv_slots)
    state, settled = _solve_period(cells, np.minimum(slots, budget - 2.0) - 1.0)
    # How close the iteration loop is to running away: dE[iteration]/dT at the solution (1 is
    # the stability limit; more traffic pushes it up).
    gain = (_state(cells, state.period * 1.01).next_period - state.period) / (0.01 * state.period)
    ttft, own_mean, rho, rho_wait, slot_load, stable, wait = _ttft_law(
        cells, state, efficiency, slots
    )
    stable &= settled
    tpot = _tpot_law(cells, state, rho, own_mean)
    e2e_mean, e2e_sd = _e2e_law(ttft, tpot, output)
    e2e = np.full((len(rate), len(quantiles)), np.nan)
    targets = np.array(
        [[w.ttft_p99_target_ms, w.tpot_p99_target_ms, w.e2e_p99_target_ms] for w in workloads]
    )
    single = (output < 1.5) @ NODE_WEIGHTS
    met = ttft.cdf(targets[:, :1]) * (single + (1.0 - single) * tpot.cdf(targets[:, 1:2]))
    if with_e2e:
        e2e = _e2e_quantiles(e2e_mean, e2e_sd, quantiles)
        met *= _normal_cdf((targets[:, 2:3] - e2e_mean) / e2e_sd) @ NODE_WEIGHTS
    n = state.running
    decode_compute = cost[:, 0] * (n + 1.0) + cost[:, 1] * (n + 1.0) * state.context
    short = np.array([w.output_tokens_mean < APPROXIMATE_SHORT_OUTPUT for w in workloads])
    short |= np.array(
        [_unchecked_spread(w) or _not_poisson(w) or _linked_lengths(w) for w in workloads],
        dtype=bool,
    )
    approximate = (gain > APPROXIMATE_LOOP_GAIN) | (slot_load > APPROXIMATE_SLOT_LOAD) | short
    approximate |= (kv_slots < slot_cap) & (slot_load > APPROXIMATE_KV_SLOT_LOAD)
    return _Grid(
        ttft_ms=np.where(stable[:, None], ttft.quantiles(quantiles), np.inf),
        tpot_ms=np.where(stable[:, None], tpot.quantiles(quantiles), np.inf),
        e2e_ms=np.where(stable[:, None], e2e, np.inf),
        running=n,
        prefill_load=rho,
        slot_load=slot_load,
        loop_gain=gain,
        wait_load=rho_wait,
        slots=slots,
        kv_from_cache=kv_slots < slot_cap,
        budget_load=(n + 1.0 + rate * (_prefill(cells)[0] @ NODE_WEIGHTS) * state.period) / budget,
        memory_bound=cost[:, 2] + cost[:, 3] * (n + 1.0) * state.context >= decode_compute,
        stable=stable,
        approximate=approximate & stable,
        met_share=np.where(stable, met, 0.0),
        wait_ms=np.where(stable, wait, np.inf),
        prefill_ms=np.where(stable, own_mean, np.inf),
        kv_in_use=np.where(stable, slot_load * np.maximum(np.floor(slots), 1.0) * per_slot, np.inf),
    )


def _unchecked_spread(w: LlmWorkload) -> bool:
    """Whether the lengths spread wider than the accuracy checks covered."""
    return w.prompt_tokens_cv > APPROXIMATE_PROMPT_CV or w.output_tokens_cv > APPROXIMATE_OUTPUT_CV


def _not_poisson(w: LlmWorkload) -> bool:
    """Whether arrivals have Gamma gaps other than Poisson's: always flagged, the checks found
    TTFT p99 up to 29% high (smoother, light load) and 26% low (bursty; docs/llm_model.md)."""
    return w.arrival_cv != 1.0


def _linked_lengths(w: LlmWorkload) -> bool:
    """Whether a measured sample's prompt and output lengths go together (|Spearman| above
    ``APPROXIMATE_LENGTH_RANK_CORRELATION``): the model takes the two columns as independent."""
    sample = w.length_sample
    return sample is not None and abs(sample.rank_correlation) > APPROXIMATE_LENGTH_RANK_CORRELATION


def _approximate_because(grid: _Grid, index: int, w: LlmWorkload) -> str:
    """The flag's reasons in words, as ``llm_grid`` set it."""
    if not grid.approximate[index]:
        return ""
    reasons = []
    if grid.loop_gain[index] > APPROXIMATE_LOOP_GAIN:
        reasons.append("prompts arrive near the rate the engine keeps up with")
    if grid.slot_load[index] > APPROXIMATE_SLOT_LOAD:
        reasons.append("the running slots are nearly full")
    elif grid.kv_from_cache[index] and grid.slot_load[index] > APPROXIMATE_KV_SLOT_LOAD:
        reasons.append("the KV cache is full enough to preempt sequences")
    if w.output_tokens_mean < APPROXIMATE_SHORT_OUTPUT:
        reasons.append("outputs are a few tokens long")
    if _unchecked_spread(w):
        reasons.append("the lengths spread wider than the checks covered")
    if _not_poisson(w):
        reasons.append("arrivals are not Poisson")
    if _linked_lengths(w):
        reasons.append("the sample's long prompts and long outputs go together")
    return "; ".join(reasons)


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
                kv_tokens=_replica(_replica_key(w), efficiency)[1],
                binding=_binding(grid, index),
                is_stable=stable,
                approximate=bool(grid.approximate[index]),
                goodput_rps=float(w.rate_rps * grid.met_share[index]),
                output_tokens_per_s=output_rate,
                output_tokens_per_s_per_gpu=output_rate / w.gpus,
                usd_per_hour=usd_per_hour,
                usd_per_million_output_tokens=per_million,
                mean_wait_ms=float(grid.wait_ms[index]),
                mean_prefill_ms=float(grid.prefill_ms[index]),
                kv_tokens_in_use=float(grid.kv_in_use[index]),
                approximate_because=_approximate_because(grid, index, w),
            )
        )
    return estimates


def llm_latency(
    workload: LlmWorkload, efficiency: EngineEfficiency = DEFAULT_EFFICIENCY
) -> LlmEstimate:
    """TTFT, TPOT and end-to-end p50/p95/p99, throughput, goodput and cost of one workload."""
    return llm_estimates([workload], efficiency)[0]
