"""The LLM serving path as a diagram: clients, the router, one replica's engine (scheduler,
prefill, decode, KV cache, GPUs) and the tokens streamed back, with the estimate's numbers on it.

Every number is a field of the ``LlmEstimate``, the workload or its ``KvCapacity``; this module
only formats and lays them out. The node that binds (``LlmEstimate.binding``) is drawn amber with
a heavy border, red when the design is unstable. Styles are the Lab diagram's
(``sdlab_model.architecture``), so both diagrams read alike.
"""

from __future__ import annotations

import html
import itertools
import math

import graphviz

from sdlab_model.architecture import (
    DETAIL_POINTS,
    FLOW_STYLE,
    NODE_STYLE,
    PATH_STYLE,
    styled_graph,
)
from sdlab_model.llm.analytic import LlmEstimate
from sdlab_model.llm.workload import LlmWorkload
from sdlab_model.wording import ms_text, rate_text

BINDING_NODE: dict[str, str] = {
    "prefill compute": "prefill",
    "token budget": "prefill",
    "decode bandwidth": "decode",
    "decode compute": "decode",
    "running-sequence cap": "decode",
    "KV memory": "kv_cache",
}
"""The node that ``LlmEstimate.binding`` names (the cap limits how many decode at once)."""
PATH: tuple[str, ...] = ("clients", "router", "scheduler", "prefill", "decode", "stream")
"""A request's way through, drawn heavy."""


def _html(text: object) -> str:
    # Inside an HTML-like label (<...>) only HTML's entities are special.
    return html.escape(str(text), quote=True)


def _plain(text: object) -> str:
    # A plain DOT string: quotes and backslashes literal, never read as an HTML label.
    return graphviz.nohtml(graphviz.escape(str(text)))


def _mean(value_ms: float) -> str:
    # Inside the engine a bare ∞: the streamed-back box says unstable (∞) once, in words.
    return ms_text(value_ms) if math.isfinite(value_ms) else "∞"


def _share(value: float) -> str:
    return f"{value:.0%}" if math.isfinite(value) else "∞"


def _count(value: float) -> str:
    return f"{value:,.1f}" if math.isfinite(value) else "∞"


def _notes(workload: LlmWorkload, estimate: LlmEstimate) -> dict[str, tuple[str, list[str]]]:
    """Node id -> (title, lines of numbers), in drawing order."""
    w, e = workload, estimate
    capacity = w.kv_capacity()
    replicas = f"{w.replicas:,} replica" + ("s" if w.replicas != 1 else "")
    approximate = " (approximate)" if e.approximate and e.is_stable else ""
    stream = [
        f"TTFT p99 {ms_text(e.ttft_p99_ms)}{approximate}",
        f"TPOT p99 {ms_text(e.tpot_p99_ms)}",
        f"E2E p99 {ms_text(e.e2e_p99_ms)}",
    ]
    if e.is_stable:
        stream.append(f"{e.output_tokens_per_s:,.0f} output tok/s")
    else:
        stream.append(f"{rate_text(w.rate_rps)} is more than it serves")
    per_token = (
        f"{capacity.bytes_per_token / 1024:,.0f} KiB per token, blocks of {capacity.block_tokens:,}"
    )
    in_use = "∞ in use"
    if math.isfinite(e.kv_tokens_in_use) and capacity.tokens > 0:
        in_use = (
            f"{e.kv_tokens_in_use:,.0f} in use ({_share(e.kv_tokens_in_use / capacity.tokens)})"
        )
    kv = [f"{capacity.tokens:,} tokens fit ({capacity.cache_gb:,.1f} GB)", in_use, per_token]
    if not capacity.fits:
        kv = ["no room: the weights fill the GPUs", per_token]
    return {
        "clients": (
            "Clients",
            [
                rate_text(w.rate_rps),
                f"{w.prompt_tokens_mean:,.0f}-token prompts",
                f"{w.output_tokens_mean:,.0f}-token outputs",
            ],
        ),
        "router": (
            "Router / load balancer",
            [replicas, f"{rate_text(w.rate_per_replica_rps)} each"],
        ),
        "scheduler": (
            "Scheduler + queue",
            [
                f"mean wait {_mean(e.mean_wait_ms)} (of TTFT)",
                f"admits up to {w.max_running_sequences:,} sequences",
                f"slots in use {_share(e.slot_load)}",
            ],
        ),
        "prefill": (
            "Prefill (chunked)",
            [
                f"mean {_mean(e.mean_prefill_ms)} a prompt",
                f"{w.max_batched_tokens:,} tokens per iteration",
                f"prefill load {_share(e.prefill_load)}",
            ],
        ),
        "decode": (
            "Decode (continuous batch)",
            [
                f"TPOT p99 {ms_text(e.tpot_p99_ms)}",
                f"{_count(e.running_sequences)} running of {e.slots:,.0f} slots",
            ],
        ),
        "kv_cache": ("KV cache", kv),
        "gpu": (
            f"{w.tensor_parallel} × {w.gpu.name}",
            [
                f"{w.model.name} weights {capacity.weights_gb:,.1f} GB ({w.precision.upper()})",
                f"{w.gpu.memory_gb:g} GB each",
            ],
        ),
        "stream": ("Tokens streamed back", stream),
    }


