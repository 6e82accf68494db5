"""``sdlab_model`` never imports a UI library: the model must run, and be tested, without one.
Nor a data-frame library: the model is Python and numpy, and pandas with pyarrow would add
~70 MB to every process that imports it, the server's simulation worker too.

Two independent checks, since each misses what the other sees: a fresh interpreter imports every
module of the package and looks at ``sys.modules`` (catches indirect imports through a
dependency), and an AST scan of every source file (catches imports inside functions that an
import alone never runs).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

PACKAGE = "sdlab_model"
PACKAGE_DIR = Path(__file__).resolve().parents[1] / PACKAGE
FORBIDDEN = ("streamlit", "plotly", "pandas", "pyarrow")

_IMPORT_ALL = f"""
import importlib, json, pkgutil, sys
import {PACKAGE}
names = [info.name for info in pkgutil.walk_packages({PACKAGE}.__path__, "{PACKAGE}.")]
for name in names:
    importlib.import_module(name)
print(json.dumps({{"modules": names, "loaded": sorted(sys.modules)}}))
"""


def _import_report(code: str) -> dict[str, list[str]]:
    """Run ``code`` (one of the import scripts) in a fresh interpreter; its JSON report."""
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=PACKAGE_DIR.parent,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, f"importing {PACKAGE} failed:\n{result.stderr}"
    return json.loads(result.stdout.strip().splitlines()[-1])


def _forbidden(module_name: str) -> bool:
    return module_name.split(".")[0] in FORBIDDEN


def test_importing_every_module_loads_no_ui_library():
    report = _import_report(_IMPORT_ALL)
    source_modules = {
        f"{PACKAGE}.{path.stem}" for path in PACKAGE_DIR.glob("*.py") if path.stem != "__init__"
    }
    assert source_modules <= set(report["modules"]), (
        f"modules not imported: {sorted(source_modules - set(report['modules']))}"
    )
    loaded = sorted({name.split(".")[0] for name in report["loaded"] if _forbidden(name)})
    assert not loaded, f"importing {PACKAGE} loaded UI or data-frame libraries: {loaded}"


_IMPORT_PUBLIC = f"""
import importlib, json, pkgutil, sys
import {PACKAGE}
names = [
    info.name for info in pkgutil.walk_packages({PACKAGE}.__path__, "{PACKAGE}.")
    if not info.name.rsplit(".", 1)[-1].startswith("_")
]
for name in names:
    importlib.import_module(name)
print(json.dumps({{"modules": names, "loaded": sorted(sys.modules)}}))
"""


def test_importing_the_model_loads_no_compiler():
    """Importing the package and every public module imports neither numba nor a compiled
    kernel (``_*kernel``, ``_stepper``: they import numba, lazily, where first used), so that
    ``import sdlab_model`` is quick and compiles nothing."""
    report = _import_report(_IMPORT_PUBLIC)
    assert any(name.endswith(".simulator") for name in report["modules"]), "too few modules"
    assert any(name.endswith(".queueing") for name in report["modules"]), "too few modules"
    compiled = [name for name in report["loaded"] if name.split(".")[0] == "numba"]
    assert not compiled, f"importing {PACKAGE} loaded numba: {compiled[:5]}"


def _imported_names(tree: ast.AST) -> list[tuple[int, str]]:
    names: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append((node.lineno, node.module))
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and (
                (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                or (isinstance(node.func, ast.Name) and node.func.id == "__import__")
            )
        ):
            names.append((node.lineno, node.args[0].value))
    return names


def test_no_source_file_imports_a_ui_library():
    files = sorted(PACKAGE_DIR.rglob("*.py"))
    assert files, f"no sources found under {PACKAGE_DIR}"
    offenders = [
        f"{path.relative_to(PACKAGE_DIR.parent)}:{line}: {name}"
        for path in files
        for line, name in _imported_names(ast.parse(path.read_text(), filename=str(path)))
        if _forbidden(name)
    ]
    assert not offenders, "sdlab_model must not import UI or data-frame libraries:\n" + "\n".join(
        offenders
    )
