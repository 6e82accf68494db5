"""What a replica holds: model sizes, accelerator memory, the reserve, and how fast a model loads.

A GPU replica runs ``gpu_instances_per_replica`` model instances, one per GPU, and (as Triton
does by default, one instance of a model on every GPU) each GPU holds the replica's resident
models. So the memory that limits residency is one accelerator's, from the hardware catalog
(``sdlab_model.advice.hardware``, every figure sourced in ``advice/data/hardware.json``), less
the reserve for activations. A load copies a model's weights to every GPU of the replica at once,
each over its own host link.

``from_strings`` reads these inputs from a URL as tolerantly as ``Workload.from_strings``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from sdlab_model.advice.hardware import CATALOG, hardware_by_id
from sdlab_model.params import (
    ACCELERATOR_PARAM,
    DEFAULT_ACCELERATOR,
    MAX_MODEL_SIZES,
    MODEL_SIZES_PARAM,
    RESIDENCY_BY_NAME,
)

ACCELERATOR_IDS: tuple[str, ...] = tuple(h.id for h in CATALOG if h.kind == "gpu")
"""Catalog entries a replica's GPU can be: every GPU instance type."""

_SIZE_SPEC = RESIDENCY_BY_NAME["model_size_gb"]


@dataclass(frozen=True)
class ResidencyInputs:
    """The residency model's inputs. Invalid values raise ``ValueError`` naming field and range.

    ``model_sizes_gb``: optional sizes (GB) of the most popular models first; models past the
    end of the list take its last size. Empty: every model is ``model_size_gb``.
    """

    model_size_gb: float = RESIDENCY_BY_NAME["model_size_gb"].default
    activation_reserve_gb: float = RESIDENCY_BY_NAME["activation_reserve_gb"].default
    load_gb_per_s: float = RESIDENCY_BY_NAME["load_gb_per_s"].default
    load_overhead_ms: float = RESIDENCY_BY_NAME["load_overhead_ms"].default
    accelerator: str = DEFAULT_ACCELERATOR
    model_sizes_gb: tuple[float, ...] = field(default=())

    def __post_init__(self) -> None:
        for name, spec in RESIDENCY_BY_NAME.items():
            object.__setattr__(self, name, spec.checked(getattr(self, name)))
        if self.accelerator not in ACCELERATOR_IDS:
            raise ValueError(
                f"accelerator={str(self.accelerator)[:40]!r} is not one of "
                f"{', '.join(ACCELERATOR_IDS)}"
            )
        sizes = tuple(self.model_sizes_gb)
        if len(sizes) > MAX_MODEL_SIZES:
            raise ValueError(
                f"model_sizes_gb has {len(sizes)} sizes; at most {MAX_MODEL_SIZES} are allowed"
            )
        for size in sizes:
            if isinstance(size, bool) or not isinstance(size, (int, float)):
                raise ValueError(f"model_sizes_gb must hold numbers, got {size!r}")
            if not _SIZE_SPEC.minimum <= size <= _SIZE_SPEC.maximum:
                raise ValueError(
                    f"model_sizes_gb holds {size!r}, outside the allowed range "
                    f"[{_SIZE_SPEC.minimum:g}, {_SIZE_SPEC.maximum:g}]"
                )
        object.__setattr__(self, "model_sizes_gb", tuple(float(s) for s in sizes))

    @property
    def accelerator_memory_gb(self) -> float:
        """Memory of one GPU of the replica, from the hardware catalog."""
        return float(hardware_by_id(self.accelerator).accelerator_memory_gb)

    @property
    def accelerator_name(self) -> str:
        """The catalog's name for the replica's GPU type (e.g. 'AWS g5.xlarge (1× ...)')."""
        return hardware_by_id(self.accelerator).name

    @property
    def usable_memory_gb(self) -> float:
        """Memory left for model weights: the accelerator's less the reserve (never below 0)."""
        return max(0.0, self.accelerator_memory_gb - self.activation_reserve_gb)

    def sizes_gb(self, models: int) -> np.ndarray:
        """Size of each of ``models`` models (GB), the most popular first."""
        if not self.model_sizes_gb:
            return np.full(models, self.model_size_gb)
        given = np.asarray(self.model_sizes_gb[:models], dtype=float)
        return np.concatenate([given, np.full(models - given.size, given[-1])])

    def load_ms(self, size_gb: np.ndarray) -> np.ndarray:
        """Time to load models of these sizes: the fixed overhead plus the copy at the bandwidth."""
        return self.load_overhead_ms + np.asarray(size_gb, dtype=float) / self.load_gb_per_s * 1e3

    def with_changes(self, **changes: Any) -> ResidencyInputs:
        """A copy with some fields changed (validated like any other)."""
        return replace(self, **changes)

    def to_strings(self) -> dict[str, str]:
        """Short, exact text of every input, for the URL (``from_strings`` reads it back)."""
        out = {name: _number_text(getattr(self, name)) for name in RESIDENCY_BY_NAME}
        out[ACCELERATOR_PARAM] = self.accelerator
        out[MODEL_SIZES_PARAM] = ",".join(_number_text(s) for s in self.model_sizes_gb)
        return out

    @classmethod
    def from_strings(cls, values: Mapping[str, Any]) -> tuple[ResidencyInputs, tuple[str, ...]]:
        """Inputs from untrusted text (URL query values, lists allowed), never raising.

        Only this module's keys are read; anything unreadable keeps its default, anything out
        of range is clamped, and each such step adds a notice.
        """
        notices: list[str] = []
        accepted: dict[str, Any] = {}
        for name, spec in RESIDENCY_BY_NAME.items():
            text = _last_text(values.get(name))
            if text is None:
                continue
            try:
                number = float(text)
            except (ValueError, OverflowError):
                notices.append(f"{spec.label}: {text[:40]!r} is not a number; kept the default.")
                continue
            if math.isnan(number):
                notices.append(f"{spec.label}: NaN is not a value; kept the default.")
                continue
            clamped = min(max(number, spec.minimum), spec.maximum)
            if clamped != number:
                notices.append(
                    f"{spec.label}: {text[:40]} is outside {spec.minimum:g}–{spec.maximum:g}; "
                    f"used {clamped:g}."
                )
            accepted[name] = clamped
        accelerator = _last_text(values.get(ACCELERATOR_PARAM))
        if accelerator is not None:
            if accelerator in ACCELERATOR_IDS:
                accepted["accelerator"] = accelerator
            else:
                notices.append(
                    f"Accelerator {accelerator[:40]!r} is not in the catalog's GPUs; "
                    f"used {DEFAULT_ACCELERATOR}."
                )
        sizes_text = _last_text(values.get(MODEL_SIZES_PARAM))
        if sizes_text:
            sizes, notice = parse_sizes(sizes_text)
            if notice:
                notices.append(notice)
            accepted["model_sizes_gb"] = sizes
        return cls(**accepted), tuple(notices)


