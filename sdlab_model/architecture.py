"""The serving architecture as a graph: nine nodes in five columns, nine flows, and its DOT source.

The layout is the original lab's (docs/teaching_model.md, "The diagram"): clients on the left,
then the gateway, the model servers, the registry and GPU pool, and the asynchronous side
(metrics, shadow traffic) on the right. Which nodes and flows are live comes from the design rules
(``sdlab_model.design``); this module only knows the shape and how to draw a state.

The DOT source is built with the ``graphviz`` Python package, which writes DOT text without
needing the Graphviz binary; the app hands the text to its own renderer.
"""

from __future__ import annotations

import html
import itertools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

import graphviz

NodeState = str
FlowState = str

NODE_STATES: tuple[NodeState, ...] = ("ok", "warning", "needed", "inactive", "overloaded")
FLOW_STATES: tuple[FlowState, ...] = ("active", "inactive", "warning")


@dataclass(frozen=True)
class Column:
    """One column of the diagram, left to right."""

    id: str
    label: str


@dataclass(frozen=True)
class Node:
    """One component of the serving system."""

    id: str
    label: str
    description: str
    column: str


COLUMNS: tuple[Column, ...] = (
    Column("clients", "Clients"),
    Column("gateway", "Gateway"),
    Column("model_servers", "Model servers"),
    Column("registry_gpu", "Registry + GPU"),
    Column("async", "Async"),
)

NODES: tuple[Node, ...] = (
    Node(
        "client",
        "Client",
        "Sends a feature vector and waits for the prediction under a deadline.",
        "clients",
    ),
    Node(
        "gateway",
        "Inference gateway",
        "Routes each request to the right model and version; enforces timeouts.",
        "gateway",
    ),
    Node(
        "traffic_split",
        "Traffic split",
        "Sends a slice of traffic to a candidate version for canary and A/B tests.",
        "gateway",
    ),
    Node(
        "batcher",
        "Dynamic batcher",
        "Holds requests for up to the batch window so one call serves several.",
        "model_servers",
    ),
    Node(
        "replicas",
        "Server replicas",
        "Identical model-server instances the gateway balances load across.",
        "model_servers",
    ),
    Node(
        "registry",
        "Model registry",
        "Keeps versioned model artifacts and which version each name serves.",
        "registry_gpu",
    ),
    Node(
        "gpu_pool",
        "GPU pool",
        "Shared accelerators the replicas run their batches on.",
        "registry_gpu",
    ),
    Node(
        "metrics",
        "Metrics + latency",
        "Records per-model latency and quality away from the request path.",
        "async",
    ),
    Node(
        "shadow",
        "Shadow traffic",
        "Copies live requests to a candidate model and discards its answers.",
        "async",
    ),
)

NODE_BY_ID: dict[str, Node] = {node.id: node for node in NODES}
NODE_IDS: tuple[str, ...] = tuple(NODE_BY_ID)

# (source, destination) in the original page's order; gateway -> replicas is the direct,
# unbatched route.
FLOWS: tuple[tuple[str, str], ...] = (
    ("client", "gateway"),
    ("gateway", "traffic_split"),
    ("gateway", "batcher"),
    ("gateway", "replicas"),
    ("batcher", "replicas"),
    ("replicas", "gpu_pool"),
    ("replicas", "registry"),
    ("traffic_split", "shadow"),
    ("replicas", "metrics"),
)

