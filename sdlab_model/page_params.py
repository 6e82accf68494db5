"""The inputs of the Timeline page, its canary rollout, the Models and memory page's GPU, the
LLM serving page, the Tail at scale page and the Overload page, in ``params.py``'s declaration
types: one kind of declaration for every page's widgets.

They live beside ``params.py``, not in it, because they read the model's own ranges and defaults
(the autoscalers' knobs, the canary's bounds, the hardware catalog), and those modules import
``params.py``. The canary's inputs are in percent and minutes, and deliberately wider than the
model accepts where a person may type something meaningless: the model's message says why.
"""

from __future__ import annotations

from dataclasses import fields

from sdlab_model.advice.hardware import hardware_by_id
from sdlab_model.llm import GPUS, INPUT_RANGES, MODELS, LlmWorkload
from sdlab_model.llm.kv_cache import PRECISION_BYTES
from sdlab_model.overload.fallback import FALLBACK_RANGES
from sdlab_model.overload.policy import ENVOY_BUDGET_PERCENT, POLICY_RANGES
from sdlab_model.overload.storm import BURST_RANGES, Burst
from sdlab_model.params import (
    DEFAULT_ACCELERATOR,
    NUMERIC_BY_NAME,
    ChoiceInput,
    NumericInput,
)
from sdlab_model.residency.inputs import ACCELERATOR_IDS
from sdlab_model.tail.judgement import TAIL_INPUT_RANGES, TailInputs
from sdlab_model.timeline import canary
from sdlab_model.timeline.autoscalers import (
    AUTOSCALER_KINDS,
    AUTOSCALER_LABELS,
    CPU_NODE_PROVISION_S,
    GPU_NODE_PROVISION_S,
    KNOB_RANGES,
    MAX_REPLICAS,
    AutoscalerConfig,
)
from sdlab_model.timeline.traffic import TRAFFIC_KINDS, TRAFFIC_LABELS
from sdlab_model.workload import Workload


def _accelerator_label(hardware_id: str) -> str:
    hardware = hardware_by_id(hardware_id)
    return f"{hardware.accelerator} ({hardware.accelerator_memory_gb:g} GB) — {hardware.id}"


ACCELERATOR_INPUT = ChoiceInput(
    "accelerator",
    "Replica GPU (memory from the hardware catalog)",
    ACCELERATOR_IDS,
    tuple(_accelerator_label(h) for h in ACCELERATOR_IDS),
    DEFAULT_ACCELERATOR,
    "Each GPU of a replica holds the replica's resident models (one instance of a model per GPU, "
    "Triton's default), so one GPU's memory limits what stays loaded.",
)
"""The Models and memory page's replica GPU (``ResidencyInputs.accelerator``)."""


def _typed(
    name: str, label: str, low: float, high: float, default: float, step: float, **kw
) -> NumericInput:
    """A page input typed in a box: linear, with its own step (the Timeline's, the Overload
    page's sections')."""
    unit, integer, help_text = kw.pop("unit", ""), kw.pop("integer", False), kw.pop("help", "")
    return NumericInput(
        name, label, low, high, default, "linear", unit, integer, help_text, step=step, **kw
    )


_CONFIG_DEFAULTS = {f.name: f.default for f in fields(AutoscalerConfig)}


def _knob(
    name: str, knob: str, label: str, step: float, help_text: str, unit: str = ""
) -> NumericInput:
    """An autoscaler input whose range and default are the model's (``KNOB_RANGES`` and the
    ``AutoscalerConfig`` defaults, each cited in ``sdlab_model.timeline.autoscalers``)."""
    low, high = KNOB_RANGES[knob]
    default = float(_CONFIG_DEFAULTS[knob])
    return _typed(name, label, low, high, default, step, unit=unit, help=help_text, source=knob)


TIMELINE_CHOICES: tuple[ChoiceInput, ...] = (
    ChoiceInput(
        "traffic",
        "Shape",
        TRAFFIC_KINDS,
        tuple(TRAFFIC_LABELS[k] for k in TRAFFIC_KINDS),
        "spike",
        "A spike by default: the fleet has to scale up for it and back down after it.",
    ),
    ChoiceInput(
        "scaler",
        "Policy",
        AUTOSCALER_KINDS,
        tuple(AUTOSCALER_LABELS[k] for k in AUTOSCALER_KINDS),
        "hpa",
        "",
    ),
)

