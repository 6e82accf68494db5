"""Coprocess: inputs through one running program, never a leaked descriptor or a process left
behind."""

from __future__ import annotations

import os
import shutil
import signal
import threading
import time

import pytest

from sdlab_ui.server import spawn

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc (Linux)")
CAT = shutil.which("cat")


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


def _coprocess(argv: list[str], **kwargs) -> spawn.Coprocess:
    options = {"recycle_after": 1000, "idle_s": 60.0, **kwargs}
    return spawn.Coprocess(argv, b"END\n", **options)


def test_a_coprocess_answers_input_after_input_from_one_process():
    process = _coprocess([CAT])
    try:
        assert process.run(b"first END\n", timeout_s=10) == b"first END\n"
        pid = process.pid
        big = b"x" * 300_000 + b"END\n"  # larger than a pipe: writing and reading interleave
        assert process.run(big, timeout_s=10) == big, "a large input came back changed"
        assert process.run(b"third END\n", timeout_s=10) == b"third END\n"
        assert process.pid == pid, "each input started a process of its own"
    finally:
        process.stop()
    assert process.pid is None and not _children(CAT + " "), "stop left the process running"


def test_a_failed_input_gives_none_and_the_next_input_a_fresh_process():
    # Answers its first line, then exits on the second: as dot exits on a syntax error.
    script = 'read line; echo oops >&2; echo "$line"; read line; exit 1'
    process = _coprocess([shutil.which("sh"), "-c", script])
    try:
        assert process.run(b"one END\n", timeout_s=10) == b"one END\n", "stderr in the output?"
        first = process.pid
        assert process.run(b"two END\n", timeout_s=10) is None, "an exit was taken for an answer"
        assert process.pid is None, "the failed process was kept"
        assert process.run(b"three END\n", timeout_s=10) == b"three END\n"
        assert process.pid not in (None, first), "the next input did not start a fresh process"
    finally:
        process.stop()


def test_a_program_that_never_reads_does_not_hold_the_writer_past_the_deadline():
    marker = "7.1828"
    process = _coprocess([shutil.which("sh"), "-c", f"sleep {marker}"])
    answers = []
    # In a thread: a write that blocks on the full pipe would never return.
    writer = threading.Thread(
        target=lambda: answers.append(process.run(b"y" * 1_000_000 + b"END\n", timeout_s=0.3)),
        daemon=True,
    )
    writer.start()
    writer.join(timeout=5)
    assert not writer.is_alive(), "the write blocked past the deadline on a pipe nobody reads"
    assert answers == [None] and not _children(marker), "no answer expected, no child left"


def test_a_coprocess_that_does_not_answer_is_killed_at_the_timeout():
    marker = "7.2718"
    process = _coprocess([shutil.which("sh"), "-c", f"cat > /dev/null; sleep {marker}"])
    started = time.monotonic()
    assert process.run(b"no answer END\n", timeout_s=0.3) is None
    assert time.monotonic() - started < 3, "the timeout did not stop the wait"
    assert process.pid is None and not _children(marker), "the silent process was left behind"
    assert (
        spawn.Coprocess(["/nonexistent/dot"], b"\n", recycle_after=1, idle_s=1).run(
            b"x\n", timeout_s=1
        )
        is None
    ), "a missing program gave an answer"


def test_a_coprocess_is_recycled_and_stopped_when_idle():
    process = _coprocess([CAT], recycle_after=2, idle_s=0.2)
    before = _open_descriptors()
    pids = []
    for _ in range(4):
        process.run(b"a END\n", timeout_s=10)
        pids.append(process.pid)
    assert None not in (pids[0], pids[2]) and pids[0] != pids[2], f"not recycled: {pids}"
    assert pids[1] is None and pids[3] is None, f"not stopped at the recycle: {pids}"
    process.run(b"b END\n", timeout_s=10)
    assert process.pid is not None
    deadline = time.monotonic() + 5
    while process.pid is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert process.pid is None, "an idle process was kept past idle_s"
    assert not _children(CAT + " ") and _open_descriptors() == before, "leaked a child or a pipe"


def test_diagrams_share_one_running_dot():
    from sdlab_ui import report

    if not report.dot_available():
        pytest.skip("Graphviz's dot is not installed")
    first = report.architecture_svg("digraph { a -> b }")
    pid = spawn.dot().pid
    second = report.architecture_svg('digraph { a -> c [label="x"] }')
    assert first.startswith("<svg") and second.startswith("<svg") and first != second
    assert spawn.dot().pid == pid, "the second diagram started another dot"


def test_a_process_killed_between_inputs_is_replaced_for_the_next_input():
    process = _coprocess([CAT])
    try:
        assert process.run(b"one END\n", timeout_s=10) == b"one END\n"
        killed = process.pid
        os.kill(killed, signal.SIGKILL)
        deadline = time.monotonic() + 5
        while process.pid is not None and time.monotonic() < deadline:  # reaped by .pid
            time.sleep(0.01)
        assert process.run(b"two END\n", timeout_s=10) == b"two END\n", "the input was lost"
        assert process.pid not in (None, killed), "the dead process was not replaced"
    finally:
        process.stop()