def _number_text(value: float) -> str:
    return str(int(value)) if value == int(value) else repr(float(value))


def _last_text(raw: Any) -> str | None:
    if isinstance(raw, (list, tuple)):
        if not raw:
            return None
        raw = raw[-1]
    if raw is None:
        return None
    return str(raw).strip()


def parse_sizes(text: str) -> tuple[tuple[float, ...], str | None]:
    """Sizes from 'a,b,c' (GB); unreadable entries are dropped and out-of-range ones clamped."""
    parts = [part.strip() for part in text.split(",") if part.strip()]
    sizes: list[float] = []
    dropped = clamped = 0
    for part in parts[:MAX_MODEL_SIZES]:
        try:
            size = float(part)
        except (ValueError, OverflowError):
            dropped += 1
            continue
        if math.isnan(size):
            dropped += 1
            continue
        bounded = min(max(size, _SIZE_SPEC.minimum), _SIZE_SPEC.maximum)
        clamped += bounded != size
        sizes.append(bounded)
    words = []
    if len(parts) > MAX_MODEL_SIZES:
        words.append(f"kept the first {MAX_MODEL_SIZES} of {len(parts)}")
    if dropped:
        words.append(f"dropped {dropped} that are not numbers")
    if clamped:
        words.append(f"clamped {clamped} to {_SIZE_SPEC.minimum:g}–{_SIZE_SPEC.maximum:g} GB")
    notice = f"Model sizes: {'; '.join(words)}." if words else None
    return tuple(sizes), notice
