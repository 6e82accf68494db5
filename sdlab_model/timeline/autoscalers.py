"""Autoscalers and their real defaults, each cited, and the cold start of a new replica.

Four policies decide how many replicas the fleet should have (``AutoscalerConfig.kind``):

- ``none``: a fixed fleet of ``min_replicas``.
- ``hpa``: the Kubernetes Horizontal Pod Autoscaler on CPU utilization (a replica's busy share).
  Every ``hpa_sync_period_s`` it computes ``desired = ceil(current x utilization / target)``
  (``replica_calculator.go``: no change within the tolerance; on a scale-up, pods whose metrics
  are not yet usable count as 0%, and a scale-up that this turns into a scale-down is dropped),
  keeps the highest recommendation of the last ``hpa_scale_down_stabilization_s`` on the way
  down, and grows by at most ``max(2 x current, current + 4)`` per 15 s (the default behavior).
  A pod's CPU metric is usable one metric window after it turns ready while it is within the
  CPU initialization period of its start (its StartTime, after node provisioning), and as soon
  as it is ready after that (``model.hpa_metric_delay_s``). The metric window is
  metrics-server's ``--metric-resolution`` (``hpa_metric_window_s``): it scrapes every window
  and a pod's CPU is the rate between its last two scrapes. The timeline's HPA syncs at its
  period and metrics-server scrapes at its window, both from t = 0 (at the defaults, a sync
  reads the window ending at 15 s, 30 s, ...); ``hpa_phases`` moves the syncs and the scrapes
  off those instants and gives the band of decisions over the phases.
- ``kpa``: the Knative Pod Autoscaler on concurrency (requests in flight, queued included).
  Every 2 s it divides the mean concurrency of the last 60 s (stable) and of the last 6 s (panic)
  by the per-pod target (``containerConcurrency x 0.7``); panic starts when the panic count is at
  least twice the ready pods, and while panicking the count never falls; it ends once the panic
  condition has been false for a whole stable window. Then it scales down to the stable count
  at most halving the ready pods per tick (max scale-down rate 2). Where a fleet that carries
  the load is at far less than the target per pod, the stable count after a panic is a fleet
  that cannot carry it, and Knative cycles between the two (the x5 step at 2,000 req/s:
  ``tests/sdlab_model/timeline/test_kpa_step.py``, by hand from the source).
- ``ray``: Ray Serve's default policy on ongoing requests per replica (target 2): it wants
  ``ceil(total ongoing / target)`` replicas, acted on only after the same direction has been
  wanted continuously for ``upscale_delay_s`` (up) or ``downscale_delay_s`` (down).

Sources (read 2026-11-30):

- Kubernetes: ``pkg/controller/podautoscaler/replica_calculator.go`` (tolerance, unready pods,
  ``groupPods``), ``pkg/apis/autoscaling/v2/defaults.go`` (scale-up policies 4 pods and 100% per
  15 s, select Max; scale-down 100% per 15 s), kube-controller-manager flags
  ``--horizontal-pod-autoscaler-sync-period=15s``, ``--horizontal-pod-autoscaler-tolerance=0.1``,
  ``--horizontal-pod-autoscaler-downscale-stabilization=5m0s``,
  ``--horizontal-pod-autoscaler-cpu-initialization-period=5m0s``,
  https://kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale/ .
- metrics-server (kubernetes-sigs/metrics-server, read 2026-12-02): ``--metric-resolution=15s``
  in the released manifest (``manifests/base/deployment.yaml`` at 2efcd9fe23; the binary's own
  default is 60 s), the interval between scrapes and so the CPU rate's window;
  ``cmd/metrics-server/app/options/options.go`` ``Validate`` refuses less than 10 s
  ("metric-resolution should be a time duration at least 10s").
- Knative Serving: ``pkg/autoscaler/config/config.go`` ``defaultConfig`` (stable window 60 s,
  panic window 10% of it, panic threshold 200%, target utilization 0.7, max scale-up rate 1000,
  max scale-down rate 2), ``pkg/autoscaler/scaling/autoscaler.go`` ``Scale`` (the panic rules),
  ``pkg/autoscaler/scaling/multiscaler.go`` (``tickInterval = 2 * time.Second``),
  ``pkg/reconciler/autoscaling/resources/metric.go`` (the panic window, rounded to a second);
  commit 98e5ef90aa (2026-08-21).
- Ray Serve: ``python/ray/serve/autoscaling_policy.py`` (the policy and its delay counters) and
  https://docs.ray.io/en/latest/serve/api/doc/ray.serve.config.AutoscalingConfig.html
  (``target_ongoing_requests=2``, ``upscale_delay_s=30``, ``downscale_delay_s=600``,
  ``look_back_period_s=30``); ``CONTROL_LOOP_INTERVAL_S = 0.1`` in ``ray/serve/_private/
  constants.py``.

Approximations: every policy acts at whole steps of the timeline (Ray's 0.1 s control loop runs
once a step, so its delays count steps); a replica's metric is the fleet's average (the load
balancer spreads load evenly over ready replicas); the HPA's CPU utilization is the replicas'
busy share (served rate over capacity), which is what a CPU-bound model server reports.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

AutoscalerKind = Literal["none", "hpa", "kpa", "ray"]
AUTOSCALER_KINDS: tuple[str, ...] = ("none", "hpa", "kpa", "ray")
AUTOSCALER_LABELS: dict[str, str] = {
    "none": "None (fixed fleet)",
    "hpa": "Kubernetes HPA (CPU utilization)",
    "kpa": "Knative KPA (concurrency, panic mode)",
    "ray": "Ray Serve (ongoing requests)",
}

# Kubernetes HPA (sources in the module docstring).
HPA_SYNC_PERIOD_S = 15.0
HPA_TOLERANCE = 0.1
HPA_SCALE_DOWN_STABILIZATION_S = 300.0
HPA_SCALE_UP_PODS = 4
HPA_SCALE_UP_PERCENT = 100.0
HPA_SCALE_UP_PERIOD_S = 15.0
HPA_CPU_INITIALIZATION_PERIOD_S = 300.0
HPA_METRIC_WINDOW_S = 15.0
"""metrics-server's ``--metric-resolution`` in its released manifest (the default of
``AutoscalerConfig.hpa_metric_window_s``)."""
HPA_DEFAULT_TARGET_UTILIZATION = 0.7
"""The issue's (and a common) target; Kubernetes itself defaults to 80% when no metric is set."""

