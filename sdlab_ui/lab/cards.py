"""The five scenario cards and the guided walkthrough (their text is data in sdlab_model)."""

from __future__ import annotations

import streamlit as st

from sdlab_model.scenarios import SCENARIO_BY_ID, SCENARIOS, WALKTHROUGH, walkthrough_numbers
from sdlab_ui import cache, state

_CARD_WORKLOADS = tuple(card.workload() for card in SCENARIOS)
_STEP_KEY = "sdlab.walkthrough_step"
_REVEALED_KEY = "sdlab.walkthrough_revealed"
_PREDICTION_KEY = "lab.walk.prediction"
PREDICTION_MAX_CHARS = 300
"""The walkthrough's prediction field: a sentence or two."""


def card_key(card_id: str) -> str:
    """The key of a card's button (tests and the browser click it)."""
    return f"lab.card.{card_id}"


CARDS_KEY = "lab-cards"
"""The row of cards (the Lab's stylesheet, ``style.lab_header``, sizes the cards in it)."""


HEADING = "#### Scenarios: click a card to load it, left to right for the demo path"
"""The cards' heading (Markdown), for a page that draws it as the end of the Markdown above."""


def scenario_cards(*, heading: bool = True) -> None:
    """Five cards left to right, the intended demo path; a click on a card loads its inputs.

    Each card is one button whose label is the card (its step, title and summary): six elements
    for the row, where a bordered column per card with its text and a Load button were seventeen,
    each a message to the browser on every rerun. Without ``heading`` where the page has already
    drawn ``HEADING`` at the end of the element above (one message fewer).
    """
    if heading:
        st.markdown(HEADING)
    current = state.current()
    row = st.container(horizontal=True, key=CARDS_KEY)
    for card, card_workload in zip(SCENARIOS, _CARD_WORKLOADS, strict=True):
        loaded = card_workload == current.workload
        if loaded:  # the primary colour behind it: plain text reads best there
            label = f"STEP {card.step:02d} · loaded  \n**{card.title}**  \n{card.summary}"
        else:
            label = f":gray[STEP {card.step:02d}]  \n**{card.title}**  \n:gray[{card.summary}]"
        row.button(
            label,
            key=card_key(card.id),
            on_click=_load_card,
            args=(card.id,),
            type="primary" if loaded else "secondary",
            width="stretch",
        )


def walkthrough() -> None:
    """Step 1-5: the question and a prediction first; the card loads only with the answer.

    Loading the card before the answer would give it away: the sidebar, the diagram and the p99
    would already show what the question asks the person to predict.
    """
    step_index = st.session_state.get(_STEP_KEY)
    with st.expander(
        "Guided walkthrough: reason about it one step at a time", expanded=step_index is not None
    ):
        if step_index is None:
            st.button(
                "Start: five questions, one per card (predict, then load the card and see)",
                key="lab.walk.start",
                on_click=_go_to_step,
                args=(0,),
            )
            return
        step = WALKTHROUGH[step_index]
        card = SCENARIO_BY_ID[step.card_id].workload()
        result = cache.assessment(card, state.current().model)
        question, answer = step.render(walkthrough_numbers(card, result))
        st.markdown(f"**Step {step.step} of {len(WALKTHROUGH)} · {step.focus}**")
        st.write(question)
        if st.session_state.get(_REVEALED_KEY):
            # The field's limit binds the browser only; a forged value is cut here.
            prediction = str(st.session_state.get(_PREDICTION_KEY, "")).strip()
            if len(prediction) > PREDICTION_MAX_CHARS:
                prediction = prediction[:PREDICTION_MAX_CHARS] + "…"
            st.caption(
                f"Your prediction: {state.plain_text(prediction)}"
                if prediction
                else "You made no prediction this time."
            )
            st.info(answer)
            st.success(f"Takeaway: {step.takeaway}")
        else:
            st.text_input(
                "Your prediction",
                key=_PREDICTION_KEY,
                max_chars=PREDICTION_MAX_CHARS,
                placeholder="e.g. the p99 roughly doubles; a batcher appears",
            )
            st.button(
                f"Load card {step.step} and reveal the answer",
                key="lab.walk.reveal",
                on_click=_reveal,
                type="primary",
            )
        back, forward = st.columns(2)
        back.button(
            "← Previous step",
            key="lab.walk.previous",
            on_click=_go_to_step,
            args=(step_index - 1,),
            disabled=step_index == 0,
            width="stretch",
        )
        forward.button(
            "Next step →",
            key="lab.walk.next",
            on_click=_go_to_step,
            args=(step_index + 1,),
            disabled=step_index == len(WALKTHROUGH) - 1,
            width="stretch",
        )


def _load_card(card_id: str) -> None:
    # The card's workload exactly: its eight inputs, the advanced ones at their defaults.
    state.load(SCENARIO_BY_ID[card_id].workload())


def _go_to_step(index: int) -> None:
    st.session_state[_STEP_KEY] = index
    st.session_state[_REVEALED_KEY] = False
    st.session_state[_PREDICTION_KEY] = ""


def _reveal() -> None:
    _load_card(WALKTHROUGH[st.session_state[_STEP_KEY]].card_id)
    st.session_state[_REVEALED_KEY] = True
