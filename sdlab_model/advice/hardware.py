"""The hardware catalog: instance types, their price, and how long a batch takes on them.

Each ``HardwareType`` is an instance someone can rent (an AWS or GCP machine type) with its
on-demand price per hour, its accelerator and that accelerator's memory, how many batches it runs
at once (``slots``), and, where one is published, a ``BatchProfile``: measured latency of one
batch against batch size for a reference model (ResNet-50 v1.5 under Triton, TensorRT FP16).

The figures are data, ``sdlab_model/advice/data/hardware.json``, read once when this module loads;
every price and profile names its source and date, and ``is_estimate`` marks what was not read from
a source. docs/hardware_catalog.md tabulates them. ``parse_profile_csv`` reads a measured profile a
user uploads (a two-column CSV, or Triton perf_analyzer's ``-f`` CSV with a batch-size column).
"""

from __future__ import annotations

import csv
import datetime
import io
import itertools
import json
import math
import re
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from typing import NamedTuple

import numpy as np

DATA_FILE = resources.files(__package__) / "data" / "hardware.json"
"""The catalog's figures and their sources."""

KINDS = ("cpu", "gpu")
MAX_SLOTS = 256
MAX_OVERHEAD_SHARE = 0.995
"""``affine_fit`` clips the fixed share below 1: at 1 a batch of 128 would cost no more than one
request, and the batching model divides by ``1 - f``."""

MAX_PROFILE_BYTES = 100_000
MAX_PROFILE_ROWS = 1000
_ID_PATTERN = re.compile(r"[a-z0-9][a-z0-9-]*")
_PERF_ANALYZER_US_PER_MS = 1000.0


class AffineFit(NamedTuple):
    """``latency(b) ≈ single_request_ms * (overhead_share + (1 - overhead_share) * b)``."""

    single_request_ms: float
    overhead_share: float
    max_relative_error: float
    """Largest ``|fit - measured| / measured`` over the profile's points."""


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


