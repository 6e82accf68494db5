"""The model's compiled kernels, prepared in the background, and a line on the page meanwhile.

Every queueing evaluation runs numba kernels. numba compiles them on first use, or loads them
from its disk cache. ``python3 dev.py run`` compiles them before it serves, but Streamlit
Community Cloud runs ``streamlit run app.py`` directly, so after a deploy or a wake-up the
cache can be empty, and compiling takes tens of seconds. The first run of a server process
starts one thread that compiles them (``sdlab_model.queues.kernels.compile_in_background``),
then the event simulator's and the LLM model's. Meanwhile the model runs its queueing kernels as
plain Python, with the same numbers, so pages are drawn at once (the simulator and the LLM
kernels have no such twins: a simulated design and the LLM page wait for them). A page drawn
meanwhile says so, and reruns itself once the kernels are compiled (to drop that line).
"""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

import streamlit as st

from sdlab_model.llm import warmup as llm_warmup
from sdlab_model.queues import kernels
from sdlab_model.queues import warmup as queueing_warmup
from sdlab_model.simulation import warmup as simulation_warmup

NOTICE_KEY = "sdlab-compiling"
NOTICE = (
    "This server has just started and is preparing its compiled model in the background. "
    "Meanwhile the model runs uncompiled, with the same numbers; large grids and the first "
    "simulation take longer. This line goes once the compiled model is ready."
)
POLL_S = 2.0
"""How often a page drawn while compiling looks again (a fragment's rerun, a few ms)."""


def start() -> None:
    """Start compiling the kernels in the background (once per process; a no-op after)."""
    kernels.compile_in_background(compile_kernels)


WARM_UPS = (queueing_warmup, simulation_warmup, llm_warmup)
"""The queueing model's kernels, which every page but the LLM page runs; the simulator's, which
the judgement runs near saturation; the LLM model's. Each module's ``warm_up`` compiles them."""


def compile_kernels() -> None:
    """Each of ``WARM_UPS`` in turn: compiled by a Python process of its own into numba's disk
    cache, then loaded here."""
    for module in WARM_UPS:
        warm_up_in_a_subprocess(module)
    freeze_startup_objects()


def freeze_startup_objects() -> None:
    """Exempt what the server holds once warm (Streamlit, numpy, numba, plotly: ~200k objects)
    from Python's full collections, which otherwise walk all of them while holding the
    interpreter lock and stall every visitor (docs/performance.md). Garbage first, so none of it
    is kept for good; what is alive now and later dropped in a reference cycle is never freed
    (once per process: the sessions open at this moment, at most)."""
    gc.collect()
    gc.freeze()


def warm_up_in_a_subprocess(module) -> None:
    """``module.warm_up`` in a Python process of its own (compiling in this one would hold the
    interpreter lock for seconds), then here, where the kernels load from the cache (or, where
    the other process failed or no cache directory is writable, compile here)."""
    subprocess.run(
        [sys.executable, "-m", module.__name__],
        cwd=Path(__file__).resolve().parents[2],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    module.warm_up()


def notice() -> None:
    """While the kernels compile: ``NOTICE``, and a full rerun once they are compiled."""
    if kernels.is_compiling():
        _notice_until_compiled()


@st.fragment(run_every=POLL_S)
def _notice_until_compiled() -> None:
    if kernels.is_compiling():
        with st.container(key=NOTICE_KEY):
            st.info(NOTICE, icon=":material/hourglass_top:")
    else:
        st.rerun()  # the whole page: a full run without this fragment ends its polling
