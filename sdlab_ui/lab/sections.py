"""The Lab page's sections, each drawn from an ``Assessment`` (and a simulation summary).

Text shown here comes from the model (stage titles, meter and decision texts, reasons), never
from a visitor, and is rendered as Markdown without HTML, but for a few elements whose HTML is
literal or escaped: the stylesheet and header, the headline numbers, the summary line's marker,
the breakdown's SVG and the diagram's, which Graphviz draws from the model's own text (each
listed, with why it is safe, in ``tests/test_security.py``'s ``TRUSTED_HTML``).
"""

from __future__ import annotations

import functools
import html
import math
from concurrent.futures import Future

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from sdlab_model import scenario_file
from sdlab_model.advice.search import workload_cost
from sdlab_model.architecture import (
    FLOW_LEGEND,
    legend_entries,
    path_text,
    to_dot,
)
from sdlab_model.assessment import Assessment
from sdlab_model.design import packing_note
from sdlab_ui import cache, downloads, report, state
from sdlab_ui.figures import ms_text, rate_text, replicas_text
from sdlab_ui.server import deferred, runs

# Streamlit's own icon font, so the marks show even where no emoji font is installed.
STATUS_ICON = {
    "ok": ":green[:material/check_circle:]",
    "neutral": ":gray[:material/radio_button_unchecked:]",
    "warning": ":orange[:material/warning:]",
    "danger": ":red[:material/error:]",
}
DECISION_BADGE = {
    "needed": ":red-badge[needed]",
    "useful": ":blue-badge[useful]",
    "tradeoff": ":orange-badge[tradeoff]",
    "not-yet": ":gray-badge[not yet]",
}
_UPLOAD_KEY = "lab.scenario_upload"
_UPLOAD_MESSAGE_KEY = "sdlab.upload_message"


def p99_label(result: Assessment, short: bool = False) -> str:
    """'p99', 'p99 (simulated)' or 'p99 (simulated, not converged)': where the number is from."""
    if not result.is_simulated:
        return "p99"
    if result.simulation is not None and not result.simulation.converged:
        return "p99 (sim., not converged)" if short else "p99 (simulated, not converged)"
    return "p99 (sim.)" if short else "p99 (simulated)"


_DIAGRAM_KEY = "sdlab.diagram"
DIAGRAM_CLASS = "sdlab-diagram"
"""The class of the element holding the server-drawn diagram."""
DIAGRAM_OPENING = f'<div class="{DIAGRAM_CLASS}">'
"""How the Markdown of a server-drawn diagram starts (tests find it by this; the Lab's
stylesheet names the class too)."""
# Streamlit's badge colours for the node states (the diagram's own fills are pastel versions).
_STATE_BADGE = {
    "ok": "green",
    "warning": "orange",
    "needed": "blue",
    "inactive": "gray",
    "overloaded": "red",
}


_POLICY_SHORT = {
    "round_robin": "round robin",
    "least_request": "least request",
    "random": "random",
    "central_queue": "one central queue",
}


def diagram_notes(result: Assessment) -> dict[str, str]:
    """The numbers drawn on the diagram's nodes: traffic, models, batch, replicas and load."""
    workload = result.workload
    notes = {
        "client": rate_text(workload.rate_rps),
        "gateway": f"{workload.models_hosted:,} model"
        + ("s" if workload.models_hosted != 1 else "")
        + f" · {_POLICY_SHORT[workload.lb_policy]}",
        "replicas": f"{replicas_text(workload.replicas)} · {_load_text(result)}",
    }
    if workload.dynamic_batching and workload.batch_window_ms > 0:
        batch = (
            f"×{result.mean_batch_size:.1f} capacity"
            if result.model == "teaching"
            else f"batch ≈ {result.mean_batch_size:.1f}"
        )
        notes["batcher"] = f"{batch} · {workload.batch_window_ms:g} ms"
    if result.packing is not None:  # queueing mode, a GPU fleet that needs packing
        notes["gpu_pool"] = packing_note(result.packing, workload.models_hosted)
    return notes


def diagram_dot(result: Assessment) -> str:
    """The architecture diagram as DOT, with the numbers on its nodes."""
    return to_dot(result.node_states, result.flow_states, result.stage.path, diagram_notes(result))