WORKLOAD_DEFAULTS: frozenset[str] = frozenset({"min_replicas", "provision_s"})
"""Timeline inputs whose default is the workload's (its replicas; a CPU or GPU node's
provisioning): the default declared is the default workload's."""

DEFAULT_SPIKE_FACTOR = 75.0
_WORKLOAD = Workload()
_FLEET_RPS = _WORKLOAD.capacity_rps


def _factor_help() -> str:
    """Why the default multiplier: what it asks of the default workload's fleet. (Capacity is
    arithmetic; a p99 here would run the queueing model, and its compiler, on every import.)"""
    rate = _WORKLOAD.rate_rps
    peak = rate * DEFAULT_SPIKE_FACTOR
    return (
        f"{DEFAULT_SPIKE_FACTOR:g}× by default: the sidebar's default {rate:,.0f} req/s becomes "
        f"{peak:,.0f} req/s, {peak / _FLEET_RPS:.1f} times what its {_WORKLOAD.replicas} "
        f"replicas serve on full batches ({_FLEET_RPS:,.0f} req/s), so the autoscaler has to "
        "add replicas."
    )


TIMELINE_INPUTS: tuple[NumericInput, ...] = (
    _typed(
        "factor", "Multiplier k (×)", 0.0, 100.0, DEFAULT_SPIKE_FACTOR, 0.5, help=_factor_help()
    ),
    _typed(
        "at_s",
        "At t",
        0.0,
        172_800.0,
        60.0,
        10.0,
        unit="s",
        help="60 s by default: a minute of the base rate first, the fleet at rest.",
    ),
    _typed(
        "spike_s",
        "Spike lasts d",
        0.0,
        172_800.0,
        300.0,
        10.0,
        unit="s",
        help="300 s by default: long enough for the HPA's ramp (one decision per cold start "
        "and metric window) to reach the spike's size before it ends.",
    ),
    _typed("peak_to_trough", "Peak / trough", 1.0, 100.0, 4.0, 0.5),
    _typed(
        "duration_s",
        "Duration",
        60.0,
        172_800.0,
        1200.0,
        60.0,
        unit="s",
        help="86400 is a day. The model runs a day at 1 s steps in well under a second. 1200 s "
        "by default: the spike and the scale-down after it (the HPA's 300 s stabilization, "
        "Ray Serve's 600 s downscale delay).",
    ),
    _typed("step_s", "Step", 0.1, 60.0, 1.0, 0.5, unit="s"),
    _typed(
        "min_replicas",
        "Min replicas",
        1,
        MAX_REPLICAS,
        NUMERIC_BY_NAME["replicas"].default,
        1,
        integer=True,
        help="Unless set, the sidebar's replicas (also the fleet at time 0).",
    ),
    _typed("max_replicas", "Max replicas", 1, MAX_REPLICAS, 100.0, 1, integer=True),
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
        "HPA scale-down stabilization",
        30.0,
        "Kubernetes' default: 300 s (--horizontal-pod-autoscaler-downscale-stabilization).",
        unit="s",
    ),
    _knob(
        "hpa_window_s",
        "hpa_metric_window_s",
        "HPA metric window (metrics-server)",
        5.0,
        "metrics-server's --metric-resolution: it scrapes every window and a pod's CPU is the "
        "rate over the last one. 15 s in its released manifest; it refuses less than 10 s.",
        unit="s",
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
        "KPA stable window",
        10.0,
        "Knative's default: 60 s (stable-window; allowed 6 s to 1 h).",
        unit="s",
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
        "Ray upscale delay",
        5.0,
        "Ray Serve's default: 30 s (upscale_delay_s).",
        unit="s",
    ),
    _knob(
        "ray_down_s",
        "ray_downscale_delay_s",
        "Ray downscale delay",
        30.0,
        "Ray Serve's default: 600 s (downscale_delay_s).",
        unit="s",
    ),
    _typed(
        "provision_s",
        "Node provisioning",
        0.0,
        3600.0,
        CPU_NODE_PROVISION_S,
        5.0,
        unit="s",
        help=f"Unless set: {CPU_NODE_PROVISION_S:g} s for a CPU node, "
        f"{GPU_NODE_PROVISION_S:g} s for a GPU node (sources: the Tradeoffs page).",
    ),
    _typed("model_gb", "Model size", 0.0, 2000.0, 2.0, 0.5, unit="GB"),
    _typed(
        "load_gbps",
        "Load bandwidth",
        0.01,
        1000.0,
        2.0,
        0.5,
        unit="GB/s",
        help="~20–25 GB/s from host memory over PCIe 4.0; a few GB/s from local NVMe; "
        "less from network storage.",
    ),
    _typed("queue_limit", "Queue limit (requests, 0 = none)", 0.0, 1e9, 0.0, 100.0, integer=True),
)
TIMELINE_BY_NAME: dict[str, NumericInput] = {spec.name: spec for spec in TIMELINE_INPUTS}
TIMELINE_CHOICE_BY_NAME: dict[str, ChoiceInput] = {spec.name: spec for spec in TIMELINE_CHOICES}
TIMELINE_KNOBS: dict[str, str] = {s.name: s.source for s in TIMELINE_INPUTS if s.source}
"""Timeline input name -> the ``AutoscalerConfig`` field it sets."""


