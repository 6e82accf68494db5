"""The LLM page's architecture diagram: ``llm_dot``'s DOT of the estimate, drawn as the Lab's is
(``sdlab_ui.diagram``: the server's SVG, cached, or the browser's layout without Graphviz)."""

from __future__ import annotations

from functools import lru_cache

import streamlit as st

from sdlab_model.llm import LlmEstimate, llm_dot
from sdlab_ui import diagram

_KEY = "llm.diagram"
LEGEND = (
    "A request's way in heavy blue, its numbers per replica inside the dashed box. "
    ":orange-badge[amber, heavy border] what binds · :red-badge[red] unstable, or what binds "
    "when it is · the tokens' box :green-badge[green] when every target is met, "
    ":orange-badge[amber] when one is missed · dashed lines: the KV cache, written by prefill, "
    "read by decode, in the GPUs' memory."
)
"""What the diagram's colours and lines mean (Markdown; the app's own text)."""


@lru_cache(maxsize=64)
def dot_of(result: LlmEstimate) -> str:
    """``llm_dot`` of the estimate, kept: a rerun with the same design draws the same text."""
    return llm_dot(result.workload, result)


def draw(result: LlmEstimate) -> None:
    """The diagram, full width, and its legend below."""
    diagram.draw(dot_of(result), key=_KEY)
    st.caption(LEGEND)
