"""The load balancer's policies as the compiled kernels number them: one code per policy.

``Workload.lb_policy`` names a policy (``params.LB_POLICIES``); the kernels take its code as an
int (numba reads an ``IntEnum`` member's value: pass ``int(Policy.X)``, or compare with
module-level ints derived from it). The policies themselves are described in
``sdlab_model.workload``.

The codes are compiled into numba's disk cache of every kernel that compares with them:
never renumber a member, add new ones at the end.
"""

from __future__ import annotations

from enum import IntEnum


class Policy(IntEnum):
    """A load-balancer policy's code, named as ``lb_policy`` names it (upper case)."""

    RANDOM = 0
    ROUND_ROBIN = 1
    LEAST_REQUEST = 2
    CENTRAL_QUEUE = 3

    @classmethod
    def of(cls, lb_policy: str) -> Policy:
        """The code of ``lb_policy`` (``"round_robin"`` -> ``Policy.ROUND_ROBIN``)."""
        return cls[lb_policy.upper()]