def _percent(name: str, label: str, bound: canary.Bound, source: str, **kw) -> NumericInput:
    """A canary input in percent of the model's fraction (0-100% unless given)."""
    return NumericInput(
        name,
        label,
        kw.pop("low", 0.0),
        kw.pop("high", 100.0),
        bound.default * 100,
        "linear",
        kw.pop("unit", "%"),
        False,
        kw.pop("help", ""),
        step=0.01,
        source=source,
        **kw,
    )


CANARY_INPUTS: tuple[NumericInput, ...] = (
    NumericInput(
        "window_min",
        "Analysis window per step",
        canary.WINDOW_S.minimum / 60,
        canary.WINDOW_S.maximum / 60,
        canary.WINDOW_S.default / 60,
        "linear",
        "min",
        False,
        "30 min by default: Spinnaker recommends a canary interval of at least 30 minutes.",
        step=0.01,
        source="window_s",
    ),
    NumericInput(
        "interval_s",
        "Metric interval",
        canary.METRIC_INTERVAL_S.minimum,
        canary.METRIC_INTERVAL_S.maximum,
        canary.METRIC_INTERVAL_S.default,
        "linear",
        "s",
        False,
        "How often the judge gets a new metric point: Prometheus scrapes every 60 s by "
        "default (15 s in its example configuration), and Flagger checks every minute. "
        "Every judge looks once an interval.",
        step=0.01,
        source="interval_s",
    ),
    _percent(
        "shadow_pct",
        "Shadow traffic (% of the baseline's requests copied)",
        canary.SHADOW_SHARE,
        "shadow_share",
        unit="",
        help="Copies sent to the new version; their answers are discarded. Load and cost, and "
        "more requests to judge the new version by.",
    ),
    _percent(
        "baseline_error_pct",
        "Baseline error rate",
        canary.BASELINE_ERROR_RATE,
        "baseline_error_rate",
        decimals=3,
    ),
    _percent(
        "regressed_error_pct",
        "Regressed error rate",
        canary.REGRESSED_ERROR_RATE,
        "regressed_error_rate",
        decimals=3,
    ),
    _percent(
        "p99_regression_pct",
        "p99 regression",
        canary.P99_REGRESSION,
        "p99_regression",
        low=-100.0,
        high=1000.0,
    ),
    _percent(
        "tail_share_pct",
        "Slowest requests slowed (tail-confined p99 regression)",
        canary.TAIL_SHARE,
        "tail_share",
        help="The tail-confined regression slows only this share of the slowest requests. At "
        "1% or less the p99 does not move at all.",
    ),
    _percent(
        "false_alarm_pct",
        "Sequential judge's false-alarm rate over a step",
        canary.FALSE_ALARM,
        "false_alarm",
        high=50.0,
        help="The sequential z-test's boundary is set so a healthy canary is flagged this often "
        "over a whole step, all its looks together.",
    ),
)
"""The canary panel's inputs; ``source`` names the ``CanaryPlan`` field each sets (÷ 100 from
percent, × 60 from minutes)."""
CANARY_BY_NAME: dict[str, NumericInput] = {spec.name: spec for spec in CANARY_INPUTS}


