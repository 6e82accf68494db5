"""sdlab's model: the serving system as pure Python + numpy. No UI library is imported here."""

from sdlab_model.advice import Advice, advise
from sdlab_model.architecture import FLOWS, NODE_IDS, NODES, to_dot
from sdlab_model.assessment import (
    Assessment,
    evaluate,
    latency,
    min_replicas_for_target,
    p99_grid,
)
from sdlab_model.design import Decision, Meter, Needs, Reason, Stage
from sdlab_model.grids import P99Grid, compute_axes_grid
from sdlab_model.latency import LatencyResult
from sdlab_model.llm import LlmWorkload, llm_latency, simulate_llm
from sdlab_model.page_params import ACCELERATOR_INPUT, CANARY_INPUTS, TIMELINE_INPUTS
from sdlab_model.params import (
    DEFAULT_MODEL,
    INPUT_NAMES,
    MODEL_CHOICES,
    NUMERIC_BY_NAME,
    NUMERIC_INPUTS,
    TOGGLE_BY_NAME,
    TOGGLE_INPUTS,
)
from sdlab_model.residency.placement import plan_residency
from sdlab_model.scenarios import SCENARIO_BY_ID, SCENARIOS, WALKTHROUGH, Scenario
from sdlab_model.simulation.converged import ConvergedSim, simulate_converged
from sdlab_model.simulation.simulator import SimResult, simulate, simulate_grid
from sdlab_model.sources import FORMULAS, SOURCES, TEACHING_ASSUMPTIONS, TRADEOFFS
from sdlab_model.tail import (
    fanout_quantiles,
    fit_leaf,
    hedge,
    simulate_tail,
    slow_request_probability,
)
from sdlab_model.timeline import run_timeline
from sdlab_model.timeline.canary import plan_rollout
from sdlab_model.workload import Workload

__all__ = [
    "ACCELERATOR_INPUT",
    "CANARY_INPUTS",
    "DEFAULT_MODEL",
    "FLOWS",
    "FORMULAS",
    "INPUT_NAMES",
    "MODEL_CHOICES",
    "NODES",
    "NODE_IDS",
    "NUMERIC_BY_NAME",
    "NUMERIC_INPUTS",
    "SCENARIOS",
    "SCENARIO_BY_ID",
    "SOURCES",
    "TEACHING_ASSUMPTIONS",
    "TIMELINE_INPUTS",
    "TOGGLE_BY_NAME",
    "TOGGLE_INPUTS",
    "TRADEOFFS",
    "WALKTHROUGH",
    "Advice",
    "Assessment",
    "ConvergedSim",
    "Decision",
    "LatencyResult",
    "LlmWorkload",
    "Meter",
    "Needs",
    "P99Grid",
    "Reason",
    "Scenario",
    "SimResult",
    "Stage",
    "Workload",
    "advise",
    "compute_axes_grid",
    "evaluate",
    "fanout_quantiles",
    "fit_leaf",
    "hedge",
    "latency",
    "llm_latency",
    "min_replicas_for_target",
    "p99_grid",
    "plan_residency",
    "plan_rollout",
    "run_timeline",
    "simulate",
    "simulate_converged",
    "simulate_grid",
    "simulate_llm",
    "simulate_tail",
    "slow_request_probability",
    "to_dot",
]
