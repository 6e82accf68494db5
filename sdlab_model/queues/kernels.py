"""The queueing model's numba kernels: compiled, or as plain Python while they compile.

numba compiles a kernel on its first call, or loads it from its disk cache. With an empty cache
(a deploy, a wake-up on Streamlit Community Cloud) that takes tens of seconds, and a server's
first page would wait for it. So a server calls ``compile_in_background``: one thread gets the
kernels ready (the server's, ``sdlab_ui.server.warmup``) while every other thread runs each kernel
module's plain-Python twin, the module's own source run again with numba's ``njit`` as the
identity (what ``NUMBA_DISABLE_JIT=1`` would run; ``tests/sdlab_model/queues/test_kernels.py``
checks that it gives the compiled kernels' numbers bit for bit). A twin imports no numba, so it
is ready at once; it is slower per cell, but a page's few cells take it a fraction of a second
(an exact M/D/c solve near saturation, seconds). Once the thread is done, every call gets the
compiled kernels. In a process that never calls ``compile_in_background`` (tests, scripts)
the compiled kernels are used from the start, compiling on first use.

The model's callers ask for a kernel module here (``module(TAIL).decay_rate_cells``) where they
imported it before; the kernels themselves stay leaves and know nothing of this.
"""

from __future__ import annotations

import builtins
import importlib.util
import threading
import types
from collections.abc import Callable

TAIL = "sdlab_model.queues._tail_kernel"
FLEET = "sdlab_model.queues._fleet_kernel"
MDC = "sdlab_model.queues._mdc_kernel"
KERNEL_MODULES = frozenset({TAIL, FLEET, MDC})
"""The modules that have plain-Python twins: each uses numba only through ``from numba import
njit``, and imports other kernel modules only with ``from ... import``."""

_compiled = threading.Event()
_start_lock = threading.Lock()
_compiler: threading.Thread | None = None
_twins: dict[str, types.ModuleType] = {}
_twins_lock = threading.RLock()  # a twin's import of another twin loads that one inside it


def module(name: str) -> types.ModuleType:
    """The kernel module ``name`` (``TAIL``, ``FLEET``, ``MDC``): the compiled one, or its
    plain-Python twin while a background compile runs (but in the compiling thread itself)."""
    compiler = _compiler
    if compiler is None or _compiled.is_set() or compiler is threading.current_thread():
        return _compiled_module(name)
    return plain(name)


def _compiled_module(name: str) -> types.ModuleType:
    if name not in KERNEL_MODULES:
        raise ValueError(f"name={name!r} is not a kernel module: one of {sorted(KERNEL_MODULES)}")
    # Imported here, not at module top: `import sdlab_model` must not import numba.
    from sdlab_model.queues import _fleet_kernel, _mdc_kernel, _tail_kernel

    return {TAIL: _tail_kernel, FLEET: _fleet_kernel, MDC: _mdc_kernel}[name]


def compile_in_background(compile_kernels: Callable[[], None]) -> None:
    """Run ``compile_kernels`` in a thread of its own (once per process; later calls do nothing);
    until it returns, or raises, ``module`` gives every other thread the plain-Python twins."""
    global _compiler
    with _start_lock:
        if _compiler is not None:
            return
        _compiler = threading.Thread(
            target=_compile, args=(compile_kernels,), name="sdlab-kernels", daemon=True
        )
        _compiler.start()


def _compile(compile_kernels: Callable[[], None]) -> None:
    try:
        compile_kernels()
    finally:
        _compiled.set()  # a failure then shows where the kernels are used, with its own message


def is_compiling() -> bool:
    """Whether a background compile has started and not yet finished."""
    return _compiler is not None and not _compiled.is_set()


def wait_until_compiled(timeout_s: float | None = None) -> bool:
    """Wait for the background compile (True at once if none was started); False on timeout."""
    return _compiler is None or _compiled.wait(timeout_s)


def plain(name: str) -> types.ModuleType:
    """The plain-Python twin of the kernel module ``name``, made once per process: its source,
    compiled to bytecode, run into a module of its own that sees ``njit`` as the identity and
    the twins of the kernel modules it imports. numba is not imported."""
    if name not in KERNEL_MODULES:
        raise ValueError(f"name={name!r} is not a kernel module: one of {sorted(KERNEL_MODULES)}")
    with _twins_lock:
        if name not in _twins:
            spec = importlib.util.find_spec(name)
            twin = types.ModuleType(name)
            twin.__file__ = spec.origin
            twin.__builtins__ = {**vars(builtins), "__import__": _import_for_twins}
            exec(spec.loader.get_code(name), vars(twin))
            _twins[name] = twin
        return _twins[name]


def _uncompiled(*function, **options):
    """numba's ``njit`` as a twin sees it: ``njit(f)`` and ``njit(**options)(f)`` give ``f``."""
    return function[0] if function else lambda kernel: kernel


_NUMBA_STAND_IN = types.SimpleNamespace(njit=_uncompiled)


def _import_for_twins(name, globals=None, locals=None, fromlist=(), level=0):
    """A twin's ``import``: numba's stand-in, the twins of kernel modules, anything else as is."""
    if name == "numba" and fromlist:
        return _NUMBA_STAND_IN
    if name in KERNEL_MODULES and fromlist:
        return plain(name)
    return builtins.__import__(name, globals, locals, fromlist, level)