_LLM_DEFAULTS = {f.name: f.default for f in fields(LlmWorkload)}


def _llm(name: str, label: str, step: float, **kw) -> NumericInput:
    """An LLM page input typed in a box: the range is the model's (``INPUT_RANGES``), the default
    ``LlmWorkload``'s, whole where the default is."""
    low, high = INPUT_RANGES[name]
    default = _LLM_DEFAULTS[name]
    unit, help_text = kw.pop("unit", ""), kw.pop("help", "")
    integer = isinstance(default, int)
    return NumericInput(
        name, label, low, high, default, "linear", unit, integer, help_text, step=step, **kw
    )


LLM_CHOICES: tuple[ChoiceInput, ...] = (
    ChoiceInput(
        "model_id",
        "Model",
        tuple(m.id for m in MODELS),
        tuple(m.name for m in MODELS),
        _LLM_DEFAULTS["model_id"],
        "",
    ),
    ChoiceInput(
        "gpu_id",
        "GPU",
        tuple(g.id for g in GPUS),
        tuple(g.name for g in GPUS),
        _LLM_DEFAULTS["gpu_id"],
        "",
    ),
    ChoiceInput(
        "precision",
        "Weights and KV cache",
        tuple(PRECISION_BYTES),
        tuple(p.upper() for p in PRECISION_BYTES),
        _LLM_DEFAULTS["precision"],
        "",
    ),
)
"""The LLM page's catalog choices: the ``LlmWorkload`` field each sets is its name."""
LLM_INPUTS: tuple[NumericInput, ...] = (
    _llm("tensor_parallel", "Tensor parallel", 1, help="GPUs per replica, splitting every layer."),
    _llm("replicas", "Replicas", 1, help="Behind a router that picks a replica at random."),
    _llm("rate_rps", "Request rate", 0.5, unit="req/s", help="Arrivals over all replicas."),
    _llm(
        "arrival_cv",
        "Arrival burstiness (CV)",
        0.1,
        decimals=2,
        help="Coefficient of variation of the gaps between requests, as the Lab's: 1 is a "
        "Poisson stream, above 1 bursty (Gamma gaps), below 1 smoother than random.",
    ),
    _llm("prompt_tokens_mean", "Prompt tokens (mean)", 100.0, decimals=0),
    _llm(
        "prompt_tokens_cv",
        "Prompt tokens (spread, CV)",
        0.1,
        decimals=2,
        help="Standard deviation over mean of a lognormal; 0: every prompt the same length. "
        "The default 0.5 is an assumed chat mix, not fitted to a trace.",
    ),
    _llm("output_tokens_mean", "Output tokens (mean)", 50.0, decimals=0),
    _llm(
        "output_tokens_cv",
        "Output tokens (spread, CV)",
        0.1,
        decimals=2,
        help="Standard deviation over mean of a lognormal; 0: every output the same length. "
        "The default 0.5 is an assumed chat mix, not fitted to a trace.",
    ),
    _llm(
        "prefix_cache_hit_share",
        "Prefix-cache hit share",
        0.05,
        decimals=2,
        help="Share of prompt tokens served from a prefix cache (vLLM's automatic prefix "
        "caching, SGLang's RadixAttention): they skip prefill compute but still take KV cache. "
        "0: no shared prefixes.",
    ),
    _llm(
        "max_running_sequences",
        "Max running sequences",
        16,
        help="vLLM's max_num_seqs: sequences an iteration decodes at most.",
    ),
    _llm(
        "max_batched_tokens",
        "Max batched tokens",
        512,
        help="vLLM's max_num_batched_tokens: tokens one iteration carries (decodes and prefill "
        "chunks).",
    ),
    _llm(
        "gpu_memory_utilization",
        "GPU memory utilization",
        0.05,
        decimals=2,
        advanced=True,
        help="vLLM's gpu_memory_utilization (default 0.9): the share of each GPU's memory for "
        "weights, activations and the KV cache.",
    ),
    _llm(
        "kv_block_tokens",
        "KV block size",
        16,
        unit="tokens",
        advanced=True,
        help="vLLM's block_size (default 16): the cache is allocated in blocks of this many "
        "tokens (PagedAttention).",
    ),
    _llm(
        "activation_reserve_gb",
        "Activation reserve per GPU",
        0.5,
        unit="GB",
        decimals=1,
        advanced=True,
        help="Memory kept for activations beside the weights and the cache. The default 2 GB "
        "is an assumption; vLLM measures it with a profiling run.",
    ),
    _llm(
        "ttft_p99_target_ms",
        "TTFT p99 target",
        100.0,
        unit="ms",
        decimals=0,
        help="Time to first token.",
    ),
    _llm(
        "tpot_p99_target_ms",
        "TPOT p99 target",
        5.0,
        unit="ms",
        decimals=1,
        help="Time per output token after the first.",
    ),
    _llm(
        "e2e_p99_target_ms",
        "E2E p99 target",
        1000.0,
        unit="ms",
        decimals=0,
        help="From arrival to the last token.",
    ),
)
"""The LLM page's numeric inputs: the ``LlmWorkload`` field each sets is its name."""
LLM_BY_NAME: dict[str, NumericInput] = {spec.name: spec for spec in LLM_INPUTS}
LLM_CHOICE_BY_NAME: dict[str, ChoiceInput] = {spec.name: spec for spec in LLM_CHOICES}
LLM_HEATMAP_AXIS = ChoiceInput(
    "heatmap_y",
    "Against the request rate",
    ("replicas", "tensor_parallel", "prompt_tokens_mean"),
    ("Replicas", "Tensor parallel", "Prompt tokens (mean)"),
    "replicas",
    "",
)
"""The second axis of the LLM page's heatmaps (the request rate is the first): a view."""


