"""run_filter: bytes through a child program, never a leaked descriptor or a process left behind."""

from __future__ import annotations

import os
import shutil
import time

import pytest

from sdlab_ui.server import spawn

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc (Linux)")
CAT, TRUE = shutil.which("cat"), shutil.which("true")


def _children(argument: str) -> list[str]:
    """This process's children still running with ``argument`` on their command line, and its
    unreaped (zombie) children, whose command line is empty."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as file:
                command = file.read().replace(b"\0", b" ").decode(errors="replace")
            with open(f"/proc/{pid}/stat") as file:
                state, parent = file.read().rsplit(")", 1)[1].split()[:2]
        except OSError:
            continue
        if int(parent) == os.getpid() and (state == "Z" or argument in command):
            found.append(f"{pid} {state} {command}")
    return found


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 0


def test_input_larger_than_a_pipe_comes_back_whole():
    data = bytes(range(256)) * 4096  # 1 MiB: writing and reading must interleave
    assert spawn.run_filter([CAT], data, timeout_s=10) == data, "cat changed its input"


def test_empty_input_and_a_program_that_reads_nothing():
    assert spawn.run_filter([CAT], b"", timeout_s=10) == b"", "empty in, empty out"
    echo = [shutil.which("sh"), "-c", "echo done"]
    assert spawn.run_filter(echo, b"x" * 300_000, timeout_s=10) == b"done\n", (
        "a program that exits without reading its input should still give its output"
    )


def test_failure_missing_program_and_stderr():
    assert spawn.run_filter([shutil.which("false")], b"x", timeout_s=10) is None, "exit 1 kept"
    assert spawn.run_filter(["/nonexistent/dot"], b"x", timeout_s=10) is None, "no program"
    noisy = [shutil.which("sh"), "-c", "echo oops >&2; echo out"]
    assert spawn.run_filter(noisy, b"", timeout_s=10) == b"out\n", "stderr leaked into output"


def test_a_slow_program_is_killed_at_the_timeout_and_reaped():
    marker = "7.31415"
    started = time.monotonic()
    assert spawn.run_filter([shutil.which("sleep"), marker], b"", timeout_s=0.3) is None
    assert time.monotonic() - started < 3, "the timeout did not stop the wait"
    assert not _children(marker), f"the slow child was left behind: {_children(marker)}"


def test_no_descriptor_is_leaked():
    before = _open_descriptors()
    for _ in range(20):
        spawn.run_filter([CAT], b"abc", timeout_s=10)
        spawn.run_filter([TRUE], b"abc" * 100_000, timeout_s=10)
        spawn.run_filter(["/nonexistent/dot"], b"abc", timeout_s=10)
    assert _open_descriptors() == before, "run_filter leaked file descriptors"
