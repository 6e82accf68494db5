"""A child process for the heavy lane's simulations, so that they do not share the interpreter.

Every visitor's script runs as a thread of one server process, and the threads take turns
holding the interpreter (the GIL). The grid simulation behind Heatmaps' "Verify with
simulation" gives the GIL up and takes it back several times per cell (the kernel, then numpy);
with other visitors' reruns running, every take-back waits its turn, and a Verify of a few
seconds took ten times as long under load (docs/performance.md). In a process of its own it
waits only for a core.

One worker, started on first use and stopped after ``IDLE_S`` without work (its memory is the
server's only while it is needed). Calls are pickled (function, arguments) over its stdin and
the (ok, result) back over its stdout; a call goes to a module-level function of ``sdlab_model``.
Long work that must let others take turns runs as a job (``run_steps``): a generator the worker
keeps paused between its steps while other calls run. This module imports only the standard
library: it is also the child's main (``python -m sdlab_ui.server.worker``).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import itertools
import os
import pickle
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

IDLE_S = 20.0
"""How long the worker waits for more work before it exits (while it keeps no paused job)."""

ABANDONED_S = 600.0
"""How long a worker keeping paused jobs waits for more work before it exits all the same."""

NICENESS = 10
"""The worker's CPU priority, below the server's: on a contended core visitors' reruns get the
larger share and the simulations the rest (docs/performance.md compares 0, 5 and 10)."""

_ROOT = Path(__file__).resolve().parents[2]
_LENGTH_BYTES = 8
Result = TypeVar("Result")


class WorkerStopped(RuntimeError):
    """The worker process ended in the middle of a call (killed, out of memory)."""


STOPPED_TEXT = (
    "The simulation stopped before it finished: the server's simulation process ended (it may "
    "have run short of memory). Nothing is lost; press the button to run it again."
)
"""What a page says when ``WorkerStopped`` cuts its simulation short."""


def _write_frame(stream: BinaryIO, payload: bytes) -> None:
    stream.write(len(payload).to_bytes(_LENGTH_BYTES, "big") + payload)
    stream.flush()


def _read_frame(stream: BinaryIO) -> bytes | None:
    header = stream.read(_LENGTH_BYTES)
    if len(header) < _LENGTH_BYTES:
        return None
    size = int.from_bytes(header, "big")
    payload = stream.read(size)
    return payload if len(payload) == size else None


class Worker:
    """One child process that runs calls one at a time, started when needed."""

    def __init__(self, idle_s: float = IDLE_S):
        self.idle_s = idle_s
        self._lock = threading.Lock()
        self._process: subprocess.Popen | None = None
        self._last_used = time.monotonic()
        self._open_jobs = 0

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self.running else None

    def call(self, function: Callable[..., Result], *args: Any, **kwargs: Any) -> Result:
        """``function(*args, **kwargs)`` in the worker; its exception is raised here. The
        calling thread waits without the GIL (a blocking read)."""
        payload = pickle.dumps((function, args, kwargs), protocol=pickle.HIGHEST_PROTOCOL)
        with self._lock:
            process = self._start()
            try:
                _write_frame(process.stdin, payload)
                reply = _read_frame(process.stdout)
            except (BrokenPipeError, OSError):
                reply = None
            self._last_used = time.monotonic()
            if reply is None:
                self._stop()
                raise WorkerStopped("the simulation worker stopped before it answered")
        ok, value = pickle.loads(reply)
        if not ok:
            raise value
        return value

    def run_steps(
        self,
        function: Callable[..., Generator[Any, None, Result]],
        *args: Any,
        between: Callable[[Any], None] | None = None,
        **kwargs: Any,
    ) -> Result:
        """Run the generator ``function(*args, **kwargs)`` in the worker a step at a time and
        return what it returns. ``between(value)`` is called here with each value it yields,
        while the worker is free for other calls (a turn in the budget's lane, say); the
        generator waits, paused in the worker, until the next step is asked for."""
        with self._lock:
            self._open_jobs += 1
        job = None
        try:
            job = self.call(_start_job, function, *args, **kwargs)
            while True:
                try:
                    finished, value = self.call(_step_job, job)
                except LookupError as lost:  # the worker restarted between two steps
                    job = None
                    raise WorkerStopped("the simulation worker restarted during the job") from lost
                if finished:
                    job = None
                    return value
                if between is not None:
                    between(value)
        finally:
            with self._lock:
                self._open_jobs -= 1
            if job is not None and self.running:  # abandoned (an error, a visitor gone)
                with contextlib.suppress(WorkerStopped, OSError):
                    self.call(_drop_job, job)

    def stop(self) -> None:
        with self._lock:
            self._stop()

    def _start(self) -> subprocess.Popen:
        if self.running:
            return self._process
        environment = dict(os.environ)
        environment["PYTHONPATH"] = os.pathsep.join(
            [str(_ROOT), *filter(None, [environment.get("PYTHONPATH")])]
        )
        self._process = subprocess.Popen(
            [sys.executable, "-m", "sdlab_ui.server.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=environment,
            cwd=_ROOT,
        )
        threading.Thread(
            target=self._stop_when_idle, args=(self._process,), daemon=True, name="worker-idle"
        ).start()
        return self._process

    def _stop(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        for stream in (process.stdin, process.stdout):
            with contextlib.suppress(OSError):
                stream.close()
        try:
            process.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def _stop_when_idle(self, process: subprocess.Popen) -> None:
        while True:
            time.sleep(max(self.idle_s / 4, 0.05))
            with self._lock:
                if self._process is not process:
                    return
                idle_s = time.monotonic() - self._last_used
                if idle_s >= (ABANDONED_S if self._open_jobs else self.idle_s):
                    self._stop()
                    return


WORKER = Worker()


def call(function: Callable[..., Result], *args: Any, **kwargs: Any) -> Result:
    """``function(*args, **kwargs)`` in the server's simulation worker."""
    return WORKER.call(function, *args, **kwargs)


def run_steps(
    function: Callable[..., Generator[Any, None, Result]],
    *args: Any,
    between: Callable[[Any], None] | None = None,
    **kwargs: Any,
) -> Result:
    """``Worker.run_steps`` in the server's simulation worker."""
    return WORKER.run_steps(function, *args, between=between, **kwargs)


_JOBS: dict[int, Iterator[Any]] = {}
"""In the worker: the paused jobs, by number."""
_JOB_NUMBERS = itertools.count()


def _start_job(function: Callable[..., Iterator[Any]], *args: Any, **kwargs: Any) -> int:
    job = next(_JOB_NUMBERS)
    _JOBS[job] = function(*args, **kwargs)
    return job


def _step_job(job: int) -> tuple[bool, Any]:
    """(False, the value yielded) after one more step of ``job``, or (True, what it returned)."""
    steps = _JOBS.get(job)
    if steps is None:
        raise LookupError(f"this worker keeps no job {job}")
    try:
        return False, next(steps)
    except StopIteration as finished:
        del _JOBS[job]
        return True, finished.value
    except BaseException:
        del _JOBS[job]
        raise


def _drop_job(job: int) -> None:
    _JOBS.pop(job, None)


def _kept_jobs() -> int:
    """How many paused jobs this worker keeps (tests ask)."""
    return len(_JOBS)


def _release_memory() -> Callable[[], None]:
    """What returns freed memory to the system between calls: a collection, then glibc's
    ``malloc_trim`` where there is one (freed arenas otherwise stay the process's while a
    paused job and a grid's rows take turns)."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (AttributeError, OSError):
        trim = None

    def release() -> None:
        gc.collect()
        if trim is not None:
            trim(0)

    return release


def _serve() -> None:
    """The child: answer calls until the parent closes the pipe."""
    if hasattr(os, "nice"):
        os.nice(NICENESS)
    release = _release_memory()
    requests = sys.stdin.buffer
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # a stray print goes to the log, not into a reply
    while (payload := _read_frame(requests)) is not None:
        try:
            function, args, kwargs = pickle.loads(payload)
            reply = (True, function(*args, **kwargs))
        except Exception as error:  # the caller re-raises it
            reply = (False, error)
        try:
            data = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as error:  # one that does not pickle
            data = pickle.dumps((False, RuntimeError(repr(error))))
        _write_frame(replies, data)
        del payload, reply, data
        release()  # after the reply: the caller does not wait for it


if __name__ == "__main__":
    _serve()
