"""Scenario files: the current lab saved as a small JSON document, and read back strictly.

A scenario file looks like this (every workload and residency field, always; the order is the
``Workload``'s and the ``ResidencyInputs``')::

    {"schema": "sdlab.scenario", "version": 2, "model": "queueing",
     "workload": {"rate_rps": 200.0, "model_latency_ms": 20.0, ..., "gpu": false, ...},
     "residency": {"model_size_gb": 2.0, ..., "accelerator": "aws-g5-xlarge",
                   "model_sizes_gb": []}}

``dumps`` writes one; ``loads`` reads one back and returns exactly what was saved:
``loads(dumps(w, m, r))`` gives ``w``, ``m`` and ``r`` again for every valid workload and
residency inputs (floats are written with ``repr``, which Python reads back bit for bit).
Version 1 files (before the residency inputs) still load, with the default residency inputs:
the one migration so far.

``loads`` reads a file a visitor uploads, so it trusts nothing. Every way a file can be wrong
raises ``ScenarioFileError`` (a ``ValueError``) whose message names the problem, so the page can
show it and leave the current lab untouched:

- too large (over ``MAX_FILE_BYTES``, checked before any parsing), not UTF-8, not JSON,
  nested too deeply, a duplicated key;
- a lone surrogate escape such as ``"\\ud800"`` anywhere (JSON allows it, Python reads it, but it
  is not a character: no page can show it, and UTF-8 cannot encode it);
- NaN or ±Infinity (Python's ``json`` reads ``NaN``, ``Infinity`` and numbers like ``1e400``
  that overflow to infinity; a scenario file never holds them);
- not a JSON object, another schema, another version;
- an unknown key at the top level or in ``workload``, a missing key;
- a wrong type (a string or ``true`` where a number belongs: JSON ``true`` is not a number here,
  even though Python's ``bool`` is an ``int``; a number where ``true``/``false`` belongs);
- a value out of range or not whole where a whole number belongs (``Workload``'s own validation,
  so the rules live in one place);
- an unknown model.

Partial workloads are rejected, not filled with defaults: a file missing fields is truncated or
hand-edited, and silently filling it in would restore a lab that differs from the one saved. When
a later schema adds a field, its version number goes up and ``loads`` will fill the new field for
older versions explicitly, as a migration.

Messages quote untrusted text (keys, strings from the file) shortened, on one line, inside
backticks with any backticks removed, so a page that renders the message as Markdown shows the
text literally instead of rendering a link or an image from it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from sdlab_model.params import (
    MAX_MODEL_SIZES,
    MODEL_CHOICES,
    NUMERIC_BY_NAME,
    RESIDENCY_BY_NAME,
    TOGGLE_BY_NAME,
)
from sdlab_model.residency.inputs import ResidencyInputs
from sdlab_model.workload import Workload

SCHEMA = "sdlab.scenario"
VERSION = 2
READABLE_VERSIONS = (1, 2)
MAX_FILE_BYTES = 64 * 1024
FILE_NAME = "sdlab-scenario.json"
MIME_TYPE = "application/json"

# Every input's range lies far inside this, so a longer integer is out of range.
_LONGEST_INTEGER_SHOWN = 10**15
_TOP_LEVEL_KEYS_V1 = ("schema", "version", "model", "workload")
_TOP_LEVEL_KEYS = (*_TOP_LEVEL_KEYS_V1, "residency")
_WORKLOAD_KEYS = tuple(f.name for f in fields(Workload))
_RESIDENCY_KEYS = tuple(f.name for f in fields(ResidencyInputs))


class ScenarioFileError(ValueError):
    """A scenario file that cannot be loaded; the message says why, for a person to read."""


@dataclass(frozen=True)
class ScenarioFile:
    """What a scenario file holds: the workload, the latency model and the residency inputs
    (the Models and memory page's) it was saved with."""

    workload: Workload
    model: str
    residency: ResidencyInputs = field(default_factory=ResidencyInputs)


def dumps(workload: Workload, model: str, residency: ResidencyInputs | None = None) -> str:
    """The scenario file for ``workload`` under ``model`` with ``residency`` (default inputs if
    ``None``), as JSON text (about a kilobyte)."""
    if model not in MODEL_CHOICES:
        raise ValueError(f"model={model!r} is not one of {', '.join(MODEL_CHOICES)}")
    residency = ResidencyInputs() if residency is None else residency
    document = {
        "schema": SCHEMA,
        "version": VERSION,
        "model": model,
        "workload": workload.to_dict(),
        "residency": {
            name: list(value) if isinstance(value, tuple) else value
            for name, value in ((n, getattr(residency, n)) for n in _RESIDENCY_KEYS)
        },
    }
    return json.dumps(document, indent=2, allow_nan=False) + "\n"


def loads(data: str | bytes | bytearray | memoryview) -> ScenarioFile:
    """Read a scenario file strictly; raise ``ScenarioFileError`` naming the first problem found."""
    text = _decode(data)
    try:
        document = json.loads(
            text,
            parse_constant=_reject_constant,
            parse_float=_finite_float,
            object_pairs_hook=_object_without_duplicates,
        )
    except ScenarioFileError:
        raise
    except RecursionError:
        raise ScenarioFileError(
            "The file is not a scenario file: it is nested too deeply."
        ) from None
    except json.JSONDecodeError as error:
        raise ScenarioFileError(
            f"The file is not valid JSON: {error.msg} (line {error.lineno}, column {error.colno})."
        ) from None
    except ValueError:
        # int() refuses integers with thousands of digits (CPython's int_max_str_digits).
        raise ScenarioFileError("The file holds a number with too many digits to read.") from None
    _refuse_lone_surrogates(document)
    if not isinstance(document, dict):
        raise ScenarioFileError(
            f"The file must hold a JSON object ({{...}}), not {_json_type(document)}."
        )
    _check_header(document)
    version_keys = _TOP_LEVEL_KEYS_V1 if document["version"] == 1 else _TOP_LEVEL_KEYS
    _check_keys(document, version_keys, "at the top level of the file")
    model = document["model"]
    if not isinstance(model, str):
        raise ScenarioFileError(f"model must be a string, got {_json_type(model)}.")
    if model not in MODEL_CHOICES:
        raise ScenarioFileError(
            f"Unknown model {_quote(model)}; expected one of {', '.join(MODEL_CHOICES)}."
        )
    residency = ResidencyInputs() if document["version"] == 1 else _residency(document["residency"])
    return ScenarioFile(workload=_workload(document["workload"]), model=model, residency=residency)


def _decode(data: str | bytes | bytearray | memoryview) -> str:
    """Size check first (before any parsing or decoding work), then strict UTF-8."""
    if isinstance(data, str):
        # A character is at least one byte, so a long string is too large without encoding it.
        if len(data) > MAX_FILE_BYTES:
            raise _too_large(len(data), at_least=True)
        try:
            size = len(data.encode("utf-8"))
        except UnicodeEncodeError:
            raise ScenarioFileError(
                "The file is not UTF-8 text (it holds a lone surrogate)."
            ) from None
        if size > MAX_FILE_BYTES:
            raise _too_large(size)
        return data
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"loads() takes text or bytes, not {type(data).__name__}")
    raw = bytes(data)
    if len(raw) > MAX_FILE_BYTES:
        raise _too_large(len(raw))
    try:
        # utf-8-sig: some editors on Windows start UTF-8 files with a byte-order mark.
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ScenarioFileError(
            f"The file is not UTF-8 text (byte 0x{raw[error.start]:02x} at position {error.start})."
        ) from None


