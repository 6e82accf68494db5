"""``PreparedFigure``: a plotly figure made once from a spec and never changed, whose JSON is
computed at construction (numpy arrays as plotly's binary array specs, as plotly's own
``to_dict`` writes them). No Streamlit here.
"""

from __future__ import annotations

import base64
import functools

import numpy as np
import plotly.graph_objects as go


class PreparedFigure(go.Figure):
    """A figure whose dict form is computed once, for figures cached and never changed.

    ``st.plotly_chart`` calls ``to_dict`` on every rerun, which deep-copies every trace and
    re-encodes every array: most of the cost of redrawing an unchanged chart. Returning the
    dict made at construction gives the same JSON for a fraction of the work.

    Made from a figure spec (a plain dict, as the ``*_spec`` functions of ``figures`` and
    ``heatmap_figures`` return), it skips plotly's validation of every property, which costs
    more than building the spec (figures in docs/performance.md): then ``data`` and ``layout``
    stay empty, and the figure is read through ``to_dict()``
    (``go.Figure(figure.to_dict())`` for a full one). Tests validate every spec through
    ``go.Figure``.
    """

    def __init__(self, figure: go.Figure | dict) -> None:
        if isinstance(figure, dict):
            # An empty figure's state, made once and shared: building it was most of a small
            # chart's cost, and these figures' data and layout stay empty and never change.
            self.__dict__.update(_empty_figure_state())
            self._prepared_dict = _encoded(
                {"data": figure.get("data", []), "layout": figure.get("layout", {})}
            )
        else:
            super().__init__(figure)
            self._prepared_dict = super().to_dict()

    def to_dict(self) -> dict:
        return self._prepared_dict


@functools.lru_cache(maxsize=1)
def _empty_figure_state() -> dict:
    return dict(go.Figure().__dict__)


def _encoded(spec: object) -> object:
    """A copy of ``spec`` with numpy arrays as plotly's binary array specs (what plotly's own
    ``to_dict`` sends, checked against it by the tests), leaving ``spec`` unchanged."""
    if isinstance(spec, dict):
        return {
            key: value if key in _NOT_ENCODED else _encoded(value) for key, value in spec.items()
        }
    if isinstance(spec, list | tuple):
        return [_encoded(value) for value in spec]
    if isinstance(spec, np.ndarray):
        return _typed_array(spec)
    return spec


_NOT_ENCODED = frozenset({"geojson", "layer", "layers", "range"})
"""Keys whose arrays plotly sends as lists (plotly.js reads them as plain arrays)."""
_TYPED_ARRAY_CODES = {
    "int8": "i1",
    "uint8": "u1",
    "int16": "i2",
    "uint16": "u2",
    "int32": "i4",
    "uint32": "u4",
    "float32": "f4",
    "float64": "f8",
}
"""numpy's dtypes as plotly.js's typed arrays name them (plotly.js has no 64-bit integers)."""


def _typed_array(values: np.ndarray) -> object:
    """``values`` as ``{"dtype", "bdata", "shape"}``, base64 of its bytes, as plotly encodes a
    numpy array; 64-bit integers narrowed to the smallest type that holds them. Empty arrays
    and other dtypes stay arrays (plotly's JSON writes them as lists)."""
    if values.size and values.dtype.kind in "iu" and values.dtype.itemsize == 8:
        low, high = int(values.min()), int(values.max())
        for width in (1, 2, 4):
            narrow = np.dtype(f"{values.dtype.kind}{width}")
            if np.iinfo(narrow).min <= low and high <= np.iinfo(narrow).max:
                values = values.astype(narrow)
                break
    code = _TYPED_ARRAY_CODES.get(str(values.dtype))
    if not values.size or code is None:
        return values
    encoded = {"dtype": code, "bdata": base64.b64encode(np.ascontiguousarray(values)).decode()}
    if values.ndim > 1:
        encoded["shape"] = ", ".join(str(length) for length in values.shape)
    return encoded
