"""A filter program (bytes in on stdin, bytes out on stdout) kept running: Graphviz's ``dot``.

``dot`` reads graph after graph from one stdin and writes each drawing as soon as the graph is
read, so with one process kept running a diagram costs its layout (a few milliseconds), not the
program's start-up (loading fonts and plugins, several times longer) and a fork from the
server's thread (docs/performance.md).
"""

from __future__ import annotations

import contextlib
import functools
import os
import selectors
import shutil
import subprocess
import threading
import time


class Coprocess:
    """One running filter that answers each input with one output ending in ``end``.

    Started on first use, one input at a time (a lock); stopped after ``idle_s`` without use
    (its memory is the server's only while diagrams are drawn), after ``recycle_after`` inputs
    (``dot`` keeps a little memory from every graph it reads), and on any failure: a timeout, an
    exit (``dot`` exits on a syntax error), or an output that does not end as it should. A
    failed input returns None and the next one starts a fresh process; a process found dead when
    an input comes (killed, say) is replaced for that input. Its stderr is discarded.
    """

    def __init__(self, argv: list[str], end: bytes, *, recycle_after: int, idle_s: float):
        self.argv, self.end = argv, end
        self.recycle_after, self.idle_s = recycle_after, idle_s
        self._lock = threading.Lock()
        self._process: subprocess.Popen | None = None
        self._uses = 0
        self._last_used = time.monotonic()

    @property
    def pid(self) -> int | None:
        """The running process's id, or None (once a stop under way has reaped it)."""
        with self._lock:
            process = self._process
            return process.pid if process is not None and process.poll() is None else None

    def run(self, data: bytes, timeout_s: float) -> bytes | None:
        """The output for ``data`` (one input: for ``dot``, one graph), or None."""
        with self._lock:
            if self._process is not None and self._process.poll() is not None:
                self._stop()  # it died since its last input (killed, say): start afresh
            process = self._process or self._start()
            if process is None:
                return None
            try:
                output = _exchange(process, data, self.end, time.monotonic() + timeout_s)
            except OSError:
                output = None
            self._uses += 1
            self._last_used = time.monotonic()
            if output is None or self._uses >= self.recycle_after:
                self._stop(kill=output is None)
            return output

    def stop(self) -> None:
        with self._lock:
            self._stop()

    def _start(self) -> subprocess.Popen | None:
        try:
            process = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
            )
        except OSError:
            return None
        # A write takes what the pipe has room for and returns: never blocked past the deadline
        # by a program that is itself waiting for its output to be read.
        os.set_blocking(process.stdin.fileno(), False)
        self._process, self._uses = process, 0
        threading.Thread(
            target=self._stop_when_idle, args=(process,), daemon=True, name="coprocess-idle"
        ).start()
        return process

    def _stop(self, *, kill: bool = False) -> None:
        """Stop the process: at the end of its input, or at once where it failed."""
        process, self._process = self._process, None
        if process is None:
            return
        if kill:
            process.kill()
        for stream in (process.stdin, process.stdout):
            with contextlib.suppress(OSError):
                stream.close()
        try:
            process.wait(timeout=1.0)
        except subprocess.TimeoutExpired:  # it did not exit at the end of its input
            process.kill()
            process.wait()

    def _stop_when_idle(self, process: subprocess.Popen) -> None:
        while True:
            time.sleep(max(self.idle_s / 4, 0.05))
            with self._lock:
                if self._process is not process:
                    return
                if time.monotonic() - self._last_used >= self.idle_s:
                    self._stop()
                    return


def _exchange(process: subprocess.Popen, data: bytes, end: bytes, deadline: float) -> bytes | None:
    """Write ``data`` to the process and read until its output ends with ``end``; None at the
    deadline, at the end of its output, or where more than one output came back."""
    to_write, output = memoryview(data), bytearray()
    stdin, stdout = process.stdin.fileno(), process.stdout.fileno()
    with selectors.DefaultSelector() as selector:
        if to_write:
            selector.register(stdin, selectors.EVENT_WRITE)
        selector.register(stdout, selectors.EVENT_READ)
        while not output.endswith(end):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            for key, _ in selector.select(remaining):
                if key.fd == stdin:
                    with contextlib.suppress(BlockingIOError):
                        to_write = to_write[os.write(stdin, to_write) :]
                    if not to_write:
                        selector.unregister(stdin)
                else:
                    chunk = os.read(stdout, 65536)
                    if not chunk:  # it exited
                        return None
                    output += chunk
    if to_write or output.count(end) != 1:  # answered before reading it all, or twice
        return None
    return bytes(output)


DOT_TIMEOUT_S = 10
DOT_RECYCLE_AFTER = 200
"""Drawings one ``dot`` process makes before a fresh one takes over (each leaves ~11 kB)."""
DOT_IDLE_S = 30.0
"""How long an unused ``dot`` process is kept."""


@functools.lru_cache(maxsize=1)
def dot() -> Coprocess | None:
    """The server's one ``dot -Tsvg`` for every diagram; None where Graphviz is not installed."""
    executable = shutil.which("dot")
    if executable is None:
        return None
    return Coprocess(
        [executable, "-Tsvg"], b"</svg>\n", recycle_after=DOT_RECYCLE_AFTER, idle_s=DOT_IDLE_S
    )
