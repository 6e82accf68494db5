"""The lab's state: the one module that owns session state, the shared sidebar and URL ⇄ state sync.

The canonical state is a ``Workload`` and a model name kept in ``st.session_state`` under this
module's own keys. Widgets are views of it: before each widget is drawn its session-state value is
set from the canonical state, and its ``on_change`` callback writes the new value back. Streamlit
drops the state of widgets that are not drawn on a run, so the canonical copy, not the widgets,
is what survives page switches.

The URL mirrors the canonical state on every run (``?rate_rps=...&model=queueing``). A session
starts from the URL through ``Workload.from_strings``, the tolerant parser: anything a person can
type yields a valid lab plus notices, shown until the next change.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import cast

import streamlit as st

from sdlab_model.assessment import ModelName
from sdlab_model.params import (
    CHOICE_INPUTS,
    DEFAULT_MODEL,
    MODEL_CHOICES,
    NUMERIC_INPUTS,
    TOGGLE_INPUTS,
    ChoiceInput,
    NumericInput,
)
from sdlab_model.scenarios import SCENARIOS
from sdlab_model.workload import Workload
from sdlab_ui.widgets import format_value, linear_step, log_options, slider_format

_WORKLOAD_KEY = "sdlab.workload"
_MODEL_KEY = "sdlab.model"
_NOTICES_KEY = "sdlab.notices"
_WIDGET_PREFIX = "sdlab.widget."
_MODEL_WIDGET_KEY = _WIDGET_PREFIX + "model"
MODEL_PARAM = "model"
MODEL_LABELS: dict[str, str] = {
    "queueing": "Queueing (M/D/c + batching)",
    "teaching": "Teaching (the original page's budgets)",
}
# Markdown (and Streamlit's :color[] / :emoji: directives, $math$) characters that could turn
# text from a URL into a link, an image or styling when shown in st.warning.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~:$=\"'&@/])")
# GitHub-flavoured Markdown links bare "https://…", "www.…" and "name@host.tld" (so "mailto:")
# after escapes are resolved, so escaping cannot stop it; an invisible word joiner inside each
# pattern does (after "https:", "www" and "@"), and the text still reads the same.
WORD_JOINER = "\u2060"
_AUTOLINK_START = re.compile(r"(:)(?=//)|(www)(?=\.)|(@)", re.IGNORECASE)
MAX_NOTICES_SHOWN = 5
"""Notices drawn one by one; the rest are counted (a URL can carry a thousand unknown keys)."""


@dataclass(frozen=True)
class LabState:
    """What every page reads: the workload and the chosen latency model."""

    workload: Workload
    model: ModelName


def widget_key(name: str) -> str:
    """The session-state key of the sidebar widget for input ``name`` (tests use it too)."""
    return _WIDGET_PREFIX + name


def plain_text(text: str) -> str:
    """Untrusted text escaped so Markdown shows it literally (no links, images, HTML or styling).

    One line; a lone surrogate (which no page can be sent) is shown as its escape, ``\\ud800``.
    """
    flat = " ".join(str(text).split()).encode("utf-8", "backslashreplace").decode("utf-8")
    unlinked = _AUTOLINK_START.sub(lambda m: m.group(0) + WORD_JOINER, flat)
    return _MARKDOWN_SPECIAL.sub(r"\\\1", unlinked)


def current() -> LabState:
    """The canonical state, starting it from the URL on a session's first run."""
    if _WORKLOAD_KEY not in st.session_state:
        workload, model, notices = parse_query_params(_query_param_lists())
        st.session_state[_WORKLOAD_KEY] = workload
        st.session_state[_MODEL_KEY] = model
        st.session_state[_NOTICES_KEY] = notices
    return LabState(st.session_state[_WORKLOAD_KEY], st.session_state[_MODEL_KEY])


def parse_query_params(values: dict[str, list[str]]) -> tuple[Workload, ModelName, tuple[str, ...]]:
    """Workload, model and notices from query parameters; never raises."""
    workload, notices = Workload.from_strings(values, ignore=(MODEL_PARAM,))
    model: str = DEFAULT_MODEL
    given = values.get(MODEL_PARAM) or []
    if given:
        wanted = str(given[-1]).strip().lower()
        if wanted in MODEL_CHOICES:
            model = wanted
        else:
            notices += (
                f"Model {wanted[:40]!r} is not one of {', '.join(MODEL_CHOICES)}; "
                f"used {DEFAULT_MODEL}.",
            )
    return workload, cast(ModelName, model), notices


def load(workload: Workload, model: str | None = None) -> None:
    """Make ``workload`` (and ``model`` if given) the lab's state; clears notices."""
    current()
    st.session_state[_WORKLOAD_KEY] = workload
    if model is not None:
        st.session_state[_MODEL_KEY] = model
    st.session_state[_NOTICES_KEY] = ()


