"""The LLM page's inputs as data, and their URL text read back without ever raising.

Each numeric input is an ``LlmWorkload`` field: its range is the model's (``INPUT_RANGES``), its
default the dataclass's; the page adds a label, a step and help. The choices (model, GPU,
precision) come from the catalog. URL keys are the field names under the page's ``llm.`` prefix.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from sdlab_model.llm import GPUS, INPUT_RANGES, MODELS, LlmWorkload
from sdlab_model.llm.kv_cache import PRECISION_BYTES
from sdlab_ui.state import plain_text

_DEFAULTS = {f.name: f.default for f in fields(LlmWorkload)}


@dataclass(frozen=True)
class Field:
    """One numeric input: an ``LlmWorkload`` field with the page's label, step and help."""

    name: str
    label: str
    step: float
    help: str = ""

    @property
    def minimum(self) -> float:
        return INPUT_RANGES[self.name][0]

    @property
    def maximum(self) -> float:
        return INPUT_RANGES[self.name][1]

    @property
    def default(self) -> float:
        return _DEFAULTS[self.name]

    @property
    def integer(self) -> bool:
        return isinstance(self.default, int)


CHOICES: dict[str, tuple[str, dict[str, str]]] = {
    "model_id": ("Model", {m.id: m.name for m in MODELS}),
    "gpu_id": ("GPU", {g.id: g.name for g in GPUS}),
    "precision": ("Weights and KV cache", {p: p.upper() for p in PRECISION_BYTES}),
}
"""Choice input -> (label, id -> what the page shows)."""
FIELDS: tuple[Field, ...] = (
    Field("tensor_parallel", "Tensor parallel", 1, "GPUs per replica, splitting every layer."),
    Field("replicas", "Replicas", 1, "Behind a router that picks a replica at random."),
    Field("rate_rps", "Request rate (req/s)", 0.5, "Poisson arrivals over all replicas."),
    Field("prompt_tokens_mean", "Prompt tokens (mean)", 100.0),
    Field("output_tokens_mean", "Output tokens (mean)", 50.0),
    Field(
        "max_running_sequences",
        "Max running sequences",
        16,
        "vLLM's max_num_seqs: sequences an iteration decodes at most.",
    ),
    Field(
        "max_batched_tokens",
        "Max batched tokens",
        512,
        "vLLM's max_num_batched_tokens: tokens one iteration carries (decodes and prefill chunks).",
    ),
    Field("ttft_p99_target_ms", "TTFT p99 target (ms)", 100.0, "Time to first token."),
    Field("tpot_p99_target_ms", "TPOT p99 target (ms)", 5.0, "Time per output token after it."),
    Field("e2e_p99_target_ms", "E2E p99 target (ms)", 1000.0, "From arrival to the last token."),
)
FIELD_BY_NAME = {f.name: f for f in FIELDS}
INPUT_NAMES: tuple[str, ...] = (*CHOICES, *FIELD_BY_NAME)


def default_values() -> dict:
    """Every page input at the model's default."""
    return {name: _DEFAULTS[name] for name in INPUT_NAMES}


def _number(field: Field, text: str) -> tuple[float | int | None, str | None]:
    shown = plain_text(str(text)[:30])
    try:
        number = float(text)
    except ValueError:
        number = math.nan
    if not math.isfinite(number):
        return None, f"LLM {field.label}: {shown} is not a number; kept the default."
    if not field.minimum <= number <= field.maximum:
        return None, (
            f"LLM {field.label}: {shown} is outside {field.minimum:g} to {field.maximum:g}; "
            "kept the default."
        )
    return (round(number) if field.integer else number), None


def parse_params(given: dict[str, str]) -> tuple[dict, list[str]]:
    """Page values from URL text (missing: defaults). A value that is unreadable, out of range
    or not in the catalog keeps its default, and so does a whole set the model refuses (a
    prompt longer than the model's context); each with a notice. Never raises."""
    values, notices = default_values(), []
    for name, text in given.items():
        if name in CHOICES:
            label, choices = CHOICES[name]
            if text in choices:
                values[name] = text
            else:
                notices.append(
                    f"LLM {label}: {plain_text(str(text)[:30])} is not in the catalog; "
                    "kept the default."
                )
        elif name in FIELD_BY_NAME:
            number, notice = _number(FIELD_BY_NAME[name], text)
            if notice is None:
                values[name] = number
            else:
                notices.append(notice)
        else:
            notices.append(f"Ignored unknown LLM setting {plain_text(name[:30])}.")
    _, problem = build_workload(values)
    if problem is not None:
        notices.append(f"{problem} The LLM page starts from its defaults.")
        values = default_values()
    return values, notices


def url_values(values: dict) -> dict[str, str]:
    """The inputs that differ from their defaults, as URL text."""
    out = {}
    for name, value in values.items():
        if value == _DEFAULTS[name]:
            continue
        out[name] = value if isinstance(value, str) else f"{value:.6g}"
    return out


def build_workload(values: dict) -> tuple[LlmWorkload | None, str | None]:
    """The model's workload from the page's values, or None and a reason a person can act on."""
    try:
        return LlmWorkload(**values), None
    except ValueError as error:
        return None, f"These inputs cannot run: {plain_text(str(error))}."
