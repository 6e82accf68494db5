"""The LLM serving diagram's DOT: it parses, carries ``llm_latency``'s numbers, marks what binds,
says unstable (∞) when the design is, and escapes its text."""

from __future__ import annotations

import dataclasses
import math
import re
import shutil
import subprocess

import pytest

from sdlab_model.architecture import NODE_STYLE, PATH_STYLE
from sdlab_model.llm import LlmWorkload, gpu_by_id, llm_dot, llm_latency

NODE_LINE = re.compile(r"^\s*(\w+) \[label=(.*)\]$", re.MULTILINE)
NODES = ("clients", "router", "scheduler", "prefill", "decode", "kv_cache", "gpu", "stream")
# The page's cards (sdlab_ui/llm/cards.py) and designs that bind elsewhere or are unstable.
WORKLOADS = {
    "defaults": {},
    "rag card": {"prompt_tokens_mean": 8000.0, "output_tokens_mean": 200.0, "rate_rps": 2.0},
    "70b card": {
        "model_id": "llama-3.1-70b",
        "tensor_parallel": 8,
        "rate_rps": 8.0,
        "output_tokens_mean": 300.0,
    },
    "chat card": {"gpu_id": "l4", "rate_rps": 0.5, "prompt_tokens_mean": 800.0},
    "running cap": {"max_running_sequences": 16},
    "unstable rate": {"rate_rps": 400.0},
    "no room for a cache": {
        "model_id": "llama-3.1-70b",
        "tensor_parallel": 2,
        "gpu_memory_utilization": 0.5,
    },
    "full cache": {
        "gpu_id": "l4",
        "rate_rps": 0.08,
        "prompt_tokens_mean": 2000.0,
        "output_tokens_mean": 2000.0,
    },
}
# Where each binding is marked, written out here rather than read from the module.
MARKED = {
    "prefill compute": "prefill",
    "token budget": "prefill",
    "decode bandwidth": "decode",
    "decode compute": "decode",
    "running-sequence cap": "decode",
    "KV memory": "kv_cache",
}


def _ms(value: float) -> str:
    """The pages' millisecond format (sdlab_model.wording.ms_text), written out independently."""
    if not math.isfinite(value):
        return "unstable (∞)"
    if value >= 10_000:
        return f"{value / 1000:,.0f} s"
    if value >= 1_000:
        return f"{value / 1000:.2f} s"
    return f"{value:.3g} ms" if value < 100 else f"{value:.0f} ms"


def _nodes(dot: str) -> dict[str, str]:
    return {name: attrs for name, attrs in NODE_LINE.findall(dot) if name in NODES}


def _case(name: str):
    workload = LlmWorkload(**WORKLOADS[name])
    estimate = llm_latency(workload)
    return workload, estimate, llm_dot(workload, estimate)


def test_every_node_is_drawn_once():
    _, _, dot = _case("defaults")
    assert sorted(_nodes(dot)) == sorted(NODES), f"nodes drawn: {sorted(_nodes(dot))}"
    for node in NODES:
        assert len(re.findall(rf"^\s*{node} \[label=", dot, re.MULTILINE)) == 1, node


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz 'dot' binary not installed")
@pytest.mark.parametrize("name", WORKLOADS)
def test_graphviz_draws_it(name):
    _, _, dot = _case(name)
    drawn = subprocess.run(
        ["dot", "-Tsvg"], input=dot.encode(), capture_output=True, timeout=30, check=False
    )
    assert drawn.returncode == 0, drawn.stderr.decode()
    assert b"<svg" in drawn.stdout and b"Tokens streamed back" in drawn.stdout