def reset() -> None:
    """Every input back to its default, the default model."""
    load(Workload(), DEFAULT_MODEL)


def render_sidebar() -> LabState:
    """Draw the shared sidebar from the canonical state and write that state to the URL."""
    state = current()
    with st.sidebar:
        st.subheader("Workload")
        for spec in (s for s in NUMERIC_INPUTS if not s.advanced):
            _numeric_widget(spec, state.workload)
        for toggle in TOGGLE_INPUTS:
            st.session_state[widget_key(toggle.name)] = getattr(state.workload, toggle.name)
            st.toggle(
                toggle.label,
                key=widget_key(toggle.name),
                help=toggle.help,
                on_change=_on_input_change,
                args=(toggle.name,),
            )
        for choice in (c for c in CHOICE_INPUTS if not c.advanced):
            _choice_widget(choice, state.workload)
        st.session_state[_MODEL_WIDGET_KEY] = state.model
        st.radio(
            "Latency model",
            MODEL_CHOICES,
            key=_MODEL_WIDGET_KEY,
            format_func=MODEL_LABELS.__getitem__,
            on_change=_on_model_change,
            help="Queueing: an M/D/c queue with Triton's batching rule, checked against a "
            "simulator. Teaching: the original lab's budget heuristic.",
        )
        with st.expander("Advanced"):
            for spec in (s for s in NUMERIC_INPUTS if s.advanced):
                _numeric_widget(spec, state.workload)
        st.button(
            "Reset to defaults", key=_WIDGET_PREFIX + "reset", on_click=reset, width="stretch"
        )
    _write_query_params(state)
    return state


def show_notices() -> None:
    """Warn about anything the URL (or a file) asked for that the lab could not take as given."""
    notices = st.session_state.get(_NOTICES_KEY, ())
    for notice in notices[:MAX_NOTICES_SHOWN]:
        st.warning(plain_text(notice), icon=":material/warning:")
    if len(notices) > MAX_NOTICES_SHOWN:
        st.warning(
            f"… and {len(notices) - MAX_NOTICES_SHOWN} more notices like these, not shown.",
            icon=":material/warning:",
        )


def _choice_widget(spec: ChoiceInput, workload: Workload) -> None:
    key = widget_key(spec.name)
    st.session_state[key] = getattr(workload, spec.name)
    st.selectbox(
        spec.label,
        spec.choices,
        key=key,
        help=spec.help,
        format_func=spec.label_of,
        on_change=_on_input_change,
        args=(spec.name,),
    )


def _numeric_widget(spec: NumericInput, workload: Workload) -> None:
    value = getattr(workload, spec.name)
    key = widget_key(spec.name)
    label = f"{spec.label} ({spec.unit})" if spec.unit and spec.unit != "x" else spec.label
    # Set before the widget is drawn (never with value=): the canonical state wins every run.
    st.session_state[key] = value
    if spec.scale == "log":
        options = log_options(spec, (*_card_values(spec.name), value))
        st.select_slider(
            label,
            options,
            key=key,
            help=spec.help,
            format_func=lambda v, s=spec: format_value(s, v),
            on_change=_on_input_change,
            args=(spec.name,),
        )
    else:
        st.slider(
            label,
            min_value=type(value)(spec.minimum),
            max_value=type(value)(spec.maximum),
            step=type(value)(linear_step(spec)),
            format=slider_format(spec),
            key=key,
            help=spec.help,
            on_change=_on_input_change,
            args=(spec.name,),
        )


def _card_values(name: str) -> tuple[float, ...]:
    """The scenario cards' values of one input, so the slider shows each card exactly."""
    return tuple(float(getattr(card, name)) for card in SCENARIOS if hasattr(card, name))


def _on_input_change(name: str) -> None:
    value = st.session_state[widget_key(name)]
    try:
        load(current().workload.with_changes(**{name: value}))
    except ValueError as error:  # a widget only offers valid values; keep the lab if not
        st.session_state[_NOTICES_KEY] = (str(error),)


def _on_model_change() -> None:
    chosen = st.session_state[_MODEL_WIDGET_KEY]
    if chosen not in MODEL_CHOICES:  # a browser only sends an option; a forged message may not
        return
    st.session_state[_MODEL_KEY] = chosen
    st.session_state[_NOTICES_KEY] = ()


def _query_param_lists() -> dict[str, list[str]]:
    return {key: st.query_params.get_all(key) for key in st.query_params}


def _write_query_params(state: LabState) -> None:
    wanted = {**state.workload.to_strings(), MODEL_PARAM: state.model}
    if st.query_params.to_dict() != wanted:
        st.query_params.from_dict(wanted)
