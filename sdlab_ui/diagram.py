"""The architecture diagram: its DOT with the numbers on the nodes, drawn on the server as SVG by
Graphviz (cached, checked, sized to its column) or, without Graphviz, by the browser.

The SVG is shown as Markdown's raw HTML: it is Graphviz's drawing of the model's own text, refused
if it holds a script, an event handler or a foreign object (``tests/test_security.py``'s
``TRUSTED_HTML`` lists it, with why it is safe).
"""

from __future__ import annotations

import math
import re

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from sdlab_model.architecture import FLOW_LEGEND, legend_entries, to_dot
from sdlab_model.assessment import Assessment
from sdlab_model.design import packing_note
from sdlab_ui import cache, report
from sdlab_ui.cache import shared_cache
from sdlab_ui.server import budget
from sdlab_ui.text import rate_text, replicas_text

_DIAGRAM_KEY = "sdlab.diagram"
DIAGRAM_CLASS = "sdlab-diagram"
"""The class of the element holding the server-drawn diagram."""
DIAGRAM_OPENING = f'<div class="{DIAGRAM_CLASS}" style="overflow-x: auto">'
"""How the Markdown of a server-drawn diagram starts (tests find it by this; the Lab's
stylesheet names the class too). It scrolls sideways in a column narrower than the drawing, on
pages without the Lab's stylesheet too."""
# Streamlit's badge colours for the node states (the diagram's own fills are pastel versions).
_STATE_BADGE = {
    "ok": "green",
    "warning": "orange",
    "needed": "blue",
    "inactive": "gray",
    "overloaded": "red",
}
_POLICY_SHORT = {
    "round_robin": "round robin",
    "least_request": "least request",
    "random": "random",
    "central_queue": "one central queue",
}


def diagram_notes(result: Assessment) -> dict[str, str]:
    """The numbers drawn on the diagram's nodes: traffic, models, batch, replicas and load."""
    workload = result.workload
    notes = {
        "client": rate_text(workload.rate_rps),
        "gateway": f"{workload.models_hosted:,} model"
        + ("s" if workload.models_hosted != 1 else "")
        + f" · {_POLICY_SHORT[workload.lb_policy]}",
        "replicas": f"{replicas_text(workload.replicas)} · {load_text(result)}",
    }
    if workload.dynamic_batching and workload.batch_window_ms > 0:
        batch = (
            f"×{result.mean_batch_size:.1f} capacity"
            if result.model == "teaching"
            else f"batch ≈ {result.mean_batch_size:.1f}"
        )
        notes["batcher"] = f"{batch} · {workload.batch_window_ms:g} ms"
    if result.packing is not None:  # queueing mode, a GPU fleet that needs packing
        notes["gpu_pool"] = packing_note(result.packing, workload.models_hosted)
    return notes


def diagram_dot(result: Assessment) -> str:
    """The architecture diagram as DOT, with the numbers on its nodes."""
    return to_dot(result.node_states, result.flow_states, result.stage.path, diagram_notes(result))


def load_text(result: Assessment) -> str:
    """The load against capacity, and with batching how busy the slots are at the batches that
    form (the two differ where batches are small: capacity counts full ones)."""
    utilization = result.utilization
    if not math.isfinite(utilization) or utilization >= 10:
        return "far over capacity"
    text = f"load {utilization:.0%}"
    if result.is_stable and result.mean_batch_size > 1.0 and result.model == "queueing":
        text += f", slots {result.slot_utilization:.0%} busy"
    return text


def architecture(view: cache.LabView) -> None:
    """The Lab's diagram, full width, with numbers on its nodes; its legend below in small print
    (in the server's SVG's element: one message to the browser fewer on every rerun)."""
    result = view.result
    inputs = (result.workload, result.model)
    last_inputs, dot = st.session_state.get(_DIAGRAM_KEY, (None, None))
    if inputs != last_inputs:
        dot = diagram_dot(result)
        st.session_state[_DIAGRAM_KEY] = (inputs, dot)
    draw(dot, legend=DIAGRAM_LEGEND, key=_DIAGRAM_KEY + ".slot")


def draw(dot: str, *, legend: str = "", key: str) -> None:
    """Draw the DOT ``dot`` here on the page, any page's diagram, with the Markdown ``legend``
    under it; ``key`` keeps this diagram's place in the session between reruns.

    Drawn on the server as SVG where Graphviz is installed (``diagram_svg``). Otherwise the
    browser draws the DOT, and a changed diagram is drawn afresh, not updated in place: updating
    in place makes d3-graphviz tween every edge, sampling each path at every pixel of its length
    (``getPointAtLength``), measured at ~190 ms of the renderer's CPU per Lab rerun. A chart's
    identity is its position on the page, so a changed diagram moves one slot down or up (an
    empty slot takes the other place) and mounts as a new chart.
    """
    if not draw_server_diagram(dot, legend=legend):  # no Graphviz: the browser lays it out
        last_dot, slot = st.session_state.get(key, (None, 0))
        if last_dot is not None and last_dot != dot:
            slot = 1 - slot
        st.session_state[key] = (dot, slot)
        if slot:
            st.empty()
        st.graphviz_chart(dot, width="stretch")
        if legend:
            st.caption(legend)


