"""The architecture graph and its DOT: every node and flow, styled by state, with a legend."""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdlab_model import Workload, architecture, evaluate
from sdlab_model.architecture import (
    COLUMNS,
    FLOW_STYLE,
    FLOWS,
    NODE_IDS,
    NODE_STYLE,
    NODES,
    PATH_STYLE,
    path_text,
    to_dot,
)
from sdlab_model.design import packing_note
from sdlab_model.residency import ResidencyInputs
from sdlab_model.scenarios import SCENARIO_BY_ID, SCENARIOS

NODE_LINE = re.compile(r"^\s*(\w+) \[(.*)\]$", re.MULTILINE)
EDGE_LINE = re.compile(r"^\s*(\w+) -> (\w+) \[(.*)\]$", re.MULTILINE)


def _nodes(dot: str) -> dict[str, str]:
    """Node id -> its attribute text, for the nine architecture nodes."""
    return {name: attrs for name, attrs in NODE_LINE.findall(dot) if name in NODE_IDS}


def _edges(dot: str) -> dict[tuple[str, str], str]:
    """(source, destination) -> attribute text, for edges between architecture nodes."""
    return {
        (source, destination): attrs
        for source, destination, attrs in EDGE_LINE.findall(dot)
        if source in NODE_IDS and destination in NODE_IDS
    }


def _has(attrs: str, style: dict[str, str]) -> bool:
    """True when every attribute of ``style`` appears in the DOT attribute text."""
    return all(
        re.search(rf'\b{key}="?{re.escape(value)}"?(\s|$)', attrs) for key, value in style.items()
    )


ALL_OK = {node: "ok" for node in NODE_IDS}
ALL_ACTIVE = {flow: "active" for flow in FLOWS}


def test_nine_nodes_in_five_columns_and_nine_flows():
    assert len(NODES) == 9 and len(set(NODE_IDS)) == 9, f"nodes {NODE_IDS}"
    assert [column.label for column in COLUMNS] == [
        "Clients",
        "Gateway",
        "Model servers",
        "Registry + GPU",
        "Async",
    ], f"columns {COLUMNS}"
    assert {node.column for node in NODES} == {column.id for column in COLUMNS}, (
        "every column holds a node and every node a known column"
    )
    assert len(FLOWS) == 9 and len(set(FLOWS)) == 9, f"flows {FLOWS}"
    assert all(src in NODE_IDS and dst in NODE_IDS for src, dst in FLOWS), f"flows {FLOWS}"


def test_dot_has_every_node_and_every_flow_once():
    dot = to_dot(ALL_OK, ALL_ACTIVE)
    assert dot.startswith("digraph"), f"not a digraph: {dot[:40]!r}"
    assert "rankdir=LR" in dot, "the diagram must run left to right"
    assert set(_nodes(dot)) == set(NODE_IDS), f"nodes in DOT: {sorted(_nodes(dot))}"
    edges = EDGE_LINE.findall(dot)
    architecture_edges = [(s, d) for s, d, _ in edges if s in NODE_IDS and d in NODE_IDS]
    assert sorted(architecture_edges) == sorted(FLOWS), f"edges in DOT: {architecture_edges}"
    for column in COLUMNS:
        assert f"subgraph cluster_{column.id} {{" in dot, f"no cluster for column {column.id}"


@pytest.mark.parametrize("state", list(NODE_STYLE))
def test_node_colours_follow_states(state):
    states = dict(ALL_OK, replicas=state)
    nodes = _nodes(to_dot(states, ALL_ACTIVE))
    assert _has(nodes["replicas"], NODE_STYLE[state]), (
        f"replicas in state {state} drawn as {nodes['replicas']}"
    )
    assert f">{state}</font>" in nodes["replicas"], "the node must name its state in its label"