def _load_text(result: Assessment) -> str:
    """The load against capacity, and with batching how busy the slots are at the batches that
    form (the two differ where batches are small: capacity counts full ones)."""
    utilization = result.utilization
    if not math.isfinite(utilization) or utilization >= 10:
        return "far over capacity"
    text = f"load {utilization:.0%}"
    if result.is_stable and result.mean_batch_size > 1.0 and result.model == "queueing":
        text += f", slots {result.slot_utilization:.0%} busy"
    return text


def architecture(view: cache.LabView) -> None:
    """The diagram, full width, with numbers on its nodes; its legend below in small print (in
    the server's SVG's element: one message to the browser fewer on every rerun).

    Drawn on the server as SVG where Graphviz is installed (``cache.diagram_svg``). Otherwise the
    browser draws the DOT, and a changed diagram is drawn afresh, not updated in place: updating
    in place makes d3-graphviz tween every edge, sampling each path at every pixel of its length
    (``getPointAtLength``), measured at ~190 ms of the renderer's CPU per Lab rerun. A chart's
    identity is its position on the page, so a changed diagram moves one slot down or up (an
    empty slot takes the other place) and mounts as a new chart.
    """
    result = view.result
    inputs = (result.workload, result.model)
    last_inputs, last_dot, slot = st.session_state.get(_DIAGRAM_KEY, (None, None, 0))
    dot = last_dot
    if inputs != last_inputs:
        dot = diagram_dot(result)
    drawn = cache.diagram_svg.peek(dot)
    if drawn is not None:  # drawn before (by this session or another): no need to wait for dot
        draw_server_diagram(dot, svg=drawn, legend=DIAGRAM_LEGEND)
        st.session_state[_DIAGRAM_KEY] = (inputs, dot, slot)
    elif report.dot_available():
        # Drawn last (``deferred``): ``dot`` runs while the rest of the page and the sidebar are
        # drawn, and the diagram takes this place when it is done.
        svg = cache.diagram_svg_later(dot)
        place = st.empty()
        deferred.defer(functools.partial(_draw_when_done, place, svg, dot))
        st.session_state[_DIAGRAM_KEY] = (inputs, dot, slot)
    else:  # no Graphviz on the server: the browser lays the DOT out
        if last_dot is not None and last_dot != dot:
            slot = 1 - slot
        st.session_state[_DIAGRAM_KEY] = (inputs, dot, slot)
        if slot:
            st.empty()
        st.graphviz_chart(dot, width="stretch")
        st.caption(DIAGRAM_LEGEND)


def _diagram_legend() -> str:
    states = " ".join(
        f":{_STATE_BADGE[state]}-badge[{state}] {meaning}" for state, meaning in legend_entries()
    )
    return f"Boxes: {states}  \nArrows: " + " · ".join(FLOW_LEGEND)


DIAGRAM_LEGEND = _diagram_legend()
"""What a box's colour and an arrow's style mean (Markdown; the model's own text)."""


def _draw_when_done(place: DeltaGenerator, svg: Future[str | None], dot: str) -> None:
    """Put the diagram and its legend in ``place`` once ``dot`` has drawn it (the browser draws
    it if not)."""
    if not svg.done():
        runs.give_up()  # dot is a process of its own: let another run draw meanwhile
    drawn = svg.result()
    if not draw_server_diagram(dot, place, drawn, legend=DIAGRAM_LEGEND):
        with place.container():
            st.graphviz_chart(dot, width="stretch")
            st.caption(DIAGRAM_LEGEND)


def draw_server_diagram(
    dot: str, where: DeltaGenerator | None = None, svg: str | None = None, legend: str = ""
) -> bool:
    """Draw ``dot`` as the server's SVG (in ``where``, or the page; ``svg`` if already drawn),
    with the Markdown ``legend`` below it in small print (the Lab's stylesheet); False without
    Graphviz."""
    svg = svg or cache.diagram_svg(dot)
    if svg is None:
        return False
    html = f"{DIAGRAM_OPENING}{svg}</div>"  # Graphviz's SVG of the model's own text
    if legend:  # a paragraph of its own after the one-line HTML block: Markdown, not HTML
        html += f"\n\n{legend}"
    (st if where is None else where).markdown(html, unsafe_allow_html=True)
    return True


