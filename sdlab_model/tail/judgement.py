"""The Tail at scale page's one judgement: its validated inputs, what they give, its heatmap grid
and its check against the Monte Carlo. Every number the page shows is a field of these results.

- ``TailInputs``: a leaf's p50/p95/p99, the fan-out, the hedge delay as a leaf percentile and the
  leaves' utilization before hedging, validated once (``TAIL_INPUT_RANGES``, increasing
  quantiles), with a message naming what is wrong.
- ``judge_tail``: the fanned-out request's p99 and p99.9 unhedged and hedged with the hedges'
  load fed back (``hedge_under_load``), the share hedged, the extra work and the paper's
  ``1 - (1 - p)^N`` for the leaf's own p99.
- ``tail_heatmap``: the hedged, loaded p99.9 over fan-out x hedge percentile, each row's load
  settled once and its quantiles found by one vectorized bisection (as ``HedgedLeaf.isf``).
- ``check_tail``: ``simulate_tail`` unhedged and hedged, of bounded size, against the analytic
  quantiles on idle leaves (the Monte Carlo has no load feedback).
- ``TailJudgement.tied``: tied requests after ``tie_delay_ms`` beside one copy and hedging, on an
  M/M/1 leaf with the leaf's p50 as its median at the leaves' utilization (``tied.tie``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sdlab_model.tail.fanout import order_statistic_tail, slow_request_probability
from sdlab_model.tail.hedging import HedgedLeaf, hedge
from sdlab_model.tail.leaf import LeafLatency, fit_leaf
from sdlab_model.tail.load import hedge_under_load, settle
from sdlab_model.tail.paper import ASSUMED_FANOUT, HEDGE_QUANTILE, TABLE_1_ONE_LEAF
from sdlab_model.tail.simulate import SimQuantile, simulate_tail
from sdlab_model.tail.tied import PAPER_TIE_DELAY_MS, QueuedLeaf, TiedOutcome, tie

QUANTILES = (0.99, 0.999)
"""The fanned-out request's quantiles the page judges: the p99 and the p99.9."""
SLOW_LEAF_QUANTILE = 0.99
"""The paper's arithmetic reads a leaf slower than its own p99: 1 in 100."""
TAIL_INPUT_RANGES: dict[str, tuple[float, float]] = {
    "leaf_p50_ms": (0.01, 100_000.0),
    "leaf_p95_ms": (0.01, 100_000.0),
    "leaf_p99_ms": (0.01, 100_000.0),
    "fanout": (1, 10_000),
    "hedge_percentile": (50.0, 99.9),
    "base_utilization": (0.0, 0.95),
    "tie_delay_ms": (0.0, 1000.0),
}
_BISECTION_STEPS = 200
SIM_LEAVES = 10_000_000
"""Leaf draws per simulated run (about a second): requests = this / fan-out, within bounds."""
SIM_REQUESTS = (1_000, 200_000)


@dataclass(frozen=True)
class TailInputs:
    """The page's inputs; defaults are the paper's Table 1 first row, fan-out and hedge at p95."""

    leaf_p50_ms: float = TABLE_1_ONE_LEAF[0]
    leaf_p95_ms: float = TABLE_1_ONE_LEAF[1]
    leaf_p99_ms: float = TABLE_1_ONE_LEAF[2]
    fanout: int = ASSUMED_FANOUT
    hedge_percentile: float = HEDGE_QUANTILE * 100
    base_utilization: float = 0.5
    tie_delay_ms: float = PAPER_TIE_DELAY_MS

    def __post_init__(self) -> None:
        for name, (low, high) in TAIL_INPUT_RANGES.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"{name} must be a number, got {value!r}")
            if not low <= value <= high:
                raise ValueError(f"{name} = {value:g} is outside {low:g} to {high:g}")
        if not isinstance(self.fanout, int):
            raise ValueError(f"fanout must be a whole number, got {self.fanout!r}")
        if not self.leaf_p50_ms < self.leaf_p95_ms < self.leaf_p99_ms:
            raise ValueError(
                "the leaf's p50, p95 and p99 must increase, got "
                f"{self.leaf_p50_ms:g}, {self.leaf_p95_ms:g} and {self.leaf_p99_ms:g} ms"
            )

    def leaf(self) -> LeafLatency:
        """The leaf fitted to the three quantiles."""
        return fit_leaf(self.leaf_p50_ms, self.leaf_p95_ms, self.leaf_p99_ms)

    def delay_ms(self) -> float:
        """The hedge delay: the unloaded leaf's ``hedge_percentile``-th percentile, in ms."""
        return self.leaf().quantile(self.hedge_percentile / 100)


@dataclass(frozen=True)
class TailJudgement:
    """What the page shows for one set of inputs.

    ``hedged`` is with the hedges' load fed back; where there is no steady state (``stable``
    false) its quantiles are infinite and ``extra_work`` is None.
    """

    inputs: TailInputs
    delay_ms: float
    slow_leaf_share: float
    slow_share: float
    unhedged: dict[float, float]
    hedged: dict[float, float]
    change: dict[float, float]
    """``hedged / unhedged - 1`` per quantile (-0.9 is 90% shorter); infinite where unstable."""
    stable: bool
    hedged_share: float
    utilization: float
    scale: float
    extra_work: float | None
    tied: TiedOutcome
    """Tied requests beside one copy and hedging on an M/M/1 leaf (median the leaf's p50, at
    the leaves' utilization before hedging): a queue is what tying acts on."""


