"""sdlab's model: the serving system as pure Python + numpy. No UI library is imported here."""

from sdlab_model.assessment import (
    Assessment,
    evaluate,
    latency,
    min_replicas_for_target,
    p99_grid,
)
from sdlab_model.design import Decision, Meter, Needs, Reason, Stage
from sdlab_model.latency import LatencyResult
from sdlab_model.params import (
    DEFAULT_MODEL,
    INPUT_NAMES,
    MODEL_CHOICES,
    NUMERIC_BY_NAME,
    NUMERIC_INPUTS,
    TOGGLE_BY_NAME,
    TOGGLE_INPUTS,
)
from sdlab_model.workload import Workload

__all__ = [
    "DEFAULT_MODEL",
    "INPUT_NAMES",
    "MODEL_CHOICES",
    "NUMERIC_BY_NAME",
    "NUMERIC_INPUTS",
    "TOGGLE_BY_NAME",
    "TOGGLE_INPUTS",
    "Assessment",
    "Decision",
    "LatencyResult",
    "Meter",
    "Needs",
    "Reason",
    "Stage",
    "Workload",
    "evaluate",
    "latency",
    "min_replicas_for_target",
    "p99_grid",
]
