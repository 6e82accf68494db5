"""The Lab's headline numbers (p50/p95/p99 against the target, capacity, utilization, cost) and
the summary line at the top of the sidebar.

The numbers are drawn as one HTML element styled like Streamlit's metric (the Lab's stylesheet,
``style.py``), every text in it escaped.
"""

from __future__ import annotations

import html
import math

import streamlit as st

from sdlab_model.advice.search import workload_cost
from sdlab_model.assessment import Assessment
from sdlab_ui.diagram import load_text
from sdlab_ui.lab.style import HEADER, lab_header
from sdlab_ui.text import money, ms_text, per_million_text, rate_text, replicas_text


def p99_label(result: Assessment, short: bool = False) -> str:
    """'p99', 'p99 (simulated)' or 'p99 (simulated, not converged)': where the number is from."""
    if not result.is_simulated:
        return "p99"
    if result.simulation is not None and not result.simulation.converged:
        return "p99 (sim., not converged)" if short else "p99 (simulated, not converged)"
    return "p99 (sim.)" if short else "p99 (simulated)"


def headline(result: Assessment, *, header: bool = False) -> None:
    """p50/p95/p99 against the target, capacity, utilization and replicas needed; with
    ``header``, the Lab's stylesheet, title and lead (``lab_header``) first, in the same element
    (each element is a message on every rerun).

    At or beyond capacity every percentile reads ∞ under a banner saying why, in both models: the
    teaching model's finite figure there is a capped heuristic, so it is quoted, not headlined.
    """
    target = result.workload.p99_target_ms
    p50, p95, p99 = result.p50_ms, result.p95_ms, result.p99_ms
    if not result.is_stable:
        if header:  # the title, then the banner, then the numbers
            lab_header()
            header = False
        st.error(_unstable_text(result), icon=":material/error:")
        p50, p95, p99 = (
            (None if p50 is None else math.inf),
            (None if p95 is None else math.inf),
            math.inf,
        )
        margin = "over capacity"
    else:
        gap = target - p99  # '-4.00 s headroom', never '-4e+03 ms'
        margin = ("+" if gap >= 0 else "-") + f"{ms_text(abs(gap))} headroom"
    needed = result.min_replicas_for_target
    load = (
        f"{result.utilization:.0%}" if result.utilization < 100 else f"{result.utilization:,.0f}x"
    )
    # Utilization is the slots' busy share at the batches that form; the load is against the
    # capacity, which counts full batches (the two differ wherever batches are small).
    utilization = f"{result.slot_utilization:.0%}" if result.is_stable else "100%"
    cost = workload_cost(result.workload)
    metrics = (
        _metric_html("p50", metric_ms(p50)),
        _metric_html("p95", metric_ms(p95)),
        _metric_html(
            p99_label(result),
            metric_ms(p99),
            delta=margin,
            good=result.is_stable and p99 <= target,
        ),
    )
    numbers = (
        ("Capacity", f"{rate_text(result.capacity_rps)} (load {load})"),
        ("Utilization", utilization),
        ("Replicas needed for the target", "none up to 500" if needed is None else str(needed)),
        (
            "Cost",
            f"{money(cost.usd_per_hour)}/h · "
            + per_million_text(cost.usd_per_million, result.is_stable),
        ),
    )
    table = (
        "<table><thead><tr>"
        + "".join(f"<th>{_e(name)}</th>" for name, _ in numbers)
        + "</tr></thead><tbody><tr>"
        + "".join(f"<td><strong>{_e(value)}</strong></td>" for _, value in numbers)
        + "</tr></tbody></table>"
    )
    # One element, not three st.metric in four columns (nine messages to the browser on every
    # rerun; docs/performance.md): the same numbers, styled alike by the Lab's stylesheet.
    # Every text in it is escaped (_metric_html, the table's cells).
    block = f'<div class="{HEADLINE_CLASS}">{"".join(metrics)}{table}</div>'
    st.markdown(f"{HEADER}\n\n{block}" if header else block, unsafe_allow_html=True)
    if result.is_simulated:
        interval = result.simulation.interval_text()
        st.caption(
            f"p50/p95/p99 {result.p99_source}"
            + (f" ({interval})" if interval else "")
            + f": {result.accuracy_note}"
        )
    elif result.p50_ms is None:
        st.caption("The teaching model defines only a p99.")


HEADLINE_CLASS = "sdlab-headline"
METRIC_CLASS = "sdlab-metric"


def _metric_html(label: str, value: str, delta: str | None = None, good: bool = True) -> str:
    """One headline number, as Streamlit's metric draws it: label, value, and a delta that is
    green and points up when ``good``, red and down otherwise."""
    parts = [
        f'<div class="{METRIC_CLASS}" data-label="{_e(label)}">',
        f'<div class="{METRIC_CLASS}-label">{_e(label)}</div>',
        f'<div class="{METRIC_CLASS}-value">{_e(value)}</div>',
    ]
    if delta is not None:
        tone, arrow = ("good", "↑") if good else ("bad", "↓")
        parts.append(f'<div class="{METRIC_CLASS}-delta {tone}">{arrow} {_e(delta)}</div>')
    return "".join(parts) + "</div>"


def _e(text: str) -> str:
    return html.escape(text, quote=True)


SUMMARY_CLASS = "sdlab-summary"
"""The class of the summary line's marker (the Lab's stylesheet keeps the line in view by it)."""


def summary_line(result: Assessment) -> str:
    """One line: the headline p99 against the target, the load and the capacity (Markdown)."""
    target = result.workload.p99_target_ms
    p99 = result.p99_ms
    label = p99_label(result, short=True)
    if not result.is_stable:
        verdict = f":red[**{label} ∞**] over capacity"
    else:
        colour = "green" if p99 <= target else "red"
        verdict = f":{colour}[**{label} {ms_text(p99)}**] of {ms_text(target)}"
    return f"{verdict} · {load_text(result)} · capacity {rate_text(result.capacity_rps)}"


def sticky_summary(result: Assessment) -> None:
    """The summary line at the top of the sidebar, in view while any slider moves (drawn
    first there, ``sidebar.render``).

    ``position: sticky`` keeps it in view while the sidebar scrolls, on a laptop and in a phone's
    drawer alike. Its ancestors inherit the sidebar's background so the line is opaque over the
    sliders it passes, in either theme. (The rules, in ``style.py``, go on the element's
    container, the child of the sidebar's flex column, found by an empty marker in the line: a
    keyed container around it was one message more on every rerun.) The line is Markdown of
    computed numbers; the marker is literal.
    """
    st.sidebar.markdown(
        f'<span class="{SUMMARY_CLASS}"></span>{summary_line(result)}', unsafe_allow_html=True
    )


def metric_ms(value_ms: float | None) -> str:
    """A metric's value: ∞ alone where unstable (the banner above says so in words)."""
    return "∞" if value_ms is not None and not math.isfinite(value_ms) else ms_text(value_ms)


def _unstable_text(result: Assessment) -> str:
    text = (
        f"Unstable (∞): {rate_text(result.workload.rate_rps)} arrive but the fleet serves at "
        f"most {rate_text(result.capacity_rps)}, so the queue grows without bound."
    )
    if result.model == "teaching" and math.isfinite(result.p99_ms):
        text += (
            f" The original page's model would still show a p99 of {ms_text(result.p99_ms)}: its "
            "queueing term is capped, not a latency."
        )
    needed = result.min_replicas_for_target
    if needed is not None:
        text += f" {replicas_text(needed)} {'meets' if needed == 1 else 'meet'} the p99 target."
    return text
