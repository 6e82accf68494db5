"""Modules and what they take from each other: no import circles in ``sdlab_model`` or
``sdlab_ui``, and no module reads another's private names.

A static walk of every module's imports, at the top and inside functions alike (an import inside
a function hides a circle from ``import`` but not from a reader): module ``a`` depends on ``b``
when ``a`` names ``b`` in an ``import`` or ``from ... import`` (``from p import m`` with ``m`` a
module of ``p`` names ``m``; ``from p import name`` names ``p``). Loading a package's
``__init__`` on the way to one of its modules does not count: a facade that re-exports its
package would otherwise close a circle with every module in it.

A private name is one with a leading underscore. A private *module* (``_tail_kernel``) may be
imported by its callers, which then use its public names; ``module._name`` and
``from module import _name`` of anything that is not a module are another module's insides.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def module_files(package: str) -> dict[str, Path]:
    """Every module of ``package`` by dotted name (a package by its own name)."""
    files = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        files[".".join(parts)] = path
    return files


def _imported_modules(name: str, path: Path, known: set[str]) -> set[str]:
    """The modules of ``known`` that module ``name`` (source at ``path``) imports anywhere."""
    is_package = path.name == "__init__.py"
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = name.split(".")
                anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            else:
                base = node.module
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
    return {module for module in found if module in known and module != name}


def import_graph(*packages: str) -> dict[str, set[str]]:
    """Module name -> the modules of ``packages`` it imports."""
    files = {name: path for package in packages for name, path in module_files(package).items()}
    return {name: _imported_modules(name, path, set(files)) for name, path in files.items()}


def circles(graph: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """Every strongly connected group of two or more modules (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[tuple[str, ...]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(graph[node]):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(tuple(sorted(group)))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(groups)


def _describe(groups: list[tuple[str, ...]]) -> str:
    return "\n".join(" <-> ".join(group) for group in groups)


def test_the_walk_finds_a_circle_and_imports_inside_functions():
    """The walk sees a function-level import and relative imports, and reports a circle."""
    graph = import_graph("sdlab_model")
    assert "sdlab_model.queues._fleet_kernel" in graph["sdlab_model.queues.kernels"], (
        "kernels.py's function-level import of _fleet_kernel was not seen"
    )
    assert {"sdlab_model.queues.queueing"} <= graph["sdlab_model.queues"], (
        "the queues package's import of queueing was not seen"
    )
    toy = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(toy) == [("a", "b", "c")], f"a three-module circle was missed: {circles(toy)}"


def test_sdlab_model_has_no_import_circle():
    found = circles(import_graph("sdlab_model"))
    assert not found, "import circles in sdlab_model:\n" + _describe(found)


def test_sdlab_ui_has_no_import_circle():
    graph = import_graph("sdlab_model", "sdlab_ui")
    found = [group for group in circles(graph) if any(m.split(".")[0] == "sdlab_ui" for m in group)]
    assert not found, "import circles in sdlab_ui:\n" + _describe(found)


def _resolved(node: ast.AST, bound: dict[str, str]) -> str:
    """The module a name or dotted attribute stands for (``""`` if none of ours)."""
    if isinstance(node, ast.Name):
        return bound.get(node.id, "")
    if isinstance(node, ast.Attribute):
        parent = _resolved(node.value, bound)
        return f"{parent}.{node.attr}" if parent else ""
    return ""


def private_reads(name: str, source: str, known: set[str]) -> list[str]:
    """Private names of other modules of ``known`` that module ``name``'s ``source`` reads."""
    tree = ast.parse(source)
    bound: dict[str, str] = {}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                bound[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0]
                )
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if full in known:
                    bound[alias.asname or alias.name] = full
                elif node.module in known and node.module != name and _is_private(alias.name):
                    found.append(f"from {node.module} import {alias.name}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_private(node.attr):
            module = _resolved(node.value, bound)
            if module in known and module != name and f"{module}.{node.attr}" not in known:
                found.append(f"{module}.{node.attr}")
    return sorted(set(found))


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def test_the_private_name_scan_sees_both_forms():
    known = {"p", "p.a", "p._kernel"}
    source = (
        "from p import a, _kernel\n"
        "from p.a import _hidden\n"
        "import p.a\n"
        "x = a._table + p.a._other + _kernel.run + a.public\n"
    )
    assert private_reads("p.b", source, known) == [
        "from p.a import _hidden",
        "p.a._other",
        "p.a._table",
    ], f"the scan found {private_reads('p.b', source, known)}"


def test_no_module_reads_another_modules_private_names():
    files = {
        name: path
        for package in ("sdlab_model", "sdlab_ui")
        for name, path in module_files(package).items()
    }
    offenders = {
        name: reads
        for name, path in files.items()
        if (reads := private_reads(name, path.read_text(), set(files)))
    }
    assert not offenders, "modules reading others' private names:\n" + "\n".join(
        f"{name}: {', '.join(reads)}" for name, reads in sorted(offenders.items())
    )
