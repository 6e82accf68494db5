"""Server plumbing: the work budget, run slots, sockets, subprocesses, warm-up, deferred work."""
