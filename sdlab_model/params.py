"""Input ranges, defaults and hardware constants: the one place pages and models read them from.

The six main inputs and two toggles are the original lab's (docs/teaching_model.md, "Inputs"). The
advanced knobs belong to the queueing model; their defaults are chosen so that the queueing model
keeps the seed's budgets roughly (a CPU replica serves ~1,000 req/s of a 15 ms model; a batched GPU
replica serves tens of times that) and tells the same story on the five scenario cards.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

Scale = Literal["log", "linear"]


@dataclass(frozen=True)
class NumericInput:
    """One numeric input: its range, default, scale and how a person reads it."""

    name: str
    label: str
    minimum: float
    maximum: float
    default: float
    scale: Scale
    unit: str
    integer: bool
    help: str
    advanced: bool = False
    step: float | None = None
    """A typed box's step (+/- buttons); None: a slider on ``scale``."""
    decimals: int | None = None
    """Decimals a typed box shows; None: Streamlit's default."""
    source: str = ""
    """The model field the input sets, where it is not the field of the same name."""

    def checked(self, value: object) -> float:
        """``value`` as a float if it is a number in range, else ``ValueError`` naming the input,
        the value and the allowed range."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{self.name} must be a number, got {value!r}")
        # Range first: math.isfinite raises OverflowError on an int too large for a float.
        if not self.minimum <= value <= self.maximum or not math.isfinite(value):
            raise ValueError(
                f"{self.name}={value!r} is outside the allowed range "
                f"[{self.minimum:g}, {self.maximum:g}]"
            )
        return float(value)


@dataclass(frozen=True)
class ChoiceInput:
    """One input that takes one of a few named values (shown with their labels)."""

    name: str
    label: str
    choices: tuple[str, ...]
    choice_labels: tuple[str, ...]
    default: str
    help: str
    advanced: bool = False

    def label_of(self, choice: str) -> str:
        """The readable label of one of ``choices``."""
        return self.choice_labels[self.choices.index(choice)]


@dataclass(frozen=True)
class ToggleInput:
    """One on/off input."""

    name: str
    label: str
    default: bool
    help: str


NUMERIC_INPUTS: tuple[NumericInput, ...] = (
    NumericInput(
        "rate_rps",
        "Request rate",
        1,
        500_000,
        200,
        "log",
        "req/s",
        False,
        "Inference requests per second, all models together.",
    ),
    NumericInput(
        "model_latency_ms",
        "Model latency",
        1,
        500,
        20,
        "log",
        "ms",
        False,
        "One forward pass for one request on a CPU worker, before batching or queueing.",
    ),
    NumericInput(
        "batch_window_ms",
        "Batch window",
        0,
        100,
        5,
        "linear",
        "ms",
        False,
        "How long the batcher holds the oldest waiting request to collect a batch "
        "(Triton's max queue delay).",
    ),
    NumericInput(
        "replicas",
        "Replicas",
        1,
        500,
        2,
        "log",
        "",
        True,
        "Model-server instances behind the gateway.",
    ),
    NumericInput(
        "models_hosted",
        "Models hosted",
        1,
        500,
        1,
        "log",
        "",
        True,
        "Distinct models or versions served at once. Each replica runs one batcher per model, "
        "so traffic split over more models makes smaller batches.",
    ),
    NumericInput(
        "popularity_skew",
        "Popularity skew",
        0,
        3,
        1,
        "linear",
        "",
        False,
        "How unevenly traffic spreads over the models hosted: model k gets a share proportional "
        "to 1/k^s (Zipf). 0 is an even split; the default 1 is Zipf's law, where a few models "
        "carry most requests and a long tail of models sees little traffic each.",
    ),
    NumericInput(
        "p99_target_ms",
        "p99 target",
        5,
        1_000,
        100,
        "log",
        "ms",
        False,
        "End-to-end budget for the 99th percentile, queueing included.",
    ),
    NumericInput(
        "max_batch_size",
        "Max batch size",
        1,
        256,
        32,
        "log",
        "",
        True,
        "Largest batch a server takes at once (Triton's max_batch_size).",
        advanced=True,
    ),
    NumericInput(
        "cpu_workers_per_replica",
        "CPU workers per replica",
        1,
        64,
        16,
        "log",
        "",
        True,
        "Parallel single-threaded model workers on one CPU replica (one per core).",
        advanced=True,
    ),
    NumericInput(
        "gpu_instances_per_replica",
        "GPU model instances per replica",
        1,
        16,
        4,
        "log",
        "",
        True,
        "Model instances a GPU replica runs batches on (e.g. one per GPU on a 4-GPU node).",
        advanced=True,
    ),
    NumericInput(
        "gpu_speedup",
        "GPU speed-up for one request",
        1,
        50,
        8,
        "log",
        "x",
        False,
        "How many times faster a GPU instance runs one request than a CPU worker.",
        advanced=True,
    ),
    NumericInput(
        "cpu_batch_overhead_share",
        "CPU fixed share of a call",
        0,
        0.95,
        5 / 6,
        "linear",
        "",
        False,
        "Part of a single-request call on CPU that a batch pays once (framework overhead, weight "
        "reads). 5/6 makes the CPU batching ceiling 6x, the teaching model's.",
        advanced=True,
    ),
    NumericInput(
        "gpu_batch_overhead_share",
        "GPU fixed share of a call",
        0,
        0.995,
        0.97,
        "linear",
        "",
        False,
        "Part of a single-request call on GPU that a batch pays once (kernel launches, weight "
        "reads from memory).",
        advanced=True,
    ),
    NumericInput(
        "cpu_usd_per_replica_hour",
        "CPU replica price",
        0.01,
        200,
        1.428,
        "log",
        "$/h",
        False,
        "On-demand price of one CPU replica-hour. Default (an estimate): two AWS c7i.4xlarge of "
        "8 cores each at $0.714/h (us-east-1, Linux, read 2026-11-30), for the default 16 "
        "workers. The Advice page prices a replica from the hardware catalog.",
        advanced=True,
    ),
    NumericInput(
        "gpu_usd_per_replica_hour",
        "GPU replica price",
        0.01,
        500,
        4.024,
        "log",
        "$/h",
        False,
        "On-demand price of one GPU replica-hour. Default (an estimate): four AWS g5.xlarge of one "
        "A10G each at $1.006/h (us-east-1, Linux, read 2026-11-30), for the default 4 model "
        "instances. The Advice page prices a replica from the hardware catalog.",
        advanced=True,
    ),
    NumericInput(
        "arrival_cv",
        "Arrival burstiness (CV)",
        0.5,
        8,
        1,
        "log",
        "",
        False,
        "Coefficient of variation of the gaps between requests: 1 is a Poisson stream, above 1 "
        "bursty (Gamma-distributed gaps with shape 1/CV²), below 1 smoother than random.",
        advanced=True,
    ),
)

LB_POLICIES: tuple[str, ...] = ("round_robin", "least_request", "random", "central_queue")
DEFAULT_LB_POLICY = "round_robin"

CHOICE_INPUTS: tuple[ChoiceInput, ...] = (
    ChoiceInput(
        "lb_policy",
        "Load balancer",
        LB_POLICIES,
        (
            "Round robin",
            "Least request (power of two choices)",
            "Random",
            "One central queue (idealized)",
        ),
        DEFAULT_LB_POLICY,
        "How the gateway spreads requests over replicas; each replica then batches on its own. "
        "Round robin (the default) is Envoy's default policy and IPVS's rr: it sends each replica "
        "every R-th request, the evenest split. Least request sends each request to the less busy "
        "of two random replicas (Envoy LEAST_REQUEST, Ray Serve). Random is a Kubernetes Service "
        "through kube-proxy's iptables rules. One central queue is an idealization no server "
        "runs: one fleet-wide queue and batcher that mixes every model in a batch.",
    ),
)

TOGGLE_INPUTS: tuple[ToggleInput, ...] = (
    ToggleInput(
        "dynamic_batching",
        "Dynamic batching",
        True,
        "Let a free server take several waiting requests as one batch.",
    ),
    ToggleInput("gpu", "GPU acceleration", False, "Run the model on GPU replicas."),
)

NUMERIC_BY_NAME: dict[str, NumericInput] = {spec.name: spec for spec in NUMERIC_INPUTS}
TOGGLE_BY_NAME: dict[str, ToggleInput] = {spec.name: spec for spec in TOGGLE_INPUTS}
CHOICE_BY_NAME: dict[str, ChoiceInput] = {spec.name: spec for spec in CHOICE_INPUTS}
INPUT_NAMES: tuple[str, ...] = (
    tuple(NUMERIC_BY_NAME) + tuple(TOGGLE_BY_NAME) + tuple(CHOICE_BY_NAME)
)

MODEL_CHOICES: tuple[str, ...] = ("queueing", "teaching")
DEFAULT_MODEL = "queueing"

# The teaching budgets (docs/teaching_model.md, "Budgets, not measurements"). Not vendor limits.
SEED_CPU_REPLICA_RPS_AT_15MS = 1_000.0
SEED_GPU_FACTOR = 8.0
SEED_BATCH_MULTIPLIER_CEILING = 6.0
SAFE_UTILIZATION = 0.75
MODELS_PER_REPLICA_HOT = 4

# Model residency (sdlab_model.residency): memory, model sizes and load speed. Kept apart from the
# Workload's inputs: they describe what a replica holds, not the traffic, and only the residency
# model and the packing decision read them.
RESIDENCY_INPUTS: tuple[NumericInput, ...] = (
    NumericInput(
        "model_size_gb",
        "Model size",
        0.05,
        80,
        2,
        "log",
        "GB",
        False,
        "Accelerator memory one model's weights take (e.g. 2 GB: a 1-billion-parameter model in "
        "FP16). Every hosted model has this size unless a list of sizes is given.",
    ),
    NumericInput(
        "activation_reserve_gb",
        "Memory reserved for activations",
        0,
        64,
        4,
        "linear",
        "GB",
        False,
        "Accelerator memory kept for activations, batches and the runtime, not for weights. "
        "Our assumption, not a measurement: size it from your own profile.",
    ),
    NumericInput(
        "load_gb_per_s",
        "Load bandwidth",
        0.1,
        64,
        20,
        "log",
        "GB/s",
        False,
        "Host-to-accelerator copy speed of a model's weights. Default (an estimate): PCIe 4.0 "
        "x16 carries 31.5 GB/s each way (16 GT/s x 16 lanes, 128b/130b; PCI-SIG PCI Express "
        "Base Specification 4.0, 2017) and pinned copies reach about 70% of a link in practice "
        "(11 GB/s of PCIe 3.0 x16's 15.75, NVIDIA developer forum 'How to Optimize Data "
        "Transfers in CUDA C/C++', read 2026-11-30), so ~22 GB/s, rounded down to 20. Loading "
        "from network storage is slower: lower it.",
    ),
    NumericInput(
        "load_overhead_ms",
        "Fixed load overhead",
        1,
        30_000,
        50,
        "log",
        "ms",
        False,
        "Time a load takes besides copying the weights (allocating memory, setting up the "
        "runtime). Our estimate for weights already in host memory; a framework that builds "
        "engines or reads from disk on load takes seconds.",
    ),
)
RESIDENCY_BY_NAME: dict[str, NumericInput] = {spec.name: spec for spec in RESIDENCY_INPUTS}
DEFAULT_ACCELERATOR = "aws-g5-xlarge"
"""The default replica's GPU (NVIDIA A10G, 24 GB): the one the default GPU price is four of."""
MODEL_SIZES_PARAM = "model_sizes_gb"
"""URL key of an optional list of model sizes (GB, most popular first, comma-separated)."""
ACCELERATOR_PARAM = "accelerator"
MAX_MODEL_SIZES = 500
