#!/usr/bin/env python3
"""One command to run sdlab, one to test it, one to upgrade its pinned dependencies.

    python3 dev.py run      # serve the app on http://localhost:8501
    python3 dev.py test     # the whole test suite (browser tests skip where no Chromium exists)
    python3 dev.py upgrade  # re-resolve the newest versions pyproject.toml allows, rewrite the
                            # pins in requirements*.txt, then run the test suite on them

``run`` and ``test`` make a virtual environment in .venv on first use and install into it from
requirements.txt (run) or requirements-dev.txt (test): exact pins, the versions the suite passed
with. They reinstall only when those files change. Anything after the command goes to streamlit
or pytest, e.g. ``python3 dev.py test -k heatmap``. Tests run on one process per core, at most
four (``-n 0`` runs them in one).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
REQUIREMENTS = {"run": "requirements.txt", "test": "requirements-dev.txt"}
SERVER_ENVIRONMENT = {
    # glibc gives each thread that allocates its own malloc arena (up to 8 per core), and freed
    # memory stays in them: after ten visitors looping on expensive inputs the server held
    # ~660 MB. Two arenas (with the budget of one exact solve at a time) held it to 549 MB.
    "MALLOC_ARENA_MAX": "2",
    # numpy's OpenBLAS runs a dense solve on every core; one thread keeps an exact M/D/c solve
    # (sdlab_ui.server.budget runs one at a time) to one core, leaving the other to everyone else.
    "OPENBLAS_NUM_THREADS": "1",
}
_LOCK_HEADER = """\
# {what}
# Exact pins: the versions the test suite passed with. Written by `python3 dev.py upgrade` from
# pyproject.toml's ranges (on Linux, Python {python}); do not edit by hand. Direct dependencies
# first, then what they need.
"""


def _venv_python(root: Path = VENV) -> Path:
    scripts = "Scripts" if os.name == "nt" else "bin"
    name = "python.exe" if os.name == "nt" else "python"
    return root / scripts / name


def _requirements_digest(requirements: str) -> str:
    digest = hashlib.sha256()
    for name in ("requirements.txt", requirements):
        digest.update((ROOT / name).read_bytes())
    return digest.hexdigest()


def _ensure_environment(requirements: str) -> Path:
    if sys.version_info < (3, 11):  # noqa: UP036 -- dev.py itself may run on an older Python
        sys.exit(f"sdlab needs Python 3.11 or newer; this is {sys.version.split()[0]}.")
    python = _venv_python()
    if not python.exists():
        print(f"Creating a virtual environment in {VENV} ...", flush=True)
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    stamp = VENV / f".installed-{requirements}"
    wanted = _requirements_digest(requirements)
    if not stamp.exists() or stamp.read_text() != wanted:
        print(f"Installing {requirements} into {VENV} (first run takes a minute) ...", flush=True)
        subprocess.run(
            [
                str(python),
                "-m",
                "pip",
                "install",
                "--disable-pip-version-check",
                "-q",
                "-r",
                str(ROOT / requirements),
            ],
            check=True,
        )
        stamp.write_text(wanted)
    return python


def installed_closure(requirements: list[str]) -> list[tuple[str, str, bool]]:
    """(name, installed version, is direct) of ``requirements`` and everything they need, as
    installed in the running interpreter. Runs inside the environment being pinned."""
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    found: dict[str, tuple[str, str, bool]] = {}
    todo = [(Requirement(text), True) for text in requirements]
    while todo:
        requirement, direct = todo.pop(0)
        name = canonicalize_name(requirement.name)
        if name in found:
            continue
        distribution = metadata.distribution(requirement.name)
        found[name] = (distribution.metadata["Name"], distribution.version, direct)
        for text in distribution.requires or []:
            needed = Requirement(text)
            wanted_extras = requirement.extras or {""}
            if needed.marker is None or any(
                needed.marker.evaluate({"extra": extra}) for extra in wanted_extras
            ):
                todo.append((needed, False))
    return sorted(found.values(), key=lambda pin: (not pin[2], pin[0].lower()))


def _pyproject_requirements() -> tuple[list[str], list[str]]:
    import tomllib  # here, not at the top: dev.py first tells a Python 3.10 user what it needs

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return project["dependencies"], project["optional-dependencies"]["dev"]


def _closure_in(python: Path, requirements: list[str]) -> list[tuple[str, str, bool]]:
    code = "import json, sys, dev; print(json.dumps(dev.installed_closure(sys.argv[1:])))"
    output = subprocess.run(
        [str(python), "-c", code, *requirements],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return [tuple(pin) for pin in json.loads(output)]


def write_pins(python: Path) -> None:
    """Rewrite requirements.txt and requirements-dev.txt from what ``python``'s environment has
    installed for pyproject.toml's runtime dependencies and its dev extra."""
    runtime, dev = _pyproject_requirements()
    runtime_pins = _closure_in(python, runtime)
    runtime_names = {name.lower() for name, _, _ in runtime_pins}
    dev_pins = [pin for pin in _closure_in(python, dev) if pin[0].lower() not in runtime_names]
    version = subprocess.run(
        [str(python), "-c", "import platform; print(platform.python_version())"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    for file_name, what, pins, includes in (
        ("requirements.txt", "Runtime dependencies: what Streamlit Community Cloud installs.",
         runtime_pins, []),
        ("requirements-dev.txt", "Test and benchmark tools, on top of the runtime.",
         dev_pins, ["-r requirements.txt"]),
    ):  # fmt: skip
        lines = [_LOCK_HEADER.format(what=what, python=version), *includes]
        lines += [f"{name}=={pinned}" for name, pinned, _ in pins]
        (ROOT / file_name).write_text("\n".join(line.rstrip("\n") for line in lines) + "\n")


def upgrade() -> int:
    """Install the newest versions pyproject.toml allows into a fresh environment, pin them,
    and run the test suite on the new pins."""
    runtime, dev = _pyproject_requirements()
    with tempfile.TemporaryDirectory(prefix="sdlab-upgrade-") as folder:
        print("Resolving the newest allowed versions in a fresh environment ...", flush=True)
        venv.EnvBuilder(with_pip=True, clear=True).create(folder)
        python = _venv_python(Path(folder))
        pip = [str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
        subprocess.run([*pip, "--upgrade", "pip"], check=True)
        subprocess.run([*pip, *runtime, *dev], check=True)
        write_pins(python)
    print("Pins rewritten (git diff requirements*.txt); testing them ...", flush=True)
    status = main(["test"])
    verdict = "passed: commit requirements*.txt" if status == 0 else "FAILED: keep the old pins"
    print(f"The test suite {verdict} (git checkout -- requirements*.txt restores them).")
    return status


_WARM_KERNELS = "; ".join(
    f"from sdlab_model.{package}.warmup import warm_up; warm_up()"
    for package in ("queues", "simulation", "llm")
)


def main(argv: list[str]) -> int:
    if argv[:1] == ["upgrade"]:
        return upgrade()
    if not argv or argv[0] not in REQUIREMENTS:
        print(__doc__)
        return 2
    command, rest = argv[0], argv[1:]
    python = _ensure_environment(REQUIREMENTS[command])
    if command == "run":
        # Compile the kernels into numba's disk cache now (a no-op once cached), so that the
        # first visitor's page does not wait seconds for the compiler.
        subprocess.call([str(python), "-c", _WARM_KERNELS], cwd=ROOT)
        args = [str(python), "-m", "streamlit", "run", str(ROOT / "app.py"), *rest]
        return subprocess.call(args, cwd=ROOT, env={**SERVER_ENVIRONMENT, **os.environ})
    # Compile the kernels every test process and test server needs into numba's disk cache once,
    # first (~20 s on a fresh checkout): each would otherwise compile its own copy.
    subprocess.call([str(python), "-c", _WARM_KERNELS], cwd=ROOT)
    args = [str(python), "-m", "pytest", *_default_workers(rest), *rest]
    return subprocess.call(args, cwd=ROOT)


MAX_TEST_WORKERS = 4
"""Test processes at most (pytest-xdist): each browser-test worker runs its own server."""


def _default_workers(rest: list[str]) -> list[str]:
    """``-n <cores, at most 4>`` unless the command line chooses (``-n 0`` runs in one process)."""
    chosen = any(arg == "-n" or arg.startswith(("-n", "--numprocesses")) for arg in rest)
    if chosen or "no:xdist" in rest:
        return []
    return ["-n", str(max(1, min(MAX_TEST_WORKERS, os.cpu_count() or 1)))]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
