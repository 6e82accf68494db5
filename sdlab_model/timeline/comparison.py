"""What an autoscaler bought against a fixed fleet sized for the peak, in numbers and in words.

Both timelines carry the same traffic; the comparison is of their totals (``TimelineTotals``):
minutes whose p99 is over the target, and the cost of the replica-hours (starting replicas
included). The page shows ``FixedFleetComparison.sentence`` as it is.
"""

from __future__ import annotations

from dataclasses import dataclass

from sdlab_model.timeline.autoscalers import AUTOSCALER_LABELS, MAX_REPLICAS
from sdlab_model.timeline.model import TimelineResult
from sdlab_model.wording import count, money


@dataclass(frozen=True)
class FixedFleetComparison:
    """The autoscaled timeline's totals beside the fixed fleet's, and the sentence saying so."""

    autoscaler: str
    fixed_replicas: int | None
    """The fixed fleet's replicas (None: no fleet up to the lab's most meets the target)."""
    minutes: int
    autoscaled_minutes_over: int
    fixed_minutes_over: int
    autoscaled_usd: float
    fixed_usd: float
    target_ms: float

    @property
    def saved_usd(self) -> float:
        """What the autoscaler saved (negative: what it cost more)."""
        return self.fixed_usd - self.autoscaled_usd

    @property
    def saved_share(self) -> float:
        """``saved_usd`` as a share of the fixed fleet's cost (0 when that costs nothing)."""
        return self.saved_usd / self.fixed_usd if self.fixed_usd > 0 else 0.0

    @property
    def extra_minutes_over(self) -> int:
        """Minutes over the target the autoscaler added (negative: minutes it spared)."""
        return self.autoscaled_minutes_over - self.fixed_minutes_over

    @property
    def sentence(self) -> str:
        """The comparison in words, every number from the totals above."""
        fleet = (
            f"a fixed fleet of {count(self.fixed_replicas, 'replica')} sized for the peak"
            if self.fixed_replicas is not None
            else f"a fixed fleet of {MAX_REPLICAS} replicas (none up to it meets the target)"
        )
        cost = f"{money(self.autoscaled_usd)} against {money(self.fixed_usd)}"
        minutes = (
            f"{count(self.autoscaled_minutes_over, 'minute')} of {self.minutes} over the "
            f"{self.target_ms:g} ms p99 target against the fixed fleet's "
            f"{self.fixed_minutes_over}"
        )
        if self.saved_usd > 0.005:
            bought = f"saved {money(self.saved_usd)} ({self.saved_share:.0%}): {cost}"
        elif self.saved_usd < -0.005:
            bought = f"cost {money(-self.saved_usd)} ({-self.saved_share:.0%}) more: {cost}"
        else:
            bought = f"cost the same: {cost}"
        if self.extra_minutes_over > 0:
            paid = f"It paid for that with {minutes}."
            if self.saved_usd <= 0.005:
                paid = f"It was also worse on the target: {minutes}."
        elif self.extra_minutes_over < 0:
            spared = count(-self.extra_minutes_over, "minute")
            paid = f"It bought {spared} fewer over the target: {minutes}."
        else:
            paid = f"Over the target it did as well: {minutes}."
        return f"Against {fleet}, {self.autoscaler} {bought}. {paid}"


def compare_with_fixed(autoscaled: TimelineResult, fixed: TimelineResult) -> FixedFleetComparison:
    """The comparison of ``run_timeline``'s result with ``run_fixed_for_peak``'s."""
    if autoscaled.inputs.traffic != fixed.inputs.traffic:
        raise ValueError("the two timelines must carry the same traffic")
    kind = autoscaled.inputs.autoscaler.kind
    return FixedFleetComparison(
        autoscaler=_NAMES.get(kind, AUTOSCALER_LABELS[kind]),
        fixed_replicas=fixed.fixed_replicas,
        minutes=autoscaled.totals.minutes,
        autoscaled_minutes_over=autoscaled.totals.minutes_over_target,
        fixed_minutes_over=fixed.totals.minutes_over_target,
        autoscaled_usd=autoscaled.totals.usd,
        fixed_usd=fixed.totals.usd,
        target_ms=autoscaled.inputs.workload.p99_target_ms,
    )


_NAMES = {"none": "fleet without an autoscaler"}
"""How the sentence names an autoscaler where its label does not read as one."""
