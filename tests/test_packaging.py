"""The dependency files agree: pyproject.toml states ranges, requirements*.txt pin what was tested.

Community Cloud installs requirements.txt; ``python3 dev.py test`` installs requirements-dev.txt
(which includes it) and runs the suite. So the pins are exactly the versions the suite passed
with, within pyproject's ranges, and ``python3 dev.py upgrade`` is the one way to move them.
"""

from __future__ import annotations

import sys
import tomllib
from fnmatch import fnmatch
from importlib import metadata
from pathlib import Path

import pytest

# pytest itself depends on packaging, so the test environment always has it.
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _ranges(requirements: list[str]) -> dict[str, Requirement]:
    parsed = [Requirement(text) for text in requirements]
    return {canonicalize_name(r.name): r for r in parsed}


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


def _pins(name: str) -> dict[str, Version]:
    """Canonical name -> pinned version of every line; fails on a line that is not ``==``."""
    pins = {}
    for text in _requirement_lines(name)[0]:
        requirement = Requirement(text)
        specifiers = list(requirement.specifier)
        assert len(specifiers) == 1 and specifiers[0].operator == "==", (
            f"{name}: {text!r} is not an exact pin (name==version); run python3 dev.py upgrade"
        )
        pins[canonicalize_name(requirement.name)] = Version(specifiers[0].version)
    return pins


def _check_pins_within(file_name: str, ranges: dict[str, Requirement]) -> None:
    pins = _pins(file_name)
    missing = sorted(set(ranges) - set(pins))
    assert not missing, f"{file_name} pins no version of {missing} (pyproject lists them)"
    outside = {
        name: (str(pins[name]), str(r.specifier))
        for name, r in ranges.items()
        if not r.specifier.contains(pins[name], prereleases=True)
    }
    assert not outside, f"{file_name} pins versions outside pyproject's ranges: {outside}"


def test_requirements_txt_pins_every_runtime_dependency_within_its_range():
    _, includes = _requirement_lines("requirements.txt")
    assert not includes, f"requirements.txt must stand alone (Cloud reads it), includes {includes}"
    _check_pins_within("requirements.txt", _ranges(_pyproject()["project"]["dependencies"]))


def test_requirements_dev_pins_the_dev_extra_on_top_of_the_runtime():
    _, includes = _requirement_lines("requirements-dev.txt")
    assert includes == ["requirements.txt"], "requirements-dev.txt must include requirements.txt"
    dev = _ranges(_pyproject()["project"]["optional-dependencies"]["dev"])
    _check_pins_within("requirements-dev.txt", dev)
    twice = sorted(set(_pins("requirements.txt")) & set(_pins("requirements-dev.txt")))
    assert not twice, f"pinned in both requirements files: {twice}"


@pytest.mark.parametrize("file_name", ["requirements.txt", "requirements-dev.txt"])
def test_the_suite_runs_on_the_pinned_versions(file_name):
    installed = {}
    for name in _pins(file_name):
        try:
            installed[name] = Version(metadata.version(name))
        except metadata.PackageNotFoundError:
            installed[name] = None
    differ = {
        name: (str(pinned), str(installed[name]))
        for name, pinned in _pins(file_name).items()
        if installed[name] != pinned
    }
    assert not differ, (
        f"this environment differs from {file_name} (pinned, installed): {differ}; "
        "python3 dev.py test installs the pins"
    )


def test_the_pin_check_refuses_a_range(tmp_path, monkeypatch):
    (tmp_path / "requirements.txt").write_text("numpy>=1.26\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    with pytest.raises(AssertionError, match="not an exact pin"):
        _pins("requirements.txt")


def test_package_data_ships_every_model_data_file():
    package_data = _pyproject()["tool"]["setuptools"]["package-data"]
    data_dirs = sorted((ROOT / "sdlab_model").rglob("data"))
    assert data_dirs, "no data directory under sdlab_model"
    for data_dir in data_dirs:
        owner = ".".join(data_dir.parent.relative_to(ROOT).parts)
        patterns = package_data.get(owner, [])
        files = [
            p.relative_to(data_dir.parent).as_posix() for p in data_dir.rglob("*") if p.is_file()
        ]
        unshipped = [name for name in files if not any(fnmatch(name, glob) for glob in patterns)]
        assert not unshipped, (
            f"package-data for {owner} ({patterns}) would leave out {unshipped} (it needs them)"
        )


def test_every_package_is_installed():
    listed = set(_pyproject()["tool"]["setuptools"]["packages"])
    found = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for top in ("sdlab_model", "sdlab_ui")
        for init in (ROOT / top).rglob("__init__.py")
    }
    assert found <= listed, (
        f"pyproject's setuptools packages leave out {sorted(found - listed)}: an install would "
        "miss those modules"
    )


def test_requirements_txt_is_exactly_what_the_runtime_needs():
    # Everything the runtime dependencies need, as installed here (dev.py's own walk), is pinned,
    # and nothing else is: a missing line would be resolved afresh on every deploy.
    sys.path.insert(0, str(ROOT))
    import dev

    needed = dev.installed_closure(_pyproject()["project"]["dependencies"])
    names = {canonicalize_name(name) for name, _, _ in needed}
    pinned = set(_pins("requirements.txt"))
    assert names == pinned, (
        f"requirements.txt lacks {sorted(names - pinned)} and has extra {sorted(pinned - names)}"
    )


def test_dev_run_starts_the_server_with_two_malloc_arenas():
    sys.path.insert(0, str(ROOT))
    import dev

    assert dev.SERVER_ENVIRONMENT.get("MALLOC_ARENA_MAX") == "2", (
        "python3 dev.py run should start Streamlit with MALLOC_ARENA_MAX=2 (see README, Deploy)"
    )


def test_the_test_command_runs_on_every_core_unless_told_otherwise(monkeypatch):
    sys.path.insert(0, str(ROOT))
    import dev

    monkeypatch.setattr(dev.os, "cpu_count", lambda: 2)
    assert dev._default_workers([]) == ["-n", "2"], "python3 dev.py test should use both cores"
    monkeypatch.setattr(dev.os, "cpu_count", lambda: 32)
    assert dev._default_workers(["-k", "lab"]) == ["-n", str(dev.MAX_TEST_WORKERS)], (
        "a big machine should stop at MAX_TEST_WORKERS browser-test servers"
    )
    for chosen in (["-n", "0"], ["-n0"], ["--numprocesses=3"], ["-p", "no:xdist"]):
        assert dev._default_workers(chosen) == [], f"{chosen} chose the workers itself"
