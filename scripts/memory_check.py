#!/usr/bin/env python3
"""Memory check: 1,000 distinct workloads through the app's cached paths; RSS must level off.

    python3 scripts/memory_check.py                 # 1,000 workloads, both pages' cached paths
    python3 scripts/memory_check.py --workloads 300 --no-heatmaps

Every cache in ``sdlab_ui.cache`` has ``max_entries``, so once each is full, new workloads evict
old ones and the process's resident memory should stop growing. This script calls the functions
the pages call, in this process (Streamlit's in-memory cache, as a served app uses), for
workloads drawn by a seeded generator across every slider's range, both models, both toggles:

- the Lab page: ``cache.lab_view`` (both models' assessments, the simulation, the figures);
- the Heatmaps page: ``cache.heatmap_figure``, ``cache.small_multiples_figure``
  (its CSV download is made on click, from ``cache.grid``, and not cached).

It prints RSS after every 100 workloads and compares the last half with the point where every
cache is full. Prints figures; not part of the test suite.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import logging
import math
import random
import sys
import time
import tracemalloc
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sdlab_model.params import MODEL_CHOICES, NUMERIC_INPUTS, TOGGLE_INPUTS  # noqa: E402
from sdlab_model.workload import Workload  # noqa: E402

MB = 1024 * 1024
# Growth allowed between "caches full" and the end: allocator noise, not a leak.
TOLERANCE_MB = 15.0


def distinct_workloads(count: int, seed: int) -> list[tuple[Workload, str]]:
    """``count`` different (workload, model) pairs spread over every input's range."""
    rng = random.Random(seed)
    seen: set[tuple[Workload, str]] = set()
    while len(seen) < count:
        values: dict[str, float | int | bool] = {}
        for spec in NUMERIC_INPUTS:
            if spec.scale == "log":
                value = math.exp(rng.uniform(math.log(spec.minimum), math.log(spec.maximum)))
            else:
                value = rng.uniform(spec.minimum, spec.maximum)
            # Slider-like values: three significant figures, whole where the input is whole.
            value = float(f"{value:.3g}")
            values[spec.name] = round(value) if spec.integer else value
            values[spec.name] = min(max(values[spec.name], spec.minimum), spec.maximum)
        for toggle in TOGGLE_INPUTS:
            values[toggle.name] = rng.random() < 0.5
        seen.add((Workload(**values), rng.choice(MODEL_CHOICES)))
    return sorted(seen, key=lambda pair: rng.random())


def rss_mb(trim: bool = False) -> float:
    gc.collect()
    if trim:
        # Hand freed heap pages back to the OS first: what is left is memory in use, not free
        # space glibc's allocator keeps after large figures come and go.
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    return psutil.Process().memory_info().rss / MB


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workloads", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--no-heatmaps", action="store_true", help="only the Lab page's path")
    parser.add_argument(
        "--trim", action="store_true", help="malloc_trim before each reading (glibc only)"
    )
    parser.add_argument(
        "--trace", action="store_true",
        help="also print memory Python objects hold (tracemalloc; slower): if it stays flat "
        "while RSS grows, the growth is the allocator's, not objects kept alive",
    )  # fmt: skip
    args = parser.parse_args()

    import streamlit as st
    from streamlit import logger

    from sdlab_ui import cache

    # Bare mode warns on every cache call that there is no script run: expected here.
    logger.set_log_level(logging.ERROR)
    pairs = distinct_workloads(args.workloads, args.seed)
    if args.trace:
        tracemalloc.start()
    start_mb = rss_mb()
    print(f"sdlab memory check: {args.workloads} distinct workloads, seed {args.seed}, "
          f"heatmaps {'off' if args.no_heatmaps else 'on'}, "
          f"trim {'on' if args.trim else 'off'}")  # fmt: skip
    print(f"  before any workload      RSS {start_mb:7.1f} MB")
    readings: list[tuple[int, float]] = []
    started = time.perf_counter()
    for done, (workload, model) in enumerate(pairs, start=1):
        st.session_state.clear()  # a new visitor each time: no per-session reuse
        cache.lab_view(workload, model)
        if not args.no_heatmaps:
            cache.heatmap_figure(workload, model)
            cache.small_multiples_figure(workload, model)
        if done % 100 == 0 or done == len(pairs):
            readings.append((done, rss_mb(args.trim)))
            traced = (
                f"  Python objects {tracemalloc.get_traced_memory()[0] / MB:7.1f} MB"
                if args.trace else ""
            )  # fmt: skip
            print(f"  after {done:5d} workloads  RSS {readings[-1][1]:7.1f} MB{traced}  "
                  f"({time.perf_counter() - started:5.0f} s)", flush=True)  # fmt: skip

    # The largest cache (assessments, 512 entries, two per workload) is full after 256 workloads.
    full_at = next((mb for done, mb in readings if done >= 300), readings[0][1])
    end_mb = readings[-1][1]
    growth = end_mb - full_at
    peak_mb = max(mb for _, mb in readings)
    print(f"  growth after caches are full (300 -> {readings[-1][0]}): {growth:+.1f} MB "
          f"(tolerance {TOLERANCE_MB:.0f} MB); peak {peak_mb:.1f} MB")  # fmt: skip
    levelled = growth <= TOLERANCE_MB
    print("  verdict: " + ("RSS levels off" if levelled else "RSS KEEPS GROWING"))
    return 0 if levelled else 1


if __name__ == "__main__":
    sys.exit(main())
