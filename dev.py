#!/usr/bin/env python3
"""One command to run sdlab, one to test it; each sets up what it needs first.

    python3 dev.py run     # serve the app on http://localhost:8501
    python3 dev.py test    # the whole test suite (browser tests skip where no Chromium exists)

Both make a virtual environment in .venv on first use and install into it from requirements.txt
(run) or requirements-dev.txt (test). They reinstall only when those files change. Anything after
the command goes to streamlit or pytest, e.g. ``python3 dev.py test -k heatmap``.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
REQUIREMENTS = {"run": "requirements.txt", "test": "requirements-dev.txt"}


def _venv_python() -> Path:
    scripts = "Scripts" if os.name == "nt" else "bin"
    name = "python.exe" if os.name == "nt" else "python"
    return VENV / scripts / name


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


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in REQUIREMENTS:
        print(__doc__)
        return 2
    command, rest = argv[0], argv[1:]
    python = _ensure_environment(REQUIREMENTS[command])
    if command == "run":
        args = [str(python), "-m", "streamlit", "run", str(ROOT / "app.py"), *rest]
    else:
        args = [str(python), "-m", "pytest", *rest]
    return subprocess.call(args, cwd=ROOT)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