def test_inactive_nodes_are_faded_and_distinct_from_live_ones():
    inactive = NODE_STYLE["inactive"]
    others = [style for state, style in NODE_STYLE.items() if state != "inactive"]
    assert all(style["fillcolor"] != inactive["fillcolor"] for style in others), (
        "inactive must not share a fill with a live state"
    )
    nodes = _nodes(to_dot(dict(ALL_OK, gpu_pool="inactive"), ALL_ACTIVE))
    assert _has(nodes["gpu_pool"], inactive), f"inactive GPU pool drawn as {nodes['gpu_pool']}"
    assert not _has(nodes["client"], inactive), "a live node must not look inactive"


@pytest.mark.parametrize("state", list(FLOW_STYLE))
def test_flow_styles_follow_states(state):
    flow = ("replicas", "metrics")
    edges = _edges(to_dot(ALL_OK, {**ALL_ACTIVE, flow: state}))
    assert _has(edges[flow], FLOW_STYLE[state]), f"{flow} in state {state}: {edges[flow]}"
    if state == "inactive":
        assert "style=dashed" in edges[flow], "an inactive flow must be dashed"


def test_recommended_path_is_emphasised_only_along_live_flows():
    dot = to_dot(ALL_OK, ALL_ACTIVE, path=("gateway", "batcher", "replicas"))
    edges, nodes = _edges(dot), _nodes(dot)
    assert _has(edges[("gateway", "batcher")], PATH_STYLE), edges[("gateway", "batcher")]
    assert _has(edges[("batcher", "replicas")], PATH_STYLE), edges[("batcher", "replicas")]
    assert not _has(edges[("gateway", "replicas")], PATH_STYLE), "not a step of this path"
    assert not _has(edges[("client", "gateway")], PATH_STYLE), "client is not on this path"
    assert "penwidth=3" in nodes["batcher"] and "penwidth=3" not in nodes["metrics"], (
        "path nodes get a heavy outline, others do not"
    )
    # A path step whose flow is inactive stays drawn as inactive.
    flows = {**ALL_ACTIVE, ("gateway", "replicas"): "inactive"}
    edges = _edges(to_dot(ALL_OK, flows, path=("gateway", "replicas")))
    assert _has(edges[("gateway", "replicas")], FLOW_STYLE["inactive"]), (
        f"an inactive flow on the path must stay faded: {edges[('gateway', 'replicas')]}"
    )


def test_legend_explains_every_node_colour_outside_the_graph():
    entries = dict(architecture.legend_entries())
    assert list(entries) == list(NODE_STYLE), f"legend states {list(entries)}"
    assert all(entries.values()), f"a legend entry says nothing: {entries}"
    dot = to_dot(ALL_OK, ALL_ACTIVE)
    assert "legend" not in dot, "the legend should sit beside the graph, not take part of it"


def test_notes_put_numbers_on_nodes():
    dot = to_dot(ALL_OK, ALL_ACTIVE, notes={"replicas": "12 replicas · 45% busy"})
    assert "12 replicas · 45% busy" in _nodes(dot)["replicas"], _nodes(dot)["replicas"]
    assert "busy" not in _nodes(dot)["client"], "a note landed on the wrong node"


def test_unknown_states_are_refused():
    with pytest.raises(ValueError, match="replicas"):
        to_dot(dict(ALL_OK, replicas="melting"), ALL_ACTIVE)
    missing = dict(ALL_ACTIVE)
    del missing[("client", "gateway")]
    with pytest.raises(ValueError, match="client"):
        to_dot(ALL_OK, missing)


