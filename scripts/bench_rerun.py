#!/usr/bin/env python3
"""Server-side time of one Lab-page rerun against a bare page with the same widgets.

    python3 scripts/bench_rerun.py [--reruns 100]

Both apps run in this process through Streamlit's AppTest (the script run the server would do,
without the network), interleaved so that machine noise hits both alike. The server-side time is
the script run itself, timed around Streamlit's ``ScriptRunner._run_script`` (what a server
thread spends on the rerun: widgets, model calls, caches, serialising every element), both as
wall time and as the CPU time of that thread. On a busy shared machine the wall time also counts
time the thread waited for a core; the thread's CPU time counts only its own work, so the verdict
uses it. AppTest's polling and parsing of the result, which a real
server does not do, are left out, but the wall time of ``AppTest.run`` is printed too. Scripts
are compiled once, as a server does (AppTest alone would compile the entrypoint and the page
again on every run). The bare page draws the same sidebar, card buttons, walkthrough button,
download button and file uploader, and nothing else: no model call, no chart. Two figures:

- steady: reruns with unchanged inputs (what a click that changes nothing, or a page revisit,
  costs: cache hits);
- fresh: each rerun after moving the rate slider to a value not seen before (cache misses: the
  model, the simulation and the figures are computed).

The LLM page the same way: each rerun after moving its request rate to a value not seen before,
against a bare page with the LLM page's inputs (its length upload too) and cards and nothing
computed from them (the shared sidebar in both). The LLM page is as a visitor first sees it: its
heatmaps' expander closed (they are built only once it is opened). A last figure times the
Heatmaps page alone: each rerun after moving the model latency to a value not seen before, so
every grid and figure on the page is computed afresh.

Targets: steady ratio <= 1.5x (issue 3); fresh ratio <= 2x and a fresh Heatmaps rerun <= 50 ms
of server CPU (issue 13); the LLM page's fresh ratio <= 2x (issue 23). Each ratio comes with a
95% bootstrap interval over its reruns, and a target counts as met only where the whole interval
is under it: one run's medians move by a tenth with the machine's load.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from script_timing import (  # noqa: E402
    SCRIPT_SECONDS,
    quiet_bare_mode_warnings,
    share_script_cache,
    time_script_runs,
)
from streamlit.testing.v1 import AppTest  # noqa: E402

quiet_bare_mode_warnings()  # before sdlab_ui's cached functions are made

from sdlab_model.page_params import LLM_BY_NAME  # noqa: E402
from sdlab_model.params import NUMERIC_BY_NAME  # noqa: E402
from sdlab_model.queues import kernels  # noqa: E402

_BARE_APP = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
import streamlit as st
from sdlab_ui import sidebar, state

st.set_page_config(page_title="bare", layout="wide")
page = st.navigation([st.Page({{page!r}}, title="Lab", default=True)])
state.show_notices()
try:
    sidebar.render()
finally:
    page.run()
"""

_BARE_PAGE = """
import streamlit as st
from sdlab_model import SCENARIOS, scenario_file
from sdlab_ui import state

lab = state.current()
row = st.container(horizontal=True)
for card in SCENARIOS:
    row.button(card.title, key=f"lab.card.{card.id}")
st.button("Start the walkthrough", key="lab.walk.start")
st.download_button("Download scenario file (JSON)", scenario_file.dumps(lab.workload, lab.model),
                   file_name="s.json", key="lab.scenario_download", on_click="ignore")
st.file_uploader("Restore a scenario file", type=["json"], key="lab.scenario_upload")
"""


_BARE_LLM_PAGE = """
import streamlit as st
from sdlab_ui.llm import cards, controls, lengths

st.title("LLM serving: tokens, batches and the KV cache")
st.caption("The LLM page's inputs and cards, and nothing computed from them.")
cards.draw()
controls.show_notices()
controls.draw()
lengths.draw()
"""

_MEASURES = ("server CPU", "server wall", "AppTest wall")


def _timed_run(app: AppTest) -> tuple[float, float, float]:
    """(server CPU, server wall, AppTest wall) seconds of one rerun."""
    SCRIPT_SECONDS.clear()
    started = time.perf_counter()
    app.run(timeout=300)
    wall = time.perf_counter() - started
    if app.exception:
        raise SystemExit(f"the app raised: {[e.message for e in app.exception]}")
    cpu = sum(t[0] for t in SCRIPT_SECONDS)
    return (cpu, sum(t[1] for t in SCRIPT_SECONDS), wall)


def _fresh_rates(count: int) -> list[float]:
    """Rates the Lab has not seen, up to 350 rps above the default whatever ``count`` is (a
    load the model solves as fast as at the default): each one misses every cache."""
    spec = NUMERIC_BY_NAME["rate_rps"]
    return [round(spec.default + 350.0 * (index + 1) / count, 3) for index in range(count)]


def _fresh_model_latencies(count: int) -> list[float]:
    """Model latencies the Heatmaps page has not seen: each one misses every grid cache."""
    spec = NUMERIC_BY_NAME["model_latency_ms"]
    return [round(spec.default + 0.37 * (index + 1), 3) for index in range(count)]


def _fresh_llm_rates(count: int) -> list[float]:
    """LLM request rates the LLM page has not seen: each one misses its caches."""
    spec = LLM_BY_NAME["rate_rps"]
    return [round(spec.default + 0.013 * (index + 1), 4) for index in range(count)]


def _move_llm(app: AppTest, **changes) -> None:
    """Move the LLM page's inputs as its widgets' callbacks would."""
    app.session_state["llm.values"] = {**app.session_state["llm.values"], **changes}


