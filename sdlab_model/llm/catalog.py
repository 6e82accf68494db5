"""The LLM catalog: open model architectures and the GPUs that serve them, each with its source.

The figures are data (``llm/data/models.json``, ``llm/data/gpus.json``), read once when this
module loads; every entry names its source and date. A GPU's price per hour comes from the
instance catalog (``sdlab_model/advice/data/hardware.json``, dated there) through
``hardware_id``; a GPU no listed instance carries has no price (``usd_per_gpu_hour`` is None).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable

from sdlab_model.advice.hardware import hardware_by_id

DATA_DIR = resources.files(__package__) / "data"
INTERCONNECTS = ("nvlink", "pcie")
GIGA = 1e9
TERA = 1e12


def _positive(owner: str, name: str, value: object) -> None:
    if (
        not isinstance(value, int | float)
        or isinstance(value, bool)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise ValueError(f"{owner}: {name} must be a finite number > 0, got {value!r}")


def _whole(owner: str, name: str, value: object) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{owner}: {name} must be a whole number >= 1, got {value!r}")


@dataclass(frozen=True)
class ModelArchitecture:
    """A decoder-only transformer as far as serving cost goes.

    ``active_parameters`` is what one token touches: all of them for a dense model, the shared
    layers plus the routed experts for a mixture of experts (Mixtral: 12.9 of 46.7 billion).
    Memory holds ``parameters``; compute per token is ``2 * active_parameters`` FLOPs.
    """

    id: str
    name: str
    parameters: float
    active_parameters: float
    layers: int
    hidden_size: int
    attention_heads: int
    kv_heads: int
    head_dim: int
    max_context_tokens: int
    weight_bytes: int
    source: str
    source_date: str

    def __post_init__(self) -> None:
        for name in ("parameters", "active_parameters"):
            _positive(self.id, name, getattr(self, name))
        for name in ("layers", "hidden_size", "attention_heads", "kv_heads", "head_dim"):
            _whole(self.id, name, getattr(self, name))
        _whole(self.id, "max_context_tokens", self.max_context_tokens)
        if self.active_parameters > self.parameters:
            raise ValueError(f"{self.id}: active_parameters exceed parameters")
        if self.attention_heads % self.kv_heads:
            raise ValueError(f"{self.id}: attention_heads must be a multiple of kv_heads")
        if self.weight_bytes not in (1, 2):
            raise ValueError(f"{self.id}: weight_bytes must be 1 or 2, got {self.weight_bytes!r}")
        if not self.source.strip():
            raise ValueError(f"{self.id}: a model needs its source")


@dataclass(frozen=True)
class Gpu:
    """One GPU: dense tensor-core peaks, HBM, and the tensor-parallel link (one direction)."""

    id: str
    name: str
    peak_bf16_tflops: float
    peak_fp8_tflops: float | None
    hbm_bandwidth_gb_per_s: float
    memory_gb: float
    interconnect: str
    interconnect_gb_per_s: float
    hardware_id: str | None
    gpus_per_instance: int
    source: str
    source_date: str
    verified_on: str | None

    def __post_init__(self) -> None:
        for name in (
            "peak_bf16_tflops",
            "hbm_bandwidth_gb_per_s",
            "memory_gb",
            "interconnect_gb_per_s",
        ):
            _positive(self.id, name, getattr(self, name))
        if self.peak_fp8_tflops is not None:
            _positive(self.id, "peak_fp8_tflops", self.peak_fp8_tflops)
        if self.interconnect not in INTERCONNECTS:
            raise ValueError(f"{self.id}: interconnect must be one of {INTERCONNECTS}")
        _whole(self.id, "gpus_per_instance", self.gpus_per_instance)
        if not self.source.strip():
            raise ValueError(f"{self.id}: a GPU needs its source")

    def peak_flops(self, precision: str) -> float:
        """Peak dense FLOP/s at ``precision`` ("bf16" or "fp8"); ``ValueError`` without FP8."""
        if precision == "fp8":
            if self.peak_fp8_tflops is None:
                raise ValueError(f"{self.name} has no FP8 tensor cores; use precision 'bf16'")
            return self.peak_fp8_tflops * TERA
        return self.peak_bf16_tflops * TERA

    @property
    def usd_per_gpu_hour(self) -> float | None:
        """On-demand price of one GPU-hour from the instance catalog, None where none is listed."""
        if self.hardware_id is None:
            return None
        return hardware_by_id(self.hardware_id).usd_per_hour / self.gpus_per_instance

    @property
    def price_source(self) -> str:
        """Where ``usd_per_gpu_hour`` comes from, with its date."""
        if self.hardware_id is None:
            return "no instance with this GPU in the hardware catalog"
        hardware = hardware_by_id(self.hardware_id)
        return f"{hardware.name}, {hardware.price_source} ({hardware.price_date})"


def _load(source: Traversable, key: str) -> list[dict]:
    with source.open("r", encoding="utf-8") as stream:
        return json.load(stream)[key]


MODELS: tuple[ModelArchitecture, ...] = tuple(
    ModelArchitecture(**entry) for entry in _load(DATA_DIR / "models.json", "models")
)
GPUS: tuple[Gpu, ...] = tuple(Gpu(**entry) for entry in _load(DATA_DIR / "gpus.json", "gpus"))
_MODEL_BY_ID = {model.id: model for model in MODELS}
_GPU_BY_ID = {gpu.id: gpu for gpu in GPUS}


def model_by_id(model_id: str) -> ModelArchitecture:
    """The catalog model with this id; ``ValueError`` naming the known ids otherwise."""
    try:
        return _MODEL_BY_ID[model_id]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown model {model_id!r}; the catalog has {sorted(_MODEL_BY_ID)}"
        ) from None


def gpu_by_id(gpu_id: str) -> Gpu:
    """The catalog GPU with this id; ``ValueError`` naming the known ids otherwise."""
    try:
        return _GPU_BY_ID[gpu_id]
    except (KeyError, TypeError):
        raise ValueError(f"unknown GPU {gpu_id!r}; the catalog has {sorted(_GPU_BY_ID)}") from None