def test_labels_are_escaped(monkeypatch):
    nasty = '<b>"x" & y\\n</b>'
    nodes = tuple(
        dataclasses.replace(node, label=nasty, description=nasty) if node.id == "client" else node
        for node in NODES
    )
    monkeypatch.setattr(architecture, "NODES", nodes)
    client = _nodes(to_dot(ALL_OK, ALL_ACTIVE))["client"]
    assert "&lt;b&gt;&quot;x&quot; &amp; y\\n&lt;/b&gt;" in client, f"label not escaped: {client}"
    assert 'tooltip="<b>\\"x\\" & y\\\\n</b>"' in client, f"tooltip not escaped: {client}"


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz 'dot' binary not installed")
@pytest.mark.parametrize("card", SCENARIOS, ids=lambda card: card.id)
def test_graphviz_renders_each_cards_diagram(card):
    assessment = evaluate(card.workload(), "teaching")
    dot = to_dot(assessment.node_states, assessment.flow_states, assessment.stage.path)
    rendered = subprocess.run(
        ["dot", "-Tsvg"], input=dot, capture_output=True, text=True, timeout=60, check=False
    )
    assert rendered.returncode == 0, f"dot failed for {card.id}: {rendered.stderr}"
    assert rendered.stderr == "", f"dot warned for {card.id}: {rendered.stderr}"
    assert "<svg" in rendered.stdout, "no SVG produced"


@settings(max_examples=40, deadline=None)
@given(
    st.fixed_dictionaries({node: st.sampled_from(list(NODE_STYLE)) for node in NODE_IDS}),
    st.fixed_dictionaries({flow: st.sampled_from(list(FLOW_STYLE)) for flow in FLOWS}),
    st.lists(st.sampled_from(NODE_IDS), max_size=6),
)
def test_any_states_give_complete_dot(node_states, flow_states, path):
    dot = to_dot(node_states, flow_states, path)
    assert set(_nodes(dot)) == set(NODE_IDS), "a node went missing"
    assert set(_edges(dot)) == set(FLOWS), "a flow went missing"
    assert dot.count("{") == dot.count("}"), "unbalanced braces"


def test_default_workload_draws():
    assessment = evaluate(Workload(), "teaching")
    dot = to_dot(assessment.node_states, assessment.flow_states, assessment.stage.path)
    assert set(_nodes(dot)) == set(NODE_IDS), "the default lab's diagram lacks nodes"


def test_path_text_reads_node_labels():
    text = path_text(("gateway", "batcher", "replicas"))
    assert text == "Inference gateway → Dynamic batcher → Server replicas", f"path text {text!r}"


@settings(max_examples=60, deadline=None)
@given(
    st.fixed_dictionaries({node: st.sampled_from(list(NODE_STYLE)) for node in NODE_IDS}),
    st.fixed_dictionaries({flow: st.sampled_from(list(FLOW_STYLE)) for flow in FLOWS}),
    st.lists(st.sampled_from(NODE_IDS), max_size=6),
    st.dictionaries(
        st.sampled_from(NODE_IDS),
        st.text(alphabet='ab 1·%<>&"\\@:_', max_size=20) | st.just("@@note:client@@"),
        max_size=4,
    ),
)
def test_the_kept_diagram_with_its_notes_filled_in_is_the_diagram_built_afresh(
    node_states, flow_states, path, notes
):
    """to_dot keeps one DOT per shape and fills in the notes; that must be what building the
    whole graph with those notes gives, whatever the notes say."""
    kept = to_dot(node_states, flow_states, path, notes)
    built = architecture._build_dot(node_states, flow_states, path, notes)
    assert kept == built, f"notes {notes!r}: the kept diagram differs from the one built afresh"


def test_the_gpu_pools_note_names_the_placement_the_packing_decision_picks():
    card = SCENARIO_BY_ID["multi-model-scale"].workload()
    routed = evaluate(card, "queueing").packing
    assert routed is not None and routed.recommended == "model_aware", routed
    note = packing_note(routed, card.models_hosted)
    assert f"routed by model on {routed.recommended_replicas:,} replicas" in note, note
    big = evaluate(card, "queueing", ResidencyInputs(model_size_gb=12)).packing
    assert big is not None and big.recommended == "dedicated", big
    assert "routed" not in packing_note(big, card.models_hosted), "dedicated is not routed"