@dataclass(frozen=True)
class BatchProfile:
    """Measured latency of one batch (ms) at each batch size, on one hardware type.

    Batch sizes are whole numbers, strictly increasing, starting at 1 (the single-request cost
    everything else is compared with), at least two of them; latencies are positive, finite and
    never fall as the batch grows.
    """

    batch_sizes: tuple[int, ...]
    latency_ms: tuple[float, ...]
    source: str
    is_estimate: bool

    def instances_for(self, replica_slots: int) -> int:
        """How many of these instances make a replica of about ``replica_slots`` slots (at least
        one, never more slots than asked): a replica's price is that many instances'."""
        return max(1, replica_slots // self.slots)

    def __post_init__(self) -> None:
        sizes, latencies = self.batch_sizes, self.latency_ms
        if not isinstance(sizes, tuple) or not isinstance(latencies, tuple):
            raise ValueError("batch_sizes and latency_ms must be tuples")
        if len(sizes) != len(latencies):
            raise ValueError(
                f"batch_sizes has {len(sizes)} entries but latency_ms has {len(latencies)}; "
                "they must match"
            )
        if not 2 <= len(sizes) <= MAX_PROFILE_ROWS:
            raise ValueError(
                f"a profile needs 2 to {MAX_PROFILE_ROWS} batch sizes, got {len(sizes)}"
            )
        for size in sizes:
            if not isinstance(size, int) or isinstance(size, bool) or size < 1:
                raise ValueError(f"batch_sizes must be whole numbers >= 1, got {size!r}")
        if sizes[0] != 1:
            raise ValueError(f"batch_sizes must start at 1, got {sizes[0]}")
        for before, after in itertools.pairwise(sizes):
            if after <= before:
                raise ValueError(
                    f"batch_sizes must be strictly increasing, got {after} after {before}"
                )
        for latency in latencies:
            if not _finite(latency) or latency <= 0:
                raise ValueError(f"latency_ms must be finite and > 0, got {latency!r}")
        for size, before, after in zip(sizes[1:], latencies, latencies[1:], strict=False):
            if after < before:
                raise ValueError(
                    f"latency_ms must not decrease as the batch grows: {after} ms at batch "
                    f"{size} is below {before} ms at the batch before"
                )
        if not isinstance(self.source, str) or not self.source.strip():
            raise ValueError("a profile needs a source (where the figures come from)")
        if not isinstance(self.is_estimate, bool):
            raise ValueError(f"is_estimate must be True or False, got {self.is_estimate!r}")

    def latency_at(self, batch_size: float) -> float:
        """Latency (ms) of a batch of ``batch_size`` requests.

        Piecewise linear between measured batch sizes. Beyond the largest one, the line through
        the last two points is extended: batch cost is close to linear once the accelerator is
        saturated, which the last two points of a profile usually show. Below 1 is an error.
        """
        if not _finite(batch_size) or batch_size < 1:
            raise ValueError(f"batch_size must be a finite number >= 1, got {batch_size!r}")
        sizes, latencies = self.batch_sizes, self.latency_ms
        if batch_size <= sizes[-1]:
            return float(np.interp(batch_size, sizes, latencies))
        slope = (latencies[-1] - latencies[-2]) / (sizes[-1] - sizes[-2])
        return latencies[-1] + slope * (batch_size - sizes[-1])

    def affine_fit(self) -> AffineFit:
        """Fit ``latency(b) = s1 * (f + (1 - f) * b)``: ``s1`` ms for one request, ``f`` fixed.

        This is the shape sdlab's batching model uses (a fixed per-batch cost plus a per-request
        cost). Least squares on the relative error, so the small batches real-time serving runs at
        weigh as much as batch 128. If the unconstrained fit puts ``f`` outside
        ``[0, MAX_OVERHEAD_SHARE]`` it is clipped and ``s1`` refitted with ``f`` fixed.
        """
        sizes = np.asarray(self.batch_sizes, dtype=float)
        measured = np.asarray(self.latency_ms, dtype=float)
        weights = 1.0 / measured
        # latency = fixed + per_request * b, each row scaled by 1 / measured.
        design = np.column_stack([np.ones_like(sizes), sizes]) * weights[:, None]
        (fixed, per_request), *_ = np.linalg.lstsq(design, measured * weights, rcond=None)
        single = fixed + per_request
        share = fixed / single if single > 0 else 0.0
        if not 0.0 <= share <= MAX_OVERHEAD_SHARE:
            share = min(max(share, 0.0), MAX_OVERHEAD_SHARE)
            shape = (share + (1.0 - share) * sizes) * weights
            single = float(shape @ (measured * weights) / (shape @ shape))
        fitted = single * (share + (1.0 - share) * sizes)
        error = float(np.max(np.abs(fitted - measured) / measured))
        return AffineFit(float(single), float(share), error)

    def to_csv(self) -> str:
        """The profile as ``batch_size,latency_ms`` CSV, the format ``parse_profile_csv`` reads."""
        lines = ["batch_size,latency_ms"]
        lines += [
            f"{size},{latency!r}"
            for size, latency in zip(self.batch_sizes, self.latency_ms, strict=True)
        ]
        return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class HardwareType:
    """One instance type: price, accelerator, parallel slots and (if known) a batch profile.

    ``slots`` is how many batches the instance runs at once: physical cores for a CPU instance,
    model instances for a GPU one (the catalog uses 1 per GPU, the setting NVIDIA's profiles were
    measured with). ``is_estimate`` covers the price and specifications; the profile carries its
    own flag.
    """

    id: str
    name: str
    kind: str
    usd_per_hour: float
    accelerator: str | None
    accelerator_memory_gb: float | None
    slots: int
    profile: BatchProfile | None
    price_source: str
    price_date: str
    is_estimate: bool

    def instances_for(self, replica_slots: int) -> int:
        """How many of these instances make a replica of about ``replica_slots`` slots (at least
        one, never more slots than asked): a replica's price is that many instances'."""
        return max(1, replica_slots // self.slots)

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not _ID_PATTERN.fullmatch(self.id):
            raise ValueError(f"id must be lower-case letters, digits and dashes, got {self.id!r}")
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"{self.id}: name must not be empty")
        if self.kind not in KINDS:
            raise ValueError(f"{self.id}: kind must be one of {KINDS}, got {self.kind!r}")
        if not _finite(self.usd_per_hour) or self.usd_per_hour <= 0:
            raise ValueError(
                f"{self.id}: usd_per_hour must be a finite price > 0, got {self.usd_per_hour!r}"
            )
        if self.kind == "gpu":
            if not isinstance(self.accelerator, str) or not self.accelerator.strip():
                raise ValueError(f"{self.id}: a gpu instance needs its accelerator named")
            memory = self.accelerator_memory_gb
            if not _finite(memory) or memory <= 0:
                raise ValueError(
                    f"{self.id}: accelerator_memory_gb must be > 0 for a gpu, got {memory!r}"
                )
        elif self.accelerator_memory_gb is not None:
            raise ValueError(
                f"{self.id}: accelerator_memory_gb must be None for a cpu, "
                f"got {self.accelerator_memory_gb!r}"
            )
        slots = self.slots
        if not isinstance(slots, int) or isinstance(slots, bool) or not 1 <= slots <= MAX_SLOTS:
            raise ValueError(
                f"{self.id}: slots must be a whole number in 1..{MAX_SLOTS}, got {slots!r}"
            )
        if self.profile is not None and not isinstance(self.profile, BatchProfile):
            raise ValueError(f"{self.id}: profile must be a BatchProfile or None")
        if not isinstance(self.price_source, str) or not self.price_source.strip():
            raise ValueError(f"{self.id}: price_source must say where the price comes from")
        try:
            datetime.date.fromisoformat(self.price_date)
        except (TypeError, ValueError):
            raise ValueError(
                f"{self.id}: price_date must be a YYYY-MM-DD date, got {self.price_date!r}"
            ) from None
        if not isinstance(self.is_estimate, bool):
            raise ValueError(f"{self.id}: is_estimate must be True or False")


def _profile_from_data(profile_id: str, entry: dict) -> BatchProfile:
    return BatchProfile(
        batch_sizes=tuple(entry["batch_sizes"]),
        latency_ms=tuple(float(value) for value in entry["latency_ms"]),
        source=f"{entry['source']} (dated {entry['source_date']}; catalog profile {profile_id})",
        is_estimate=entry["is_estimate"],
    )


def load_catalog(source: Traversable = DATA_FILE) -> tuple[HardwareType, ...]:
    """Every hardware type in the catalog file, validated, in file order."""
    try:
        with source.open("r", encoding="utf-8") as stream:
            data = json.load(stream)
    except FileNotFoundError as error:
        raise FileNotFoundError(
            f"the hardware catalog {source} is missing: sdlab_model needs this data file "
            "(installed as package data)"
        ) from error
    profiles = {key: _profile_from_data(key, entry) for key, entry in data["profiles"].items()}
    catalog = []
    for entry in data["hardware"]:
        profile_id = entry["profile"]
        if profile_id is not None and profile_id not in profiles:
            raise ValueError(f"{entry['id']}: profile {profile_id!r} is not in the catalog file")
        catalog.append(
            HardwareType(
                id=entry["id"],
                name=entry["name"],
                kind=entry["kind"],
                usd_per_hour=float(entry["usd_per_hour"]),
                accelerator=entry["accelerator"],
                accelerator_memory_gb=entry["accelerator_memory_gb"],
                slots=entry["slots"],
                profile=None if profile_id is None else profiles[profile_id],
                price_source=entry["price_source"],
                price_date=entry["price_date"],
                is_estimate=entry["is_estimate"],
            )
        )
    ids = [hardware.id for hardware in catalog]
    duplicates = sorted({hardware_id for hardware_id in ids if ids.count(hardware_id) > 1})
    if duplicates:
        raise ValueError(f"the hardware catalog lists {duplicates} more than once")
    return tuple(catalog)


CATALOG: tuple[HardwareType, ...] = load_catalog()
_BY_ID = {hardware.id: hardware for hardware in CATALOG}


def hardware_by_id(hardware_id: str) -> HardwareType:
    """The catalog entry with this id; ``ValueError`` naming the known ids if there is none."""
    try:
        return _BY_ID[hardware_id]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown hardware id {hardware_id!r}; the catalog has {sorted(_BY_ID)}"
        ) from None