def draw_diagram(where: DeltaGenerator, dot: str) -> None:
    """Draw ``dot`` in ``where``: the server's SVG, or the browser's layout without Graphviz."""
    if not draw_server_diagram(dot, where):
        where.graphviz_chart(dot, width="stretch")


def recommended_shape(result: Assessment, *, then: str = "") -> None:
    """The stage, its title and summary, and the request path, followed by the Markdown ``then``
    (the next section's heading): one element, for each element is a message to the browser and
    every rerun sends them all."""
    stage = result.stage
    st.markdown(
        f"#### Recommended shape · stage {stage.number}\n\n**{stage.title}**\n\n{stage.summary}"
        f"\n\n:gray[Request path: {path_text(stage.path)}]" + (f"\n\n{then}" if then else "")
    )


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
        margin = f"{target - p99:+.3g} ms headroom"
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
        ("Cost", f"${cost.usd_per_hour:,.2f}/h · {per_million_text(cost.usd_per_million, result)}"),
    )
    table = (
        "<table><thead><tr>"
        + "".join(f"<th>{_e(name)}</th>" for name, _ in numbers)
        + "</tr></thead><tbody><tr>"
        + "".join(f"<td><strong>{_e(value)}</strong></td>" for _, value in numbers)
        + "</tr></tbody></table>"
    )
    # One element, not three st.metric in four columns (nine messages to the browser on every
    # rerun, ~0.5 ms of the server's time): the same numbers, styled alike by the Lab's stylesheet.
    # Every text in it is escaped (_metric_html, the table's cells).
    block = f'<div class="{HEADLINE_CLASS}">{"".join(metrics)}{table}</div>'
    st.markdown(f"{_HEADER}\n\n{block}" if header else block, unsafe_allow_html=True)
    if result.is_simulated:
        interval = result.simulation.interval_text()
        st.caption(
            f"p50/p95/p99 {result.p99_source}"
            + (f" ({interval})" if interval else "")
            + f": {result.accuracy_note}"
        )
    elif result.p50_ms is None:
        st.caption("The teaching model defines only a p99.")


def per_million_text(usd_per_million: float, result: Assessment) -> str:
    """'$3.97 per 1M', '<$0.01 per 1M', or no price where the fleet cannot serve the rate (the
    offered rate spread over its price reads as nearly free)."""
    if not result.is_stable:
        return "no price per 1M over capacity"
    if usd_per_million < 0.01:
        return "<$0.01 per 1M"
    return f"${usd_per_million:,.2f} per 1M"


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
    return f"{verdict} · {_load_text(result)} · capacity {rate_text(result.capacity_rps)}"


def sticky_summary(result: Assessment) -> None:
    """The summary line at the top of the sidebar, in view while any slider moves.

    Kept at the sidebar's top by CSS (``order``) wherever it is drawn: the page, which draws it,
    runs before the shared sidebar today, but a page drawn after it would put it last; and
    ``position: sticky`` keeps it there while the
    sidebar scrolls, on a laptop and in a phone's drawer alike. Its ancestors inherit the
    sidebar's background so the line is opaque over the sliders it passes, in either theme. (The
    rules, in ``_LAB_STYLE``, go on the element's container, the child of the sidebar's flex
    column, found by an empty marker in the line: a keyed container around it was one message
    more on every rerun.) The line is Markdown of computed numbers; the marker is literal.
    """
    st.sidebar.markdown(
        f'<span class="{SUMMARY_CLASS}"></span>{summary_line(result)}', unsafe_allow_html=True
    )


