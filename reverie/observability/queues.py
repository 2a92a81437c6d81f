"""The queues' depths, read at scrape time from where the process sends its jobs."""

from __future__ import annotations

import logging
from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from memory_core.jobs import QUEUES, Jobs

log = logging.getLogger(__name__)


class QueueDepth(Collector):
    """``reverie_queue_messages{queue}``: each queue's messages, read at scrape time.

    On Redis that is every message not yet acknowledged: waiting, delayed
    (retries) and in progress; in-process, the waiting ones.  Served by the
    API, which sends jobs anyway; while Redis is unreachable the family is
    left out of the scrape (and /readyz says why).
    """

    def __init__(self, jobs: Jobs) -> None:
        self.jobs = jobs  # read at each scrape: its sender may be set after

    def collect(self) -> Iterator[Metric]:
        family = GaugeMetricFamily(
            "reverie_queue_messages",
            "Messages not yet acknowledged, by queue (waiting, delayed or in progress).",
            labels=["queue"],
        )
        try:
            for queue in QUEUES:
                family.add_metric([queue], self.jobs.sender.depth(queue))
        except Exception as e:  # the broker is foreign code: a scrape never fails for it
            log.warning("metrics: queue depths unavailable: %s", e)
            return
        yield family

    def describe(self) -> Iterator[Metric]:
        return iter(())  # read at scrape time only
