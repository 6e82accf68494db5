"""Overload: bounded queues, deadlines, retries and goodput past capacity.

Past capacity an unbounded queue has no steady state ("unstable (∞)"); real servers bound their
queues, drop what waits too long, and their clients retry. This package says what that does to
one replica's queue of the Lab's design, analytically and by simulation.

- ``policy``: ``OverloadPolicy`` (queue limit, deadline, retries, retry budget) and ``Station``
  (the queue a request meets).
- ``shedding``: ``shed``, one queue at one attempt rate: the shares rejected, timed out and late,
  the served p99 and the share served within the target (M/D/c truncated below capacity,
  Whitt's scaled M/M/c/K at and past it).
- ``retries``: ``retry_fixed_point``, the attempt rate fresh requests and their retries make,
  with and without a budget, and a second (storm) fixed point where one exists.
- ``analytic``: ``overload``, the entry point: the design under a policy at a fresh rate.
- ``goodput``: ``goodput_curve``, goodput against offered load for the five variants.
- ``simulate``: ``simulate_overload``, the seeded event-driven check (numba, loaded lazily).
- ``storm``: ``simulate_burst``, a brief overload simulated: does the system come back?
- ``validation``: ``check_overload``, analytic against simulation on a tuning and a test grid.
- ``fallback``: ``with_fallback``, a cheaper fallback model taking the primary's overflow: the
  share each path answers, their p99s, what is lost, goodput and $/h.
- ``fallback_simulate``: ``simulate_fallback``, the primary and its fallback simulated.
- ``fallback_validation``: ``check_fallback``, the two on a tuning and a held-out grid.
- ``diagram``: ``overload_dot``, the request path with shedding and the fallback, as DOT.
"""

from sdlab_model.overload.analytic import OverloadResult, overload
from sdlab_model.overload.fallback import FallbackModel, FallbackResult, with_fallback
from sdlab_model.overload.fallback_simulate import FallbackSim, simulate_fallback
from sdlab_model.overload.goodput import GoodputCurve, default_policy, goodput_curve
from sdlab_model.overload.policy import OverloadPolicy, Station
from sdlab_model.overload.retries import RetryFixedPoint, retry_fixed_point
from sdlab_model.overload.shedding import Shedding, shed
from sdlab_model.overload.simulate import OverloadSim, simulate_overload
from sdlab_model.overload.storm import BurstRun, simulate_burst
from sdlab_model.overload.validation import CheckRow, check_design, check_overload

__all__ = [
    "BurstRun",
    "CheckRow",
    "FallbackModel",
    "FallbackResult",
    "FallbackSim",
    "GoodputCurve",
    "OverloadPolicy",
    "OverloadResult",
    "OverloadSim",
    "RetryFixedPoint",
    "Shedding",
    "Station",
    "check_design",
    "check_overload",
    "default_policy",
    "goodput_curve",
    "overload",
    "retry_fixed_point",
    "shed",
    "simulate_burst",
    "simulate_fallback",
    "simulate_overload",
    "with_fallback",
]