# Knative KPA.
KPA_TICK_S = 2.0
KPA_STABLE_WINDOW_S = 60.0
KPA_PANIC_WINDOW_PERCENTAGE = 10.0
KPA_PANIC_THRESHOLD = 2.0
KPA_TARGET_UTILIZATION = 0.7
KPA_MAX_SCALE_UP_RATE = 1000.0
KPA_MAX_SCALE_DOWN_RATE = 2.0

# Ray Serve.
RAY_TARGET_ONGOING_REQUESTS = 2.0
RAY_UPSCALE_DELAY_S = 30.0
RAY_DOWNSCALE_DELAY_S = 600.0
RAY_LOOK_BACK_PERIOD_S = 30.0

MAX_REPLICAS = 500
"""The lab's largest fleet (the Replicas slider's maximum)."""

KNOB_RANGES: dict[str, tuple[float, float]] = {
    "hpa_target_utilization": (0.05, 1.0),
    "hpa_sync_period_s": (1.0, 600.0),
    "hpa_tolerance": (0.0, 0.5),
    "hpa_scale_down_stabilization_s": (0.0, 3600.0),
    "hpa_metric_window_s": (10.0, 120.0),
    "kpa_container_concurrency": (0.0, 10_000.0),
    "kpa_target_utilization": (0.01, 1.0),
    "kpa_stable_window_s": (6.0, 3600.0),
    "kpa_panic_window_percentage": (1.0, 100.0),
    "kpa_panic_threshold": (1.1, 10.0),
    "ray_target_ongoing_requests": (0.01, 10_000.0),
    "ray_upscale_delay_s": (0.0, 3600.0),
    "ray_downscale_delay_s": (0.0, 3600.0),
    "ray_look_back_period_s": (1.0, 600.0),
}
"""Allowed range of each numeric knob of ``AutoscalerConfig`` (validation and the page's
inputs read it from here). The metric window's lower bound is metrics-server's own (at least
10 s); its upper bound, 2 minutes (eight default windows), is the lab's, not metrics-server's.
The KPA's are Knative's own bounds: a stable window of 6 s to 1 h,
a panic window of 1-100% of it, a panic threshold of 110-1000% (``pkg/autoscaler/config``
``validate`` and ``autoscaling.PanicThresholdPercentageMin``/``Max``)."""


