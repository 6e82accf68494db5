"""A report to take away: the current design as one self-contained HTML file, and in Markdown.

The HTML report needs no network to open: plotly.js is inlined once (``include_plotlyjs=True``
on the first chart, about 4.6 MB), the architecture is an inline SVG drawn by Graphviz's ``dot``
where the server has it, and there is no external stylesheet, font or image. Where ``dot`` is
missing (Streamlit Community Cloud does not install it; the app draws the diagram in the
browser) the report says so and carries the diagram's DOT source instead, which any Graphviz
renders.

The builders are pure functions of the results and figures the Lab already has: no Streamlit
calls, so a download button can run them in its own thread when clicked. Every text that comes
from the model is HTML-escaped; nothing from a visitor reaches the report but validated inputs.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import plotly.graph_objects as go
import plotly.io as pio

from sdlab_model.architecture import path_text
from sdlab_model.assessment import Assessment
from sdlab_model.params import CHOICE_INPUTS, NUMERIC_INPUTS, TOGGLE_INPUTS
from sdlab_model.simulation.converged import ConvergedSim
from sdlab_model.sources import (
    FORMULAS,
    ORIGINAL_LAB,
    SOURCES,
    TEACHING_ASSUMPTIONS,
    TRADEOFF_BY_DECISION,
)
from sdlab_ui import figures, prepared_figure
from sdlab_ui.server import spawn
from sdlab_ui.text import ms_text, rate_text
from sdlab_ui.widgets import format_value

if TYPE_CHECKING:
    from sdlab_ui.cache import LabView

HTML_FILE_NAME = "sdlab-report.html"
MARKDOWN_FILE_NAME = "sdlab-report.md"
SECTIONS: tuple[str, ...] = (
    "Inputs",
    "Recommended architecture",
    "p99 and its accuracy",
    "Latency breakdown",
    "p99 heatmap",
    "Bottlenecks",
    "Decisions and tradeoffs",
    "Assumptions and sources",
)
"""The report's section headings, in order (the HTML and the Markdown share them)."""
MODEL_TITLES = {"queueing": "Queueing (M/D/c + batching)", "teaching": "Teaching (budgets)"}
_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; color: #1f2937;
       max-width: 1100px; margin: 2rem auto; padding: 0 1rem; line-height: 1.5; }