LAB_TITLE = "System Design Lab: real-time model serving"
_LAB_LEAD = (
    "Dynamic batching and GPUs buy capacity, and each spends part of your **p99 budget**. Move "
    "the workload in the sidebar or load a scenario below, and watch the architecture respond."
)
_LAB_STYLE_SOURCE = """<style>
[data-testid="stSidebar"] :has(.sdlab-summary) { background-color: inherit; }
[data-testid="stSidebar"] [data-testid="stElementContainer"]:has(.sdlab-summary) {
  order: -1; position: sticky; top: 0; z-index: 5; flex-shrink: 0; background-color: inherit;
  padding: 0.35rem 0 0.25rem; border-bottom: 1px solid rgba(128, 128, 128, 0.3);
}
[data-testid="stElementContainer"]:has(.sdlab-summary) p { font-size: 0.9rem; }
.st-key-lab-cards { gap: 0.75rem; align-items: stretch; }
.st-key-lab-cards > div { flex: 1 1 0; min-width: 9rem; }
.st-key-lab-cards [data-testid="stButton"], .st-key-lab-cards button { height: 100%; }
.st-key-lab-cards button { justify-content: flex-start; align-items: flex-start;
  padding: 0.6rem 0.85rem; }
.st-key-lab-cards button p { white-space: normal; font-size: 0.875rem; }
.sdlab-headline { display: flex; flex-wrap: wrap; align-items: flex-start; gap: 0.5rem 2.5rem; }
.sdlab-metric-label { font-size: 0.875rem; opacity: 0.75; }
.sdlab-metric-value { font-size: 2.25rem; line-height: 1.3; white-space: nowrap; }
.sdlab-metric-delta { display: inline-block; font-size: 0.875rem; padding: 0 0.45rem;
  border-radius: 0.5rem; }
.sdlab-metric-delta.good { color: rgb(9, 171, 59); background: rgba(9, 171, 59, 0.1); }
.sdlab-metric-delta.bad { color: rgb(255, 43, 43); background: rgba(255, 43, 43, 0.1); }
.sdlab-headline table { flex: 1 1 24rem; margin: 0; align-self: center; }
.sdlab-diagram ~ p { font-size: 0.875rem;
  color: color-mix(in srgb, currentColor 60%, transparent); }
.sdlab-diagram, [data-testid="stGraphVizChart"] { overflow-x: auto; }
[data-testid="stGraphVizChart"] svg { min-width: 46rem; }
@media (max-width: 46rem) {
  .sdlab-diagram::before, [data-testid="stGraphVizChart"]::before {
    content: "Swipe sideways to see the whole diagram."; display: block; position: sticky;
    left: 0; font-size: 0.8rem; opacity: 0.7; }
  .sdlab-headline table { font-size: 0.875rem; }
  .sdlab-headline th, .sdlab-headline td { padding: 0.25rem 0.4rem; }
}
</style>"""
"""The Lab's stylesheet: the summary line's rules (``sticky_summary``), the scenario cards'
(``cards.scenario_cards``: five buttons of equal width and height, each card's text from its top),
the headline numbers' (``headline``: drawn as Streamlit draws a metric, with its delta
colours) and the diagram's (never under its own size, so its text stays legible: a phone scrolls
it sideways, with a hint)."""
_LAB_STYLE = " ".join(_LAB_STYLE_SOURCE.split())
"""The stylesheet on one line: Streamlit dedents every Markdown text line by line on every rerun."""


_HEADER = f"{_LAB_STYLE}\n\n# {LAB_TITLE}\n\n{_LAB_LEAD}"


def lab_header() -> None:
    """The Lab's stylesheet, title and lead as one element (each element is a message to the
    browser on every rerun, and ``st.html`` costs more than Markdown: it first checks whether its
    text names a file). All of it is literal text. (``headline`` draws it with the numbers.)"""
    st.markdown(_HEADER, unsafe_allow_html=True)


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
        text += f" {needed} replicas meet the p99 target."
    return text


BREAKDOWN_CLASS = "sdlab-breakdown"


def breakdown(view: cache.LabView) -> None:
    """Where each model's p99 goes: compute, batch formation, queueing.

    An SVG the server draws from the numbers (``figures.latency_breakdown_svg``), not a plotly
    chart: two bars need no zoom or pan, and the browser swaps the markup instead of running
    plotly on every change.
    """
    st.markdown(
        f'<div class="{BREAKDOWN_CLASS}">{view.breakdown_svg}</div>', unsafe_allow_html=True
    )


def meter_bar(ratio: float, cells: int = 10) -> str:
    """A text gauge: ratio 1.0 (the limit) fills it; beyond the limit it shows how far."""
    if not math.isfinite(ratio):
        return "▰" * cells + " ∞"
    filled = round(min(max(ratio, 0.0), 1.0) * cells)
    return "▰" * filled + "▱" * (cells - filled) + (f" {ratio:.1f}x" if ratio > 1 else "")


