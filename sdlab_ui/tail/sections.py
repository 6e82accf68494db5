"""The Tail at scale page's headline and the paper's arithmetic: ``judge_tail``'s one judgement,
drawn.

Every number here is a field of the ``TailJudgement``; this module formats and lays them out, and
computes nothing about the design.
"""

from __future__ import annotations

import math
from dataclasses import astuple

import pandas as pd
import streamlit as st

from sdlab_model.tail import TailInputs, TailJudgement, judge_tail
from sdlab_ui.text import ms_text

TIED_KEY = "tail-tied"
TIED_TABLE_KEY = "tail.tied.table"
"""The tied-requests table's container."""
HEADLINE_KEY = "tail-headline"
"""The headline's container (``st-key-tail-headline`` in the browser)."""
_KEY = {TailInputs: astuple}
_NAMES = {0.99: "p99", 0.999: "p99.9"}


@st.cache_data(max_entries=256, hash_funcs=_KEY, show_spinner=False)
def judged(inputs: TailInputs) -> TailJudgement:
    """``judge_tail``, cached: tens of ms, and every rerun of the page asks for it."""
    return judge_tail(inputs)


def change_text(change: float) -> str | None:
    """The model's change of a quantile with hedging, as a metric's delta (None where unstable)."""
    if not math.isfinite(change):
        return None
    return f"{change:+.0%} against unhedged"


EXTRA_WORK_LABEL = "Extra work, cancels instant"
UTILIZATION_LABEL = "Leaf utilization, no cancels"


def extra_work_text(result: TailJudgement) -> str:
    """The hedges' extra work as shown ('—' where there is no steady state)."""
    return "—" if result.extra_work is None else f"{result.extra_work:+.1%}"


def utilization_text(result: TailJudgement) -> str:
    """The leaves' utilization with the hedges' load, or 'over 100%' where it runs away."""
    return f"{result.utilization:.1%}" if result.stable else "over 100%"


def headline(result: TailJudgement) -> None:
    """The request's p99 and p99.9 unhedged and hedged, then what hedging costs."""
    with st.container(key=HEADLINE_KEY):
        columns = iter(st.columns(4))
        for q, name in _NAMES.items():
            next(columns).metric(f"Request {name}, unhedged", ms_text(result.unhedged[q]))
            next(columns).metric(
                f"Request {name}, hedged",
                ms_text(result.hedged[q]),
                delta=change_text(result.change[q]),
                delta_color="inverse",
            )
        share, work, busy = st.columns(3)
        share.metric(
            "Leaf requests hedged",
            f"{result.hedged_share:.1%}",
            help="Share of leaf requests still out at the delay, which send a second copy: the "
            "load hedging adds if cancelling saves nothing.",
        )
        # Two bounds side by side: each label says which, or a saving beside a rise reads
        # as a contradiction.
        work.metric(
            EXTRA_WORK_LABEL,
            extra_work_text(result),
            help="The copies' busy time against one copy's, if a copy's latency were its work "
            "and cancelling were instant: cancelled slow copies can save more than the second "
            "copies cost. The utilization beside it takes the other bound.",
        )
        busy.metric(
            UTILIZATION_LABEL,
            utilization_text(result),
            help=f"From {result.inputs.base_utilization:.0%} before hedging, each second copy "
            "served in full (cancelling saves nothing): the cautious bound, which the hedged "
            "p99s above are computed at.",
        )
    if not result.stable:
        st.error(
            f"Unstable (∞): at {result.inputs.base_utilization:.0%} busy, the hedges' extra "
            "load slows the leaves, slower leaves pass the fixed delay more often, and their "
            "load passes 100%: there is no steady state. Hedge later or run the leaves "
            "less busy.",
            icon=":material/error:",
        )


def arithmetic(result: TailJudgement) -> None:
    """The paper's arithmetic for the leaf's own p99: ``1 - (1 - 0.01)^N``."""
    n = result.inputs.fanout
    leaves = "1 leaf" if n == 1 else f"{n:,} leaves"
    st.markdown(
        f"With {leaves}, **{result.slow_share:.0%}** of requests wait for at least one leaf "
        f"slower than its p99 ({ms_text(result.inputs.leaf_p99_ms)}): "
        f"1 − (1 − {result.slow_leaf_share:g})^{n:,} = {result.slow_share:.4f}."
    )
    st.caption(
        f"Hedged after {ms_text(result.delay_ms)} (the leaf's p"
        f"{result.inputs.hedge_percentile:g}); a second copy goes to another leaf and the first "
        "answer wins. Leaves are independent and alike, as in the paper's arithmetic."
    )


def tied_table(result: TailJudgement) -> pd.DataFrame:
    """One copy, hedged and tied on the M/M/1 leaf: the request's p99 and p99.9 and the load."""
    tied = result.tied
    rows = {
        "one copy": (tied.single, "—", "0"),
        f"hedged after {ms_text(tied.hedge_delay_ms)} (the leaf's p"
        f"{result.inputs.hedge_percentile:g})": (
            tied.hedged,
            f"up to {tied.hedged_extra_work:.1%}",
            f"{tied.hedged_extra_work:.2f}",
        ),
        f"tied after {ms_text(tied.tie_delay_ms)}": (
            tied.tied,
            f"{tied.tied_extra_work:.1%}",
            f"{tied.tied_messages:.2f}",
        ),
    }
    return pd.DataFrame(
        {
            **{
                f"request {name}": [ms_text(values[q]) for values, _, _ in rows.values()]
                for q, name in _NAMES.items()
            },
            "extra service work": [work for _, work, _ in rows.values()],
            "cancellations per leaf request": [sent for _, _, sent in rows.values()],
        },
        index=list(rows),
    )


def tied(result: TailJudgement) -> None:
    """Tied requests beside hedging, on a queued leaf, with what each costs."""
    tied_result = result.tied
    leaf = tied_result.leaf
    with st.container(key=TIED_KEY):
        st.subheader("Tied requests beside hedging")
        st.caption(
            "Tied requests (Dean & Barroso's Table 2: a BigTable read tied after 1 ms, p99.9 "
            "98 → 61 ms on a mostly idle cluster, under 1% more disk work) act on the queue, so "
            f"here each leaf is an M/M/1 queue: {result.inputs.base_utilization:.0%} busy, "
            f"{ms_text(leaf.service_ms)} mean service, median {ms_text(result.inputs.leaf_p50_ms)}"
            " (the leaf's p50), not the fitted leaf above. A copy is queued at a second leaf "
            "after the delay; the first to start is served and cancels the other. The two "
            "waits are taken as independent: against a simulated fleet that makes the tail too "
            "long (tying does better) and the duplicated work too small (docs/tail.md)."
        )
        st.dataframe(tied_table(result), key=TIED_TABLE_KEY)
        st.markdown(
            f"Tying cuts the request's p99.9 {tied_result.reduction(0.999):.2f}× (hedging "
            f"{tied_result.reduction(0.999, tied=False):.2f}×) for "
            f"{tied_result.tied_extra_work:.1%} extra service work, where both copies start "
            "before either cancellation arrives (hedging: up to "
            f"{tied_result.hedged_extra_work:.1%}, every second copy served)."
        )
