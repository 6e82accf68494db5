"""The served app over Streamlit's own websocket protocol (no browser): what a rerun sends first."""

from __future__ import annotations

from urllib.parse import urlparse

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.sync.client import connect

from sdlab_ui.diagram import DIAGRAM_OPENING
from sdlab_ui.lab.headline import SUMMARY_CLASS

RUN_TIMEOUT_S = 120


def _elements_of_first_run(url: str, query: str = "") -> list[tuple[str, str, int]]:
    """(element type, label, root container) of every element the Lab's first run sends, in the
    order sent (a Markdown element's label is its text; the root container is 0 for the page,
    1 for the sidebar)."""
    host = urlparse(url).netloc
    with connect(
        f"ws://{host}/_stcore/stream", subprotocols=["streamlit"], origin=url, max_size=None
    ) as socket:
        request = BackMsg()
        request.rerun_script.query_string = query
        socket.send(request.SerializeToString())
        sent: list[tuple[str, str, int]] = []
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
                label = getattr(proto, "label", getattr(proto, "body", ""))
                sent.append((element_type, label, reply.metadata.delta_path[0]))


def test_the_summary_line_is_the_sidebars_first_element_and_the_diagram_is_drawn(server_url):
    """The Lab's summary line (its p99 against the target) opens the sidebar, and the same run
    draws the server's diagram (a rate no other test uses: no diagram drawn before)."""
    sent = _elements_of_first_run(server_url, "rate_rps=1357.9")
    sidebar = [(kind, text) for kind, text, root in sent if root == 1]
    assert len([kind for kind, _ in sidebar if kind == "slider"]) >= 5, (
        f"the sidebar's sliders were not drawn: {sidebar}"
    )
    assert sidebar[0][0] == "markdown" and SUMMARY_CLASS in sidebar[0][1], (
        f"the sidebar opens with {sidebar[0]}, not the summary line"
    )
    diagrams = [text for kind, text, root in sent if root == 0 and text.startswith(DIAGRAM_OPENING)]
    assert len(diagrams) == 1 and "1.36k req/s" in diagrams[0], "no diagram of this lab was drawn"


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
