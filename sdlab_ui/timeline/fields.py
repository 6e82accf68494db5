"""The Timeline page's input fields as data: each field's URL name, label, range, step and help,
the autoscalers' knobs and the choices (traffic shape, autoscaler)."""

from __future__ import annotations

from dataclasses import dataclass

from sdlab_model.timeline import (
    AutoscalerConfig,
)
from sdlab_model.timeline.autoscalers import (
    AUTOSCALER_KINDS,
    AUTOSCALER_LABELS,
    CPU_NODE_PROVISION_S,
    GPU_NODE_PROVISION_S,
    KNOB_RANGES,
    MAX_REPLICAS,
)
from sdlab_model.timeline.traffic import TRAFFIC_KINDS, TRAFFIC_LABELS


@dataclass(frozen=True)
class Field:
    """One timeline input: its URL name, label, range and default (None: from the workload)."""

    name: str
    label: str
    minimum: float
    maximum: float
    default: float | None
    step: float
    integer: bool = False
    help: str = ""


KNOBS: dict[str, str] = {}
"""Page input name -> the ``AutoscalerConfig`` field it sets."""


def _knob(name: str, knob: str, label: str, step: float, help_text: str) -> Field:
    """An autoscaler input whose range and default are the model's (``KNOB_RANGES``, the
    ``AutoscalerConfig`` defaults, each cited in ``sdlab_model.timeline.autoscalers``)."""
    low, high = KNOB_RANGES[knob]
    KNOBS[name] = knob
    default = AutoscalerConfig.__dataclass_fields__[knob].default
    return Field(name, label, low, high, float(default), step, help=help_text)


SCALER_KNOBS: dict[str, tuple[str, ...]] = {
    "none": (),
    "hpa": ("hpa_target", "hpa_down_s"),
    "kpa": ("kpa_concurrency", "kpa_target", "kpa_stable_s", "kpa_panic_pct", "kpa_panic_x"),
    "ray": ("ray_target", "ray_up_s", "ray_down_s"),
}
"""The inputs shown for each autoscaler."""
CHOICES: dict[str, tuple[str, tuple[str, ...], dict[str, str]]] = {
    "traffic": ("step", TRAFFIC_KINDS, TRAFFIC_LABELS),
    "scaler": ("hpa", AUTOSCALER_KINDS, AUTOSCALER_LABELS),
}
FIELDS: tuple[Field, ...] = (
    Field("factor", "Multiplier k (×)", 0.0, 100.0, 3.0, 0.5),
    Field("at_s", "At t (s)", 0.0, 172_800.0, 60.0, 10.0),
    Field("spike_s", "Spike lasts d (s)", 0.0, 172_800.0, 120.0, 10.0),
    Field("peak_to_trough", "Peak / trough", 1.0, 100.0, 4.0, 0.5),
    Field(
        "duration_s",
        "Duration (s)",
        60.0,
        172_800.0,
        600.0,
        60.0,
        help="86400 is a day. The model runs a day at 1 s steps in well under a second.",
    ),
    Field("step_s", "Step (s)", 0.1, 60.0, 1.0, 0.5),
    Field(
        "min_replicas",
        "Min replicas",
        1,
        MAX_REPLICAS,
        None,
        1,
        True,
        "Unless set, the sidebar's replicas (also the fleet at time 0).",
    ),
    Field("max_replicas", "Max replicas", 1, MAX_REPLICAS, 100.0, 1, True),
    _knob(
        "hpa_target",
        "hpa_target_utilization",
        "HPA target utilization",
        0.05,
        "70% here (the issue's); Kubernetes defaults to 80% when an HPA names no metric, and its "
        "walkthrough uses 50%.",
    ),
    _knob(
        "hpa_down_s",
        "hpa_scale_down_stabilization_s",
        "HPA scale-down stabilization (s)",
        30.0,
        "Kubernetes' default: 300 s (--horizontal-pod-autoscaler-downscale-stabilization).",
    ),
    _knob(
        "kpa_concurrency",
        "kpa_container_concurrency",
        "KPA container concurrency (0 = slots × max batch)",
        1.0,
        "Requests one pod takes at once (containerConcurrency). Knative's default is 0 "
        "(unlimited, target 100); here 0 means what the replica can serve at once.",
    ),
    _knob(
        "kpa_target",
        "kpa_target_utilization",
        "KPA target utilization",
        0.05,
        "Knative's default: 70% of container concurrency "
        "(container-concurrency-target-percentage).",
    ),
    _knob(
        "kpa_stable_s",
        "kpa_stable_window_s",
        "KPA stable window (s)",
        10.0,
        "Knative's default: 60 s (stable-window; allowed 6 s to 1 h).",
    ),
    _knob(
        "kpa_panic_pct",
        "kpa_panic_window_percentage",
        "KPA panic window (% of stable)",
        1.0,
        "Knative's default: 10% (panic-window-percentage), 6 s of a 60 s stable window.",
    ),
    _knob(
        "kpa_panic_x",
        "kpa_panic_threshold",
        "KPA panic threshold (× ready pods)",
        0.1,
        "Knative's default: 200% (panic-threshold-percentage; allowed 110–1000%).",
    ),
    _knob(
        "ray_target",
        "ray_target_ongoing_requests",
        "Ray target ongoing requests per replica",
        0.5,
        "Ray Serve's default: 2 (target_ongoing_requests).",
    ),
    _knob(
        "ray_up_s",
        "ray_upscale_delay_s",
        "Ray upscale delay (s)",
        5.0,
        "Ray Serve's default: 30 s (upscale_delay_s).",
    ),
    _knob(
        "ray_down_s",
        "ray_downscale_delay_s",
        "Ray downscale delay (s)",
        30.0,
        "Ray Serve's default: 600 s (downscale_delay_s).",
    ),
    Field(
        "provision_s",
        "Node provisioning (s)",
        0.0,
        3600.0,
        None,
        5.0,
        help=f"Unless set: {CPU_NODE_PROVISION_S:g} s for a CPU node, "
        f"{GPU_NODE_PROVISION_S:g} s for a GPU node (sources: the Tradeoffs page).",
    ),
    Field("model_gb", "Model size (GB)", 0.0, 2000.0, 2.0, 0.5),
    Field(
        "load_gbps",
        "Load bandwidth (GB/s)",
        0.01,
        1000.0,
        2.0,
        0.5,
        help="~20–25 GB/s from host memory over PCIe 4.0; a few GB/s from local NVMe; "
        "less from network storage.",
    ),
    Field("queue_limit", "Queue limit (requests, 0 = none)", 0.0, 1e9, 0.0, 100.0, True),
)
FIELD_BY_NAME = {f.name: f for f in FIELDS}
