"""The lab's state: the one module that owns session state and URL ⇄ state sync.

The canonical state is a ``Workload``, a model name and the residency inputs, kept in
``st.session_state`` under this module's own keys; the sidebar's widgets (``sidebar``) are views
of it. The URL (``url``) mirrors it on every run. A session starts from the URL, with notices for
anything it could not take as given, shown until the next change.

Back and Forward: Streamlit pushes a browser history entry whenever the script changes the query
parameters (the sidebar's script folds a run of quick changes, such as a slider's key steps, into
one entry: ``sidebar.copy_link_button``), and on Back or Forward reruns the script with that
entry's parameters and its run context's ``is_history_navigation`` set. Such a run, to a URL the
lab did not just write, reloads the state from the URL. Every other run keeps the state and writes
it back: a page switch (which Streamlit sends with the query parameters cleared) or a rerun sent
before the browser learnt the URL of the last change. A bare history entry is one Streamlit made
in passing on a page switch, never a lab's (whose URL is never bare), so Back to it keeps the
state too.

A page's own URL parameters (``url``'s dotted keys): ``page_params`` gives a page what the URL
held when the session started or on Back/Forward (with ``url_loads`` counting such loads, so a
page knows when to reload), and ``set_page_params`` writes the page's current values.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from sdlab_model.assessment import ModelName
from sdlab_model.params import DEFAULT_MODEL
from sdlab_model.residency.inputs import ResidencyInputs
from sdlab_model.workload import Workload
from sdlab_ui.url import (
    PAGE_PARAM_SEPARATOR,
    is_page_param,
    parse_pinned,
    parse_query_params,
    url_params,
)

_WORKLOAD_KEY = "sdlab.workload"
_MODEL_KEY = "sdlab.model"
_NOTICES_KEY = "sdlab.notices"
_URL_KEY = "sdlab.url"  # the query parameters the lab last wrote
_PINNED_KEY = "sdlab.pinned"  # design A, pinned for comparison, or None
_RESIDENCY_KEY = "sdlab.residency"
_PAGE_URL_KEY = "sdlab.page_url"  # dotted page parameters as the URL last loaded them
_URL_LOADS_KEY = "sdlab.url_loads"
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
_DEFAULT_RESIDENCY = ResidencyInputs()


@dataclass(frozen=True)
class LabState:
    """What every page reads: the workload and the chosen latency model."""

    workload: Workload
    model: ModelName
    residency: ResidencyInputs = _DEFAULT_RESIDENCY


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
            key: given[-1] for key, given in values.items() if is_page_param(key) and given
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
        st.session_state.get(_RESIDENCY_KEY, _DEFAULT_RESIDENCY),
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


def set_model(model: str) -> None:
    """Make ``model`` the lab's latency model; clears notices."""
    st.session_state[_MODEL_KEY] = model
    st.session_state[_NOTICES_KEY] = ()


def set_notices(notices: tuple[str, ...]) -> None:
    """Show these notices until the next change (e.g. what a typed list of sizes dropped)."""
    st.session_state[_NOTICES_KEY] = tuple(notices)


def reset() -> None:
    """Every input back to its default, the default model."""
    load(Workload(), DEFAULT_MODEL)
    st.session_state[_RESIDENCY_KEY] = ResidencyInputs()


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


def write_query_params(state: LabState) -> None:
    """Write the URL (Streamlit pushes a history entry when it changes) and remember it."""
    wanted = url_params(
        state.workload, state.model, state.residency, st.session_state.get(_PINNED_KEY)
    )
    # A page's own parameters stay; the page itself rewrites them (``set_page_params``).
    wanted.update({k: v for k, v in st.query_params.to_dict().items() if is_page_param(k)})
    if st.query_params.to_dict() != wanted:
        st.query_params.from_dict(wanted)
    st.session_state[_URL_KEY] = wanted
