"""The served app over Streamlit's own websocket protocol (no browser): what a rerun sends first."""

from __future__ import annotations

from urllib.parse import urlparse

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.sync.client import connect

from sdlab_ui.diagram import DIAGRAM_OPENING

RUN_TIMEOUT_S = 120


def _elements_of_first_run(url: str, query: str = "") -> list[tuple[str, str]]:
    """(element type, label) of every element the Lab's first run sends, in the order sent (a
    Markdown element's label is its text)."""
    host = urlparse(url).netloc
    with connect(
        f"ws://{host}/_stcore/stream", subprotocols=["streamlit"], origin=url, max_size=None
    ) as socket:
        request = BackMsg()
        request.rerun_script.query_string = query
        socket.send(request.SerializeToString())
        sent: list[tuple[str, str]] = []
        while True:
            reply = ForwardMsg()
            reply.ParseFromString(socket.recv(timeout=RUN_TIMEOUT_S))
            kind = reply.WhichOneof("type")
            if kind == "script_finished":
                return sent
            if kind == "delta" and reply.delta.WhichOneof("type") == "new_element":
                element = reply.delta.new_element
                element_type = element.WhichOneof("type")
                proto = getattr(element, element_type)
                sent.append((element_type, getattr(proto, "label", getattr(proto, "body", ""))))


def test_the_headline_p99_is_sent_before_the_sidebar(server_url):
    """The page runs before the shared sidebar, so a rerun's new p99 reaches the visitor before
    the sidebar's widgets are redrawn; the sidebar is still drawn in the same run."""
    sent = _elements_of_first_run(server_url)
    kinds = [kind for kind, _ in sent]
    headline = next((i for i, (kind, text) in enumerate(sent) if 'data-label="p99"' in text), None)
    assert headline is not None, f"no headline p99 metric among {kinds}"
    sliders = [i for i, kind in enumerate(kinds) if kind == "slider"]
    assert len(sliders) >= 5, f"the sidebar's sliders were not drawn: {kinds}"
    assert headline < sliders[0], (
        f"the headline p99 is element {headline}, after the first sidebar slider ({sliders[0]})"
    )


def test_the_diagram_is_sent_after_the_sidebar_so_dot_does_not_hold_it_up(server_url):
    """Graphviz draws the Lab's diagram in a worker thread while the rest of the page and the
    sidebar are sent; the diagram follows, into the place kept for it. (A rate no other test
    uses: a diagram drawn before is drawn at once.)"""
    sent = _elements_of_first_run(server_url, "rate_rps=1357.9")
    kinds = [kind for kind, _ in sent]
    diagrams = (i for i, (_, text) in enumerate(sent) if text.startswith(DIAGRAM_OPENING))
    diagram = next(diagrams, None)
    assert diagram is not None, f"no server-drawn diagram among {kinds}"
    sliders = [i for i, kind in enumerate(kinds) if kind == "slider"]
    assert sliders and diagram > sliders[-1], (
        f"the diagram is element {diagram}, before the sidebar's last slider ({sliders[-1:]})"
    )
