"""Observability: Reverie's Prometheus metrics and how each process exposes them.

:mod:`.metrics` defines the counters and histograms (one set per process);
:mod:`.brain` the brain's gauges, computed at scrape time; :mod:`.queues` the
queues' depths; :mod:`.http` the API's request metrics and a process's own
exposition server; :mod:`.workers` dramatiq's middleware and the worker
group's exporter.  The library (memory_core) knows none of it: adapters
observe what its calls report.

How each process is scraped:

* ``memctl up`` / ``memctl api``: ``GET /metrics`` on the API (Reverie's
  metrics, the brain gauges, the queue depths, and in embedded mode
  dramatiq's).
* ``memctl worker``: each dramatiq worker process writes its samples to
  ``metrics_multiproc_dir``; one exporter process of the group serves them
  all on ``metrics_host:metrics_port`` (default 127.0.0.1:9191).
* ``memctl scheduler``: ``metrics_host:scheduler_metrics_port`` (default 9192).
"""
