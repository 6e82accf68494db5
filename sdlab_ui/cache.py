"""Cached, bounded wrappers around the model: what the pages call instead of the model directly.

Every cache has a size bound (``max_entries``, ``maxsize``), so a visitor moving sliders for an
hour cannot make the server hold unbounded results; every expensive computation on a miss first
takes a slot of the process-wide ``budget``, so visitors missing the cache together cannot
exhaust the server.
Data results use ``st.cache_data`` (each caller gets its own copy). Plotly figures use
``st.cache_resource``: ``st.cache_data`` would pickle a figure on every hit, and unpickling a
figure re-validates every trace, which costs more than drawing it; the figures are never
mutated after they are built (``prepared_figure.PreparedFigure``), so sharing one is safe. The Lab's
view and the diagram, whose inputs hash by value and which every Lab rerun looks up, use
``SharedCache``: a bounded LRU without Streamlit's ~1 ms of bookkeeping per miss.
"""

from __future__ import annotations

import functools
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import astuple, dataclass, replace
from typing import Generic, ParamSpec, TypeVar

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from sdlab_model import grids
from sdlab_model.assessment import (
    Assessment,
    ModelName,
    design_simulation,
    judge,
    may_simulate,
)
from sdlab_model.params import CHOICE_BY_NAME, NUMERIC_BY_NAME
from sdlab_model.residency import ResidencyInputs
from sdlab_model.simulation.converged import ConvergedSim
from sdlab_model.simulation.summary import simulation_key
from sdlab_model.workload import Workload
from sdlab_ui import error_figures, figures, heatmap_figures, prepared_figure
from sdlab_ui.server import budget, runs, worker

# How a cache hashes a Workload: its field values. Streamlit's generic hashing of a dataclass
# (through pickle's reduce) cost ~0.9 ms per call, its values ~0.1 ms; a Heatmaps rerun makes
# seven cached calls. Two workloads with equal fields are equal, so the key is as exact.
_KEY = {Workload: astuple, ResidencyInputs: astuple}
SMALL_MULTIPLES: tuple[tuple[str, dict[str, bool]], ...] = (
    ("CPU, batching off", {"dynamic_batching": False, "gpu": False}),
    ("CPU, batching on", {"dynamic_batching": True, "gpu": False}),
    ("GPU, batching off", {"dynamic_batching": False, "gpu": True}),
    ("GPU, batching on", {"dynamic_batching": True, "gpu": True}),
)


_P = ParamSpec("_P")
_R = TypeVar("_R")


