#!/usr/bin/env python3
"""Server-side time of the Timeline page with its default inputs.

    PYTHONPATH=. python3 scripts/bench_timeline_page.py [--repeats 5]

The page runs in this process through Streamlit's AppTest (the script run the server would do,
without the network), timed around ``ScriptRunner._run_script`` as ``scripts/bench_rerun.py``
does: the CPU time of the script thread (its own work: widgets, the model runs, the canary
plan, the figures, serialising every element) and its wall time. The sidebar's workload is the
lab's default; the page's inputs are its defaults (a 75x spike at 60 s for 300 s, Kubernetes HPA,
1,200 s at 1 s steps; before issue 25 a 3x step over 600 s). Four figures:

- first load in a fresh process (run in a subprocess): the first visitor after the server
  starts, straight to the Timeline page (every import, numba's start-up and the compiled loops
  loaded from its disk cache, plotly's and pandas' first use); and the same after the server
  has served the Lab page once (what is left is the Timeline's own first-time cost);
- first load of a new session in a warm process, with every ``st.cache_data`` cleared: what
  each visitor with inputs not seen before costs;
- rerun with unchanged inputs (cache hits);
- rerun after changing the spike's multiplier to a value not seen before (the timelines and the
  figure are computed again; the canary's plan is a cache hit).

Target (issue 14, round two): a first load under ~1 s of server CPU.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402
from script_timing import (  # noqa: E402
    SCRIPT_SECONDS,
    quiet_bare_mode_warnings,
    time_script_runs,
)
from streamlit.testing.v1 import AppTest  # noqa: E402

quiet_bare_mode_warnings()

APP_PATH = ROOT / "app.py"
TIMELINE_PAGE = "app_pages/timeline.py"
TARGET_CPU_S = 1.0


def _timed(app: AppTest) -> tuple[float, float]:
    """(server CPU, server wall) seconds of one run."""
    SCRIPT_SECONDS.clear()
    app.run(timeout=300)
    if app.exception:
        raise SystemExit(f"the page raised: {[e.message for e in app.exception]}")
    charts = {chart.key for chart in app.get("plotly_chart")}
    if not {"timeline.chart", "canary.chart"} <= charts:
        raise SystemExit(f"the page drew {sorted(charts)}, not both charts")
    return sum(t[0] for t in SCRIPT_SECONDS), sum(t[1] for t in SCRIPT_SECONDS)


def _new_session() -> AppTest:
    app = AppTest.from_file(str(APP_PATH), default_timeout=300)
    app.switch_page(TIMELINE_PAGE)
    return app


def _cold(after_lab: bool) -> None:
    """One fresh-process first load (in a subprocess); prints ``cpu wall``."""
    time_script_runs()
    lab_cpu = 0.0
    if after_lab:
        SCRIPT_SECONDS.clear()
        AppTest.from_file(str(APP_PATH), default_timeout=300).run(timeout=300)
        lab_cpu = sum(t[0] for t in SCRIPT_SECONDS)
    cpu, wall = _timed(_new_session())
    print(f"{lab_cpu:.6f} {cpu:.6f} {wall:.6f}")


def _cold_in_subprocess(after_lab: bool) -> tuple[float, float, float]:
    """(Lab page CPU before it or 0, Timeline CPU, Timeline wall) of a fresh process."""
    command = [sys.executable, __file__, "--cold", "after-lab" if after_lab else "direct"]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    lab, cpu, wall = done.stdout.split()[-3:]
    return float(lab), float(cpu), float(wall)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--cold", choices=("direct", "after-lab"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cold:
        _cold(args.cold == "after-lab")
        return 0
    cold = [_cold_in_subprocess(after_lab=False)[1:] for _ in range(2)]
    with_lab = [_cold_in_subprocess(after_lab=True) for _ in range(2)]
    after_lab = [run[1:] for run in with_lab]
    lab_first = statistics.median(run[0] for run in with_lab)
    print(f"the Lab page's own first load in a fresh process: server CPU median {lab_first:.3f} s")
    time_script_runs()
    AppTest.from_file(str(APP_PATH), default_timeout=300).run(timeout=300)  # warm this process
    firsts, reruns, fresh = [], [], []
    for repeat in range(args.repeats):
        st.cache_data.clear()
        app = _new_session()
        firsts.append(_timed(app))
        reruns.append(_timed(app))
        app.number_input(key="timeline.widget.factor").set_value(3.5 + 0.25 * repeat)
        fresh.append(_timed(app))
    for label, runs in (
        ("first load, fresh process, Timeline page first", cold),
        ("first load, fresh process, after one Lab page", after_lab),
        ("first load, new session, warm process, caches cleared", firsts),
        ("rerun, unchanged inputs", reruns),
        ("rerun, a new spike multiplier", fresh),
    ):
        cpu = [run[0] for run in runs]
        wall = [run[1] for run in runs]
        print(
            f"{label}: server CPU median {statistics.median(cpu):.3f} s "
            f"(max {max(cpu):.3f}), wall median {statistics.median(wall):.3f} s "
            f"({len(runs)} runs)"
        )
    for label, runs in (("after one Lab page", after_lab), ("warm process", firsts)):
        worst = max(run[0] for run in runs)
        verdict = "meets" if worst <= TARGET_CPU_S else "misses"
        print(f"first load {label}: worst {worst:.3f} s of server CPU, {verdict} the target")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
