"""Two designs side by side: a pinned design A against the current lab, B.

A person pins the lab as A (sidebar), changes it, and reads both here: the headline percentiles
(simulated where the model calls itself approximate, as on the Lab's own headline), load,
capacity, cost, stage, the inputs that differ, and both architecture diagrams. Both designs are
in the URL (``sdlab_ui.state``), so the comparison is one shared link.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import streamlit as st

from sdlab_model.advice.search import workload_cost
from sdlab_model.assessment import Assessment
from sdlab_model.params import CHOICE_BY_NAME, INPUT_NAMES, NUMERIC_BY_NAME, TOGGLE_BY_NAME
from sdlab_model.workload import Workload
from sdlab_ui import cache, diagram, state
from sdlab_ui.text import (
    ms_delta_text,
    ms_text,
    rate_text,
    usd_delta_text,
    usd_per_million_text,
)
from sdlab_ui.widgets import format_value


@dataclass(frozen=True)
class Side:
    """One design's numbers as the comparison shows them, taken from its assessment."""

    p50_ms: float | None
    p95_ms: float | None
    p99_ms: float
    p99_is_simulated: bool
    meets_target: bool
    utilization: float
    capacity_rps: float
    usd_per_hour: float
    usd_per_million: float
    stage: int

    @classmethod
    def of(cls, result: Assessment) -> Side:
        p50, p95, p99 = result.p50_ms, result.p95_ms, result.p99_ms
        if not result.is_stable:  # as the Lab's headline: every percentile ∞ past capacity
            p50 = None if p50 is None else math.inf
            p95 = None if p95 is None else math.inf
            p99 = math.inf
        cost = workload_cost(result.workload)
        return cls(
            p50_ms=p50,
            p95_ms=p95,
            p99_ms=p99,
            p99_is_simulated=result.is_simulated,
            meets_target=result.meets_target,
            utilization=result.utilization,
            capacity_rps=result.capacity_rps,
            usd_per_hour=cost.usd_per_hour,
            usd_per_million=cost.usd_per_million,
            stage=result.stage.number,
        )


def _ms(value: float | None) -> str:
    if value is None:
        return "—"
    return "unstable (∞)" if not math.isfinite(value) else ms_text(value)


def _delta_ms(a: float | None, b: float | None) -> str:
    if a is None or b is None:
        return ""
    if not (math.isfinite(a) and math.isfinite(b)):
        return "" if a == b else ("now stable" if math.isfinite(b) else "now unstable")
    return ms_delta_text(b - a)


def _per_million(side: Side) -> str:
    # Over capacity the offered rate spread over the price reads as nearly free: no price.
    return (
        usd_per_million_text(side.usd_per_million)
        if math.isfinite(side.p99_ms)
        else "over capacity"
    )


def _share(value: float) -> str:
    return f"{value:.0%}" if value < 100 else f"{value:,.0f}x"


def rows(a: Side, b: Side, target_a_ms: float, target_b_ms: float) -> list[tuple[str, ...]]:
    """The comparison table: quantity, design A, design B, B − A (text, computed here)."""
    p99_label = "p99 (simulated)" if a.p99_is_simulated or b.p99_is_simulated else "p99"
    return [
        ("p50", _ms(a.p50_ms), _ms(b.p50_ms), _delta_ms(a.p50_ms, b.p50_ms)),
        ("p95", _ms(a.p95_ms), _ms(b.p95_ms), _delta_ms(a.p95_ms, b.p95_ms)),
        (p99_label, _ms(a.p99_ms), _ms(b.p99_ms), _delta_ms(a.p99_ms, b.p99_ms)),
        (
            "Meets the p99 target",
            f"{'yes' if a.meets_target else 'no'} ({ms_text(target_a_ms)})",
            f"{'yes' if b.meets_target else 'no'} ({ms_text(target_b_ms)})",
            "",
        ),
        (
            "Utilization",
            _share(a.utilization),
            _share(b.utilization),
            f"{(b.utilization - a.utilization) * 100:+.0f} points"
            if max(a.utilization, b.utilization) < 100
            else "",
        ),
        ("Capacity", rate_text(a.capacity_rps), rate_text(b.capacity_rps), ""),
        (
            "Cost per hour",
            f"${a.usd_per_hour:,.2f}",
            f"${b.usd_per_hour:,.2f}",
            usd_delta_text(b.usd_per_hour - a.usd_per_hour, "/h"),
        ),
        (
            "Cost per 1M inferences",
            _per_million(a),
            _per_million(b),
            usd_delta_text(b.usd_per_million - a.usd_per_million)
            if math.isfinite(a.p99_ms) and math.isfinite(b.p99_ms)
            else "",
        ),
        ("Recommended stage", str(a.stage), str(b.stage), ""),
    ]


def input_text(name: str, value: object) -> str:
    """One input's value as the sidebar shows it."""
    if name in NUMERIC_BY_NAME:
        return format_value(NUMERIC_BY_NAME[name], float(value))  # type: ignore[arg-type]
    if name in CHOICE_BY_NAME:
        return CHOICE_BY_NAME[name].label_of(str(value))
    return "on" if value else "off"


def input_label(name: str) -> str:
    for table in (NUMERIC_BY_NAME, TOGGLE_BY_NAME, CHOICE_BY_NAME):
        if name in table:
            return table[name].label
    return name


def differences(a: Workload, b: Workload) -> list[tuple[str, str, str]]:
    """The inputs where A and B differ: label, A's value, B's value."""
    return [
        (input_label(name), input_text(name, getattr(a, name)), input_text(name, getattr(b, name)))
        for name in INPUT_NAMES
        if getattr(a, name) != getattr(b, name)
    ]


def _table(header: tuple[str, ...], body: list[tuple[str, ...]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in body]
    return "\n".join(lines)


def section(view_b: cache.LabView, lab: state.LabState) -> None:
    """The comparison, drawn only while a design A is pinned; ``view_b`` is the Lab's own view."""
    design_a = state.pinned()
    if design_a is None:
        return
    st.subheader("Compare: pinned design A against this lab, B")
    design_b = lab.workload
    view_a = cache.lab_view(design_a, lab.model, lab.residency, role="pinned")
    side_a, side_b = Side.of(view_a.result), Side.of(view_b.result)
    changed = differences(design_a, design_b)
    st.markdown(
        _table(
            ("", "A (pinned)", "B (this lab)", "B − A"),
            rows(side_a, side_b, design_a.p99_target_ms, design_b.p99_target_ms),
        )
    )
    if changed:
        st.markdown("**What B changes:**\n\n" + _table(("Input", "A", "B"), changed))
    else:
        st.caption("B is the same design as A: change an input in the sidebar to compare.")
    # One above the other, each the column's width: side by side, their text drew at 7-10 px.
    for name, view in (("A (pinned)", view_a), ("B (this lab)", view_b)):
        column = st.container()
        column.markdown(f"**{name}**")
        diagram.draw_diagram(column, diagram.diagram_dot(view.result))
    buttons = st.columns(2)
    buttons[0].button(
        "Swap: make A the lab, pin B", key="sdlab.compare.swap", on_click=state.swap_pinned
    )
    buttons[1].button("Unpin A", key="sdlab.compare.unpin", on_click=state.unpin)
