"""The LLM page's inputs read back from URL text without ever raising, and the workload they make.

The inputs are declared in ``sdlab_model.page_params`` (``LLM_INPUTS``, ``LLM_CHOICES``): each
is an ``LlmWorkload`` field with the model's range and default. URL keys are the field names
under the page's ``llm.`` prefix.
"""

from __future__ import annotations

import math

from sdlab_model.llm import LlmWorkload
from sdlab_model.page_params import LLM_BY_NAME, LLM_CHOICE_BY_NAME
from sdlab_model.params import NumericInput
from sdlab_ui.state import plain_text
from sdlab_ui.widgets import input_label

INPUT_NAMES: tuple[str, ...] = (*LLM_CHOICE_BY_NAME, *LLM_BY_NAME)
_DEFAULTS = {
    **{name: spec.default for name, spec in LLM_CHOICE_BY_NAME.items()},
    **{name: spec.default for name, spec in LLM_BY_NAME.items()},
}


def default_values() -> dict:
    """Every page input at the model's default."""
    return {name: _DEFAULTS[name] for name in INPUT_NAMES}


def _number(field: NumericInput, text: str) -> tuple[float | int | None, str | None]:
    shown, label = plain_text(str(text)[:30]), input_label(field)
    try:
        number = float(text)
    except ValueError:
        number = math.nan
    if not math.isfinite(number):
        return None, f"LLM {label}: {shown} is not a number; kept the default."
    if not field.minimum <= number <= field.maximum:
        return None, (
            f"LLM {label}: {shown} is outside {field.minimum:g} to {field.maximum:g}; "
            "kept the default."
        )
    return (round(number) if field.integer else number), None


def parse_params(given: dict[str, str]) -> tuple[dict, list[str]]:
    """Page values from URL text (missing: defaults). A value that is unreadable, out of range
    or not in the catalog keeps its default, and so does a whole set the model refuses (a
    prompt longer than the model's context); each with a notice. Never raises."""
    values, notices = default_values(), []
    for name, text in given.items():
        if name in LLM_CHOICE_BY_NAME:
            spec = LLM_CHOICE_BY_NAME[name]
            if text in spec.choices:
                values[name] = text
            else:
                notices.append(
                    f"LLM {spec.label}: {plain_text(str(text)[:30])} is not in the catalog; "
                    "kept the default."
                )
        elif name in LLM_BY_NAME:
            number, notice = _number(LLM_BY_NAME[name], text)
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