def _refuse_lone_surrogates(document: Any) -> None:
    """Refuse text that is not Unicode before any message can quote it.

    JSON's ``\\ud800`` escape parses to a lone surrogate, which Streamlit cannot send to a page
    (``UnicodeEncodeError``); a pair of escapes is one ordinary character and passes.
    """
    try:
        json.dumps(document, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise ScenarioFileError(
            "The file holds a lone surrogate escape (such as \\ud800): text that is not a "
            "character, so it cannot be a scenario file."
        ) from None
    except RecursionError:
        raise ScenarioFileError(
            "The file is not a scenario file: it is nested too deeply."
        ) from None


def _too_large(size: int, *, at_least: bool = False) -> ScenarioFileError:
    amount = f"at least {size:,}" if at_least else f"{size:,}"
    return ScenarioFileError(
        f"The file is too large: {amount} bytes; a scenario file is at most "
        f"{MAX_FILE_BYTES:,} bytes (64 KB)."
    )


def _reject_constant(name: str) -> float:
    raise ScenarioFileError(f"The file holds {name}; a scenario file holds only finite numbers.")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ScenarioFileError(
            f"The file holds the number {_quote(text)}, too large to be finite; "
            "a scenario file holds only finite numbers."
        )
    return value


def _object_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # Python's json keeps the last of two equal keys; a file saying two things is refused instead.
    document: dict[str, Any] = {}
    for key, value in pairs:
        if key in document:
            raise ScenarioFileError(f"The key {_quote(key)} appears twice in one object.")
        document[key] = value
    return document


def _check_keys(document: Mapping[str, Any], allowed: tuple[str, ...], where: str) -> None:
    unknown = [key for key in document if key not in allowed]
    if unknown:
        listed = ", ".join(_quote(key) for key in unknown[:5])
        more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
        raise ScenarioFileError(f"Unknown key {listed}{more} {where}.")
    missing = [key for key in allowed if key not in document]
    if missing:
        keys = "key" if len(missing) == 1 else "keys"
        raise ScenarioFileError(
            f"Missing {keys} {', '.join(missing)} {where} (a scenario file lists every setting)."
        )


def _check_header(document: Mapping[str, Any]) -> None:
    for key in ("schema", "version"):
        if key not in document:
            raise ScenarioFileError(
                f"Missing key {key} at the top level of the file (a scenario file lists every "
                "setting)."
            )
    schema, version = document["schema"], document["version"]
    if schema != SCHEMA:
        shown = _quote(schema) if isinstance(schema, str) else _json_type(schema)
        raise ScenarioFileError(
            f"This is not an sdlab scenario file: schema is {shown}, expected {SCHEMA}."
        )
    if isinstance(version, bool) or not isinstance(version, int):
        raise ScenarioFileError(f"version must be a whole number, got {_json_type(version)}.")
    if version not in READABLE_VERSIONS:
        raise ScenarioFileError(
            f"Scenario file version {version} is not supported; this sdlab reads versions "
            f"{', '.join(map(str, READABLE_VERSIONS))}."
        )


def _workload(section: Any) -> Workload:
    if not isinstance(section, dict):
        raise ScenarioFileError(f"workload must be a JSON object, got {_json_type(section)}.")
    _check_keys(section, _WORKLOAD_KEYS, "in workload")
    for name, value in section.items():
        if name in TOGGLE_BY_NAME and not isinstance(value, bool):
            raise ScenarioFileError(
                f"workload.{name} must be true or false, got {_json_type(value)}."
            )
        if name in NUMERIC_BY_NAME:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ScenarioFileError(
                    f"workload.{name} must be a number, got {_json_type(value)}."
                )
            spec = NUMERIC_BY_NAME[name]
            if isinstance(value, int) and abs(value) > _LONGEST_INTEGER_SHOWN:
                # Said here, not by Workload, to keep a thousand-digit integer out of the message.
                raise ScenarioFileError(
                    f"workload: {name}={_quote(str(value), 20)} is outside the allowed range "
                    f"[{spec.minimum:g}, {spec.maximum:g}]."
                )
    try:
        return Workload(**section)
    except ValueError as error:
        # Workload names the field, the value (a choice's is the file's own text) and the range.
        raise ScenarioFileError(f"workload: {_quote(str(error), 160)}.") from None


def _residency(section: Any) -> ResidencyInputs:
    if not isinstance(section, dict):
        raise ScenarioFileError(f"residency must be a JSON object, got {_json_type(section)}.")
    _check_keys(section, _RESIDENCY_KEYS, "in residency")
    values = dict(section)
    for name in RESIDENCY_BY_NAME:
        value = values[name]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ScenarioFileError(f"residency.{name} must be a number, got {_json_type(value)}.")
        if isinstance(value, int) and abs(value) > _LONGEST_INTEGER_SHOWN:
            spec = RESIDENCY_BY_NAME[name]
            raise ScenarioFileError(
                f"residency: {name}={_quote(str(value), 20)} is outside the allowed range "
                f"[{spec.minimum:g}, {spec.maximum:g}]."
            )
    if not isinstance(values["accelerator"], str):
        raise ScenarioFileError(
            f"residency.accelerator must be a string, got {_json_type(values['accelerator'])}."
        )
    sizes = values["model_sizes_gb"]
    if not isinstance(sizes, list):
        raise ScenarioFileError(
            f"residency.model_sizes_gb must be a list of numbers, got {_json_type(sizes)}."
        )
    if len(sizes) > MAX_MODEL_SIZES:
        raise ScenarioFileError(
            f"residency.model_sizes_gb has {len(sizes):,} sizes; at most {MAX_MODEL_SIZES} "
            "are allowed."
        )
    for size in sizes:
        if isinstance(size, bool) or not isinstance(size, (int, float)):
            raise ScenarioFileError(
                f"residency.model_sizes_gb must hold numbers only, got {_json_type(size)}."
            )
        if isinstance(size, int) and abs(size) > _LONGEST_INTEGER_SHOWN:
            raise ScenarioFileError("residency.model_sizes_gb holds a size out of range.")
    values["model_sizes_gb"] = tuple(sizes)
    try:
        return ResidencyInputs(**values)
    except ValueError as error:
        # ResidencyInputs names the field, the value (shortened) and the allowed range.
        raise ScenarioFileError(f"residency: {_quote(str(error), 160)}.") from None


def _json_type(value: Any) -> str:
    """How a person would name this JSON value's type, with short values shown."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"{'true' if value else 'false'} (a boolean)"
    if isinstance(value, (int, float)):
        return f"the number {_quote(repr(value))}"
    if isinstance(value, str):
        return f"the string {_quote(value)}"
    if isinstance(value, list):
        return "a list"
    return "an object"


def _quote(text: str, limit: int = 40) -> str:
    """Untrusted text as an inert Markdown code span: one line, shortened, no backticks.

    A lone surrogate (which ``loads`` refuses first) would be shown as its escape, never passed on.
    """
    flat = " ".join(str(text).replace("`", "'").split())
    flat = flat.encode("utf-8", "backslashreplace").decode("utf-8")
    if not flat:
        return "(empty)"
    if len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    return f"`{flat}`"
