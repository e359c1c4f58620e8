"""The reducers' driver for Prometheus: its Python process, the Spark JVM it started, and the
queries its supervisor runs, served on ``SPARK_DRIVER_METRICS`` (loopback; ``off`` serves nothing).

The platform's figures (lag, rates, latency) are read from Kafka and Redis by every web host's
``/metrics``; this endpoint answers what only the driver knows: its own CPU and memory, the
JVM's beside it, and each query's state as the supervisor holds it in memory, also when Redis,
where it is published, is away.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.gc_collector import GCCollector
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector

from reducers.supervision import RUNNING, QueryRun

log = logging.getLogger("spark.metrics")


class QueryRunsCollector(Collector):
    """Each supervised query: running or not, and its restarts, as ``runs()`` answers now."""

    def __init__(self, runs: Callable[[], Mapping[str, QueryRun]]) -> None:
        self._runs = runs

    def collect(self) -> Iterator[Metric]:
        running = GaugeMetricFamily(
            "sportsbook_driver_query_running", "1 while the driver's query runs.", labels=("query",)
        )
        restarts = CounterMetricFamily(
            "sportsbook_driver_query_restarts", "Times the driver restarted the query.", labels=("query",)
        )
        for name, run in sorted(dict(self._runs()).items()):
            running.add_metric([name], 1 if run.state == RUNNING else 0)
            restarts.add_metric([name], run.restarts)
        yield running
        yield restarts


def driver_registry(*, runs: Callable[[], Mapping[str, QueryRun]], jvm_pid: int | None) -> CollectorRegistry:
    """The driver's metrics: ``process_*`` of this Python process, ``spark_jvm_process_*`` of
    the JVM (when this process started it), the interpreter's, and the queries'."""
    registry = CollectorRegistry(auto_describe=True)
    ProcessCollector(registry=registry)
    if jvm_pid is not None:
        ProcessCollector(namespace="spark_jvm", pid=lambda: jvm_pid, registry=registry)
    PlatformCollector(registry=registry)
    GCCollector(registry=registry)
    registry.register(QueryRunsCollector(runs))
    return registry


def driver_metrics_serve(*, listen: str, registry: CollectorRegistry) -> bool:
    """Serve ``registry`` on ``listen`` (``host:port``) in a background thread. A port taken
    (another stack's driver) is logged and skipped: the reducers run on without the endpoint."""
    if listen in ("", "off"):
        return False
    host, _, port = listen.rpartition(":")
    try:
        start_http_server(int(port), addr=host or "127.0.0.1", registry=registry)
    except OSError as exc:
        log.warning("driver metrics not served on %s: %s", listen, exc)
        return False
    log.info("driver metrics on http://%s/metrics", listen)
    return True
