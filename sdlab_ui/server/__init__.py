"""Server plumbing: the work budget, run slots, sockets, subprocesses, warm-up, the worker."""
