"""The Lab page's sections below the headline and the diagram, each drawn from an
``Assessment`` (and a simulation summary): the recommended shape, the latency breakdown, the
meters, decisions and reasons, the accuracy table and the downloads.

Text shown here comes from the model (stage titles, meter and decision texts, reasons), never
from a visitor, and is rendered as Markdown without HTML, but for the breakdown's SVG, whose text
is escaped (listed, with why it is safe, in ``tests/test_security.py``'s ``TRUSTED_HTML``, as are
the headline's, the stylesheet's and the diagram's).
"""

from __future__ import annotations

import functools
import math

import streamlit as st

from sdlab_model import scenario_file
from sdlab_model.architecture import (
    path_text,
)
from sdlab_model.assessment import Assessment
from sdlab_model.workload import Workload
from sdlab_ui import cache, diagram, downloads, report, state, url
from sdlab_ui.server import runs
from sdlab_ui.text import ms_text

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


def recommended_shape(result: Assessment, *, then: str = "") -> None:
    """The stage, its title and summary, and the request path, followed by the Markdown ``then``
    (the next section's heading): one element, for each element is a message to the browser and
    every rerun sends them all."""
    stage = result.stage
    st.markdown(
        f"#### Recommended shape · stage {stage.number}\n\n**{stage.title}**\n\n{stage.summary}"
        f"\n\n:gray[Request path: {path_text(stage.path)}]" + (f"\n\n{then}" if then else "")
    )


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
    _distribution(view.result.workload)
    if then:
        st.markdown(then)


@runs.fragment
def _distribution(workload: Workload) -> None:
    """The simulated latency CDF, built and drawn only while open (a curve most visitors look
    at once); opening it reruns this section alone."""
    panel = st.expander(
        "Simulated latency distribution (CDF)", key="lab.distribution_open", on_change="rerun"
    )
    if panel.open:
        with panel:
            figure = cache.distribution_figure(workload)
            if figure is not None:
                st.plotly_chart(figure, key="lab.distribution")


def _modelled(result: Assessment):
    """The model's own latency result (before a simulation replaced its percentiles)."""
    return result.modelled if result.modelled is not None else result


def _cell(text: str) -> str:
    """Model text made safe inside one Markdown table cell."""
    return " ".join(str(text).replace("|", "/").split())


DOWNLOADS_HEADING = "#### Take the design away"


def report_downloads(view: cache.LabView, *, heading: bool = True) -> None:
    """Download the design as a self-contained HTML report, or as Markdown for a design doc.

    Or as a scenario file that restores this lab (``scenario_files``). All three in one row: each
    element and column is a message to the browser on every rerun.

    Each is built when clicked (``downloads.button``), in the download's own thread: the
    heatmap's grid and Graphviz's SVG are paid for only by whoever asks, and no media file is
    made per rerun for the server to hold and expire (an expired one answered a late click with
    a 404).
    """
    if heading:  # else the page drew DOWNLOADS_HEADING at the end of the element above
        st.markdown(DOWNLOADS_HEADING)
    # One row that wraps on a narrow screen: a horizontal container is one element, three
    # columns were four.
    row = st.container(horizontal=True)
    workload, model = view.result.workload, view.result.model
    link_query = url.link_query(workload, model)
    downloads.button(
        "Download report (HTML, opens offline)",
        functools.partial(_html_report, view, link_query),
        file_name=report.HTML_FILE_NAME,
        mime="text/html",
        key="lab.report_html",
        icon=":material/description:",
        where=row,
    )
    downloads.button(
        "Download summary (Markdown)",
        functools.partial(report.markdown_report, view, link_query=link_query),
        file_name=report.MARKDOWN_FILE_NAME,
        mime="text/markdown",
        key="lab.report_markdown",
        icon=":material/notes:",
        where=row,
    )
    downloads.button(
        "Download scenario file (JSON)",
        functools.partial(scenario_file.dumps, workload, model, state.current().residency),
        file_name=scenario_file.FILE_NAME,
        mime=scenario_file.MIME_TYPE,
        key="lab.scenario_download",
        icon=":material/save:",
        where=row,
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
    dot = diagram.diagram_dot(view.result)
    return report.html_report(
        view,
        heatmap=cache.heatmap_figure(workload, model),
        dot=dot,
        svg=report.architecture_svg(dot),
        link_query=link_query,
    )
