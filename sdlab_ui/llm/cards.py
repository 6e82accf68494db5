"""The LLM page's scenario cards: each loads a deployment and asks a question before the numbers.

A card's inputs are data (``CARDS``); its answer is the model's judgement of those inputs, the same
``llm_latency`` the headline draws, revealed on request (not while measured lengths replace the
card's). ``binds`` is what the model says binds there; a test keeps the card's prose honest
against it.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from sdlab_model.llm import gpu_by_id, model_by_id
from sdlab_ui.llm import controls, lengths
from sdlab_ui.llm.fields import build_workload, default_values, inputs_of
from sdlab_ui.llm.sections import binding_sentence, estimate
from sdlab_ui.text import ms_text

_ACTIVE_KEY = "llm.card"


@dataclass(frozen=True)
class Card:
    """One scenario: inputs that differ from the defaults, a question, and a hint for after."""

    key: str
    title: str
    story: str
    changes: dict
    question: str
    binds: str
    next_step: str

    @property
    def values(self) -> dict:
        return {**default_values(), **self.changes}

    @property
    def summary(self) -> str:
        """The card's inputs in a line, from its values and the catalog."""
        v = self.values
        gpus = f"{v['tensor_parallel']} × " if v["tensor_parallel"] > 1 else ""
        return (
            f"{model_by_id(v['model_id']).name} ({v['precision'].upper()}) on "
            f"{gpus}{gpu_by_id(v['gpu_id']).name}, {v['rate_rps']:g} req/s, "
            f"{v['prompt_tokens_mean']:,.0f}-token prompts, "
            f"{v['output_tokens_mean']:,.0f}-token outputs."
        )


CARDS: tuple[Card, ...] = (
    Card(
        "chat",
        "Chat assistant on one L4",
        "A small model on a small, inexpensive GPU; short chats.",
        {
            "model_id": "llama-3.1-8b",
            "gpu_id": "l4",
            "rate_rps": 0.5,
            "prompt_tokens_mean": 800.0,
            "output_tokens_mean": 250.0,
            "ttft_p99_target_ms": 2000.0,
            "tpot_p99_target_ms": 100.0,
            "e2e_p99_target_ms": 120_000.0,
        },
        "Will TPOT p99 meet its target, and what limits it?",
        "decode bandwidth",
        "Try FP8: every decode step then reads half the bytes.",
    ),
    Card(
        "rag",
        "RAG with long prompts",
        "Retrieved passages make long prompts for short answers.",
        {
            "model_id": "llama-3.1-8b",
            "gpu_id": "h100-sxm-80gb",
            "rate_rps": 2.0,
            "prompt_tokens_mean": 8000.0,
            "output_tokens_mean": 200.0,
            "ttft_p99_target_ms": 1500.0,
            "tpot_p99_target_ms": 50.0,
        },
        "Which target is at risk: time to first token or time per output token?",
        "prefill compute",
        "Try a second replica, or tensor parallel 2 to split each prefill.",
    ),
    Card(
        "70b",
        "A 70B model on 8 GPUs",
        "A large model split across a whole 8-GPU node, one replica.",
        {
            "model_id": "llama-3.1-70b",
            "gpu_id": "h100-sxm-80gb",
            "tensor_parallel": 8,
            "rate_rps": 8.0,
            "prompt_tokens_mean": 1000.0,
            "output_tokens_mean": 300.0,
            "ttft_p99_target_ms": 1000.0,
            "tpot_p99_target_ms": 50.0,
        },
        "Is it compute, memory bandwidth or KV memory that limits it?",
        "decode bandwidth",
        "Try 2 replicas of tensor parallel 4: the same 8 GPUs, split another way.",
    ),
    Card(
        "offline",
        "Offline summarization",
        "Long documents in, summaries out; loose targets, big batches.",
        {
            "model_id": "mistral-7b",
            "gpu_id": "a100-80gb",
            "rate_rps": 2.0,
            "prompt_tokens_mean": 3000.0,
            "output_tokens_mean": 400.0,
            "max_running_sequences": 512,
            "max_batched_tokens": 16384,
            "ttft_p99_target_ms": 60_000.0,
            "tpot_p99_target_ms": 200.0,
            "e2e_p99_target_ms": 600_000.0,
        },
        "With latency barely mattering, what binds, and what does 1M output tokens cost?",
        "prefill compute",
        "Try the cheapest deployment below: other GPUs and FP8 may cost less per token.",
    ),
)
CARD_BY_KEY = {card.key: card for card in CARDS}


def button_key(card: Card) -> str:
    return f"llm.card.{card.key}"


def _choose(card: Card) -> None:
    controls.load(card.changes)
    st.session_state[_ACTIVE_KEY] = card.key


def draw() -> None:
    """The cards, each with its button; then the chosen card's question, and its answer on
    request, while the inputs are still the card's."""
    for column, card in zip(st.columns(len(CARDS)), CARDS, strict=True):
        with column.container(border=True):
            st.markdown(f"**{card.title}**")
            st.caption(f"{card.story} {card.summary}")
            st.button(
                "Load this scenario",
                key=button_key(card),
                on_click=_choose,
                args=(card,),
            )
    card = CARD_BY_KEY.get(st.session_state.get(_ACTIVE_KEY, ""))
    if card is None or inputs_of(controls.current_values()) != card.values or lengths.in_use():
        return
    st.markdown(f"**Predict first:** {card.question}")
    with st.expander("Reveal the model's answer"):
        st.markdown(reveal(card))


def reveal(card: Card) -> str:
    """The model's answer to a card's question: its p99s, whether they meet the targets, what
    binds and the cost, from the same judgement as the headline."""
    workload, _ = build_workload(card.values)
    result = estimate(workload)
    w = result.workload
    verdict = "meets every target" if result.meets_targets else "misses a target"
    sentence = binding_sentence(result)
    per_million = result.usd_per_million_output_tokens
    cost = f" ${per_million:,.2f} per million output tokens." if per_million is not None else ""
    return (
        f"TTFT p99 {ms_text(result.ttft_p99_ms)} (target {ms_text(w.ttft_p99_target_ms)}), "
        f"TPOT p99 {ms_text(result.tpot_p99_ms)} (target {ms_text(w.tpot_p99_target_ms)}), "
        f"E2E p99 {ms_text(result.e2e_p99_ms)}: the design {verdict}. "
        f"{sentence[0].upper()}{sentence[1:]}{cost} {card.next_step}"
    )
