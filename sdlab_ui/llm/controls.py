"""The LLM page's widgets; its values are kept under ``llm.*`` in the session and in the URL
(``sdlab_ui.page_inputs``), as ``llm.name=value`` where they differ from their defaults."""

from __future__ import annotations

import streamlit as st

from sdlab_model.page_params import LLM_BY_NAME, LLM_CHOICE_BY_NAME
from sdlab_model.params import ChoiceInput
from sdlab_ui import state
from sdlab_ui.llm.fields import default_values, parse_params, url_values, views_of
from sdlab_ui.page_inputs import PageInputs
from sdlab_ui.widgets import choice_widget, numeric_widget

PREFIX = "llm"
INPUTS = PageInputs(PREFIX, parse_params)
WIDGET = INPUTS.widget
"""Widget keys: this prefix and the input's name."""
current_values = INPUTS.current
show_notices = INPUTS.show_notices
_set = INPUTS.set_from_widget


def load(changes: dict) -> None:
    """Make the defaults with ``changes`` the page's inputs (a scenario card), keeping its views;
    clears notices."""
    INPUTS.replace({**default_values(), **views_of(current_values()), **changes})


def update(changes: dict) -> None:
    """Apply ``changes`` to the page's values (the cheapest deployment's); clears notices."""
    INPUTS.replace({**current_values(), **changes})


def view(spec: ChoiceInput) -> str:
    """Draw a view's choice (the heatmaps' axis), kept with the inputs and in the URL."""
    values = current_values()
    chosen = choice_widget(spec, WIDGET + spec.name, values[spec.name], _set, (spec.name,))
    state.set_page_params(PREFIX, url_values(current_values()))
    return chosen


def _draw(name: str, values: dict) -> None:
    if name in LLM_CHOICE_BY_NAME:
        choice_widget(LLM_CHOICE_BY_NAME[name], WIDGET + name, values[name], _set, (name,))
    else:
        numeric_widget(LLM_BY_NAME[name], WIDGET + name, values[name], _set, (name,))


_ROWS = (
    ("model_id", "gpu_id", "precision", "tensor_parallel", "replicas", "rate_rps", "arrival_cv"),
    (
        "prompt_tokens_mean",
        "prompt_tokens_cv",
        "output_tokens_mean",
        "output_tokens_cv",
        "max_running_sequences",
        "max_batched_tokens",
    ),
    ("prefix_cache_hit_share", "ttft_p99_target_ms", "tpot_p99_target_ms", "e2e_p99_target_ms"),
)
"""The everyday inputs in rows: the deployment and its traffic, lengths and engine, the prefix
cache's hits and the targets."""
ADVANCED = tuple(spec.name for spec in LLM_BY_NAME.values() if spec.advanced)
"""The engine's memory knobs, less used: in an expander, in effect whether open or not."""


def _row(names: tuple[str, ...], values: dict) -> None:
    for column, name in zip(st.columns(len(names)), names, strict=True):
        with column:
            _draw(name, values)


def draw() -> dict:
    """Draw the inputs; returns their values, which are in the URL from here on."""
    values = current_values()
    for names in _ROWS:
        _row(names, values)
    # Opened when a link or card sets one, so a value in effect is never hidden.
    differing = any(values[name] != LLM_BY_NAME[name].default for name in ADVANCED)
    with st.expander("Advanced: the engine's memory", expanded=differing):
        _row(ADVANCED, values)
    values = current_values()
    state.set_page_params(PREFIX, url_values(values))
    return values
