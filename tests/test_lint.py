"""ruff's lint and format checks, as configured in pyproject.toml, over the whole repository."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _ruff(*args: str) -> subprocess.CompletedProcess[str]:
    if subprocess.run([sys.executable, "-m", "ruff", "--version"], capture_output=True).returncode:
        pytest.skip("ruff is not installed (it comes with requirements-dev.txt)")
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args], cwd=ROOT, capture_output=True, text=True
    )


def test_ruff_lint_is_clean():
    result = _ruff("check", "--no-cache", ".")
    assert result.returncode == 0, f"ruff check found problems:\n{result.stdout}{result.stderr}"


def test_ruff_format_is_clean():
    result = _ruff("format", "--check", "--no-cache", ".")
    assert result.returncode == 0, f"files ruff would reformat:\n{result.stdout}{result.stderr}"