def _diagram_legend() -> str:
    states = " ".join(
        f":{_STATE_BADGE[state]}-badge[{state}] {meaning}" for state, meaning in legend_entries()
    )
    return f"Boxes: {states}  \nArrows: " + " · ".join(FLOW_LEGEND)


DIAGRAM_LEGEND = _diagram_legend()
"""What a box's colour and an arrow's style mean (Markdown; the model's own text)."""


def draw_server_diagram(
    dot: str, where: DeltaGenerator | None = None, svg: str | None = None, legend: str = ""
) -> bool:
    """Draw ``dot`` as the server's SVG (in ``where``, or the page; ``svg`` if already drawn),
    with the Markdown ``legend`` below it in small print (the Lab's stylesheet); False without
    Graphviz."""
    svg = svg or diagram_svg(dot)
    if svg is None:
        return False
    html = f"{DIAGRAM_OPENING}{svg}</div>"  # Graphviz's SVG of the model's own text
    if legend:  # a paragraph of its own after the one-line HTML block: Markdown, not HTML
        html += f"\n\n{legend}"
    (st if where is None else where).markdown(html, unsafe_allow_html=True)
    return True


def draw_diagram(where: DeltaGenerator, dot: str) -> None:
    """Draw ``dot`` in ``where``: the server's SVG, or the browser's layout without Graphviz."""
    if not draw_server_diagram(dot, where):
        where.graphviz_chart(dot, width="stretch")


_SVG_SIZE = re.compile(r'<svg width="([0-9.]+)pt" height="[^"]*"')
_EVENT_ATTRIBUTE = re.compile(rb"on[a-z]+\s*=")
_BEFORE_ATTRIBUTE = frozenset(b" \t\n\r\x0c/\"'")
"""What a browser reads as the end of what came before an attribute's name: white space, the
``/`` of ``<svg/onload=…>``, or the closing quote of the previous value (``"x"onclick=…``)."""


def _is_unsafe_svg(svg: str) -> bool:
    """Whether ``svg`` holds a script, a foreign object, a ``javascript:`` URL or an event
    handler (``on…=`` where an attribute can start, ``_BEFORE_ATTRIBUTE``), in any ASCII letter
    case (HTML's and SVG's names are case-insensitive in ASCII letters only).

    On the UTF-8 bytes: a diagram's text has a few non-ASCII characters (``·``, ``≈``), and
    lower-casing and searching such a ``str`` of ~13 kB cost ~0.2 ms per diagram, its bytes a
    few microseconds. Plain substring tests, and a pattern that starts with a literal (one
    case-insensitive pattern of the four alternatives cost ~0.45 ms).
    """
    lowered = svg.encode("utf-8", "surrogatepass").lower()
    if b"<script" in lowered or b"<foreignobject" in lowered or b"javascript:" in lowered:
        return True
    return any(
        match.start() > 0 and lowered[match.start() - 1] in _BEFORE_ATTRIBUTE
        for match in _EVENT_ATTRIBUTE.finditer(lowered)
    )


@shared_cache(maxsize=256)
def diagram_svg(dot: str) -> str | None:
    """The architecture diagram drawn on the server by Graphviz's ``dot``, sized to its column;
    None where ``dot`` is missing or fails (the page then lets the browser draw the DOT). It is
    shown as Markdown's raw HTML: ``st.html`` sanitizes with DOMPurify's HTML profile, which
    drops SVG.

    Drawn here, a diagram whose numbers changed is an SVG swapped into the page. Drawn in the
    browser (``st.graphviz_chart``), every change is a fresh layout in d3-graphviz's WebAssembly
    Graphviz: measured at ~110 ms of the renderer's CPU per Lab rerun, the largest client cost.
    ``dot`` is a process of its own, kept running (``server/spawn.py``): its layout uses the
    server's other core, not the GIL.
    """
    with budget.slot(budget.WORK):
        svg = report.architecture_svg(dot)
    if svg is None or _is_unsafe_svg(svg):  # Graphviz writes none of these; refuse if it did
        return None
    # The column's width, in proportion (viewBox), but never under the drawing's own size: its
    # smallest text (11 units) stays 11 px, and a narrower column (a phone) scrolls it sideways.
    svg = _SVG_SIZE.sub(
        lambda size: f'<svg width="100%" style="height: auto; min-width: {size.group(1)}px"',
        svg,
        count=1,
    )
    # One line, and no "$": Markdown passes a one-line HTML block through untouched, and a pair
    # of dollar signs elsewhere in a page's Markdown would start a formula. (Markdown's line
    # endings are \n, \r and \r\n; a space between tags or in a text is white space alike.)
    one_line = svg.replace("\r\n", " ").replace("\r", " ").replace("\n", " ")
    return one_line.replace("$", "&#36;")