@pytest.mark.parametrize("name", ["defaults", "rag card", "70b card", "chat card"])
def test_the_numbers_are_the_estimates(name):
    workload, estimate, dot = _case(name)
    nodes = _nodes(dot)
    capacity = workload.kv_capacity()
    stream = nodes["stream"]
    assert f"TTFT p99 {_ms(estimate.ttft_p99_ms)}" in stream, stream
    assert f"TPOT p99 {_ms(estimate.tpot_p99_ms)}" in stream, stream
    assert f"E2E p99 {_ms(estimate.e2e_p99_ms)}" in stream, stream
    assert f"TPOT p99 {_ms(estimate.tpot_p99_ms)}" in nodes["decode"], nodes["decode"]
    assert f"{estimate.running_sequences:,.1f} running of {estimate.slots:,.0f}" in nodes["decode"]
    assert f"{estimate.kv_tokens:,} tokens fit" in nodes["kv_cache"], nodes["kv_cache"]
    assert f"{capacity.bytes_per_token / 1024:,.0f} KiB per token" in nodes["kv_cache"]
    share = estimate.kv_tokens_in_use / estimate.kv_tokens
    assert f"{estimate.kv_tokens_in_use:,.0f} in use ({share:.0%})" in nodes["kv_cache"]
    assert f"slots in use {estimate.slot_load:.0%}" in nodes["scheduler"]
    assert f"mean wait {_ms(estimate.mean_wait_ms)} (of TTFT)" in nodes["scheduler"]
    assert f"mean {_ms(estimate.mean_prefill_ms)} a prompt" in nodes["prefill"]
    assert f"{workload.max_batched_tokens:,} tokens per iteration" in nodes["prefill"]
    assert f"prefill load {estimate.prefill_load:.0%}" in nodes["prefill"]
    assert f"{workload.tensor_parallel} × {workload.gpu.name}" in nodes["gpu"]
    assert f"weights {capacity.weights_gb:,.1f} GB" in nodes["gpu"]
    assert f"{workload.rate_per_replica_rps:,.3g} req/s each" in nodes["router"]
    assert f"{workload.rate_rps:,.3g} req/s" in nodes["clients"]
    assert "unstable" not in dot, "a stable design is drawn as unstable"


@pytest.mark.parametrize("name", WORKLOADS)
def test_what_binds_is_marked_on_its_node_alone(name):
    _, estimate, dot = _case(name)
    marked = MARKED[estimate.binding]
    nodes = _nodes(dot)
    assert f"binds: {estimate.binding}" in nodes[marked], f"{marked}: {nodes[marked]}"
    assert f"penwidth={PATH_STYLE['penwidth']}" in nodes[marked], nodes[marked]
    fill = NODE_STYLE["warning" if estimate.is_stable else "overloaded"]["fillcolor"]
    assert f'fillcolor="{fill}"' in nodes[marked], nodes[marked]
    others = [node for node, attrs in nodes.items() if node != marked and "binds:" in attrs]
    assert not others, f"also marked: {others}"


def test_the_cards_bind_where_the_cards_say():
    # Different bindings land on different nodes: the mark follows the estimate.
    assert _case("rag card")[1].binding == "prefill compute"
    assert _case("defaults")[1].binding == "decode bandwidth"
    assert _case("no room for a cache")[1].binding == "KV memory"


@pytest.mark.parametrize("name", ["unstable rate", "no room for a cache", "full cache"])
def test_an_unstable_design_says_unstable(name):
    _, estimate, dot = _case(name)
    assert not estimate.is_stable, f"{name} is meant to be unstable"
    stream = _nodes(dot)["stream"]
    assert "mean wait ∞" in _nodes(dot)["scheduler"], "a finite wait drawn for an unstable design"
    for p99 in ("TTFT", "TPOT", "E2E"):
        assert f"{p99} p99 unstable (∞)" in stream, stream
    assert f'fillcolor="{NODE_STYLE["overloaded"]["fillcolor"]}"' in stream, stream


def test_a_design_missing_a_target_shows_it_on_the_stream():
    _, estimate, dot = _case("rag card")
    assert not estimate.meets_targets, "the RAG card is meant to miss its TTFT target"
    fill = NODE_STYLE["warning"]["fillcolor"]
    assert f'fillcolor="{fill}"' in _nodes(dot)["stream"]
    ok = NODE_STYLE["ok"]["fillcolor"]
    assert f'fillcolor="{ok}"' in _nodes(_case("defaults")[2])["stream"]


def test_hostile_text_is_escaped(monkeypatch):
    nasty = '<b>"x" & y\\n</b>'
    workload = LlmWorkload()
    estimate = llm_latency(workload)
    hostile = dataclasses.replace(gpu_by_id(workload.gpu_id), name=nasty)
    monkeypatch.setattr(LlmWorkload, "gpu", property(lambda self: hostile))
    dot = llm_dot(workload, estimate)
    gpu = _nodes(dot)["gpu"]
    assert "&lt;b&gt;&quot;x&quot; &amp; y\\n&lt;/b&gt;" in gpu, f"not escaped: {gpu}"
    assert nasty not in dot, "the raw text reached the DOT"
    if shutil.which("dot"):
        drawn = subprocess.run(["dot", "-Tsvg"], input=dot.encode(), capture_output=True)
        assert drawn.returncode == 0, drawn.stderr.decode()