# Colours are data: the legend and the nodes read the same table. Fill, border, font.
NODE_STYLE: dict[NodeState, dict[str, str]] = {
    "ok": {"fillcolor": "#d8f0dc", "color": "#2e7d32", "fontcolor": "#1b3a1e"},
    "warning": {"fillcolor": "#ffe9b3", "color": "#b7791f", "fontcolor": "#4a3410"},
    "needed": {"fillcolor": "#d6e6ff", "color": "#2b6cb0", "fontcolor": "#17324d"},
    "inactive": {"fillcolor": "#f2f2f2", "color": "#c4c4c4", "fontcolor": "#a0a0a0"},
    "overloaded": {"fillcolor": "#ffc9c9", "color": "#c53030", "fontcolor": "#5c1515"},
}
# Lines and column labels are mid-tone so they read on a light and on a dark page alike (the SVG's
# background is transparent); node fills carry their own dark text.
FLOW_STYLE: dict[FlowState, dict[str, str]] = {
    "active": {"color": "#64748b", "style": "solid", "penwidth": "1.5"},
    "inactive": {"color": "#a0aec0", "style": "dashed", "penwidth": "1"},
    "warning": {"color": "#d69e2e", "style": "solid", "penwidth": "2"},
}
PATH_STYLE: dict[str, str] = {"penwidth": "3.5", "color": "#2563eb"}
COLUMN_STYLE: dict[str, str] = {"color": "#94a3b8", "fontcolor": "#64748b"}
# Point sizes. The page scales the SVG to the main column's width (~950 px at 1440 x 900), about
# 1.3 px per point for this graph: the smallest text, 11 pt, draws at ~14 px.
TITLE_POINTS = 15
DETAIL_POINTS = 11
COLUMN_POINTS = 12
STATE_MEANING: dict[NodeState, str] = {
    "ok": "in use, healthy",
    "warning": "in use, under strain",
    "needed": "the workload calls for it",
    "inactive": "not needed yet",
    "overloaded": "over its safe load",
}

FLOW_LEGEND: tuple[str, ...] = (
    "dashed grey arrow: not in use",
    "amber arrow: under strain",
    "heavy blue line and outline: the recommended path",
)


def path_text(path: Iterable[str]) -> str:
    """A request path of node ids as a person reads it: "Inference gateway → Server replicas"."""
    return " → ".join(NODE_BY_ID[node_id].label for node_id in path)


def _html(text: str) -> str:
    """Text made safe inside a DOT HTML-like label (``<...>``), where only entities are special."""
    return html.escape(str(text), quote=True)


def _plain(text: str) -> str:
    """Text made safe as a plain DOT string: backslashes literal, never read as an HTML label."""
    return graphviz.nohtml(graphviz.escape(str(text)))


def _node_label(node: Node, state: NodeState, note: str = "") -> str:
    detail = _html(state) + (f" · {_html(note)}" if note else "")
    return f'<<b>{_html(node.label)}</b><br/><font point-size="{DETAIL_POINTS}">{detail}</font>>'


def legend_entries() -> tuple[tuple[NodeState, str], ...]:
    """(node state, what it means) in drawing order, for a legend beside the diagram."""
    return tuple((state, STATE_MEANING[state]) for state in NODE_STYLE)


def styled_graph(name: str, *, rankdir: str, nodesep: str, ranksep: str) -> graphviz.Digraph:
    """An empty graph in sdlab's diagram style (the Lab's and the LLM page's alike): a
    transparent background, rounded filled boxes with titles at ``TITLE_POINTS``, Helvetica."""
    graph = graphviz.Digraph(name)
    graph.attr(
        rankdir=rankdir,
        newrank="true",
        nodesep=nodesep,
        ranksep=ranksep,
        fontname="Helvetica",
        bgcolor="transparent",
    )
    graph.attr(
        "node",
        shape="box",
        style="rounded,filled",
        fontname="Helvetica",
        fontsize=str(TITLE_POINTS),
        margin="0.12,0.05",
    )
    graph.attr("edge", arrowsize="0.8")
    return graph