_TAIL_DEFAULTS = {f.name: f.default for f in fields(TailInputs)}


def _tail(name: str, label: str, step: float, decimals: int, help_text: str, **kw) -> NumericInput:
    """A Tail at scale input typed in a box: range ``TAIL_INPUT_RANGES``'s, default
    ``TailInputs``'."""
    low, high = TAIL_INPUT_RANGES[name]
    unit = kw.pop("unit", "")
    return NumericInput(
        name,
        label,
        low,
        high,
        _TAIL_DEFAULTS[name],
        "linear",
        unit,
        False,
        help_text,
        step=step,
        decimals=decimals,
    )


_TABLE_1 = "The default is Table 1's first row (Dean & Barroso, The Tail at Scale, 2013)."
TAIL_INPUTS: tuple[NumericInput, ...] = (
    _tail("leaf_p50_ms", "Leaf p50", 0.5, 2, f"One leaf's median latency. {_TABLE_1}", unit="ms"),
    _tail("leaf_p95_ms", "Leaf p95", 0.5, 2, f"One leaf's 95th percentile. {_TABLE_1}", unit="ms"),
    _tail("leaf_p99_ms", "Leaf p99", 0.5, 2, f"One leaf's 99th percentile. {_TABLE_1}", unit="ms"),
    NumericInput(
        "fanout",
        "Fan-out (leaves per request)",
        TAIL_INPUT_RANGES["fanout"][0],
        TAIL_INPUT_RANGES["fanout"][1],
        _TAIL_DEFAULTS["fanout"],
        "log",
        "",
        True,
        "The request waits for every leaf. 100 is the paper's worked example.",
    ),
    _tail(
        "hedge_percentile",
        "Hedge after the leaf's percentile",
        0.5,
        1,
        "A second copy goes to another leaf once the first has been out this long (the idle "
        "leaf's percentile, kept in ms as load changes); the first answer wins. 95: the paper's.",
    ),
    _tail(
        "base_utilization",
        "Leaf utilization before hedging",
        0.05,
        2,
        "How busy the leaves are without hedges. Every copy sent adds load, and a busier leaf is "
        "slower (an M/M/1-like scaling): past 1 there is no steady state.",
    ),
    _tail(
        "tie_delay_ms",
        "Tied request after",
        0.5,
        2,
        "Tied requests: a copy is queued at a second leaf this long after the first; the first "
        "to start cancels the other, whose cancellation takes half this long (the paper's delay "
        "is twice the network message delay; 1 ms in its Table 2).",
        unit="ms",
    ),
)
"""The Tail at scale page's inputs: the ``TailInputs`` field each sets is its name."""
TAIL_BY_NAME: dict[str, NumericInput] = {spec.name: spec for spec in TAIL_INPUTS}


