"""Run a filter program (bytes in on stdin, bytes out on stdout) as cheaply as the server can.

The server runs Graphviz's ``dot`` for every diagram whose numbers change. ``subprocess.run``
cost the calling thread 2–4 ms of CPU per diagram in the server's process (~300 MB with numpy,
numba, plotly and Streamlit loaded), measured with ``time.thread_time``; ``os.posix_spawn``
0.6–0.8 ms. It starts the child without copying the parent (glibc spawns with ``CLONE_VFORK``),
so its cost does not grow with the server's memory. Where ``posix_spawn`` is missing (Windows),
``subprocess.run`` does the same job.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time

_READ_BYTES = 65536


def run_filter(argv: list[str], data: bytes, timeout_s: float) -> bytes | None:
    """What ``argv`` writes to stdout given ``data`` on stdin; None if it cannot start, exits
    with a failure, or takes longer than ``timeout_s`` (it is then killed). Its stderr is
    discarded."""
    if not hasattr(os, "posix_spawn"):
        try:
            done = subprocess.run(argv, input=data, capture_output=True, timeout=timeout_s)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout if done.returncode == 0 else None
    fds: dict[str, int] = {}  # every descriptor still open, closed in the end whatever happens
    pid = None
    output = None
    try:
        fds["child_stdin"], fds["to_child"] = os.pipe()
        fds["from_child"], fds["child_stdout"] = os.pipe()
        pid = os.posix_spawn(
            argv[0],
            argv,
            os.environ,
            file_actions=[
                (os.POSIX_SPAWN_DUP2, fds["child_stdin"], 0),
                (os.POSIX_SPAWN_DUP2, fds["child_stdout"], 1),
                (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
            ],
        )
        _close(fds, "child_stdin", "child_stdout")
        output = _exchange(fds, data, time.monotonic() + timeout_s)
    except OSError:
        output = None
    finally:
        _close(fds, *fds)
        if pid is not None:
            if output is None:  # failed or too slow: it must not outlive the request
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
            if os.waitstatus_to_exitcode(status) != 0:
                output = None
    return output


def _close(fds: dict[str, int], *names: str) -> None:
    for name in names:
        fd = fds.pop(name, None)
        if fd is not None:
            os.close(fd)


def _exchange(fds: dict[str, int], data: bytes, deadline: float) -> bytes | None:
    """Write ``data`` to the child (then close its stdin) while reading its stdout to the end;
    None at the deadline."""
    to_child, from_child = fds["to_child"], fds["from_child"]
    os.set_blocking(to_child, False)
    pending = memoryview(data)
    chunks: list[bytes] = []
    with selectors.DefaultSelector() as selector:
        selector.register(from_child, selectors.EVENT_READ)
        if pending:
            selector.register(to_child, selectors.EVENT_WRITE)
        else:
            _close(fds, "to_child")
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            for key, _ in selector.select(remaining):
                if key.fd == from_child:
                    chunk = os.read(from_child, _READ_BYTES)
                    if not chunk:
                        return b"".join(chunks)
                    chunks.append(chunk)
                    continue
                try:
                    pending = pending[os.write(to_child, pending) :]
                except BlockingIOError:
                    continue
                except BrokenPipeError:  # it stopped reading: its output says the rest
                    pending = pending[:0]
                if not pending:
                    selector.unregister(to_child)
                    _close(fds, "to_child")
