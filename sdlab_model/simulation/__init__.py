"""Simulation: the discrete-event simulator that checks the queueing model.

``simulator`` holds the entry points (``simulate``, ``simulate_grid``); ``_sim_kernel`` the numba
kernels, compiled on first use.
"""

from sdlab_model.simulation.simulator import SimResult, simulate, simulate_grid

__all__ = ["SimResult", "simulate", "simulate_grid"]
