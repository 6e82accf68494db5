"""What became of one attempt: the codes the simulator's kernel writes and its callers read."""

from enum import IntEnum


class Outcome(IntEnum):
    """An attempt's fate at the replica."""

    PENDING = 0
    """Still queued or in service when the run ended."""
    SERVED = 1
    """Served, its response within the deadline."""
    LATE = 2
    """Served, but its response ended after the deadline (the client had gone)."""
    REJECTED = 3
    """Turned away on arrival: the queue was at its limit."""
    TIMED_OUT = 4
    """Left the queue unserved at its deadline."""
