"""sdlab's UI layer: state and URL sync, sidebar widgets, cached model calls and plotly figures."""