def _label(title: str, lines: list[str], binds: str = "") -> str:
    detail = "<br/>".join(_html(line) for line in lines)
    if binds:
        detail += f"<br/><b>binds: {_html(binds)}</b>"
    return f'<<b>{_html(title)}</b><br/><font point-size="{DETAIL_POINTS}">{detail}</font>>'


def _state(node: str, binding_node: str, estimate: LlmEstimate) -> str:
    if node == binding_node:
        return "warning" if estimate.is_stable else "overloaded"
    if node == "stream":
        if not estimate.is_stable:
            return "overloaded"
        return "ok" if estimate.meets_targets else "warning"
    return "ok"


ROWS: tuple[tuple[str, ...], ...] = (
    ("clients", "router", "stream"),
    ("scheduler", "prefill", "decode"),
    ("kv_cache", "gpu"),
)
"""The diagram's rows, top to bottom: in and out of the deployment, then one replica's engine
(its compute, then its memory), so that it is about as wide as the Lab's diagram."""


def llm_dot(workload: LlmWorkload, estimate: LlmEstimate) -> str:
    """DOT source of the LLM serving path with ``estimate``'s numbers (see the module doc)."""
    binding_node = BINDING_NODE.get(estimate.binding, "")
    notes = _notes(workload, estimate)
    graph = styled_graph("llm_serving", rankdir="TB", nodesep="0.3", ranksep="0.4")
    # Edge labels mid-tone, like the lines: they read on a light and on a dark page alike.
    graph.attr("edge", fontname="Helvetica", fontsize=str(DETAIL_POINTS), fontcolor="#64748b")

    def add(where: graphviz.Digraph, node: str) -> None:
        title, lines = notes[node]
        attrs = dict(NODE_STYLE[_state(node, binding_node, estimate)])
        if node == binding_node:
            attrs["penwidth"] = PATH_STYLE["penwidth"]
        binds = estimate.binding if node == binding_node else ""
        where.node(node, label=_label(title, lines, binds), **attrs)

    with graph.subgraph() as outside:
        outside.attr(rank="same")
        for node in ROWS[0]:
            add(outside, node)
    with graph.subgraph(name="cluster_engine") as cluster:
        cluster.attr(
            label=_plain(f"Each replica's engine (× {workload.replicas:,})"),
            style="rounded,dashed",
            fontsize=str(DETAIL_POINTS + 1),
            color="#94a3b8",
            fontcolor="#64748b",
        )
        for row in ROWS[1:]:
            with cluster.subgraph() as same:
                same.attr(rank="same")
                for node in row:
                    add(same, node)
    _edges(graph)
    return graph.source


def _edges(graph: graphviz.Digraph) -> None:
    path = dict(FLOW_STYLE["active"], **PATH_STYLE)
    for source, destination in itertools.pairwise(PATH):
        graph.edge(source, destination, **path)
    side = FLOW_STYLE["inactive"] | {"color": "#64748b", "dir": "none"}
    graph.edge("prefill", "kv_cache", label=_plain("writes"), **side)
    graph.edge("kv_cache", "decode", label=_plain("reads"), **side)
    graph.edge("kv_cache", "gpu", label=_plain("in GPU memory"), **side)
