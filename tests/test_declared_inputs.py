"""Every page's inputs are declared in ``sdlab_model.params`` (or ``page_params``) and drawn by
``sdlab_ui.widgets``: no other UI module calls an input widget itself.

A static scan of ``sdlab_ui``, ``app_pages`` and ``app.py`` for calls of the input widgets below,
on ``st`` or on anything else (a column, a container). The exceptions are listed, each with why;
a new call fails, and so does a listed exception that is gone (take it off the list).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILDER = "sdlab_ui/widgets.py"
INPUT_WIDGETS = frozenset({"slider", "number_input", "select_slider", "selectbox", "text_input"})

UNDECLARED_INPUTS: dict[str, str] = {
    "sdlab_ui/residency/sections.py::inputs_form::text_input": "a list of model sizes, not a "
    "number: parse_sizes reads and bounds it",
    "sdlab_ui/timeline/canary.py::_inputs::text_input": "the rollout's steps, a list of shares: "
    "parse_steps reads and bounds it",
    "sdlab_ui/lab/cards.py::walkthrough::text_input": "a visitor's free-text prediction, not an "
    "input of the model",
    "sdlab_ui/heatmaps/controls.py::choose_axes::selectbox": "picks which declared inputs span the "
    "heatmap, a view of the page, not a value",
    "sdlab_ui/advice/hardware.py::catalog_pricing::selectbox": "picks a catalog entry for a "
    "button to apply, not a value the model reads",
}
"""``path::function::widget`` -> why that function draws an input widget itself."""


def widget_calls(source: str, relative_path: str) -> set[str]:
    """``path::function::widget`` of every input-widget call (``<module>`` at the top level)."""
    found = set()

    def visit(node: ast.AST, function: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                visit(child, child.name)
                continue
            if (
                isinstance(child, ast.Call)
                and isinstance(child.func, ast.Attribute)
                and child.func.attr in INPUT_WIDGETS
            ):
                found.add(f"{relative_path}::{function}::{child.func.attr}")
            visit(child, function)

    visit(ast.parse(source), "<module>")
    return found


def ui_files() -> list[Path]:
    return sorted([*ROOT.glob("sdlab_ui/**/*.py"), *ROOT.glob("app_pages/*.py"), ROOT / "app.py"])


def test_the_scan_finds_calls_on_st_and_on_columns_at_any_depth():
    source = (
        "import streamlit as st\n"
        "st.slider('a')\n"
        "def draw(column):\n"
        "    with column:\n"
        "        if True:\n"
        "            column.number_input('b')\n"
        "    st.button('not an input')\n"
    )
    assert widget_calls(source, "m.py") == {"m.py::<module>::slider", "m.py::draw::number_input"}


def test_no_page_draws_an_input_outside_the_widget_builder():
    calls = set()
    for path in ui_files():
        relative = path.relative_to(ROOT).as_posix()
        if relative != BUILDER:
            calls |= widget_calls(path.read_text(), relative)
    new = sorted(calls - set(UNDECLARED_INPUTS))
    assert not new, (
        f"input widgets drawn outside {BUILDER}: declare them in sdlab_model.params (or "
        f"page_params) and draw them with sdlab_ui.widgets: {new}"
    )
    gone = sorted(set(UNDECLARED_INPUTS) - calls)
    assert not gone, f"listed but no longer drawn (take them off UNDECLARED_INPUTS): {gone}"
