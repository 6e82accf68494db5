"""The dependency files agree: Community Cloud reads requirements.txt, pip reads pyproject."""

from __future__ import annotations

import tomllib
from fnmatch import fnmatch
from pathlib import Path

# pytest itself depends on packaging, so the test environment always has it.
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _as_set(requirements: list[str]) -> set[tuple[str, str]]:
    """Name (canonical) and version specifier of each requirement."""
    parsed = [Requirement(text) for text in requirements]
    return {(canonicalize_name(r.name), str(r.specifier)) for r in parsed}


def _requirement_lines(name: str) -> tuple[list[str], list[str]]:
    """A requirements file's requirement lines and its ``-r`` includes, comments dropped."""
    requirements, includes = [], []
    for line in (ROOT / name).read_text(encoding="utf-8").splitlines():
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        if text.startswith(("-r ", "--requirement ")):
            includes.append(text.split(maxsplit=1)[1])
        else:
            requirements.append(text)
    return requirements, includes


def test_requirements_txt_equals_pyproject_dependencies():
    listed, includes = _requirement_lines("requirements.txt")
    wanted = _as_set(_pyproject()["project"]["dependencies"])
    assert not includes, f"requirements.txt must stand alone (Cloud reads it), includes {includes}"
    assert _as_set(listed) == wanted, (
        f"requirements.txt {sorted(_as_set(listed))} differs from pyproject dependencies "
        f"{sorted(wanted)}"
    )


def test_requirements_dev_covers_the_dev_extra():
    listed, includes = _requirement_lines("requirements-dev.txt")
    dev = _as_set(_pyproject()["project"]["optional-dependencies"]["dev"])
    assert "requirements.txt" in includes, "requirements-dev.txt must include requirements.txt"
    missing = dev - _as_set(listed)
    assert not missing, f"requirements-dev.txt lacks pyproject's dev extra {sorted(missing)}"


def test_package_data_ships_every_model_data_file():
    package = ROOT / "sdlab_model"
    patterns = _pyproject()["tool"]["setuptools"]["package-data"]["sdlab_model"]
    files = [
        p.relative_to(package).as_posix() for p in (package / "data").rglob("*") if p.is_file()
    ]
    assert files, f"no data files under {package / 'data'}"
    unshipped = [name for name in files if not any(fnmatch(name, glob) for glob in patterns)]
    assert not unshipped, (
        f"package-data {patterns} would leave out {unshipped} (sdlab_model needs them)"
    )


def test_the_comparison_sees_version_differences():
    assert _as_set(["numpy>=1.26"]) != _as_set(["numpy>=1.25"]), "specifiers must be compared"
    assert _as_set(["Plotly>=6"]) == _as_set(["plotly>=6"]), "names compare canonically"
