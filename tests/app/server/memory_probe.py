"""Calls for the worker's memory test, importable by the worker's process (by ``PYTHONPATH``)."""

from __future__ import annotations

import os

_KEPT: list[bytes] = []


def rss_mb() -> float:
    """This process's resident memory."""
    with open("/proc/self/statm") as statm:
        resident_pages = int(statm.read().split()[1])
    return resident_pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def churn(megabytes: int) -> float:
    """Fill ``megabytes`` of the C heap in 1 KB blocks, keep one block made after them and free
    the rest; the resident memory at the peak. The kept block pins the heap's top, so the freed
    memory stays the process's unless something hands it back (``malloc_trim``)."""
    blocks = [bytes(1024) for _ in range(megabytes * 1024)]
    _KEPT.append(bytes(1024))
    peak = rss_mb()
    del blocks
    return peak
