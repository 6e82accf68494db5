"""sdlab's UI layer: shared services at the top (state, caches, figures, reports), one folder
of sections per page, and the server's plumbing in ``server/``."""