class SharedCache(Generic[_P, _R]):
    """A function's results, shared by every session: at most ``maxsize`` (least recently used
    out first), each computed once however many sessions ask for it at the same moment.

    For inputs that hash by value (frozen dataclasses, strings), where Streamlit's caches cost
    ~1 ms per miss (hashing every field, pickling, bookkeeping). Like ``st.cache_resource`` the
    result itself is shared, so it must never be mutated. A session that asks for a key another
    is computing waits for that result rather than computing it again: twenty visitors opening
    the app together would otherwise each build the same view, and the server's memory peaked
    ~140 MB higher (``scripts/load_test.py``). If the computation raises, each waiting session
    tries for itself.
    """

    def __init__(self, function: Callable[_P, _R], maxsize: int) -> None:
        functools.update_wrapper(self, function)
        self._function = function
        self._maxsize = maxsize
        self._results: OrderedDict[Hashable, _R] = OrderedDict()
        self._computing: dict[Hashable, threading.Event] = {}
        self._lock = threading.Lock()

    def __call__(self, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        key = (args, tuple(sorted(kwargs.items())))
        while True:
            with self._lock:
                if key in self._results:
                    self._results.move_to_end(key)
                    return self._results[key]
                done = self._computing.get(key)
                if done is None:
                    done = self._computing[key] = threading.Event()
                    break
            runs.give_up()  # another session is computing it: look again once it is done
            done.wait()
        try:
            result = self._function(*args, **kwargs)
            with self._lock:
                self._results[key] = result
                while len(self._results) > self._maxsize:
                    self._results.popitem(last=False)
            return result
        finally:
            with self._lock:
                del self._computing[key]
            done.set()

    def cache_clear(self) -> None:
        """Forget every result (tests)."""
        with self._lock:
            self._results.clear()


def shared_cache(maxsize: int) -> Callable[[Callable[_P, _R]], SharedCache[_P, _R]]:
    """Decorate a function with a ``SharedCache`` of ``maxsize`` results."""
    return lambda function: SharedCache(function, maxsize)


@st.cache_data(max_entries=512, hash_funcs=_KEY, show_spinner=False)
def assessment(workload: Workload, model: ModelName) -> Assessment:
    """``sdlab_model.judge``, cached (near saturation or simulated, under ``budget``)."""
    return _judge(workload, model)


def _judge(
    workload: Workload, model: ModelName, residency: ResidencyInputs | None = None
) -> Assessment:
    lane = budget.WORK if may_simulate(workload, model) else None
    with budget.slot(lane or budget.evaluation_lane(workload, model)):
        return judge(workload, model, residency)


def _grid_key(workload: Workload, axes: tuple[str, str] = grids.DEFAULT_AXES) -> Workload:
    """The workload with the grid's own axes at their defaults: moving the rate or replicas
    slider moves the marker, not the grid, so it should not recompute the grid."""
    return workload.with_changes(**{n: NUMERIC_BY_NAME[n].default for n in axes})


@st.cache_data(max_entries=32, hash_funcs=_KEY, show_spinner=False)
def _grid(key: Workload, model: ModelName, x_name: str, y_name: str, frontier: bool):
    with budget.slot(budget.WORK):
        return grids.compute_axes_grid(key, model, x_name, y_name, frontier=frontier)


def grid(
    workload: Workload,
    model: ModelName,
    axes: tuple[str, str] = grids.DEFAULT_AXES,
    *,
    frontier: bool = True,
) -> grids.P99Grid:
    """The p99 grid for ``workload`` over ``axes`` (x, y), cached on everything but those two
    inputs; with the fewest-replicas frontier unless ``frontier`` is off (the small multiples
    do not draw it, and it is most of a grid's cost)."""
    return replace(_grid(_grid_key(workload, axes), model, *axes, frontier), workload=workload)


# Figures are the largest entries (measured: ~0.8 MB per heatmap, ~3 MB per 2 x 2 view), and a
# visitor revisits only the last few settings: small bounds keep the server's memory in budget.
@st.cache_resource(max_entries=8, hash_funcs=_KEY, show_spinner=False)
def heatmap_figure(
    workload: Workload, model: ModelName, axes: tuple[str, str] = grids.DEFAULT_AXES
) -> go.Figure:
    """The main p99 heatmap over ``axes`` (x, y)."""
    return prepared_figure.PreparedFigure(
        heatmap_figures.p99_heatmap_spec(grid(workload, model, axes))
    )


@st.cache_resource(max_entries=4, hash_funcs=_KEY, show_spinner=False)
def small_multiples_figure(workload: Workload, model: ModelName) -> go.Figure:
    """Batching off/on x CPU/GPU, one colour scale."""
    panels = [
        grid(workload.with_changes(**changes), model, frontier=False)
        for _, changes in SMALL_MULTIPLES
    ]
    return prepared_figure.PreparedFigure(
        heatmap_figures.small_multiples_spec(panels, [title for title, _ in SMALL_MULTIPLES])
    )


# Short enough for a phone's quarter-width panel; the sidebar's choice carries the full name.
POLICY_PANEL_TITLES = {
    "round_robin": "Round robin",
    "least_request": "Least request",
    "random": "Random",
    "central_queue": "Central queue",
}


@st.cache_resource(max_entries=4, hash_funcs=_KEY, show_spinner=False)
def policy_multiples_figure(workload: Workload, model: ModelName) -> go.Figure:
    """The same grid under each load-balancer policy, one colour scale."""
    spec = CHOICE_BY_NAME["lb_policy"]
    panels = [
        grid(workload.with_changes(lb_policy=policy), model, frontier=False)
        for policy in spec.choices
    ]
    return prepared_figure.PreparedFigure(
        heatmap_figures.small_multiples_spec(panels, [POLICY_PANEL_TITLES[p] for p in spec.choices])
    )


def simulation(workload: Workload) -> ConvergedSim:
    """The Lab page's simulation of ``workload`` (a compact summary: a few tens of KB), shared by
    every workload that differs only in what a simulation ignores (the p99 target)."""
    return _simulation(simulation_key(workload))


@st.cache_data(max_entries=64, hash_funcs=_KEY, show_spinner="Simulating this design…")
def _simulation(key: Workload) -> ConvergedSim:
    with budget.slot(budget.WORK):
        return design_simulation(key)


@dataclass(frozen=True)
class LabView:
    """Everything the Lab page draws for one workload and model, built once and shared."""

    result: Assessment
    """The one judgement of the design under the chosen model: every section reads it."""
    queueing: Assessment
    teaching: Assessment
    breakdown_rows: tuple[tuple[str, float, float, float], ...]
    """(model, compute, batch formation wait, queueing) in ms, the shown model first."""
    breakdown_svg: str
    """The breakdown chart the Lab shows (``figures.latency_breakdown_svg`` of the rows)."""

    def simulated(self) -> ConvergedSim:
        """The simulation of this workload: the judgement's own where it is simulated, else run
        now (the accuracy check, a report: it is most of a fresh rerun's cost)."""
        own = self.queueing.simulation
        return own if own is not None else simulation(self.result.workload)


_LAST_VIEW_KEY = "sdlab.last_lab_view"


def lab_view(
    workload: Workload,
    model: ModelName,
    residency: ResidencyInputs | None = None,
    role: str = "lab",
) -> LabView:
    """The Lab page's results and figures for ``workload`` under ``model`` (with the Models and
    memory page's ``residency`` inputs, which the packing decision uses).

    Hashing the arguments is most of what a cache hit costs, so the session keeps the last view
    of each ``role`` (the lab, a pinned design) and reuses it while the inputs are unchanged (a
    comparison, not a hash); otherwise one bounded cache lookup serves every section of the page.
    """
    residency = residency or ResidencyInputs()
    memo = f"{_LAST_VIEW_KEY}.{role}"
    last = st.session_state.get(memo)
    if last is not None and last[0] == (workload, model, residency):
        return last[1]
    view = _lab_view(workload, model, residency)
    st.session_state[memo] = ((workload, model, residency), view)
    return view


@shared_cache(maxsize=64)
def _lab_view(
    workload: Workload, model: ModelName, residency: ResidencyInputs | None = None
) -> LabView:
    """The Lab page's results and figures, built once per inputs and shared read-only.

    The evaluations are not cached on their own as well: this cache keeps them, and each extra
    cache a fresh rerun misses costs it a hash, a pickle and a lock. A ``SharedCache``, not
    ``st.cache_resource``, whose ~1 ms per miss was a fifth of a fresh Lab rerun's own work.
    """
    queueing = _judge(workload, "queueing", residency)
    teaching = _judge(workload, "teaching")
    result = queueing if model == "queueing" else teaching
    rows = tuple(
        # The teaching model caps its queueing term, so its parts stay finite even past capacity.
        (f"{r.model} model", r.compute_ms, r.batch_wait_ms, r.queue_ms)
        if r.is_stable or r.model == "teaching"
        else (f"{r.model} model", math.inf, math.inf, math.inf)
        for r in ((result, teaching) if model == "queueing" else (result, queueing))
    )
    breakdown = figures.latency_breakdown_svg(rows, workload.p99_target_ms)
    return LabView(result, queueing, teaching, rows, breakdown)


@st.cache_resource(max_entries=16, hash_funcs=_KEY, show_spinner=False)
def distribution_figure(workload: Workload) -> go.Figure | None:
    """The simulated latency CDF with both models' p99 and the target; None if unstable.

    Built only when its panel is open: the figure costs more to build than the rest of the page.
    """
    sim = simulation(workload)
    if not sim.is_stable:
        return None
    p99s = {model: assessment(workload, model).p99_ms for model in ("queueing", "teaching")}
    return prepared_figure.PreparedFigure(
        figures.latency_distribution(
            sim.cdf_latency_ms, sim.cdf_share, workload.p99_target_ms, p99s
        )
    )


VERIFY_RATE_CELLS = 32
VERIFY_REPLICA_CELLS = 24
VERIFY_REQUESTS_PER_CELL = 20_000


def grid_key(workload: Workload) -> Workload:
    """What a heatmap depends on: the workload with rate and replicas at their defaults."""
    return _grid_key(workload)


@st.cache_data(max_entries=8, hash_funcs=_KEY, show_spinner=False)
def coarse_grid(key: Workload, model: ModelName) -> grids.P99Grid:
    """The analytic grid on the simulation's coarser cells."""
    with budget.slot(budget.WORK):
        return grids.compute_grid(key, model, VERIFY_RATE_CELLS, VERIFY_REPLICA_CELLS)


@st.cache_data(max_entries=8, hash_funcs=_KEY, show_spinner=False)
def simulated_grid(key: Workload) -> tuple[np.ndarray, np.ndarray]:
    """Simulated p99 on the coarse cells and each one's 95% interval, with a progress bar while
    it runs (~10 s at most).

    Row by row in the simulation worker (``server/worker.py``), the heavy lane's turns taken
    between rows; each row is the full grid's row (every row draws the same random numbers).
    The bar is made inside this function so that Streamlit can replay it (as an empty slot)
    on a cache hit.
    """
    from sdlab_model.simulation.simulator import simulate_grid

    rates = grids.rate_axis(VERIFY_RATE_CELLS)
    replicas = grids.replica_axis(VERIFY_REPLICA_CELLS)
    bar = st.progress(0.0, text="Simulating…")
    rows = []
    with budget.slot(budget.HEAVY):
        for done, count in enumerate(replicas):
            budget.take_turns(done / replicas.size)  # a short press waits a row at most
            rows.append(
                worker.call(
                    simulate_grid,
                    key,
                    rates,
                    [count],
                    n_requests=VERIFY_REQUESTS_PER_CELL,
                    interval=True,
                )
            )
            cells = (done + 1) * rates.size
            bar.progress(
                cells / (rates.size * replicas.size),
                text=f"Simulating {cells} of {rates.size * replicas.size} cells…",
            )
    bar.empty()
    return np.concatenate([p99 for p99, _ in rows]), np.concatenate([ci for _, ci in rows])


@st.cache_resource(max_entries=8, hash_funcs=_KEY, show_spinner=False)
def verification_figures(workload: Workload, model: ModelName) -> tuple[go.Figure, go.Figure]:
    """The coarse analytic heatmap and the model-vs-simulation error map, side by side."""
    key = _grid_key(workload)
    coarse = replace(coarse_grid(key, model), workload=workload)
    return (
        prepared_figure.PreparedFigure(heatmap_figures.p99_heatmap_spec(coarse)),
        prepared_figure.PreparedFigure(error_figures.error_map(coarse, *simulated_grid(key))),
    )
