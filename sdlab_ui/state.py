"""The lab's state: the one module that owns session state, the shared sidebar and URL ⇄ state sync.

The canonical state is a ``Workload`` and a model name kept in ``st.session_state`` under this
module's own keys. Widgets are views of it: before each widget is drawn its session-state value is
set from the canonical state, and its ``on_change`` callback writes the new value back. Streamlit
drops the state of widgets that are not drawn on a run, so the canonical copy, not the widgets,
is what survives page switches.

The URL mirrors the canonical state on every run, short: only the inputs that differ from their
defaults, each to six significant digits (``?rate_rps=3000&replicas=4&gpu=1``); the default lab
names just its model (``?model=queueing``), so a lab's URL is never bare. A session starts from
the URL through ``Workload.from_strings``, the tolerant parser: anything a person can type yields
a valid lab plus notices, shown until the next change.

Back and Forward: Streamlit pushes a browser history entry whenever the script changes the query
parameters (the sidebar's script folds a run of quick changes, such as a slider's key steps, into
one entry: ``copy_link_button``), and on Back or Forward reruns the script with that entry's
parameters and its run context's ``is_history_navigation`` set. Such a run, to a URL the lab did
not just write, reloads the state from the URL. Every other run keeps the state and writes it
back: a page switch (which Streamlit sends with the query parameters cleared) or a rerun sent
before the browser learnt the URL of the last change. A bare history entry is one Streamlit made
in passing on a page switch, never a lab's (whose URL is never bare), so Back to it keeps the
state too.

A design pinned for comparison ("A", the current lab being "B") rides in the same URL: ``a=1``
marks it and ``a.<input>=<value>`` holds each of its inputs that differs from the default
(``?replicas=12&a=1&a.replicas=10``), so a shared link reopens both designs.

Page parameters: a page may keep its own inputs in the URL under dotted keys, ``prefix.name``
(the Timeline page's ``tl.traffic=spike``). The workload parser never sees them; the URL keeps
them beside the lab's; ``page_params`` gives a page what the URL held when the session started
or on Back/Forward (with ``url_loads`` counting such loads, so a page knows when to reload), and
``set_page_params`` writes the page's current values.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import cast
from urllib.parse import urlencode

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from sdlab_model.assessment import ModelName
from sdlab_model.params import (
    ACCELERATOR_PARAM,
    CHOICE_INPUTS,
    DEFAULT_MODEL,
    MODEL_CHOICES,
    MODEL_SIZES_PARAM,
    NUMERIC_INPUTS,
    RESIDENCY_BY_NAME,
    TOGGLE_INPUTS,
    ChoiceInput,
    NumericInput,
)
from sdlab_model.residency.inputs import ResidencyInputs
from sdlab_model.scenarios import SCENARIOS
from sdlab_model.workload import Workload
from sdlab_ui.widgets import (
    format_value,
    linear_step,
    log_options,
    option_labels,
    slider_format,
)

_WORKLOAD_KEY = "sdlab.workload"
_MODEL_KEY = "sdlab.model"
_NOTICES_KEY = "sdlab.notices"
_URL_KEY = "sdlab.url"  # the query parameters the lab last wrote
_PINNED_KEY = "sdlab.pinned"  # design A, pinned for comparison, or None
_RESIDENCY_KEY = "sdlab.residency"
_PAGE_URL_KEY = "sdlab.page_url"  # dotted page parameters as the URL last loaded them
_URL_LOADS_KEY = "sdlab.url_loads"
PAGE_PARAM_SEPARATOR = "."
PAGE_PARAM_PREFIXES = ("tl",)
"""Pages that keep inputs in the URL: the Timeline page (``tl.``). Other dotted keys are unknown
settings like any other, with a notice."""
_PAGE_PARAM = re.compile(rf"^(?:{'|'.join(PAGE_PARAM_PREFIXES)})\.[a-z0-9_]{{1,40}}$")
_WIDGET_PREFIX = "sdlab.widget."
_MODEL_WIDGET_KEY = _WIDGET_PREFIX + "model"
ADVANCED_TOGGLE_KEY = _WIDGET_PREFIX + "advanced"
MODEL_PARAM = "model"
PIN_PARAM = "a"
"""Marks a pinned design A in the URL; its inputs follow as ``a.<input>``."""
PIN_PREFIX = PIN_PARAM + "."
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
URL_SIGNIFICANT_DIGITS = 6
"""Digits of a number in the URL: every value a slider or card sets prints exactly in six."""
_DEFAULT_STRINGS = Workload().to_strings()
_DEFAULT_RESIDENCY = ResidencyInputs()
_DEFAULT_RESIDENCY_STRINGS = _DEFAULT_RESIDENCY.to_strings()
_ADVANCED_INPUTS = tuple(spec for spec in NUMERIC_INPUTS if spec.advanced)
RESIDENCY_PARAMS: tuple[str, ...] = (*RESIDENCY_BY_NAME, ACCELERATOR_PARAM, MODEL_SIZES_PARAM)
"""URL keys of the residency inputs (the Models and memory page's), read apart from the workload."""


@dataclass(frozen=True)
class LabState:
    """What every page reads: the workload and the chosen latency model."""

    workload: Workload
    model: ModelName
    residency: ResidencyInputs = _DEFAULT_RESIDENCY


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
    """The canonical state, taken from the URL on a session's first run and after Back/Forward."""
    if _WORKLOAD_KEY not in st.session_state or _url_moved():
        values = _query_param_lists()
        workload, model, notices = parse_query_params(values)
        pinned, pin_notices = parse_pinned(values)
        residency, residency_notices = ResidencyInputs.from_strings(values)
        st.session_state[_PAGE_URL_KEY] = {
            key: given[-1] for key, given in values.items() if _is_page_param(key) and given
        }
        st.session_state[_URL_LOADS_KEY] = st.session_state.get(_URL_LOADS_KEY, 0) + 1
        st.session_state[_WORKLOAD_KEY] = workload
        st.session_state[_MODEL_KEY] = model
        st.session_state[_PINNED_KEY] = pinned
        st.session_state[_RESIDENCY_KEY] = residency
        st.session_state[_NOTICES_KEY] = notices + pin_notices + residency_notices
        st.session_state[_URL_KEY] = st.query_params.to_dict()
    return LabState(
        st.session_state[_WORKLOAD_KEY],
        st.session_state[_MODEL_KEY],
        st.session_state.get(_RESIDENCY_KEY, ResidencyInputs()),
    )


def pinned() -> Workload | None:
    """Design A, pinned for comparison with the current lab, or None."""
    current()
    return st.session_state.get(_PINNED_KEY)


def pin() -> None:
    """Pin the current lab as design A; later changes make design B."""
    st.session_state[_PINNED_KEY] = current().workload


def unpin() -> None:
    current()
    st.session_state[_PINNED_KEY] = None


def swap_pinned() -> None:
    """Make design A the lab and pin the current design in its place."""
    lab = current()
    design_a = st.session_state.get(_PINNED_KEY)
    if design_a is not None:
        load(design_a)
        st.session_state[_PINNED_KEY] = lab.workload


def url_params(
    workload: Workload,
    model: str,
    residency: ResidencyInputs | None = None,
    pinned: Workload | None = None,
) -> dict[str, str]:
    """The lab's query parameters: only what differs from the defaults, each in short text.

    ``residency`` (the Models and memory inputs) adds its own keys the same way.

    The model is named where it is not the default, or where nothing else is (the default lab).
    ``Workload.from_strings`` reads them back (a missing key is its default). A number is written
    to ``URL_SIGNIFICANT_DIGITS`` digits, so ``0.29000000000000004`` from a slider reads ``0.29``.
    A pinned design A follows as ``a=1`` and ``a.<input>`` for its inputs off their defaults.
    """
    params = _differences(workload)
    if residency is not None:
        params.update(
            (name, text if name == MODEL_SIZES_PARAM else _url_text(text))
            for name, text in residency.to_strings().items()
            if text != _DEFAULT_RESIDENCY_STRINGS[name]
        )
    if model != DEFAULT_MODEL or not params:
        params[MODEL_PARAM] = model  # the default lab too: a lab's URL is never bare
    if pinned is not None:
        params[PIN_PARAM] = "1"
        params.update({PIN_PREFIX + name: text for name, text in _differences(pinned).items()})
    return params


def _differences(workload: Workload) -> dict[str, str]:
    return {
        name: _url_text(text)
        for name, text in workload.to_strings().items()
        if text != _DEFAULT_STRINGS[name]
    }


def link_query(workload: Workload, model: str, residency: ResidencyInputs | None = None) -> str:
    """The lab's query string as the address bar shows it (``?rate_rps=3000``)."""
    return "?" + urlencode(url_params(workload, model, residency))


def _url_text(exact: str) -> str:
    try:
        number = float(exact)
    except ValueError:  # a choice's name
        return exact
    if number == int(number):
        return str(int(number))
    return f"{number:.{URL_SIGNIFICANT_DIGITS}g}"


def parse_query_params(values: dict[str, list[str]]) -> tuple[Workload, ModelName, tuple[str, ...]]:
    """Workload, model and notices from query parameters; never raises.

    A pinned design's parameters (``a``, ``a.<input>``) are ``parse_pinned``'s and a page's own
    dotted ones (``tl.<input>``) the page's, not read here.
    """
    own = {
        key: value
        for key, value in values.items()
        if not _is_pin_key(key) and not _is_page_param(key)
    }
    workload, notices = Workload.from_strings(own, ignore=(MODEL_PARAM, *RESIDENCY_PARAMS))
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


def parse_pinned(values: dict[str, list[str]]) -> tuple[Workload | None, tuple[str, ...]]:
    """Design A from the ``a.<input>`` query parameters (None without ``a``); never raises.

    Its notices say they are about design A. ``a.<input>`` keys without ``a`` are reported and
    otherwise ignored, so a truncated link never pins a design by accident.
    """
    inputs = {
        str(key)[len(PIN_PREFIX) :]: value
        for key, value in values.items()
        if str(key).startswith(PIN_PREFIX)
    }
    if PIN_PARAM not in values:
        if not inputs:
            return None, ()
        return None, ("Ignored design A's settings: the link has no a=1 to pin a design.",)
    workload, notices = Workload.from_strings(inputs)
    return workload, tuple(f"Pinned design A: {notice}" for notice in notices)


def _is_pin_key(key: object) -> bool:
    return key == PIN_PARAM or str(key).startswith(PIN_PREFIX)


def _is_page_param(key: object) -> bool:
    return bool(_PAGE_PARAM.match(str(key)))


def page_params(prefix: str) -> dict[str, str]:
    """One page's parameters (``prefix.name`` keys, by ``name``) as the URL last loaded them."""
    current()
    start = prefix + PAGE_PARAM_SEPARATOR
    given = st.session_state.get(_PAGE_URL_KEY, {})
    return {key[len(start) :]: value for key, value in given.items() if key.startswith(start)}


def url_loads() -> int:
    """How many times this session has loaded its state from the URL (first run, Back/Forward)."""
    current()
    return int(st.session_state.get(_URL_LOADS_KEY, 0))


def set_page_params(prefix: str, params: dict[str, str]) -> None:
    """Put one page's parameters in the URL beside the lab's (replacing its earlier ones)."""
    start = prefix + PAGE_PARAM_SEPARATOR
    wanted = {key: value for key, value in st.query_params.to_dict().items()}
    wanted = {key: value for key, value in wanted.items() if not key.startswith(start)}
    wanted.update({start + name: value for name, value in params.items()})
    if st.query_params.to_dict() != wanted:
        st.query_params.from_dict(wanted)
    st.session_state[_URL_KEY] = wanted


def load(workload: Workload, model: str | None = None) -> None:
    """Make ``workload`` (and ``model`` if given) the lab's state; clears notices."""
    current()
    st.session_state[_WORKLOAD_KEY] = workload
    if model is not None:
        st.session_state[_MODEL_KEY] = model
    st.session_state[_NOTICES_KEY] = ()


def load_residency(inputs: ResidencyInputs) -> None:
    """Make ``inputs`` the lab's residency inputs; clears notices."""
    current()
    st.session_state[_RESIDENCY_KEY] = inputs
    st.session_state[_NOTICES_KEY] = ()


def set_notices(notices: tuple[str, ...]) -> None:
    """Show these notices until the next change (e.g. what a typed list of sizes dropped)."""
    st.session_state[_NOTICES_KEY] = tuple(notices)


def reset() -> None:
    """Every input back to its default, the default model."""
    load(Workload(), DEFAULT_MODEL)
    st.session_state[_RESIDENCY_KEY] = ResidencyInputs()


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
        _advanced_inputs(state.workload)
        st.button(
            "Reset to defaults", key=_WIDGET_PREFIX + "reset", on_click=reset, width="stretch"
        )
        copy_link_button()
        _pin_button()
    _write_query_params(state)
    return state


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
    if st.session_state.get(_PINNED_KEY) is None:
        st.button(
            "Pin this design as A",
            key=_WIDGET_PREFIX + "pin",
            on_click=pin,
            width="stretch",
            help="Pin it, then change the sidebar: the Lab page shows A and the new design B "
            "side by side, and the link holds both.",
        )
    else:
        st.button("Unpin design A", key=_WIDGET_PREFIX + "unpin", on_click=unpin, width="stretch")
        st.caption("Design A is pinned: the Lab page compares it with this design, B.")


def show_notices() -> None:
    """Warn about anything the URL (or a file) asked for that the lab could not take as given."""
    current()  # a session's first run reads the URL, and its notices, here
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
            format_func=option_labels(spec, options).__getitem__,
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


def _url_moved() -> bool:
    """True on Back or Forward to another lab's URL (see the module docstring)."""
    if not is_history_navigation():  # first: reading the URL costs more, on every call
        return False
    url = st.query_params.to_dict()
    written = st.session_state.get(_URL_KEY, url)
    return bool(url) and url != written


def is_history_navigation() -> bool:
    """Whether this run is the browser's Back or Forward (Streamlit's run context says so)."""
    return bool(getattr(get_script_run_ctx(), "is_history_navigation", False))


def _write_query_params(state: LabState) -> None:
    """Write the URL (Streamlit pushes a history entry when it changes) and remember it."""
    wanted = url_params(
        state.workload, state.model, state.residency, st.session_state.get(_PINNED_KEY)
    )
    # A page's own parameters stay; the page itself rewrites them (``set_page_params``).
    wanted.update({k: v for k, v in st.query_params.to_dict().items() if _is_page_param(k)})
    if st.query_params.to_dict() != wanted:
        st.query_params.from_dict(wanted)
    st.session_state[_URL_KEY] = wanted
