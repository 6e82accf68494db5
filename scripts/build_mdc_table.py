#!/usr/bin/env python3
"""Tabulate the exact M/D/c p99 wait as a tail constant, for the heatmaps' ``p99_grid``.

For each server count ``c`` and utilization ``rho`` on the table's nodes this solves the exact
waiting-time law (``sdlab_model.queues.mdc.MdcWait``) and stores ``ln C`` where ``C`` makes the
exponential tail ``C e^(-eta t)`` pass through the exact p99 wait: ``C = 0.01 e^(eta W99)`` when
``W99 > 0``, else ``C = P(W > 0)`` (at most 0.01, so the grid's p99 wait is 0 there too).
``ln C`` is smooth in ``c`` and ``rho``, so the grid interpolates it bilinearly.

The table is a NumPy ``.npz`` file holding ``SERVER_NODES`` (int64), ``LOAD_NODES_V`` and
``LOG_TAIL_CONSTANT`` (float64, one row per server node); ``sdlab_model.queues.mdc_grid`` loads it
and tests/sdlab_model/queues/test_mdc_table.py checks it against the exact solution.

    python3 scripts/build_mdc_table.py    # rewrites queues/data/mdc_tail_constant.npz: 15 min
    python3 scripts/build_mdc_table.py --servers 1 2 --out /tmp/t.npz    # two rows only: 15 s
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import zipfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sdlab_model.queues.mdc import MdcWait  # noqa: E402

SERVER_NODES = sorted(set(range(1, 17)) | {round(16 * 1.25**k) for k in range(1, 36)})
# The load coordinate v = ln(4 rho) below rho = 1/2 and -ln(1 - rho) above (continuous, with a
# continuous slope): ln C is close to linear in it at both ends. Nodes: steps of about 0.083 from
# rho = 0.001 to 0.995, the upper part being the 64-node grid the first table used.
_UPPER = np.linspace(-math.log(0.99), -math.log(0.005), 64)
_STEP = _UPPER[1] - _UPPER[0]
_UPPER = _UPPER[math.log(2.0) <= _UPPER]
_LOWER = np.arange(_UPPER[0] - _STEP, math.log(0.004) - _STEP / 2, -_STEP)[::-1]
LOAD_NODES_V = np.concatenate((_LOWER, _UPPER))
LOG_FLOOR = -700.0  # exp() underflows below this; such a P(W > 0) is zero for every purpose.

TARGET = ROOT / "sdlab_model" / "data" / "mdc_tail_constant.npz"


def log_tail_constant(servers: int, utilization: float) -> float:
    wait = MdcWait.solve(servers, servers * utilization)
    p99_wait = wait.wait_quantile(0.99)
    if p99_wait > 0.0:
        return math.log(0.01) + wait.decay_rate * p99_wait
    probability = wait.wait_probability
    return max(LOG_FLOOR, math.log(probability)) if probability > 0.0 else LOG_FLOOR


def utilization_at(v: float) -> float:
    """Inverse of the load coordinate ``v`` (see ``LOAD_NODES_V``)."""
    return math.exp(v) / 4.0 if v < math.log(2.0) else 1.0 - math.exp(-v)


def write_table(
    path: Path, server_nodes: list[int], load_nodes_v: np.ndarray, rows: list[list[float]]
) -> None:
    """Write the table as an uncompressed ``.npz``, byte for byte the same for the same values.

    ``np.savez`` stamps each member with the current time; fixed stamps keep a rebuild that
    changes no value from changing the file.
    """
    arrays = {
        "SERVER_NODES": np.asarray(server_nodes, dtype=np.int64),
        "LOAD_NODES_V": np.asarray(load_nodes_v, dtype=np.float64),
        "LOG_TAIL_CONSTANT": np.asarray(rows, dtype=np.float64).reshape(
            len(server_nodes), len(load_nodes_v)
        ),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        for name, array in arrays.items():
            member = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            with archive.open(member, "w") as stream:
                np.lib.format.write_array(stream, np.ascontiguousarray(array), allow_pickle=False)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out", type=Path, default=TARGET, help=f"where to write (default {TARGET})"
    )
    parser.add_argument(
        "--servers",
        type=int,
        nargs="+",
        choices=SERVER_NODES,
        metavar="C",
        help="tabulate only these server nodes (a partial table, for trying the script out)",
    )
    args = parser.parse_args(argv)
    servers_nodes = sorted(set(args.servers)) if args.servers else SERVER_NODES
    started = time.perf_counter()
    rows = []
    for servers in servers_nodes:
        rows.append([log_tail_constant(servers, utilization_at(v)) for v in LOAD_NODES_V])
        print(f"c={servers:6d} done at {time.perf_counter() - started:6.1f} s", flush=True)
    write_table(args.out, servers_nodes, LOAD_NODES_V, rows)
    print(f"wrote {args.out} in {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
