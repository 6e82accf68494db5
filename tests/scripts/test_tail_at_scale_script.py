"""``scripts/tail_at_scale.py`` prints its four sections with the model's figures in them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sdlab_model.tail import slow_request_probability
from sdlab_model.tail.paper import predict_table_1

ROOT = Path(__file__).resolve().parents[2]


def test_script_prints_the_papers_figures_beside_the_models():
    result = subprocess.run(
        [sys.executable, "scripts/tail_at_scale.py", "--requests", "2000", "--seed", "5"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    out = result.stdout
    for heading in ("## 1.", "## 2.", "## 3.", "## 4."):
        assert heading in out
    assert f"| 0.01 | 100 | {slow_request_probability(0.01, 100):.4f} | 0.63 |" in out
    all_p99 = predict_table_1().all_leaves[0.99]
    assert f"| all leaves | p99 | 140 | {all_p99:.2f} | {all_p99 / 140 - 1:+.0%} |" in out
    assert "no steady state" in out