# --- Uploaded profiles ------------------------------------------------------------------------

_SIMPLE_BATCH_HEADERS = ("batch_size", "batch")
_PA_BATCH_HEADERS = ("batch size", "batch_size", "batch")
_PA_LATENCY_HEADERS = ("avg latency", "p50 latency")
_PA_LOAD_HEADERS = ("concurrency", "request rate")
_PA_MARKER = "inferences/second"


def _show(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "…")


def _number(cell: str, row_number: int, column: str) -> float:
    try:
        value = float(cell)
    except ValueError:
        raise ValueError(f"row {row_number}: {column} {_show(cell)} is not a number") from None
    if not math.isfinite(value):
        raise ValueError(f"row {row_number}: {column} must be a finite number, got {_show(cell)}")
    if value <= 0:
        raise ValueError(f"row {row_number}: {column} must be > 0, got {_show(cell)}")
    return value


def _batch(cell: str, row_number: int) -> int:
    value = _number(cell, row_number, "batch size")
    if value != int(value):
        raise ValueError(f"row {row_number}: batch size {_show(cell)} is not a whole number")
    return int(value)


def _rows(text: str) -> list[list[str]]:
    if not isinstance(text, str):
        raise ValueError("the profile must be text")
    if len(text) > MAX_PROFILE_BYTES:
        raise ValueError(f"the file is larger than {MAX_PROFILE_BYTES // 1000} kB")
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise ValueError("the file is not valid UTF-8 text") from None
    if size > MAX_PROFILE_BYTES:
        raise ValueError(f"the file is larger than {MAX_PROFILE_BYTES // 1000} kB")
    if "\x00" in text:
        raise ValueError("the file is not a text CSV (it contains NUL bytes)")
    try:
        rows = list(csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline="")))
    except csv.Error as error:
        raise ValueError(f"the file is not a readable CSV ({error})") from None
    rows = [[cell.strip() for cell in row] for row in rows if any(cell.strip() for cell in row)]
    if not rows:
        raise ValueError("the file is empty")
    if len(rows) - 1 > MAX_PROFILE_ROWS:
        raise ValueError(f"the file has more than {MAX_PROFILE_ROWS} rows")
    return rows