def tied_outcome(inputs: TailInputs) -> TiedOutcome:
    """``tie`` on the M/M/1 leaf with the inputs' p50 as its median and their utilization."""
    leaf = QueuedLeaf.with_median(inputs.leaf_p50_ms, inputs.base_utilization)
    return tie(leaf, inputs.fanout, inputs.tie_delay_ms, inputs.hedge_percentile / 100, QUANTILES)


def judge_tail(inputs: TailInputs) -> TailJudgement:
    """The fanned-out request unhedged and hedged (load fed back), and what hedging costs."""
    leaf, delay = inputs.leaf(), inputs.delay_ms()
    loaded = hedge_under_load(leaf, delay, inputs.fanout, inputs.base_utilization, QUANTILES)
    extra = HedgedLeaf(leaf.scaled(loaded.scale), delay).extra_work() if loaded.stable else None
    return TailJudgement(
        inputs=inputs,
        delay_ms=delay,
        slow_leaf_share=1.0 - SLOW_LEAF_QUANTILE,
        slow_share=slow_request_probability(1.0 - SLOW_LEAF_QUANTILE, inputs.fanout),
        unhedged=loaded.unhedged,
        hedged=loaded.hedged_loaded,
        change={q: loaded.hedged_loaded[q] / loaded.unhedged[q] - 1.0 for q in QUANTILES},
        stable=loaded.stable,
        hedged_share=loaded.hedged_share,
        utilization=loaded.utilization,
        scale=loaded.scale,
        extra_work=extra,
        tied=tied_outcome(inputs),
    )


@dataclass(frozen=True)
class TailHeatmap:
    """The hedged, loaded quantile ``q`` (ms) of the fanned-out request: rows are hedge
    percentiles, columns fan-outs; an unstable row is infinite throughout."""

    fanouts: tuple[int, ...]
    percentiles: tuple[float, ...]
    quantile: float
    quantile_ms: np.ndarray
    stable: np.ndarray


def _hedged_isf(hedged: HedgedLeaf, tails: np.ndarray) -> np.ndarray:
    """``HedgedLeaf.isf`` for every tail at once: the same bisection, vectorized."""
    high = np.array([hedged.leaf.isf(float(s)) for s in tails])
    low = np.full_like(high, hedged.delay_ms)
    out = high.copy()
    hedging = high > hedged.delay_ms  # else no second copy is out before this quantile
    if hedging.any():
        low, high, tail = low[hedging], high[hedging], tails[hedging]
        for _ in range(_BISECTION_STEPS):
            middle = 0.5 * (low + high)
            above = hedged.sf(middle) > tail
            low, high = np.where(above, middle, low), np.where(above, high, middle)
        out[hedging] = 0.5 * (low + high)
    return out


def tail_heatmap(
    inputs: TailInputs,
    fanouts: tuple[int, ...],
    percentiles: tuple[float, ...],
    quantile: float = QUANTILES[-1],
) -> TailHeatmap:
    """The hedged request's ``quantile`` with load fed back over ``fanouts`` x ``percentiles``
    (the inputs' leaf and base utilization)."""
    leaf = inputs.leaf()
    tails = np.array([order_statistic_tail(n, n, quantile) for n in fanouts])
    grid = np.full((len(percentiles), len(fanouts)), math.inf)
    stable = np.zeros(grid.shape, dtype=bool)
    for row, percentile in enumerate(percentiles):
        delay = leaf.quantile(percentile / 100)
        _, _, scale = settle(leaf, delay, inputs.base_utilization)
        if math.isfinite(scale):
            grid[row] = _hedged_isf(HedgedLeaf(leaf.scaled(scale), delay), tails)
            stable[row] = True
    return TailHeatmap(tuple(fanouts), tuple(percentiles), quantile, grid, stable)


@dataclass(frozen=True)
class TailCheckRow:
    """One analytic quantile beside the simulated one; they agree when it is in the interval."""

    label: str
    quantile: float
    analytic_ms: float
    simulated: SimQuantile

    @property
    def agrees(self) -> bool:
        return self.simulated.contains(self.analytic_ms)


@dataclass(frozen=True)
class TailCheck:
    """``check_tail``'s comparison: the requests simulated per run and a row per quantile."""

    requests: int
    rows: tuple[TailCheckRow, ...]
    hedged_share: float
    simulated_hedged_share: float

    @property
    def agrees(self) -> bool:
        return all(row.agrees for row in self.rows)


def check_requests(fanout: int) -> int:
    """Requests per simulated run: ``SIM_LEAVES`` leaf draws, within ``SIM_REQUESTS``."""
    low, high = SIM_REQUESTS
    return max(low, min(high, SIM_LEAVES // fanout))


def check_tail(inputs: TailInputs, seed: int = 0) -> TailCheck:
    """Simulate the fanned-out request unhedged and hedged (idle leaves: the Monte Carlo does not
    feed the hedges' load back) against the analytic quantiles of the same."""
    leaf, delay, fanout = inputs.leaf(), inputs.delay_ms(), inputs.fanout
    analytic = hedge(leaf, delay, fanout, QUANTILES)
    requests = check_requests(fanout)
    plain = simulate_tail(leaf, fanout, requests, seed, quantiles=QUANTILES)
    hedged = simulate_tail(leaf, fanout, requests, seed + 1, delay_ms=delay, quantiles=QUANTILES)
    rows = tuple(
        TailCheckRow(label, q, expected[q], simulated.quantiles[q])
        for label, expected, simulated in (
            ("unhedged", analytic.request_before, plain),
            ("hedged, idle leaves", analytic.request_after, hedged),
        )
        for q in QUANTILES
    )
    return TailCheck(requests, rows, analytic.hedged_share, hedged.hedged_share)