h1 { font-size: 1.6rem; } h2 { margin-top: 2.2rem; border-bottom: 1px solid #e5e7eb; }
table { border-collapse: collapse; margin: 0.5rem 0; }
th, td { border: 1px solid #e5e7eb; padding: 0.3rem 0.6rem; text-align: left;
         vertical-align: top; }
th { background: #f3f5f9; }
.ok { color: #15803d; } .bad { color: #dc2626; }
.note { color: #6b7280; font-size: 0.9rem; }
.diagram svg { max-width: 100%; height: auto; }
pre { background: #f3f5f9; padding: 0.75rem; overflow-x: auto; font-size: 0.8rem; }
@media print { .js-plotly-plot { break-inside: avoid; } }
"""


def dot_available() -> bool:
    """Whether Graphviz's ``dot`` is installed here (the server draws the diagrams)."""
    return spawn.dot() is not None


def architecture_svg(dot: str) -> str | None:
    """The diagram as inline SVG from Graphviz's ``dot``; None where it is missing or fails."""
    process = spawn.dot()
    if process is None:
        return None
    # dot draws a graph once the line with its closing brace has ended.
    output = process.run(dot.encode() + b"\n", spawn.DOT_TIMEOUT_S)
    start = -1 if output is None else output.find(b"<svg")
    if start < 0:
        return None
    # Without the XML prolog and DOCTYPE, for inline use.
    return output[start:].decode("utf-8", errors="replace")


def html_report(
    view: LabView,
    *,
    heatmap: go.Figure | None,
    dot: str,
    svg: str | None,
    link_query: str,
) -> str:
    """The whole report as one HTML document that opens without a network."""
    result = view.result
    breakdown = prepared_figure.PreparedFigure(
        figures.latency_breakdown_spec(view.breakdown_rows, result.workload.p99_target_ms)
    )
    charts = _charts((breakdown, heatmap))
    body = [
        f"<h1>sdlab design report: {_e(result.stage.title)}</h1>",
        f'<p class="note">{_e(_model_line(result))} Reopen this lab in sdlab with the query '
        f"<code>{_e(link_query)}</code>.</p>",
        _section(0, _table(("Input", "Value"), _input_rows(result))),
        _section(1, _architecture_html(result, dot, svg)),
        _section(2, _accuracy_html(view)),
        _section(3, charts[0]),
        _section(
            4,
            charts[1]
            if heatmap is not None
            else '<p class="note">The heatmap could not be computed for this lab.</p>',
        ),
        _section(5, _table(("Meter", "Load", "Why it matters"), _meter_rows(result))),
        _section(6, _decisions_html(result)),
        _section(7, _sources_html()),
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>sdlab report: {_e(result.stage.title)}</title>\n<style>{_STYLE}</style>\n"
        "</head>\n<body>\n" + "\n".join(body) + "\n</body>\n</html>\n"
    )


def markdown_report(view: LabView, *, link_query: str) -> str:
    """The same design in Markdown, for pasting into a design document (no charts)."""
    result = view.result
    p99, simulated = _headline(view)
    target = result.workload.p99_target_ms
    lines = [
        f"# sdlab design report: {result.stage.title}",
        "",
        f"{_model_line(result)} Reopen in sdlab with the query `{link_query}`.",
        "",
        f"## {SECTIONS[0]}",
        "",
        *_md_table(("Input", "Value"), _input_rows(result)),
        "",
        f"## {SECTIONS[1]}",
        "",
        f"**Stage {result.stage.number}: {result.stage.title}.** {result.stage.summary}",
        "",
        f"Request path: {path_text(result.stage.path)}",
        "",
        f"## {SECTIONS[2]}",
        "",
        f"- p99{' (simulated)' if simulated else ''}: **{p99_text(result, p99)}** "
        f"against a target of {ms_text(target)} ({_verdict(result, p99)})",
        f"- Capacity {rate_text(result.capacity_rps)}, utilization {_share(result.utilization)}, "
        f"replicas needed for the target: {_needed(result)}",
        "",
        *_md_table(
            ("", "p99", "against the simulation", "how it is computed"), _accuracy_rows(view)
        ),
        "",
        f"## {SECTIONS[3]}",
        "",
        *_md_table(("Model", "Compute", "Batch formation", "Queueing"), _breakdown_rows(view)),
        "",
        f"## {SECTIONS[5]}",
        "",
        *_md_table(("Meter", "Load", "Why it matters"), _meter_rows(result)),
        "",
        f"## {SECTIONS[6]}",
        "",
        *_md_table(("Decision", "State", "Why", "Gain", "Cost"), _decision_rows(result)),
        "",
        f"## {SECTIONS[7]}",
        "",
        *(f"- {a.title}: {a.teaching} {a.queueing_refinement}" for a in TEACHING_ASSUMPTIONS),
        *(f"- [{s.title}]({s.url}) ({s.source_name})" for s in SOURCES),
        f"- Started from the [{ORIGINAL_LAB.title}]({ORIGINAL_LAB.url}) "
        f"(source: {ORIGINAL_LAB.source_url}).",
        "",
        "The HTML report beside this file has the charts and the architecture diagram.",
        "",
    ]
    return "\n".join(lines)


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _section(index: int, content: str) -> str:
    anchor = SECTIONS[index].lower().replace(" ", "-")
    return f'<section id="{anchor}">\n<h2>{_e(SECTIONS[index])}</h2>\n{content}\n</section>'


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    head = "".join(f"<th>{_e(cell)}</th>" for cell in header)
    body = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _md_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    def cells(row: Sequence[str]) -> str:
        return "| " + " | ".join(" ".join(str(c).replace("|", "/").split()) for c in row) + " |"

    return [cells(header), "|" + "---|" * len(header), *(cells(row) for row in rows)]


def _charts(figures: Sequence[go.Figure | None]) -> list[str]:
    """Each figure as an HTML fragment; plotly.js inlined once, in the first one drawn."""
    fragments, inlined = [], False
    for figure in figures:
        if figure is None:
            fragments.append("")
            continue
        # Streamlit's chart theme makes room for the axis labels; a bare page must ask for it.
        # From the figure's dict: a figure made from a spec (a PreparedFigure) keeps its
        # traces only there, and copying the figure itself gave an empty chart.
        standalone = go.Figure(figure.to_dict()).update_layout(
            margin={"l": 90, "r": 30, "t": 40, "b": 50}
        )
        standalone.update_xaxes(automargin=True).update_yaxes(automargin=True)
        fragments.append(
            pio.to_html(
                standalone,
                full_html=False,
                include_plotlyjs=not inlined,
                config={"displaylogo": False, "responsive": True},
            )
        )
        inlined = True
    return fragments


def _model_line(result: Assessment) -> str:
    return f"Latency model: {MODEL_TITLES.get(result.model, result.model)}."


def _input_rows(result: Assessment) -> list[tuple[str, str]]:
    workload = result.workload
    rows = [
        (spec.label, format_value(spec, getattr(workload, spec.name))) for spec in NUMERIC_INPUTS
    ]
    rows += [(t.label, "on" if getattr(workload, t.name) else "off") for t in TOGGLE_INPUTS]
    rows += [(c.label, c.label_of(getattr(workload, c.name))) for c in CHOICE_INPUTS]
    return rows


def _architecture_html(result: Assessment, dot: str, svg: str | None) -> str:
    stage = result.stage
    intro = (
        f"<p><strong>Stage {stage.number}: {_e(stage.title)}.</strong> {_e(stage.summary)}</p>"
        f"<p>Request path: {_e(path_text(stage.path))}</p>"
    )
    if svg is not None:
        return intro + f'<div class="diagram">{svg}</div>'
    return intro + (
        '<p class="note">Graphviz is not installed where this report was made, so the diagram '
        "is given as its DOT source: paste it into any Graphviz viewer to draw it.</p>"
        f"<pre>{_e(dot)}</pre>"
    )


def _headline(view: LabView) -> tuple[float, bool]:
    """The p99 the Lab headlines (the judgement's) and whether it is simulated."""
    return view.result.p99_ms, view.result.is_simulated


def p99_text(result: Assessment, p99: float) -> str:
    return "∞ (over capacity)" if not result.is_stable or not math.isfinite(p99) else ms_text(p99)


def _verdict(result: Assessment, p99: float) -> str:
    if not result.is_stable:
        return "unstable: more requests arrive than the fleet can serve"
    target = result.workload.p99_target_ms
    return f"meets it, {ms_text(target - p99)} headroom" if p99 <= target else "misses it"


def _share(utilization: float) -> str:
    return f"{utilization:.0%}" if utilization < 100 else f"{utilization:,.0f}x"


def _needed(result: Assessment) -> str:
    needed = result.min_replicas_for_target
    return "none up to 500" if needed is None else str(needed)


def _accuracy_rows(view: LabView) -> list[tuple[str, str, str, str]]:
    sim: ConvergedSim = view.simulated()  # run now if the page did not need it
    rows = [
        (
            f"{r.model.capitalize()} model",
            ms_text(m.p99_ms),
            sim.error_text(m.p99_ms) if sim.is_stable else "—",
            m.accuracy_note,
        )
        for r in (view.teaching, view.queueing)
        for m in (r.modelled if r.modelled is not None else r,)
    ]
    rows.append(("Simulation", ms_text(sim.p99_ms), sim.interval_text() or "—", sim.note))
    return rows


def _accuracy_html(view: LabView) -> str:
    result = view.result
    p99, simulated = _headline(view)
    css = "ok" if result.is_stable and p99 <= result.workload.p99_target_ms else "bad"
    headline = (
        f'<p>p99{" (simulated)" if simulated else ""}: <strong class="{css}">'
        f"{_e(p99_text(result, p99))}</strong> against a target of "
        f"{_e(ms_text(result.workload.p99_target_ms))}: {_e(_verdict(result, p99))}. "
        f"Capacity {_e(rate_text(result.capacity_rps))}, utilization "
        f"{_e(_share(result.utilization))}, replicas needed for the target: "
        f"{_e(_needed(result))}.</p>"
    )
    reasons = "".join(f"<li>{_e(r.text)}</li>" for r in result.reasons)
    return (
        headline
        + _table(("", "p99", "against the simulation", "how it is computed"), _accuracy_rows(view))
        + f"<h3>Why this changes</h3><ul>{reasons}</ul>"
    )


def _breakdown_rows(view: LabView) -> list[tuple[str, str, str, str]]:
    return [
        (
            f"{r.model.capitalize()} model",
            ms_text(r.compute_ms),
            ms_text(r.batch_wait_ms),
            ms_text(r.queue_ms) if r.is_stable or r.model == "teaching" else "∞",
        )
        for r in (view.queueing, view.teaching)
    ]


def _meter_rows(result: Assessment) -> list[tuple[str, str, str]]:
    return [(m.label, f"{m.value_text} ({m.status})", m.explanation) for m in result.meters]


def _decision_rows(result: Assessment) -> list[tuple[str, str, str, str, str]]:
    rows = []
    for decision in result.decisions:
        tradeoff = TRADEOFF_BY_DECISION.get(decision.id)
        rows.append(
            (
                decision.label,
                decision.state.replace("-", " "),  # "not yet", as the page says
                decision.text,
                tradeoff.gain if tradeoff else "",
                tradeoff.cost if tradeoff else "",
            )
        )
    return rows


def _decisions_html(result: Assessment) -> str:
    return _table(("Decision", "State", "Why", "Gain", "Cost"), _decision_rows(result))


def _sources_html() -> str:
    assumptions = "".join(
        f"<li><strong>{_e(a.title)}.</strong> Teaching model: {_e(a.teaching)} "
        f"Queueing model: {_e(a.queueing_refinement)}</li>"
        for a in TEACHING_ASSUMPTIONS
    )
    sources = "".join(
        f'<li><a href="{_e(s.url)}">{_e(s.title)}</a> ({_e(s.source_name)}): {_e(s.summary)}</li>'
        for s in SOURCES
    )
    formulas = "".join(
        f"<li><strong>{_e(f.title)}</strong>: {_e(f.explanation)} "
        f"<span class='note'>({_e(f.reference)})</span></li>"
        for f in FORMULAS
    )
    return (
        f"<h3>Assumptions</h3><ul>{assumptions}</ul><h3>Sources</h3><ul>{sources}</ul>"
        f"<h3>Formulas</h3><ul>{formulas}</ul>"
        f'<p class="note">sdlab started from the <a href="{_e(ORIGINAL_LAB.url)}">'
        f"{_e(ORIGINAL_LAB.title)}</a> of the {_e(ORIGINAL_LAB.site)} site (source: "
        f'<a href="{_e(ORIGINAL_LAB.source_url)}">{_e(ORIGINAL_LAB.source_url)}</a>).</p>'
    )
