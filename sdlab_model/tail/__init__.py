"""The tail at scale: fan-out to many leaves, and hedged requests against the slow ones.

After J. Dean and L. A. Barroso, "The Tail at Scale", Communications of the ACM 56(2), 74-80,
2013. Leaves are independent and alike throughout (the paper's arithmetic assumes the same).

- ``leaf``: ``fit_leaf``, a leaf's latency fitted to its p50, p95 and p99 (a lognormal body with
  a Pareto tail above the p95).
- ``fanout``: ``slow_request_probability`` (``1 - (1 - p)^N``) and ``fanout_quantiles``, the
  request's quantiles waiting for all N leaves or for a share of them (order statistics).
- ``hedging``: ``hedge``, a second copy after a delay, first answer wins: the share hedged, the
  extra work and the leaf's and the fanned-out request's tail before and after.
- ``load``: ``hedge_under_load``, the hedges' extra requests slowing the leaves (an M/M/1-like
  scaling, stated there), solved as a fixed point.
- ``tied``: ``tie``, tied requests (a copy queued at two M/M/1 leaves, the first to start
  cancels the other) beside one copy and hedging on the same leaf, with the load each costs.
- ``simulate``: ``simulate_tail`` and ``simulate_tied``, seeded Monte Carlos of the same, with
  95% intervals.
- ``tied_fleet``: ``simulate_tied_fleet``, FCFS leaves with tied copies and cancel-on-start, the
  check of the tied model's independent waits (plain Python, for scripts and tests).
- ``judgement``: the Tail at scale page's inputs (``TailInputs``), its one judgement
  (``judge_tail``), its heatmap grid (``tail_heatmap``) and its simulation check (``check_tail``).
"""

from sdlab_model.tail.fanout import fanout_quantiles, slow_request_probability
from sdlab_model.tail.hedging import HedgedLeaf, HedgeOutcome, hedge
from sdlab_model.tail.judgement import (
    TailCheck,
    TailHeatmap,
    TailInputs,
    TailJudgement,
    check_tail,
    judge_tail,
    tail_heatmap,
)
from sdlab_model.tail.leaf import LeafLatency, fit_leaf
from sdlab_model.tail.load import LoadedHedge, hedge_under_load
from sdlab_model.tail.simulate import SimQuantile, TailSim, TiedSim, simulate_tail, simulate_tied
from sdlab_model.tail.tied import QueuedLeaf, TiedLeaf, TiedOutcome, tie
from sdlab_model.tail.tied_fleet import FleetSim, simulate_tied_fleet

__all__ = [
    "FleetSim",
    "HedgeOutcome",
    "HedgedLeaf",
    "LeafLatency",
    "LoadedHedge",
    "QueuedLeaf",
    "SimQuantile",
    "TailCheck",
    "TailHeatmap",
    "TailInputs",
    "TailJudgement",
    "TailSim",
    "TiedLeaf",
    "TiedOutcome",
    "TiedSim",
    "check_tail",
    "fanout_quantiles",
    "fit_leaf",
    "hedge",
    "hedge_under_load",
    "judge_tail",
    "simulate_tail",
    "simulate_tied",
    "simulate_tied_fleet",
    "slow_request_probability",
    "tail_heatmap",
    "tie",
]
