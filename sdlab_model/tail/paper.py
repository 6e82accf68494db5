"""The paper's figures, as published, and the model's prediction of its Table 1.

J. Dean, L. A. Barroso, "The Tail at Scale", Communications of the ACM 56(2), 74-80, 2013.
"""

from __future__ import annotations

from dataclasses import dataclass

from sdlab_model.tail.fanout import fanout_quantiles
from sdlab_model.tail.leaf import LeafLatency, fit_leaf

SLOW_EXAMPLES = ((0.01, 100, 0.63), (1e-4, 2000, 0.18))
"""(p, N, the published share of slow requests): section "Why Variability Is Amplified by
Scale", "63%" and "almost one in five" (0.18)."""

TABLE_1_QUANTILES = (0.5, 0.95, 0.99)
"""Table 1's columns: the 50%ile, 95%ile and 99%ile latency, measured at the root."""
TABLE_1_ONE_LEAF = (1.0, 5.0, 10.0)
"""Table 1, "One random leaf finishes" (ms): the only row the leaf is fitted to."""
TABLE_1_95_PERCENT = (12.0, 32.0, 70.0)
"""Table 1, "95% of all leaf requests finish" (ms)."""
TABLE_1_ALL = (40.0, 87.0, 140.0)
"""Table 1, "100% of all leaf requests finish" (ms)."""

ASSUMED_FANOUT = 100
"""The fan-out behind Table 1 is not published: the text says only that root servers reach "a
very large number of leaf servers". 100 is the fan-out of the paper's own worked example in the
same section, chosen before any prediction was compared with the table (an assumption)."""

HEDGE_QUANTILE = 0.95
"""Section "Hedged requests": the second copy goes once the first has been outstanding past the
95th-percentile latency, which "limits the additional load to approximately 5%"."""
HEDGE_EXTRA_LOAD = 0.05
"""That "approximately 5%"."""

TABLE_2_QUANTILES = (0.5, 0.9, 0.99, 0.999)
"""Table 2 ("Read latencies observed in a BigTable service benchmark"): its rows."""
TABLE_2_IDLE = ((19.0, 38.0, 67.0, 98.0), (16.0, 29.0, 42.0, 61.0))
"""Table 2, "mostly idle cluster": no hedge, and "tied request after 1ms" (ms)."""
TABLE_2_TERASORT = ((24.0, 56.0, 108.0, 159.0), (19.0, 38.0, 67.0, 108.0))
"""Table 2, "with concurrent terasort": no hedge, and tied after 1 ms (ms)."""
TIED_DISK_OVERHEAD = 0.01
"""Section "Tied requests": "the overhead of tied requests in disk utilization is less than 1%"
in both of Table 2's scenarios."""


@dataclass(frozen=True)
class Table1Prediction:
    """Table 1's second and third rows predicted from its first, at one fan-out."""

    fanout: int
    leaf: LeafLatency
    ninety_five: dict[float, float]
    all_leaves: dict[float, float]

    def errors(self) -> dict[str, dict[float, float]]:
        """Relative error of each predicted cell against the published one (0.1 is 10% over)."""
        published = {"95%": TABLE_1_95_PERCENT, "all": TABLE_1_ALL}
        predicted = {"95%": self.ninety_five, "all": self.all_leaves}
        return {
            row: {
                q: predicted[row][q] / value - 1.0
                for q, value in zip(TABLE_1_QUANTILES, published[row], strict=True)
            }
            for row in published
        }


def predict_table_1(fanout: int = ASSUMED_FANOUT) -> Table1Prediction:
    """Fit the leaf to Table 1's first row and fan it out to ``fanout`` independent leaves."""
    leaf = fit_leaf(*TABLE_1_ONE_LEAF)
    return Table1Prediction(
        fanout=fanout,
        leaf=leaf,
        ninety_five=fanout_quantiles(leaf, fanout, TABLE_1_QUANTILES, done_share=0.95),
        all_leaves=fanout_quantiles(leaf, fanout, TABLE_1_QUANTILES),
    )
