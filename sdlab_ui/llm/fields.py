"""The LLM page's inputs read back from URL text without ever raising, and the workload they make.

The inputs are declared in ``sdlab_model.page_params`` (``LLM_INPUTS``, ``LLM_CHOICES``): each
is an ``LlmWorkload`` field with the model's range and default. The page's values also hold one
view, the heatmaps' second axis (``LLM_HEATMAP_AXIS``), which the link keeps but the model never
reads. URL keys are the names under the page's ``llm.`` prefix.
"""

from __future__ import annotations

from dataclasses import fields

from sdlab_model.llm import LengthSample, LlmWorkload
from sdlab_model.page_params import LLM_BY_NAME, LLM_CHOICE_BY_NAME, LLM_HEATMAP_AXIS
from sdlab_ui.page_inputs import parse_number
from sdlab_ui.state import plain_text

INPUT_NAMES: tuple[str, ...] = (*LLM_CHOICE_BY_NAME, *LLM_BY_NAME)
VIEW_CHOICES = {LLM_HEATMAP_AXIS.name: LLM_HEATMAP_AXIS}
_CHOICES = {**LLM_CHOICE_BY_NAME, **VIEW_CHOICES}
_DEFAULTS = {
    **{name: spec.default for name, spec in _CHOICES.items()},
    **{name: spec.default for name, spec in LLM_BY_NAME.items()},
}


def default_values() -> dict:
    """Every input of the model at its default (no view)."""
    return {name: _DEFAULTS[name] for name in INPUT_NAMES}


def inputs_of(values: dict) -> dict:
    """The model's inputs among the page's values (without the views)."""
    return {name: values[name] for name in INPUT_NAMES}


def views_of(values: dict) -> dict:
    """The page's views among its values, defaults where missing."""
    return {name: values.get(name, spec.default) for name, spec in VIEW_CHOICES.items()}


def parse_params(given: dict[str, str]) -> tuple[dict, list[str]]:
    """Page values from URL text (missing: defaults). A value that is unreadable, out of range
    or not in the catalog keeps its default, and so does a whole set the model refuses (a
    prompt longer than the model's context); each with a notice. Never raises."""
    values, notices = default_values() | views_of({}), []
    for name, text in given.items():
        if name in _CHOICES:
            spec = _CHOICES[name]
            if text in spec.choices:
                values[name] = text
            else:
                notices.append(
                    f"LLM {spec.label}: {plain_text(str(text)[:30])} is not one of the choices; "
                    "kept the default."
                )
        elif name in LLM_BY_NAME:
            number, notice = parse_number(LLM_BY_NAME[name], text, "LLM")
            if notice is None:
                values[name] = number
            else:
                notices.append(notice)
        else:
            notices.append(f"Ignored unknown LLM setting {plain_text(name[:30])}.")
    _, problem = build_workload(values)
    if problem is not None:
        notices.append(f"{problem} The LLM page starts from its defaults.")
        values = default_values() | views_of(values)
    return values, notices


def url_values(values: dict) -> dict[str, str]:
    """The inputs that differ from their defaults, as URL text."""
    out = {}
    for name, value in values.items():
        if value == _DEFAULTS[name]:
            continue
        out[name] = value if isinstance(value, str) else f"{value:.6g}"
    return out


def build_workload(
    values: dict, length_sample: LengthSample | None = None
) -> tuple[LlmWorkload | None, str | None]:
    """The model's workload from the page's values (and measured lengths, if uploaded), or None
    and a reason a person can act on."""
    try:
        return LlmWorkload(**inputs_of(values), length_sample=length_sample), None
    except ValueError as error:
        return None, f"These inputs cannot run: {plain_text(str(error))}."


def cache_key(workload: LlmWorkload) -> tuple:
    """A workload as ``st.cache_data`` hashes it: its fields, a length sample by its digest
    (hashing every row on every call would cost more than most of what is cached)."""
    sample = workload.length_sample
    return tuple(
        getattr(workload, f.name) if f.name != "length_sample" else sample and sample.digest
        for f in fields(workload)
    )
