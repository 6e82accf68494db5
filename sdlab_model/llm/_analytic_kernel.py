"""Compiled quantile searches for the analytic model: mixtures of shifted gamma and normal laws.

Imported lazily by ``sdlab_model.llm.analytic``. ``_exp_mixture_quantiles`` is plain Python;
``exp_mixture_quantiles`` is the same function compiled. A 40 × 40 heatmap has 1,600 cells of
hundreds of nodes each; numpy's temporaries made this search the slowest part of the model.
"""

from __future__ import annotations

import math

import numpy as np

from sdlab_model.llm._engine_kernel import compile_kernel

_BISECTIONS = 30
"""Halvings of the search bracket: a p99 to about one part in a billion of its range."""


def _gamma_cdf(y: float, mean: float, sd: float) -> float:
    """P(Y ≤ y) for Y gamma with this mean and standard deviation, by Wilson–Hilferty (the
    cube root of a gamma is close to normal); a step at ``mean`` when ``sd`` is 0."""
    if y <= 0.0:
        return 0.0
    if sd <= 0.0 or mean <= 0.0:
        return 1.0 if y >= mean else 0.0
    spread = (sd / mean) ** 2 / 9.0
    z = ((y / mean) ** (1.0 / 3.0) - (1.0 - spread)) / math.sqrt(spread)
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


gamma_cdf = compile_kernel(_gamma_cdf)


def _wait_mixture_quantiles(
    base: np.ndarray,
    weight: np.ndarray,
    waits: np.ndarray,
    mean: np.ndarray,
    sd: np.ndarray,
    q: float,
) -> np.ndarray:
    """Per row c, the x with Σ_i weight[c,i] P(base[c,i] + W_ci ≤ x) = q, where W_ci is 0 with
    probability 1 − waits[c,i] and otherwise gamma with ``mean[c]`` and ``sd[c]``. Bisection."""
    cells, nodes = base.shape
    out = np.empty(cells)
    for c in range(cells):
        low = 0.0
        high = 1.0
        for i in range(nodes):
            high = max(high, base[c, i] + mean[c] + 40.0 * sd[c] + 1.0)
        for _ in range(_BISECTIONS):
            middle = (low + high) / 2.0
            cdf = 0.0
            for i in range(nodes):
                late = middle - base[c, i]
                if late < 0.0 or weight[c, i] == 0.0:
                    continue
                if waits[c, i] == 0.0:
                    cdf += weight[c, i]
                else:
                    waited = gamma_cdf(late, mean[c], sd[c])
                    cdf += weight[c, i] * (1.0 - waits[c, i] + waits[c, i] * waited)
            if cdf < q:
                low = middle
            else:
                high = middle
        out[c] = high
    return out


wait_mixture_quantiles = compile_kernel(_wait_mixture_quantiles)


def _normal_mixture_quantiles(
    shift: np.ndarray,
    mean: np.ndarray,
    sd: np.ndarray,
    weight: np.ndarray,
    cube_root: bool,
    q: float,
) -> np.ndarray:
    """Per row c, the x with Σ_i weight[c,i] P(shift + Y_i ≤ x) = q, by bisection: Y_i normal
    with ``mean`` and ``sd``, or with ``cube_root`` gamma (Wilson–Hilferty); a node with ``sd``
    0 is a step at its mean."""
    cells, nodes = mean.shape
    out = np.empty(cells)
    for c in range(cells):
        low = 0.0
        high = 1.0
        for i in range(nodes):
            high = max(high, shift[c, i] + mean[c, i] + 40.0 * sd[c, i] + 1.0)
        for _ in range(_BISECTIONS):
            middle = (low + high) / 2.0
            cdf = 0.0
            for i in range(nodes):
                if weight[c, i] == 0.0:
                    continue
                y = middle - shift[c, i]
                m = mean[c, i]
                s = sd[c, i]
                if cube_root:
                    cdf += weight[c, i] * gamma_cdf(y, m, s)
                elif s <= 0.0:
                    if y >= m:
                        cdf += weight[c, i]
                else:
                    cdf += weight[c, i] * 0.5 * math.erfc(-(y - m) / s / math.sqrt(2.0))
            if cdf < q:
                low = middle
            else:
                high = middle
        out[c] = high
    return out


normal_mixture_quantiles = compile_kernel(_normal_mixture_quantiles)


def _expected_iteration(
    cost: np.ndarray,
    budget: float,
    rate: float,
    mean_decodes: float,
    mean_prompt: float,
    position: float,
    context: float,
    grouped: np.ndarray,
    group_weight: np.ndarray,
    max_prompts: int,
    period: float,
) -> float:
    """E[iteration time] at mean period ``period`` for one cell: ``analytic._state``'s
    ``next_period``, loop by loop (the same arithmetic, so the same value up to rounding)."""
    seen = rate * mean_decodes * period + 1.0
    free = max(budget - seen, 1.0)
    decode_compute = cost[0] * seen + cost[1] * seen * context
    decode_memory = cost[2] + cost[3] * seen * context
    per_token = cost[0] + cost[1] * position
    arrivals = rate * period
    probability = math.exp(-arrivals)
    cumulative = 0.0
    expected = 0.0
    for k in range(max_prompts + 1):
        weight = probability if k < max_prompts else max(1.0 - cumulative, 0.0)
        time_k = 0.0
        for g in range(grouped.shape[0]):
            tokens = k * mean_prompt + math.sqrt(k) * (grouped[g] - mean_prompt)
            tokens = min(max(tokens, 0.0), free)
            compute = decode_compute + tokens * per_token
            memory = decode_memory + cost[3] * tokens
            step = cost[6] + max(compute, memory) + cost[4] + cost[5] * (seen + tokens)
            time_k += group_weight[g] * step
        expected += weight * time_k
        cumulative += probability
        probability *= arrivals / (k + 1)
    return expected


expected_iteration = compile_kernel(_expected_iteration)


def _solve_periods(
    cost: np.ndarray,
    budget: np.ndarray,
    rate: np.ndarray,
    mean_decodes: np.ndarray,
    mean_prompt: np.ndarray,
    position: np.ndarray,
    context: np.ndarray,
    grouped: np.ndarray,
    group_weight: np.ndarray,
    max_prompts: int,
    low: np.ndarray,
    high: np.ndarray,
    scan: int,
    bisections: int,
):
    """Per cell, the smallest period T in [low, high] with E[iteration at T] ≤ T: a geometric
    scan of ``scan`` points, then ``bisections`` halvings of the first bracket; (T, found)."""
    cells = cost.shape[0]
    period = np.empty(cells)
    found = np.zeros(cells, dtype=np.bool_)
    for c in range(cells):
        args = (
            cost[c],
            budget[c],
            rate[c],
            mean_decodes[c],
            mean_prompt[c],
            position[c],
            context[c],
            grouped[c],
            group_weight,
            max_prompts,
        )
        previous = low[c]
        upper = high[c]
        for j in range(scan):
            t = low[c] * (high[c] / low[c]) ** (j / (scan - 1.0))
            if expected_iteration(*args, t) <= t:
                found[c] = True
                upper = t
                break
            previous = t
        lower = previous if found[c] else low[c]
        if found[c] and upper == low[c]:
            lower = upper
        for _ in range(bisections):
            middle = (lower + upper) / 2.0
            if expected_iteration(*args, middle) <= middle:
                upper = middle
            else:
                lower = middle
        period[c] = upper
    return period, found


solve_periods = compile_kernel(_solve_periods)
