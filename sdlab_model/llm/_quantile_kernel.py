"""Compiled quantile searches for the analytic model: mixtures of shifted gamma and normal laws.

Imported lazily by ``sdlab_model.llm.analytic``. ``_exp_mixture_quantiles`` is plain Python;
``exp_mixture_quantiles`` is the same function compiled. A 40 × 40 heatmap has 1,600 cells of
hundreds of nodes each; numpy's temporaries made this search the slowest part of the model.
"""

from __future__ import annotations

import math

import numpy as np

from sdlab_model.llm._engine_kernel import _compile

_BISECTIONS = 40


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


gamma_cdf = _compile(_gamma_cdf)


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
                if late >= 0.0:
                    waited = gamma_cdf(late, mean[c], sd[c])
                    cdf += weight[c, i] * (1.0 - waits[c, i] + waits[c, i] * waited)
            if cdf < q:
                low = middle
            else:
                high = middle
        out[c] = high
    return out


wait_mixture_quantiles = _compile(_wait_mixture_quantiles)


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


normal_mixture_quantiles = _compile(_normal_mixture_quantiles)
