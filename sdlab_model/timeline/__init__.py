"""Timeline: traffic that changes over time, autoscalers with cold starts, canary rollouts.

- ``traffic``: the traffic shapes (constant, step, spike, diurnal, an uploaded CSV).
- ``autoscalers``: HPA, KPA and Ray Serve with their real defaults (cited), and the cold start.
- ``model``: the time-stepped model (``run_timeline``) and the fixed fleet sized for the peak
  (``run_fixed_for_peak``); ``_stepper`` its compiled loop.
- ``hpa_phases``: the HPA's decisions at a given sync and metrics-scrape phase, and their band
  over a grid of phases (``hpa_band``).
- ``check``: the same arrivals and replica schedule through the discrete-event simulator
  (``simulate_timeline``).
- ``canary``: a canary rollout's per-version p99, extra cost and time to detect a regression
  (``plan_rollout``).
"""

from sdlab_model.timeline.autoscalers import AUTOSCALER_KINDS, AutoscalerConfig, ColdStart
from sdlab_model.timeline.model import (
    TimelineInputs,
    TimelineResult,
    TimelineTotals,
    replicas_for_peak,
    run_fixed_for_peak,
    run_timeline,
)
from sdlab_model.timeline.traffic import (
    TRAFFIC_KINDS,
    TrafficShape,
    UploadedTrace,
    parse_trace_csv,
)

__all__ = [
    "AUTOSCALER_KINDS",
    "TRAFFIC_KINDS",
    "AutoscalerConfig",
    "ColdStart",
    "TimelineInputs",
    "TimelineResult",
    "TimelineTotals",
    "TrafficShape",
    "UploadedTrace",
    "parse_trace_csv",
    "replicas_for_peak",
    "run_fixed_for_peak",
    "run_timeline",
]