def analysis(result: Assessment, *, then: str = "") -> None:
    """The bottleneck meters, the design decisions and the reasons, followed by the Markdown
    ``then`` (the next section's heading), as one element: each element is a message on every
    rerun."""
    sections = (_meters(result), _decisions(result), _reasons(result), *((then,) if then else ()))
    st.markdown("\n\n".join(sections))


def _meters(result: Assessment) -> str:
    """The five bottleneck meters as one table."""
    # Three columns, the gauge and its reading in one: four overflowed a phone's width.
    rows = "\n".join(
        f"| {STATUS_ICON[m.status]} **{m.label}** | `{meter_bar(m.ratio)}` {m.value_text} "
        f"| {m.explanation} |"
        for m in result.meters
    )
    return (
        "#### Bottlenecks\n\n| Meter | Load (full = at the limit) | Why it matters |"
        f"\n|---|---|---|\n{rows}"
    )


def _decisions(result: Assessment) -> str:
    """The six design decisions and their state, as one table."""
    rows = "\n".join(
        f"| **{d.label}** | {DECISION_BADGE.get(d.state, d.state)} | {d.text} |"
        for d in result.decisions
    )
    return f"#### Decisions\n\n| Decision | State | Why |\n|---|---|---|\n{rows}"


def _reasons(result: Assessment) -> str:
    lines = "\n".join(f"- {STATUS_ICON[r.status]} {r.text}" for r in result.reasons)
    return f"#### Why this changes\n\n{lines}"


SIMULATION_CHECK_KEY = "lab.simulation_check"


def accuracy_heading(view: cache.LabView) -> str:
    """The heading of ``accuracy`` (Markdown), for a page that draws it as the end of the
    Markdown above; under it, where the page simulates on every change, a line saying so."""
    text = "#### How far to trust the p99: teaching vs queueing vs simulation"
    if view.queueing.is_simulated:
        text += (
            "\n\n:gray[Simulated on every change here: the queueing model is approximate for "
            "this workload.]"
        )
    return text


def accuracy(view: cache.LabView, *, heading: bool = True, then: str = "") -> None:
    """Teaching and queueing p99 side by side and how each is computed; against a simulation
    (each model's error, the simulated p99's interval, the CDF) where the page simulates anyway
    or the visitor asks for it (the check above the table). Without ``heading`` where the page
    has drawn ``accuracy_heading`` at the end of the element above; then the Markdown ``then``
    (the next section's heading), in the table's element unless the CDF comes between (each
    element is a message on every rerun).

    A simulation is most of what a fresh rerun costs the server, so it runs on every change only
    where the queueing model calls itself approximate (the headline is then simulated too).
    """
    if heading:
        st.markdown(accuracy_heading(view))
    models = [(r.model, _modelled(r)) for r in (view.teaching, view.queueing)]
    sim = view.queueing.simulation
    if sim is None and st.toggle(
        "Check against a simulation",
        key=SIMULATION_CHECK_KEY,
        help="Runs the simulator on this workload, and again on every change while on.",
    ):
        sim = view.simulated()
    if sim is None:
        text = "| | p99 | how it is computed |\n|---|---|---|\n" + "\n".join(
            f"| **{name.capitalize()} model** | {ms_text(r.p99_ms)} | {_cell(r.accuracy_note)} |"
            for name, r in models
        )
    else:
        text = "| | p99 | against the simulation | how it is computed |\n|---|---|---|---|\n"
        text += "\n".join(
            f"| **{name.capitalize()} model** | {ms_text(r.p99_ms)} | "
            f"{sim.error_text(r.p99_ms) if sim.is_stable else '—'} | {_cell(r.accuracy_note)} |"
            for name, r in models
        )
        text += (
            f"\n| **Simulation** | {ms_text(sim.p99_ms)} | {sim.interval_text() or '—'} | "
            f"{_cell(sim.note)} |"
        )
    if sim is None or not sim.is_stable:
        st.markdown(text + (f"\n\n{then}" if then else ""))
        return
    st.markdown(text)
    # Drawn (and built) only while open: a chart redrawn on every slider move costs the browser
    # ~100 ms of CPU and the server ~9 ms, for a curve most visitors look at once.
    panel = st.expander(
        "Simulated latency distribution (CDF)", key="lab.distribution_open", on_change="rerun"
    )
    if panel.open:
        with panel:
            figure = cache.distribution_figure(view.result.workload)
            if figure is not None:
                st.plotly_chart(figure, key="lab.distribution")
    if then:
        st.markdown(then)