def to_dot(
    node_states: Mapping[str, NodeState],
    flow_states: Mapping[tuple[str, str], FlowState],
    path: Iterable[str] = (),
    notes: Mapping[str, str] | None = None,
) -> str:
    """DOT source of the architecture: left to right, one cluster per column, styled by state.

    Nodes are filled by state (``NODE_STYLE``), flows coloured and dashed by state
    (``FLOW_STYLE``). The recommended request path is drawn heavy: its nodes get a thick border
    and every live flow between two consecutive path nodes a thick line. ``notes`` adds a short
    line of numbers to a node ("2 replicas · 45% busy"). The legend is the page's to draw
    (``legend_entries``, ``FLOW_LEGEND``): as text beside the graph it reads at the page's size,
    where a legend inside the graph took a third of it and shrank everything else.
    Unknown states raise ``ValueError`` rather than draw silently.
    """
    notes = notes or {}
    template = _dot_template(
        NODES,  # part of the key, so a changed node table (tests change it) is never stale
        tuple(node_states.get(node_id) for node_id in NODE_IDS),
        tuple(flow_states.get(flow) for flow in FLOWS),
        tuple(path),
        frozenset(node_id for node_id, note in notes.items() if note),
    )
    return _NOTE_SLOT.sub(lambda slot: _html(notes[slot.group(1)]), template)


# The diagram's shape changes with the states and the path, a few dozen combinations; its notes
# change with every number. So the DOT is built once per shape with a slot where each note goes,
# and a rerun only fills the slots (building it through graphviz cost ~1 ms a fresh Lab rerun).
# A slot is letters and punctuation that neither HTML escaping nor graphviz quoting changes.
_NOTE_SLOT = re.compile(r"@@note:([a-z_]+)@@")


@lru_cache(maxsize=64)
def _dot_template(
    nodes: tuple[Node, ...],
    node_states: tuple[str | None, ...],
    flow_states: tuple[str | None, ...],
    path: tuple[str, ...],
    noted: frozenset[str],
) -> str:
    """``to_dot``'s source with ``@@note:<node id>@@`` where each note in ``noted`` goes."""
    return _build_dot(
        dict(zip(NODE_IDS, node_states, strict=True)),
        dict(zip(FLOWS, flow_states, strict=True)),
        path,
        {node_id: f"@@note:{node_id}@@" for node_id in noted},
    )


def _build_dot(
    node_states: Mapping[str, NodeState],
    flow_states: Mapping[tuple[str, str], FlowState],
    path: Iterable[str],
    notes: Mapping[str, str],
) -> str:
    for node_id in NODE_IDS:
        if node_states.get(node_id) not in NODE_STYLE:
            raise ValueError(
                f"node {node_id!r} has state {node_states.get(node_id)!r}, "
                f"expected one of {tuple(NODE_STYLE)}"
            )
    for flow in FLOWS:
        if flow_states.get(flow) not in FLOW_STYLE:
            raise ValueError(
                f"flow {flow!r} has state {flow_states.get(flow)!r}, "
                f"expected one of {tuple(FLOW_STYLE)}"
            )
    path_nodes = tuple(path)
    path_edges = set(itertools.pairwise(path_nodes))

    graph = styled_graph("architecture", rankdir="LR", nodesep="0.25", ranksep="0.45")
    graph.attr(compound="true")

    for column in COLUMNS:
        with graph.subgraph(name=f"cluster_{column.id}") as cluster:
            cluster.attr(
                label=_plain(column.label),
                style="rounded,dashed",
                fontsize=str(COLUMN_POINTS),
                rank="same",
                **COLUMN_STYLE,
            )
            for node in NODES:
                if node.column != column.id:
                    continue
                state = node_states[node.id]
                attrs = dict(NODE_STYLE[state])
                if node.id in path_nodes:
                    attrs["penwidth"] = PATH_STYLE["penwidth"]
                cluster.node(
                    node.id,
                    label=_node_label(node, state, notes.get(node.id, "")),
                    tooltip=_plain(node.description),
                    **attrs,
                )

    for source, destination in FLOWS:
        state = flow_states[(source, destination)]
        attrs = dict(FLOW_STYLE[state])
        if (source, destination) in path_edges and state != "inactive":
            attrs.update(PATH_STYLE)
        graph.edge(source, destination, **attrs)

    return graph.source
