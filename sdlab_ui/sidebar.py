"""The shared sidebar: the lab's inputs as widgets, the latency model, reset, copy link and pin.

Widgets are views of the canonical state (``state``): before each widget is drawn its
session-state value is set from the canonical state, and its ``on_change`` callback writes the
new value back. Streamlit drops the state of widgets that are not drawn on a run, so the
canonical copy, not the widgets, is what survives page switches. The sidebar's script folds a run
of quick changes, such as a slider's key steps, into one browser-history entry
(``copy_link_button``).
"""

from __future__ import annotations

import streamlit as st

from sdlab_model.params import (
    CHOICE_INPUTS,
    MODEL_CHOICES,
    NUMERIC_INPUTS,
    TOGGLE_INPUTS,
    ChoiceInput,
    NumericInput,
)
from sdlab_model.scenarios import SCENARIOS
from sdlab_model.workload import Workload
from sdlab_ui import cache, state
from sdlab_ui.lab import headline
from sdlab_ui.widgets import choice_widget, format_value, numeric_widget, show_value

_WIDGET_PREFIX = "sdlab.widget."
_MODEL_WIDGET_KEY = _WIDGET_PREFIX + "model"
ADVANCED_TOGGLE_KEY = _WIDGET_PREFIX + "advanced"
MODEL_LABELS: dict[str, str] = {
    "queueing": "Queueing (M/D/c + batching)",
    "teaching": "Teaching (the original page's budgets)",
}
_ADVANCED_INPUTS = tuple(spec for spec in NUMERIC_INPUTS if spec.advanced)


def widget_key(name: str) -> str:
    """The session-state key of the sidebar widget for input ``name`` (tests use it too)."""
    return _WIDGET_PREFIX + name


def render(summary: bool = False) -> state.LabState:
    """Draw the shared sidebar from the canonical state and write that state to the URL; with
    ``summary``, the lab's summary line first (the Lab page's), kept in view while sliders move."""
    lab = state.current()
    if summary:  # the page's own judgement, computed once: the page's call is a cache hit
        headline.sticky_summary(cache.lab_view(lab.workload, lab.model, lab.residency).result)
    with st.sidebar:
        st.subheader("Workload")
        for spec in (s for s in NUMERIC_INPUTS if not s.advanced):
            _numeric_widget(spec, lab.workload)
        for toggle in TOGGLE_INPUTS:
            show_value(widget_key(toggle.name), getattr(lab.workload, toggle.name))
            st.toggle(
                toggle.label,
                key=widget_key(toggle.name),
                help=toggle.help,
                on_change=_on_input_change,
                args=(toggle.name,),
            )
        for choice in (c for c in CHOICE_INPUTS if not c.advanced):
            _choice_widget(choice, lab.workload)
        show_value(_MODEL_WIDGET_KEY, lab.model)
        st.radio(
            "Latency model",
            MODEL_CHOICES,
            key=_MODEL_WIDGET_KEY,
            format_func=MODEL_LABELS.__getitem__,
            on_change=_on_model_change,
            help="Queueing: an M/D/c queue with Triton's batching rule, checked against a "
            "simulator. Teaching: the original lab's budget heuristic.",
        )
        _advanced_inputs(lab.workload)
        st.button(
            "Reset to defaults", key=_WIDGET_PREFIX + "reset", on_click=state.reset, width="stretch"
        )
        copy_link_button()
        _pin_button()
    state.write_query_params(lab)
    return lab


def _advanced_inputs(workload: Workload) -> None:
    """The queueing model's advanced inputs, drawn only while their toggle is on.

    Every widget is a message on every rerun of every page, about 0.4 ms of the server's CPU
    each, and an expander sends its content closed too: hidden behind a toggle, the nine sliders
    cost nothing until someone opens them. Hidden, they stay in effect, and a line says which
    differ from their defaults. A session whose link sets one starts with them shown.
    """
    differing = [spec for spec in _ADVANCED_INPUTS if getattr(workload, spec.name) != spec.default]
    if ADVANCED_TOGGLE_KEY not in st.session_state:
        st.session_state[ADVANCED_TOGGLE_KEY] = bool(differing)
    shown = st.toggle(
        "Advanced inputs",
        key=ADVANCED_TOGGLE_KEY,
        help="Batch size, workers and instances per replica, GPU speed-up, batching overhead, "
        "prices and arrival burstiness. They apply whether shown or not.",
    )
    if shown:
        for spec in _ADVANCED_INPUTS:
            _numeric_widget(spec, workload)
    elif differing:
        st.caption(
            "Advanced, in effect: "
            + "; ".join(
                f"{spec.label} {format_value(spec, getattr(workload, spec.name))}"
                for spec in differing
            )
        )


