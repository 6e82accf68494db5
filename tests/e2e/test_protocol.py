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


def _run(socket, request: BackMsg) -> tuple[list[tuple[str, str, str, str]], ForwardMsg]:
    """Send ``request``; every element the run sends as (type, label or text, widget id,
    fragment id), and the run's navigation message (empty for a fragment's run)."""
    request.rerun_script.SetInParent()
    socket.send(request.SerializeToString())
    sent, navigation = [], ForwardMsg()
    while True:
        reply = ForwardMsg()
        reply.ParseFromString(socket.recv(timeout=RUN_TIMEOUT_S))
        kind = reply.WhichOneof("type")
        if kind == "script_finished":
            return sent, navigation
        if kind == "navigation":
            navigation = reply
        if kind == "delta" and reply.delta.WhichOneof("type") == "new_element":
            element = reply.delta.new_element
            element_type = element.WhichOneof("type")
            proto = getattr(element, element_type)
            text = getattr(proto, "label", "") or getattr(proto, "body", "")
            sent.append((element_type, text, getattr(proto, "id", ""), reply.delta.fragment_id))


def test_the_canary_steps_rerun_the_canary_section_alone(server_url):
    """The canary's inputs are a fragment: a new Steps text reruns that section, as a browser
    asks, not the Timeline's charts or the sidebar (a visitor typing into it cost everyone a
    whole page run per keystroke)."""
    host = urlparse(server_url).netloc
    with connect(
        f"ws://{host}/_stcore/stream", subprotocols=["streamlit"], origin=server_url, max_size=None
    ) as socket:
        _, navigation = _run(socket, BackMsg())
        pages = {page.page_name: page.page_script_hash for page in navigation.navigation.app_pages}
        request = BackMsg()
        request.rerun_script.page_script_hash = pages["Timeline"]
        page, _ = _run(socket, request)
        steps = next((e for e in page if e[0] == "text_input" and e[1].startswith("Steps")), None)
        assert steps is not None, f"no Steps field on the Timeline page: {[e[:2] for e in page]}"
        assert steps[3], "the Steps field is not drawn inside a fragment"
        request = BackMsg()
        request.rerun_script.page_script_hash = pages["Timeline"]
        request.rerun_script.fragment_id = steps[3]
        request.rerun_script.widget_states.widgets.add(id=steps[2], string_value="2, 10, 100")
        rerun, _ = _run(socket, request)
    kinds = [kind for kind, *_ in rerun]
    assert "slider" not in kinds and "plotly_chart" in kinds, (
        f"the fragment's rerun sent {kinds}: the sidebar's sliders, or no canary chart"
    )
    assert all(fragment == steps[3] for *_, fragment in rerun), "elements outside the fragment"
    metrics = [text for kind, text, *_ in rerun if kind == "metric"]
    assert any(text.endswith("at 2%") for text in metrics), (
        f"the first of the new steps (2, 10, 100) is not in the rerun's metrics: {metrics}"
    )