def _modelled(result: Assessment):
    """The model's own latency result (before a simulation replaced its percentiles)."""
    return result.modelled if result.modelled is not None else result


def _cell(text: str) -> str:
    """Model text made safe inside one Markdown table cell."""
    return " ".join(str(text).replace("|", "/").split())


def scenario_files(lab: state.LabState) -> None:
    """Restore a lab from its scenario file (a bad file changes nothing and says why); the
    download of one sits with the other downloads (``report_downloads``)."""
    st.file_uploader(
        "Restore a lab from its scenario file (JSON)",
        type=["json"],
        key=_UPLOAD_KEY,
        on_change=_on_upload,
    )
    kind, message = st.session_state.get(_UPLOAD_MESSAGE_KEY, (None, ""))
    if kind == "error":
        # The message quotes file content only as inert code spans (scenario_file's contract).
        st.error(f"Not loaded, the lab is unchanged: {message}")
    elif kind == "success":
        st.success(message)


DOWNLOADS_HEADING = "#### Take the design away"


def report_downloads(view: cache.LabView, *, heading: bool = True) -> None:
    """Download the design as a self-contained HTML report, or as Markdown for a design doc.

    Or as a scenario file that restores this lab (``scenario_files``). All three in one row: each
    element and column is a message to the browser on every rerun.

    Each is built when clicked (a callable), in the download's own thread: the heatmap's grid
    and Graphviz's SVG are paid for only by whoever asks, and no media file is made per rerun
    for the server to hold and expire (an expired one answered a late click with a 404).
    """
    if heading:  # else the page drew DOWNLOADS_HEADING at the end of the element above
        st.markdown(DOWNLOADS_HEADING)
    # One row that wraps on a narrow screen: a horizontal container is one element, three
    # columns were four.
    row = st.container(horizontal=True)
    workload, model = view.result.workload, view.result.model
    link_query = state.link_query(workload, model)
    row.download_button(
        "Download report (HTML, opens offline)",
        functools.partial(_html_report, view, link_query),
        file_name=report.HTML_FILE_NAME,
        mime="text/html",
        key="lab.report_html",
        on_click="ignore",
        icon=":material/description:",
    )
    row.download_button(
        "Download summary (Markdown)",
        functools.partial(report.markdown_report, view, link_query=link_query),
        file_name=report.MARKDOWN_FILE_NAME,
        mime="text/markdown",
        key="lab.report_markdown",
        on_click="ignore",
        icon=":material/notes:",
    )
    row.download_button(
        "Download scenario file (JSON)",
        functools.partial(scenario_file.dumps, workload, model, state.current().residency),
        file_name=scenario_file.FILE_NAME,
        mime=scenario_file.MIME_TYPE,
        key="lab.scenario_download",
        on_click="ignore",
        icon=":material/save:",
    )


def _html_report(view: cache.LabView, link_query: str) -> str:
    workload, model = view.result.workload, view.result.model
    return downloads.built_report(
        downloads.ReportRequest(
            (workload, model, link_query), functools.partial(_build_html, view, link_query)
        )
    )


def _build_html(view: cache.LabView, link_query: str) -> str:
    workload, model = view.result.workload, view.result.model
    dot = diagram_dot(view.result)
    return report.html_report(
        view,
        heatmap=cache.heatmap_figure(workload, model),
        dot=dot,
        svg=report.architecture_svg(dot),
        link_query=link_query,
    )


def _on_upload() -> None:
    uploaded = st.session_state.get(_UPLOAD_KEY)
    if uploaded is None:
        st.session_state.pop(_UPLOAD_MESSAGE_KEY, None)
        return
    if not hasattr(uploaded, "getvalue"):  # a file id the server never received (forged)
        st.session_state[_UPLOAD_MESSAGE_KEY] = ("error", "the file did not arrive.")
        return
    try:
        loaded = scenario_file.loads(uploaded.getvalue())
    except scenario_file.ScenarioFileError as error:
        st.session_state[_UPLOAD_MESSAGE_KEY] = ("error", str(error))
        return
    state.load(loaded.workload, loaded.model)
    state.load_residency(loaded.residency)
    st.session_state[_UPLOAD_MESSAGE_KEY] = ("success", "Scenario file loaded.")
