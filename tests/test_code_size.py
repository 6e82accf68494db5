"""Modules and functions a reader can hold in mind: no ``sdlab_ui`` module over
``MAX_UI_MODULE_LINES`` lines, no function over ``MAX_FUNCTION_LINES`` outside numba kernels.

Today's exceptions are listed below, each with why; a new one fails, and so does a listed one
that now fits (take it off the list).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_UI_MODULE_LINES = 400
MAX_FUNCTION_LINES = 80

KERNEL_COMPILERS = frozenset({"njit", "jit", "_compile", "compile_kernel"})
"""Decorators (or wrappers, ``run = _compile(_run)``) that make a function a numba kernel: a
compiled loop reads best as one piece, its numpy twin beside it in the tests."""

LONG_UI_MODULES: dict[str, str] = {}
"""Module -> why it is over ``MAX_UI_MODULE_LINES`` today."""

LONG_FUNCTIONS = {
    "sdlab_model/design.py::reasons_of": "the original page's reasons, one rule after another",
    "sdlab_model/design.py::_queueing_decisions": "batching and hardware, case by case, in prose",
    "sdlab_model/queues/batching.py::batched_latency": "one model's steps in order, documented",
    "sdlab_model/residency/latency.py::packed_latency": "the packed fleet's model, step by step",
    "sdlab_model/simulation/simulator.py::simulate": "replications, pooling and the summary",
    "sdlab_model/simulation/simulator.py::simulate_grid": "the grid's cells, intervals, progress",
    "sdlab_ui/error_figures.py::error_map": "a heatmap's traces, hover and legend, in order",
    "sdlab_ui/timeline/sections.py::timeline_figure": "four panels of a figure; split later",
}
"""``path::function`` -> why it is over ``MAX_FUNCTION_LINES`` today (numba kernels aside)."""


def source_files() -> list[Path]:
    """The app's code: the model, the UI layer, the app and its pages."""
    return sorted(
        [
            *ROOT.glob("sdlab_model/**/*.py"),
            *ROOT.glob("sdlab_ui/**/*.py"),
            ROOT / "app.py",
            *ROOT.glob("app_pages/*.py"),
        ]
    )


def _callable_name(node: ast.AST) -> str:
    """``njit`` for ``njit``, ``njit(...)``, ``numba.njit`` and ``numba.njit(...)``."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _kernels(tree: ast.Module) -> set[str]:
    """Functions compiled by numba: decorated, or wrapped at module level (``f = _compile(_f)``)."""
    kernels = {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef)
        and any(_callable_name(d) in KERNEL_COMPILERS for d in node.decorator_list)
    }
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            call = node.value
            if _callable_name(call) in KERNEL_COMPILERS:
                kernels.update(arg.id for arg in call.args if isinstance(arg, ast.Name))
    return kernels


def long_functions(source: str, relative_path: str) -> dict[str, int]:
    """``path::function`` -> lines (``def`` to last line) of each function over the limit."""
    tree = ast.parse(source)
    kernels = _kernels(tree)
    return {
        f"{relative_path}::{node.name}": node.end_lineno - node.lineno + 1
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name not in kernels
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    }


def test_the_function_scan_counts_lines_and_spares_kernels():
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    source = f"def long():\n{body}\n@_compile\ndef kernel():\n{body}\ndef _run():\n{body}"
    source += "\nrun = compile_kernel(_run)\n"
    found = long_functions(source, "m.py")
    assert found == {"m.py::long": MAX_FUNCTION_LINES + 1}, f"the scan found {found}"


def test_no_ui_module_is_over_the_limit():
    lines = {
        path.relative_to(ROOT).as_posix(): len(path.read_text().splitlines())
        for path in ROOT.glob("sdlab_ui/**/*.py")
    }
    assert lines, "no sdlab_ui module found"
    long = {path: count for path, count in lines.items() if count > MAX_UI_MODULE_LINES}
    new = {path: long[path] for path in sorted(set(long) - set(LONG_UI_MODULES))}
    assert not new, f"sdlab_ui modules over {MAX_UI_MODULE_LINES} lines: {new}"
    fitting = sorted(set(LONG_UI_MODULES) - set(long))
    assert not fitting, f"listed as long but now fit (take them off LONG_UI_MODULES): {fitting}"


def test_no_function_is_over_the_limit_outside_numba_kernels():
    long = {}
    for path in source_files():
        long.update(long_functions(path.read_text(), path.relative_to(ROOT).as_posix()))
    new = {name: long[name] for name in sorted(set(long) - set(LONG_FUNCTIONS))}
    assert not new, f"functions over {MAX_FUNCTION_LINES} lines (split them): {new}"
    fitting = sorted(set(LONG_FUNCTIONS) - set(long))
    assert not fitting, f"listed as long but now fit (take them off LONG_FUNCTIONS): {fitting}"