def _check_width(row: list[str], width: int, row_number: int) -> None:
    if len(row) != width:
        raise ValueError(f"row {row_number} has {len(row)} fields; the header has {width}")


def parse_profile_csv(text: str, *, source: str = "uploaded CSV") -> BatchProfile:
    """A measured ``BatchProfile`` from CSV text; ``ValueError`` with a short reason otherwise.

    Two formats:

    * ``batch_size,latency_ms`` (or ``batch,latency_ms``): one row per batch size, in increasing
      order, starting at 1, latency of one batch in milliseconds.
    * Triton perf_analyzer's ``-f`` CSV (header ``Concurrency,Inferences/Second,Client Send,...,
      p50 latency,p90 latency,...``, latencies in microseconds) with a ``Batch Size`` column added.
      perf_analyzer sets the batch size per run (``-b``) and does not write it, so run it once per
      batch size and put the runs in one file with that column. The latency used is
      ``Avg latency`` if the file has it, else ``p50 latency``; if a batch size has several rows
      (several concurrency levels), the lowest concurrency is kept, the closest to one batch on
      an idle server. Rows may come in any order.

    At most 100 kB and 1000 rows. Nothing but ``ValueError`` is raised.
    """
    rows = _rows(text)
    header = [cell.lower() for cell in rows[0]]
    body = rows[1:]
    if len(header) == 2 and header[0] in _SIMPLE_BATCH_HEADERS and header[1] == "latency_ms":
        pairs = []
        for number, row in enumerate(body, start=2):
            _check_width(row, 2, number)
            pairs.append((_batch(row[0], number), _number(row[1], number, "latency_ms")))
        if len(pairs) < 2:
            raise ValueError("the file needs at least 2 rows (batch sizes) after the header")
        for (before, _), (after, _) in itertools.pairwise(pairs):
            if after == before:
                raise ValueError(f"batch size {after} appears twice")
            if after < before:
                raise ValueError(f"batch sizes must increase: {after} comes after {before}")
    elif _PA_MARKER in header:
        pairs = _perf_analyzer_pairs(header, body)
    else:
        raise ValueError(
            "the header must be 'batch_size,latency_ms' (or 'batch,latency_ms'), or "
            "perf_analyzer's -f CSV with a 'Batch Size' column; "
            f"got {_show(','.join(rows[0]))}"
        )
    if pairs[0][0] != 1:
        raise ValueError(
            f"the first batch size must be 1 (the single-request cost), got {pairs[0][0]}"
        )
    return BatchProfile(
        batch_sizes=tuple(size for size, _ in pairs),
        latency_ms=tuple(latency for _, latency in pairs),
        source=source,
        is_estimate=False,
    )


def _perf_analyzer_pairs(header: list[str], body: list[list[str]]) -> list[tuple[int, float]]:
    batch_column = next((header.index(name) for name in _PA_BATCH_HEADERS if name in header), None)
    if batch_column is None:
        raise ValueError(
            "this perf_analyzer CSV has no 'Batch Size' column: perf_analyzer does not write the "
            "batch size (-b), so run it once per batch size and add that column"
        )
    latency_name = next((name for name in _PA_LATENCY_HEADERS if name in header), None)
    if latency_name is None:
        raise ValueError("this perf_analyzer CSV has neither 'Avg latency' nor 'p50 latency'")
    latency_column = header.index(latency_name)
    load_column = next((header.index(name) for name in _PA_LOAD_HEADERS if name in header), None)
    chosen: dict[int, tuple[float, float]] = {}
    for number, row in enumerate(body, start=2):
        _check_width(row, len(header), number)
        size = _batch(row[batch_column], number)
        latency_ms = _number(row[latency_column], number, latency_name) / _PERF_ANALYZER_US_PER_MS
        load = 0.0
        if load_column is not None:
            load = _number(row[load_column], number, header[load_column])
        if size in chosen and (load_column is None or load == chosen[size][0]):
            raise ValueError(f"batch size {size} appears twice at the same load")
        if size not in chosen or load < chosen[size][0]:
            chosen[size] = (load, latency_ms)
    if len(chosen) < 2:
        raise ValueError("the file needs at least 2 batch sizes")
    return [(size, chosen[size][1]) for size in sorted(chosen)]
