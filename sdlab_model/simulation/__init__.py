"""Simulation: the discrete-event simulator that checks the queueing model.

``simulator`` holds the entry points (``simulate``, ``simulate_grid``); ``converged``
``simulate_converged``, which runs until the p99 has converged (one representative replica where
the balancer allows); ``_sim_kernel`` the numba kernels, compiled on first use.
"""

from sdlab_model.simulation.converged import ConvergedSim, simulate_converged
from sdlab_model.simulation.simulator import SimResult, simulate, simulate_grid

__all__ = ["ConvergedSim", "SimResult", "simulate", "simulate_converged", "simulate_grid"]