def _overload(name: str, label: str, field: str, default: float, step: float, help_text: str, **kw):
    """An Overload page input typed in a box, its range the policy's (``POLICY_RANGES``)."""
    low, high = POLICY_RANGES[field]
    scale = kw.pop("scale", 1.0)
    return NumericInput(
        name,
        label,
        0.0 if kw.pop("zero_is_none", False) else low * scale,
        high * scale,
        default,
        "linear",
        kw.pop("unit", ""),
        kw.pop("integer", False),
        help_text,
        step=step,
        decimals=kw.pop("decimals", None),
        source=field,
    )


OVERLOAD_INPUTS: tuple[NumericInput, ...] = (
    _overload(
        "queue_limit",
        "Queue limit per replica (0: none)",
        "queue_limit",
        0,
        1,
        "Requests that may wait on a replica before the next is rejected at once: Triton's "
        "max_queue_size (0 there too means no limit), Envoy's max_pending_requests.",
        integer=True,
    ),
    _overload(
        "deadline_ms",
        "Deadline (0: none)",
        "deadline_ms",
        0.0,
        10.0,
        "A request still queued this long after it arrived is dropped unserved (Triton's "
        "default_timeout_microseconds; 0 there too means none). The client gives up then too: "
        "an answer that ends later is late, work spent for nobody.",
        unit="ms",
        zero_is_none=True,
        decimals=1,
    ),
    _overload(
        "max_retries",
        "Retries per request",
        "max_retries",
        0,
        1,
        "A client retries a rejected, timed-out or late request up to this many times "
        "(Envoy's num_retries; gRPC's maxAttempts - 1).",
        integer=True,
    ),
    _overload(
        "retry_budget_percent",
        "Retry budget (0: none)",
        "retry_budget",
        ENVOY_BUDGET_PERCENT,
        5.0,
        "Retries allowed as a share of fresh requests: Envoy's retry_budget budget_percent "
        "(20% by default), gRPC's retry throttling. 0: retries are not budgeted.",
        unit="%",
        scale=100.0,
        decimals=0,
    ),
)
"""The Overload page's inputs; ``source`` is the ``OverloadPolicy`` field each sets (0 means
none for the limit, the deadline and the budget, as Triton reads its own zeros)."""
OVERLOAD_BY_NAME: dict[str, NumericInput] = {spec.name: spec for spec in OVERLOAD_INPUTS}


def _priority(name: str, label: str, low: float, high: float, default: float, help_text: str, **kw):
    """A priority section input typed in a box."""
    return _typed(name, label, low, high, default, kw.pop("step", 1.0), help=help_text, **kw)


_TARGET_HELP = (
    "This class's p99 target as a multiple of one request's service time (the sidebar's model "
    "latency): a served request never takes less than 1x."
)
PRIORITY_INPUTS: tuple[NumericInput, ...] = (
    _priority(
        "classes",
        "Classes",
        2,
        3,
        2,
        "Priority levels, 1 served first (Triton's dynamic batcher: priority_levels; requests "
        "without one get default_priority_level). Two: interactive and batch; three adds "
        "standard between them.",
        integer=True,
    ),
    _priority(
        "interactive_share_pct",
        "Interactive share",
        1.0,
        99.0,
        30.0,
        "Share of requests in the class served first.",
        unit="%",
        step=5.0,
        decimals=0,
    ),
    _priority(
        "standard_share_pct",
        "Standard share",
        1.0,
        98.0,
        30.0,
        "Share of requests in the middle class (three classes only); batch takes the rest.",
        unit="%",
        step=5.0,
        decimals=0,
    ),
    _priority(
        "interactive_target_x",
        "Interactive p99 target",
        1.0,
        10_000.0,
        2.0,
        _TARGET_HELP,
        unit="x",
        decimals=1,
    ),
    _priority(
        "standard_target_x",
        "Standard p99 target",
        1.0,
        10_000.0,
        5.0,
        _TARGET_HELP,
        unit="x",
        decimals=1,
    ),
    _priority(
        "batch_target_x",
        "Batch p99 target",
        1.0,
        10_000.0,
        20.0,
        _TARGET_HELP,
        unit="x",
        decimals=1,
    ),
)
"""The Overload page's priority section: class count, shares (the last class takes the rest)
and p99 targets in service times (``sdlab_model.overload.priorities.PriorityClass``)."""
PRIORITY_BY_NAME: dict[str, NumericInput] = {spec.name: spec for spec in PRIORITY_INPUTS}


