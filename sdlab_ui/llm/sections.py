"""The LLM page's headline and what binds: ``llm_latency``'s one judgement of the design, drawn.

Every number here is a field of the ``LlmEstimate`` (or the workload's KV capacity, the model's
too); this module formats and lays them out, and computes nothing about the design.
"""

from __future__ import annotations

import math

import streamlit as st

from sdlab_model.llm import LlmEstimate, LlmWorkload, llm_latency
from sdlab_ui.cache import shared_cache
from sdlab_ui.text import money, ms_text, rate_text

HEADLINE_KEY = "llm-headline"
"""The headline's container (``st-key-llm-headline`` in the browser)."""
APPROXIMATE = "approximate"


@shared_cache(maxsize=256)
def estimate(workload: LlmWorkload) -> LlmEstimate:
    """``llm_latency``, shared read-only: ~1 ms, as much as ``st.cache_data``'s own bookkeeping
    of a miss, and every rerun of the page asks for it (``sdlab_ui.cache``)."""
    return llm_latency(workload)


def p99_label(name: str, approximate: bool) -> str:
    """A headline p99's label: 'TTFT p99', or 'TTFT p99 (approximate)' where the model says so."""
    return f"{name} p99 ({APPROXIMATE})" if approximate else f"{name} p99"


def _p99_metric(name: str, p99_ms: float, target_ms: float, approximate: bool) -> None:
    within = p99_ms <= target_ms
    st.metric(
        p99_label(name, approximate),
        ms_text(p99_ms),
        delta=f"{'within' if within else 'over'} the {ms_text(target_ms)} target",
        delta_color="green" if within else "red",
        delta_arrow="off",
    )


def cost_texts(result: LlmEstimate) -> tuple[str, str]:
    """$/h and $ per million output tokens as shown ('—' where the GPU has no price or the
    design serves no steady stream)."""
    per_hour, per_million = result.usd_per_hour, result.usd_per_million_output_tokens
    return (
        "—" if per_hour is None else f"{money(per_hour)}/h",
        "—" if per_million is None else money(per_million),
    )


def throughput_text(result: LlmEstimate) -> str:
    """Output tokens per second as shown."""
    tokens = result.output_tokens_per_s
    return f"{tokens:,.0f} tok/s" if math.isfinite(tokens) else "—"


def headline(result: LlmEstimate) -> None:
    """The three p99s against their targets, then throughput, goodput and cost."""
    w = result.workload
    with st.container(key=HEADLINE_KEY):
        ttft, tpot, e2e = st.columns(3)
        with ttft:
            _p99_metric("TTFT", result.ttft_p99_ms, w.ttft_p99_target_ms, result.approximate)
        with tpot:
            _p99_metric("TPOT", result.tpot_p99_ms, w.tpot_p99_target_ms, result.approximate)
        with e2e:
            _p99_metric("E2E", result.e2e_p99_ms, w.e2e_p99_target_ms, result.approximate)
        usd_per_hour, per_million = cost_texts(result)
        columns = st.columns(4)
        columns[0].metric("Output throughput", throughput_text(result))
        columns[1].metric(
            "Goodput",
            rate_text(result.goodput_rps),
            help="Requests per second that meet every target.",
        )
        columns[2].metric("Cost", usd_per_hour, help="On-demand price of every GPU.")
        columns[3].metric("Per 1M output tokens", per_million)
    if not result.is_stable:
        st.error(
            f"Unstable (∞): {rate_text(w.rate_rps)} is more than this deployment serves; "
            f"{binding_sentence(result)}",
            icon=":material/error:",
        )
    elif result.approximate:
        st.caption(
            f"Approximate: {result.approximate_because}, where the model was found more than "
            "15% off the simulator. Check it with the simulator below."
        )


def binding_sentence(result: LlmEstimate) -> str:
    """What binds, in words with the model's numbers."""
    w = result.workload
    if result.kv_tokens <= 0:
        capacity = w.kv_capacity()
        return (
            f"KV memory binds before anything runs: {w.model.name}'s weights take "
            f"{capacity.weights_gb:,.1f} GB at {w.precision.upper()} and leave no room for a KV "
            f"cache on {w.tensor_parallel} × {w.gpu.name} ({w.gpu.memory_gb:g} GB each). Use "
            "more GPUs per replica, FP8 or a bigger GPU."
        )
    words = {
        "prefill compute": (
            f"prefill compute binds: prompts keep the GPU computing {result.prefill_load:.0%} "
            "of the time (the prefill queue's load; waits grow without bound at 100%)."
        ),
        "decode bandwidth": (
            "decode bandwidth binds: each iteration reads the weights and the KV cache of "
            f"{result.running_sequences:,.1f} running sequences from memory, which takes "
            "longer than their arithmetic."
        ),
        "decode compute": (
            f"decode compute binds: {result.running_sequences:,.1f} running sequences make an "
            "iteration's arithmetic take longer than reading the weights."
        ),
        "KV memory": (
            f"KV memory binds: the cache holds {result.kv_tokens:,} tokens, room for "
            f"{result.slots:,.0f} sequences of this length, {result.slot_load:.0%} in use."
        ),
        "running-sequence cap": (
            f"the running-sequence cap binds: {result.slot_load:.0%} of its "
            f"{result.slots:,.0f} slots are in use."
        ),
        "token budget": (
            f"the token budget binds: {w.max_batched_tokens:,} tokens per iteration leave "
            "little room for prompts beside the decodes."
        ),
    }
    return words.get(result.binding, f"{result.binding} binds.")


def binding(result: LlmEstimate) -> None:
    """What binds, and the loads behind it."""
    st.subheader("What binds")
    sentence = binding_sentence(result)
    st.markdown(sentence[0].upper() + sentence[1:])
    if result.kv_tokens > 0:
        st.caption(
            f"Prefill queue load {result.prefill_load:.0%} · running slots in use "
            f"{result.slot_load:.0%} of {result.slots:,.0f} · "
            f"{result.running_sequences:,.1f} sequences decoding on average per replica · "
            f"KV cache {result.kv_tokens:,} tokens per replica."
        )