@dataclass(frozen=True)
class AutoscalerConfig:
    """Which autoscaler, its bounds and its main knobs (defaults: the systems' own)."""

    kind: str = "hpa"
    min_replicas: int = 2
    max_replicas: int = 100
    hpa_target_utilization: float = HPA_DEFAULT_TARGET_UTILIZATION
    hpa_sync_period_s: float = HPA_SYNC_PERIOD_S
    hpa_tolerance: float = HPA_TOLERANCE
    hpa_scale_down_stabilization_s: float = HPA_SCALE_DOWN_STABILIZATION_S
    hpa_metric_window_s: float = HPA_METRIC_WINDOW_S
    """metrics-server's ``--metric-resolution``: it scrapes every window, and a pod's CPU is the
    rate over the window before its newest scrape."""
    kpa_container_concurrency: float = 0.0
    """Requests one pod takes at once (a hard limit); 0: the replica's slots x max batch."""
    kpa_target_utilization: float = KPA_TARGET_UTILIZATION
    kpa_stable_window_s: float = KPA_STABLE_WINDOW_S
    kpa_panic_window_percentage: float = KPA_PANIC_WINDOW_PERCENTAGE
    """The panic window as a share of the stable window (Knative's 10%: 6 s of 60 s)."""
    kpa_panic_threshold: float = KPA_PANIC_THRESHOLD
    """Panic when the panic window's pod count reaches this multiple of the ready pods (200%)."""
    ray_target_ongoing_requests: float = RAY_TARGET_ONGOING_REQUESTS
    ray_upscale_delay_s: float = RAY_UPSCALE_DELAY_S
    ray_downscale_delay_s: float = RAY_DOWNSCALE_DELAY_S
    ray_look_back_period_s: float = RAY_LOOK_BACK_PERIOD_S

    def __post_init__(self) -> None:
        if self.kind not in AUTOSCALER_KINDS:
            raise ValueError(f"kind={self.kind!r} is not one of {', '.join(AUTOSCALER_KINDS)}")
        for name in ("min_replicas", "max_replicas"):
            value = getattr(self, name)
            if isinstance(value, bool) or int(value) != value or not 1 <= value <= MAX_REPLICAS:
                raise ValueError(f"{name}={value!r} must be a whole number in [1, {MAX_REPLICAS}]")
            object.__setattr__(self, name, int(value))
        if self.max_replicas < self.min_replicas:
            raise ValueError(
                f"max_replicas={self.max_replicas} is below min_replicas={self.min_replicas}"
            )
        for name, (low, high) in KNOB_RANGES.items():
            _check(name, getattr(self, name), low, high)


# Cold start. Node provisioning: a CPU VM from request to a Ready node and a running pod in the
# tens of seconds (the 30–40 s; not independently measured here); a GPU node in minutes
# (2–4 min boot + driver initialization, theneuralbase.com "Cluster autoscaler for K8s"; "up to
# 15 minutes before it reports that GPU is allocatable", kubernetes/autoscaler
# cluster-autoscaler/utils/gpu/gpu.go comment; both read 2026-11-30).
CPU_NODE_PROVISION_S = 35.0
GPU_NODE_PROVISION_S = 180.0
# Model load: size / effective bandwidth. From host memory over PCIe 4.0 x16 (16 GT/s x 16
# lanes, ~31.5 GB/s raw) a pinned copy reaches ~20–25 GB/s; from network or object storage far
# less (NVIDIA, "Reducing cold start latency for LLM inference with NVIDIA Run:ai Model
# Streamer", developer.nvidia.com, 2025, measures S3 and SSD reads in the GB/s range). The
# default, 2 GB/s, is a local-NVMe-class read.
DEFAULT_MODEL_SIZE_GB = 2.0
DEFAULT_LOAD_BANDWIDTH_GBPS = 2.0
HOST_MEMORY_LOAD_BANDWIDTH_GBPS = 22.0


@dataclass(frozen=True)
class ColdStart:
    """Time from an autoscaler's decision to a new replica that serves.

    ``cold_start_s = node_provision_s + model_size_gb / load_bandwidth_gbps`` (provisioning and
    model load in sequence; image pull and warm-up are folded into provisioning).
    """

    node_provision_s: float = CPU_NODE_PROVISION_S
    model_size_gb: float = DEFAULT_MODEL_SIZE_GB
    load_bandwidth_gbps: float = DEFAULT_LOAD_BANDWIDTH_GBPS

    def __post_init__(self) -> None:
        _check("node_provision_s", self.node_provision_s, 0.0, 3600.0)
        _check("model_size_gb", self.model_size_gb, 0.0, 2000.0)
        _check("load_bandwidth_gbps", self.load_bandwidth_gbps, 0.01, 1000.0)

    @property
    def model_load_s(self) -> float:
        return self.model_size_gb / self.load_bandwidth_gbps

    @property
    def cold_start_s(self) -> float:
        return self.node_provision_s + self.model_load_s


def _check(name: str, value: float, low: float, high: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    if not (low <= value <= high) or not math.isfinite(value):
        raise ValueError(f"{name}={value!r} is outside the allowed range [{low:g}, {high:g}]")
