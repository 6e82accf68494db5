"""Compiled pieces of the analytic model: quantiles of mixtures, and the iteration-period solve.

Imported lazily by ``sdlab_model.llm.analytic``. Each ``_name`` is plain Python and ``name`` the
same function compiled. A 40 × 40 heatmap has 1,600 cells of hundreds of nodes each; numpy's
temporaries made these loops the slowest part of the model.
"""

from __future__ import annotations

import math
from enum import IntEnum

import numpy as np

from sdlab_model.llm._engine_kernel import compile_kernel

_BISECTIONS = 20
"""Halvings of the search bracket's logarithm: from a ratio of 10⁶ between its ends to a
quantile within 1.3 parts in 10⁵."""


class NodeLaw(IntEnum):
    """What a mixture node adds to its ``base``: nothing, a gamma, or a normal variable."""

    STEP = 0
    GAMMA = 1
    NORMAL = 2


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


def _node_cdf(x: float, base: float, law: int, mean: float, sd: float) -> float:
    """P(base + Y ≤ x) for one node of ``NodeLaw`` ``law``."""
    y = x - base
    if law == NodeLaw.STEP:
        return 1.0 if y >= 0.0 else 0.0
    if law == NodeLaw.GAMMA:
        return gamma_cdf(y, mean, sd)
    if sd <= 0.0:
        return 1.0 if y >= mean else 0.0
    return 0.5 * math.erfc(-(y - mean) / sd / math.sqrt(2.0))


node_cdf = compile_kernel(_node_cdf)


def _mixture_quantiles(
    base: np.ndarray,
    weight: np.ndarray,
    law: np.ndarray,
    mean: np.ndarray,
    sd: np.ndarray,
    q: float,
) -> np.ndarray:
    """Per row c, the x with Σ_i weight[c,i] P(base[c,i] + Y_ci ≤ x) = q, Y_ci of ``NodeLaw``
    ``law[c,i]`` with ``mean`` and ``sd``: bisection on log x between the lowest node's reach
    and past the highest's (x > 0: every latency here is)."""
    cells, nodes = base.shape
    out = np.empty(cells)
    for c in range(cells):
        low = np.inf
        high = 0.0
        for i in range(nodes):
            floor = base[c, i]
            if law[c, i] == NodeLaw.NORMAL:
                floor += mean[c, i] - 10.0 * sd[c, i]
            low = min(low, floor)
            high = max(high, base[c, i] + mean[c, i] + 40.0 * sd[c, i])
        low = max(low, 1e-6)
        high = max(high, low) * 1.000001 + 1e-6
        for _ in range(_BISECTIONS):
            middle = math.sqrt(low * high)
            cdf = 0.0
            for i in range(nodes):
                if weight[c, i] > 0.0:
                    cdf += weight[c, i] * node_cdf(
                        middle, base[c, i], law[c, i], mean[c, i], sd[c, i]
                    )
            if cdf < q:
                low = middle
            else:
                high = middle
        out[c] = high
    return out


mixture_quantiles = compile_kernel(_mixture_quantiles)


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