def _fallback(name: str, label: str, field: str, default: float, help_text: str, **kw):
    """A fallback section input typed in a box, its range the model's (``FALLBACK_RANGES``)."""
    low, high = kw.pop("range", None) or FALLBACK_RANGES[field]
    step = kw.pop("step", 1.0)
    return _typed(name, label, low, high, default, step, help=help_text, source=field, **kw)


FALLBACK_INPUTS: tuple[NumericInput, ...] = (
    _fallback(
        "replicas",
        "Fallback replicas (0: none)",
        "replicas",
        1,
        "Replicas of a cheaper, lower-quality model that answer what the primary turns away "
        "at its queue limit (a distilled or quantized model, a cached or rule-based answer). "
        "0: no fallback, the overload result as above.",
        integer=True,
    ),
    _fallback(
        "workers",
        "Fallback workers per replica",
        "workers_per_replica",
        16,
        "Requests one fallback replica serves at once.",
        integer=True,
    ),
    _fallback(
        "latency_ms",
        "Fallback model latency",
        "model_latency_ms",
        2.0,
        "One request's service time on the fallback (deterministic).",
        unit="ms",
        decimals=1,
    ),
    _fallback(
        "queue_limit",
        "Fallback queue limit (0: none)",
        "queue_limit",
        0,
        "Requests that may wait on a fallback replica; more are lost. The primary's deadline "
        "applies on its queue too.",
        integer=True,
    ),
    _fallback(
        "take_timed_out",
        "Timed out to fallback (1: yes)",
        "take_timed_out",
        0,
        "1: a request that waited out the primary's deadline goes to the fallback too, its "
        "wait counted in its response; 0: it is lost.",
        integer=True,
        range=(0, 1),
    ),
    _fallback(
        "usd_per_replica_hour",
        "Fallback $ per replica-hour",
        "usd_per_replica_hour",
        NUMERIC_BY_NAME["cpu_usd_per_replica_hour"].default,
        "What one fallback replica costs an hour (the sidebar's CPU price by default).",
        unit="$",
        step=0.05,
        decimals=2,
    ),
)
"""The Overload page's fallback section; ``source`` is the ``FallbackModel`` field each sets
(0 replicas: no fallback; 0 queue limit: none)."""
FALLBACK_BY_NAME: dict[str, NumericInput] = {spec.name: spec for spec in FALLBACK_INPUTS}


_BURST_DEFAULTS = {f.name: f.default for f in fields(Burst)}


def _burst(name: str, label: str, step: float, decimals: int, help_text: str, unit: str):
    """A burst section input typed in a box: range ``BURST_RANGES``', default ``Burst``'s."""
    low, high = BURST_RANGES[name]
    return NumericInput(
        name,
        label,
        low,
        high,
        _BURST_DEFAULTS[name],
        "linear",
        unit,
        False,
        help_text,
        step=step,
        decimals=decimals,
    )


BURST_INPUTS: tuple[NumericInput, ...] = (
    _burst(
        "base_multiple",
        "Load before and after",
        0.05,
        2,
        "Fresh requests before and after the burst, as a multiple of capacity: below 1, so a "
        "system that recovers has somewhere to come back to.",
        "x",
    ),
    _burst(
        "burst_multiple",
        "Burst load",
        0.25,
        2,
        "Fresh requests during the burst, as a multiple of capacity.",
        "x",
    ),
    _burst("burst_s", "Burst length", 0.5, 1, "How long the burst lasts.", "s"),
    _burst(
        "after_s",
        "Watched after it",
        5.0,
        0,
        "How long the simulation runs on after the burst, at the load before it.",
        "s",
    ),
)
"""The Overload page's brief-overload section: the ``Burst`` field each sets is its name (the
time before the burst and the windows keep ``Burst``'s defaults)."""
BURST_BY_NAME: dict[str, NumericInput] = {spec.name: spec for spec in BURST_INPUTS}