def copy_link_button() -> None:
    """A button that puts the page's address, which holds the whole lab, on the clipboard.

    The address is read when clicked, so it is always the current one. Plain HTML and a script of
    literal text (no data of the lab or of a visitor in it); the page's own document, not an
    iframe, so no permission policy stands between it and the clipboard. Its script also makes a
    run of quick changes (a slider's key steps) one browser-history entry, not one each.
    """
    st.html(
        """
<button class="sdlab-copy-link" type="button" title="Copy a link that reopens this lab">
  Copy link to this lab
</button>
<span class="sdlab-copy-status" role="status" aria-live="polite"></span>
<style>
  .sdlab-copy-link {
    width: 100%; padding: 0.25rem 0.75rem; min-height: 2.5rem; cursor: pointer;
    font: inherit; font-size: 0.875rem; color: inherit; background: transparent;
    border: 1px solid rgba(128, 128, 128, 0.4); border-radius: 0.5rem;
  }
  .sdlab-copy-link:hover { border-color: currentColor; }
  .sdlab-copy-status { display: block; min-height: 1.2em; font-size: 0.8rem; opacity: 0.8; }
  @media (max-width: 46rem) {
    [data-testid="stElementContainer"]:has([data-testid="stDataFrame"])::before {
      content: "Swipe a table sideways for more columns."; font-size: 0.8rem; opacity: 0.7; }
  }
</style>
<script>
(() => {
  const root = document.currentScript.parentNode;
  const button = root.querySelector(".sdlab-copy-link");
  const status = root.querySelector(".sdlab-copy-status");
  function fallback(text) {
    const area = document.createElement("textarea");
    area.value = text;
    document.body.appendChild(area);
    area.select();
    const copied = document.execCommand("copy");
    area.remove();
    return copied;
  }
  // One Back entry per settled change: a URL pushed after an input that came within 2.5 s of
  // the last entry (a slider's key steps, each its own run) replaces that entry.
  if (!history.sdlabSettles) {
    const push = history.pushState.bind(history);
    let pushedAt = 0, inputAt = 0;
    for (const type of ["keydown", "pointerdown"]) {
      addEventListener(type, () => { inputAt = Date.now(); }, true);
    }
    addEventListener("popstate", () => { pushedAt = 0; history.sdlabSettledAt = 0; });
    history.pushState = (data, unused, url) => {
      const samePage = new URL(url, location.href).pathname === location.pathname;
      if (samePage && pushedAt && inputAt - pushedAt < 2500) {
        history.replaceState(data, unused, url);
      } else {
        push(data, unused, url);
      }
      pushedAt = Date.now();
      history.sdlabSettledAt = pushedAt + 2500;  // when the next change gets its own entry
    };
    history.sdlabSettles = true;
  }
  button.addEventListener("click", async () => {
    const link = window.location.href;
    let copied = false;
    try {
      await navigator.clipboard.writeText(link);
      copied = true;
    } catch (error) {
      copied = fallback(link);
    }
    status.textContent = copied ? "Link copied." : "Copy the address bar: it holds this lab.";
    setTimeout(() => { status.textContent = ""; }, 4000);
  });
})();
</script>
""",
        unsafe_allow_javascript=True,
    )


def _pin_button() -> None:
    if state.pinned() is None:
        st.button(
            "Pin this design as A",
            key=_WIDGET_PREFIX + "pin",
            on_click=state.pin,
            width="stretch",
            help="Pin it, then change the sidebar: the Lab page shows A and the new design B "
            "side by side, and the link holds both.",
        )
    else:
        st.button(
            "Unpin design A", key=_WIDGET_PREFIX + "unpin", on_click=state.unpin, width="stretch"
        )
        st.caption("Design A is pinned: the Lab page compares it with this design, B.")


def _choice_widget(spec: ChoiceInput, workload: Workload) -> None:
    value = getattr(workload, spec.name)
    choice_widget(spec, widget_key(spec.name), value, _on_input_change, (spec.name,))


def _numeric_widget(spec: NumericInput, workload: Workload) -> None:
    value = getattr(workload, spec.name)
    numeric_widget(
        spec,
        widget_key(spec.name),
        value,
        _on_input_change,
        (spec.name,),
        extra_values=_card_values(spec.name),
    )


def _card_values(name: str) -> tuple[float, ...]:
    """The scenario cards' values of one input, so the slider shows each card exactly."""
    return tuple(float(getattr(card, name)) for card in SCENARIOS if hasattr(card, name))


def _on_input_change(name: str) -> None:
    value = st.session_state[widget_key(name)]
    try:
        state.load(state.current().workload.with_changes(**{name: value}))
    except ValueError as error:  # a widget only offers valid values; keep the lab if not
        state.set_notices((str(error),))


def _on_model_change() -> None:
    chosen = st.session_state[_MODEL_WIDGET_KEY]
    if chosen not in MODEL_CHOICES:  # a browser only sends an option; a forged message may not
        return
    state.set_model(chosen)