def _move(app: AppTest, **changes) -> None:
    """Move the canonical state as a slider's callback would."""
    app.session_state["sdlab.workload"] = app.session_state["sdlab.workload"].with_changes(
        **changes
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reruns", type=int, default=100, help="timed reruns per app and mode")
    args = parser.parse_args()
    time_script_runs()
    share_script_cache()

    with tempfile.TemporaryDirectory() as folder:
        page_path = Path(folder) / "bare_lab.py"
        page_path.write_text(_BARE_PAGE)
        bare_path = Path(folder) / "bare_app.py"
        bare_path.write_text(_BARE_APP.format(page=str(page_path)))

        lab = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
        bare = AppTest.from_file(str(bare_path), default_timeout=300)
        for app in (lab, bare):  # warm-up: imports, numba, caches
            _timed_run(app)
            _timed_run(app)
        kernels.wait_until_compiled()  # the compiled kernels, as a warm server runs them

        steady_lab, steady_bare = [], []
        for _ in range(args.reruns):
            steady_lab.append(_timed_run(lab))
            steady_bare.append(_timed_run(bare))

        fresh_lab, fresh_bare = [], []
        for rate in _fresh_rates(max(5, args.reruns)):
            for app, times in ((lab, fresh_lab), (bare, fresh_bare)):
                _move(app, rate_rps=rate)
                times.append(_timed_run(app))

        llm_page_path = Path(folder) / "bare_llm.py"
        llm_page_path.write_text(_BARE_LLM_PAGE)
        bare_llm_path = Path(folder) / "bare_llm_app.py"
        bare_llm_path.write_text(_BARE_APP.format(page=str(llm_page_path)))
        llm = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
        bare_llm = AppTest.from_file(str(bare_llm_path), default_timeout=300)
        _timed_run(llm)
        llm.switch_page("app_pages/llm.py")
        for app in (llm, bare_llm, llm, bare_llm):
            _timed_run(app)
        fresh_llm, fresh_bare_llm = [], []
        for rate in _fresh_llm_rates(max(5, args.reruns // 4)):
            for app, times in ((llm, fresh_llm), (bare_llm, fresh_bare_llm)):
                _move_llm(app, rate_rps=rate)
                times.append(_timed_run(app))

        heatmaps = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
        _timed_run(heatmaps)
        heatmaps.switch_page("app_pages/heatmaps.py")
        _timed_run(heatmaps)
        fresh_heatmaps = []
        for latency_ms in _fresh_model_latencies(max(5, args.reruns // 4)):
            _move(heatmaps, model_latency_ms=latency_ms)
            fresh_heatmaps.append(_timed_run(heatmaps))

    def report(
        mode: str, lab_times: list[tuple[float, ...]], bare_times: list[tuple[float, ...]]
    ) -> tuple[float, float, float]:
        ratios = []
        for index, what in enumerate(_MEASURES):
            lab_ms = 1000 * statistics.median(t[index] for t in lab_times)
            bare_ms = 1000 * statistics.median(t[index] for t in bare_times)
            ratios.append(lab_ms / bare_ms)
            print(
                f"{mode:>9} {what:>12}: sdlab {lab_ms:7.1f} ms, bare page {bare_ms:7.1f} ms,"
                f" ratio {lab_ms / bare_ms:.2f}x  (median of {len(lab_times)} reruns each)"
            )
        low, high = _ratio_interval([t[0] for t in lab_times], [t[0] for t in bare_times])
        print(f"{mode:>9} server CPU ratio's 95% interval: {low:.2f}x to {high:.2f}x")
        return ratios[0], low, high

    steady = report("steady", steady_lab, steady_bare)
    fresh = report("fresh", fresh_lab, fresh_bare)
    fresh_llm_ratio = report("LLM fresh", fresh_llm, fresh_bare_llm)
    heatmaps_ms = [1000 * statistics.median(t[i] for t in fresh_heatmaps) for i in range(3)]
    print(
        f"Heatmaps fresh: server CPU {heatmaps_ms[0]:.1f} ms, server wall {heatmaps_ms[1]:.1f} ms,"
        f" AppTest wall {heatmaps_ms[2]:.1f} ms  (median of {len(fresh_heatmaps)} reruns)"
    )
    for what, (value, low, high), target in (
        ("steady-state server CPU ratio", steady, 1.5),
        ("fresh server CPU ratio", fresh, 2.0),
        ("LLM page fresh server CPU ratio", fresh_llm_ratio, 2.0),
    ):
        print(f"{what} {value:.2f}x: {_verdict(low, high, target)} the {target:g}x target")
    verdict = "meets" if heatmaps_ms[0] <= 50.0 else "MISSES"
    print(f"fresh Heatmaps server CPU {heatmaps_ms[0]:.2f} ms {verdict} the 50 ms target")


def _ratio_interval(
    lab_seconds: list[float], bare_seconds: list[float], draws: int = 2000
) -> tuple[float, float]:
    """95% bootstrap interval of median(sdlab) / median(bare page), resampling the interleaved
    pairs together: a stretch of a busy machine slows both runs of a pair, so a pair is the unit."""
    lab, bare = np.asarray(lab_seconds), np.asarray(bare_seconds)
    picks = np.random.default_rng(0).integers(0, lab.size, size=(draws, lab.size))
    ratios = np.median(lab[picks], axis=1) / np.median(bare[picks], axis=1)
    low, high = np.quantile(ratios, [0.025, 0.975])
    return float(low), float(high)


def _verdict(low: float, high: float, target: float) -> str:
    """Met only where the whole interval is under the target; missed where it is all over."""
    if high <= target:
        return "meets"
    if low > target:
        return "MISSES"
    return "not settled by this run: its interval straddles"


if __name__ == "__main__":
    main()
