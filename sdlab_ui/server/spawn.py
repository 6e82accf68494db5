"""Run a filter program (bytes in on stdin, bytes out on stdout): Graphviz's ``dot`` for every
diagram whose numbers change."""

from __future__ import annotations

import subprocess


def run_filter(argv: list[str], data: bytes, timeout_s: float) -> bytes | None:
    """What ``argv`` writes to stdout given ``data`` on stdin; None if it cannot start, exits
    with a failure, or takes longer than ``timeout_s`` (it is then killed). Its stderr is
    discarded."""
    try:
        done = subprocess.run(
            argv, input=data, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=timeout_s
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None
