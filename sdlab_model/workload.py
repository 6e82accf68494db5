"""The workload: every input of the lab, validated once, with the serving system's derived shape.

The serving system (the queueing model and the simulator both use these words):

- Requests arrive as a renewal stream at ``rate_rps`` whose gaps have coefficient of variation
  ``arrival_cv`` (1: Poisson; otherwise Gamma-distributed gaps with shape ``1 / arrival_cv**2``).
  Each request is for one of ``models_hosted`` models, model ``k`` (from 1) with probability
  proportional to ``k ** -popularity_skew`` (Zipf), independently.
- A load balancer (``lb_policy``) sends each request to one of ``replicas`` replicas:
  ``round_robin`` (every R-th request to the same replica), ``random`` (uniform),
  ``least_request`` (the one of two distinct random replicas with fewer requests in it, queued
  or in service; the first on a tie). A replica has ``slots_per_replica`` execution slots: a CPU
  replica runs ``cpu_workers_per_replica`` single-threaded workers; a GPU replica runs
  ``gpu_instances_per_replica`` model instances (one per GPU on a multi-GPU node).
- Inside a replica each model has its own dynamic batcher (Triton's rule): its waiting requests
  form a batch that is ready when the oldest has waited ``batch_window_ms`` or ``max_batch_size``
  are waiting. Ready batches take the replica's free slots in the order they became ready; a
  batch that waits for a slot takes every request of its model that has arrived by the time it
  starts, up to ``max_batch_size``. Without batching every batch has one request.
- ``central_queue`` is the idealization the lab began with: one fleet-wide FCFS queue and batcher
  feeding all ``servers = replicas x slots_per_replica`` slots, batching requests of any model
  together (so ``models_hosted`` plays no part in it).
- A batch of ``b`` requests takes ``batch_service_ms(b)`` on one slot, deterministically:
  ``single_request_ms * (f + (1 - f) * b)``, where ``f`` is the fixed share of a call that a batch
  pays once. On CPU ``single_request_ms`` is the model latency; a GPU instance runs one request
  ``gpu_speedup`` times faster.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from sdlab_model.params import CHOICE_BY_NAME, NUMERIC_BY_NAME, TOGGLE_BY_NAME

_TRUE_WORDS = frozenset({"1", "true", "on", "yes", "y", "t"})
_FALSE_WORDS = frozenset({"0", "false", "off", "no", "n", "f"})


@dataclass(frozen=True)
class Workload:
    """Every input of the lab. Invalid values raise ``ValueError`` naming field, value and range."""

    rate_rps: float = NUMERIC_BY_NAME["rate_rps"].default
    model_latency_ms: float = NUMERIC_BY_NAME["model_latency_ms"].default
    batch_window_ms: float = NUMERIC_BY_NAME["batch_window_ms"].default
    replicas: int = int(NUMERIC_BY_NAME["replicas"].default)
    models_hosted: int = int(NUMERIC_BY_NAME["models_hosted"].default)
    popularity_skew: float = NUMERIC_BY_NAME["popularity_skew"].default
    p99_target_ms: float = NUMERIC_BY_NAME["p99_target_ms"].default
    dynamic_batching: bool = TOGGLE_BY_NAME["dynamic_batching"].default
    gpu: bool = TOGGLE_BY_NAME["gpu"].default
    max_batch_size: int = int(NUMERIC_BY_NAME["max_batch_size"].default)
    cpu_workers_per_replica: int = int(NUMERIC_BY_NAME["cpu_workers_per_replica"].default)
    gpu_instances_per_replica: int = int(NUMERIC_BY_NAME["gpu_instances_per_replica"].default)
    gpu_speedup: float = NUMERIC_BY_NAME["gpu_speedup"].default
    cpu_batch_overhead_share: float = NUMERIC_BY_NAME["cpu_batch_overhead_share"].default
    gpu_batch_overhead_share: float = NUMERIC_BY_NAME["gpu_batch_overhead_share"].default
    cpu_usd_per_replica_hour: float = NUMERIC_BY_NAME["cpu_usd_per_replica_hour"].default
    gpu_usd_per_replica_hour: float = NUMERIC_BY_NAME["gpu_usd_per_replica_hour"].default
    arrival_cv: float = NUMERIC_BY_NAME["arrival_cv"].default
    lb_policy: str = CHOICE_BY_NAME["lb_policy"].default

    def __post_init__(self) -> None:
        for name in _CHECK_ORDER:
            object.__setattr__(self, name, _checked(name, getattr(self, name)))

    @property
    def model_shares(self) -> np.ndarray:
        """Share of the traffic each hosted model gets (Zipf, ``k ** -popularity_skew``), sum 1."""
        weights = np.arange(1, self.models_hosted + 1, dtype=float) ** -self.popularity_skew
        return weights / weights.sum()

    @property
    def is_central_queue(self) -> bool:
        """True for the idealized fleet-wide queue, False for per-replica batchers behind an LB."""
        return self.lb_policy == "central_queue"

    @property
    def slots_per_replica(self) -> int:
        """Parallel execution slots (servers) on one replica."""
        return self.gpu_instances_per_replica if self.gpu else self.cpu_workers_per_replica

    @property
    def servers(self) -> int:
        """Identical servers the fleet's single FCFS queue feeds: replicas x slots per replica."""
        return int(self.replicas) * self.slots_per_replica

    @property
    def single_request_ms(self) -> float:
        """Service time of a batch of one on this hardware."""
        if self.gpu:
            return self.model_latency_ms / self.gpu_speedup
        return float(self.model_latency_ms)

    @property
    def batch_overhead_share(self) -> float:
        """Fixed share of a single-request call that a batch pays once, on this hardware."""
        return self.gpu_batch_overhead_share if self.gpu else self.cpu_batch_overhead_share

    @property
    def effective_max_batch_size(self) -> int:
        """Largest batch a server takes: ``max_batch_size`` with batching on, else 1."""
        return int(self.max_batch_size) if self.dynamic_batching else 1

    def batch_service_ms(self, batch_size: float) -> float:
        """Deterministic time one server needs for a batch of ``batch_size`` requests.

        ``single_request_ms * (f + (1 - f) * b)``: an affine cost, the usual first-order model of
        batched inference (a fixed part per call, a part per request). Works on numpy arrays too.
        """
        share = self.batch_overhead_share
        return self.single_request_ms * (share + (1.0 - share) * batch_size)

    @property
    def capacity_rps(self) -> float:
        """Largest sustainable request rate: every server busy on full batches."""
        batch = self.effective_max_batch_size
        return self.servers * batch * 1000.0 / self.batch_service_ms(batch)

    def with_changes(self, **changes: Any) -> Workload:
        """A copy with some fields changed (validated like any other).

        Only the changed fields are checked: the others were checked when this one was built.
        The same checks in the same order as construction, so the same error for the same input.
        """
        if type(self) is not Workload or not changes.keys() <= _CHECKED:
            return replace(self, **changes)  # an unknown name raises as ``replace`` does
        copy = object.__new__(Workload)
        copy.__dict__.update(self.__dict__)
        for name in _CHECK_ORDER:
            if name in changes:
                copy.__dict__[name] = _checked(name, changes[name])
        return copy

    def to_dict(self) -> dict[str, float | int | bool]:
        """Field name to value, in declaration order."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_strings(
        cls,
        values: Mapping[str, Any],
        *,
        ignore: tuple[str, ...] = (),
    ) -> tuple[Workload, tuple[str, ...]]:
        """Build a workload from untrusted text (URL query parameters), never raising.

        Each value may be a string or a list of strings (repeated keys: the last one wins).
        Values out of range are clamped, unreadable ones fall back to the default, unknown keys are
        reported; every such step adds a notice a person can read. Keys in ``ignore`` belong to
        the caller (e.g. the model choice) and pass silently.
        """
        notices: list[str] = []
        accepted: dict[str, Any] = {}
        for key, raw in values.items():
            key_text = _as_text(key)
            if key_text in ignore:
                continue
            if isinstance(raw, (list, tuple)):
                if not raw:
                    notices.append(f"{_short(key_text)}: no value given, kept the default.")
                    continue
                if len(raw) > 1:
                    notices.append(f"{_short(key_text)} was given {len(raw)} times; used the last.")
                raw = raw[-1]
            text = _as_text(raw).strip()
            if key_text in NUMERIC_BY_NAME:
                value, notice = _parse_number(key_text, text)
            elif key_text in TOGGLE_BY_NAME:
                value, notice = _parse_toggle(key_text, text)
            elif key_text in CHOICE_BY_NAME:
                value, notice = _parse_choice(key_text, text)
            else:
                notices.append(f"Ignored unknown setting {_short(key_text)!r}.")
                continue
            if notice:
                notices.append(notice)
            if value is not None:
                accepted[key_text] = value
        return cls(**accepted), tuple(notices)

    def to_strings(self) -> dict[str, str]:
        """The inverse of ``from_strings``: short, exact text for every field."""
        out: dict[str, str] = {}
        for name, value in self.to_dict().items():
            if isinstance(value, bool):
                out[name] = "1" if value else "0"
            elif name in CHOICE_BY_NAME:
                out[name] = str(value)
            elif NUMERIC_BY_NAME[name].integer:
                out[name] = str(int(value))
            else:
                out[name] = repr(float(value)) if float(value) != int(value) else str(int(value))
        return out


_CHECK_ORDER = (*NUMERIC_BY_NAME, *TOGGLE_BY_NAME, *CHOICE_BY_NAME)
"""Every field, in the order construction checks them (numbers, toggles, choices)."""
_CHECKED = frozenset(_CHECK_ORDER)


def _checked(name: str, value: Any) -> Any:
    """``value`` for field ``name`` in its one canonical type, or ``ValueError`` naming field,
    value and allowed range."""
    spec = NUMERIC_BY_NAME.get(name)
    if spec is not None:
        spec.checked(value)
        if spec.integer and value != int(value):
            raise ValueError(f"{name}={value!r} must be a whole number")
        # One canonical type per field, so equal workloads compare, hash and serialise alike.
        return int(value) if spec.integer else float(value)
    if name in TOGGLE_BY_NAME:
        if not isinstance(value, bool):
            raise ValueError(f"{name} must be True or False, got {value!r}")
        return value
    choice = CHOICE_BY_NAME[name]
    if value not in choice.choices:
        raise ValueError(
            f"{name}={_short(_as_text(value))!r} is not one of {', '.join(choice.choices)}"
        )
    return value


def _as_text(value: Any) -> str:
    """``str(value)``, except for an int too long for CPython to print (it raises ValueError)."""
    try:
        return str(value)
    except ValueError:
        return "(a number too long to read)"


def _short(text: str, limit: int = 40) -> str:
    """Untrusted text cut to a readable length for a notice."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _parse_number(name: str, text: str) -> tuple[float | int | None, str | None]:
    spec = NUMERIC_BY_NAME[name]
    try:
        value = float(text)
    except (ValueError, OverflowError):
        return None, f"{spec.label}: {_short(text)!r} is not a number; kept the default."
    if math.isnan(value):
        return None, f"{spec.label}: NaN is not a value; kept the default."
    clamped = min(max(value, spec.minimum), spec.maximum)
    notice = None
    if clamped != value:
        notice = (
            f"{spec.label}: {_short(text)} is outside {spec.minimum:g}–{spec.maximum:g}; "
            f"used {clamped:g}."
        )
    if spec.integer:
        rounded = round(clamped)
        if rounded != clamped and notice is None:
            notice = f"{spec.label}: {_short(text)} is not a whole number; used {rounded}."
        return rounded, notice
    return float(clamped), notice


def _parse_toggle(name: str, text: str) -> tuple[bool | None, str | None]:
    spec = TOGGLE_BY_NAME[name]
    word = text.lower()
    if word in _TRUE_WORDS:
        return True, None
    if word in _FALSE_WORDS:
        return False, None
    return None, f"{spec.label}: {_short(text)!r} is not on/off; kept the default."


def _parse_choice(name: str, text: str) -> tuple[str | None, str | None]:
    spec = CHOICE_BY_NAME[name]
    word = text.lower()
    if word in spec.choices:
        return word, None
    return None, (
        f"{spec.label}: {_short(text)!r} is not one of {', '.join(spec.choices)}; kept the default."
    )
