"""supervisord's processes for Prometheus: an event listener (``[eventlistener:processes]`` in
infra/conf/supervisord.monitoring.conf.in) that counts each process's unplanned exits and failed
starts, and serves them with each process's state on ``--listen`` (loopback).

supervisord restarts a process that exits, so a process crashing in a loop looks alive to anyone
who checks now and then; its events do not miss one, however short-lived the process was.
``python -m webapp.process_metrics --listen 127.0.0.1:9466 --supervisor unix:///…/supervisord.sock``
(the socket it asks for the processes already running when it starts); stdout is supervisord's protocol
channel, so this module writes nothing there but the protocol (its log goes to stderr).

Metrics: ``sportsbook_process_restarts_total{process, kind}`` (``exited``: it ended while it
should have run; ``failed_start``: it ended before ``startsecs``) and
``sportsbook_process_up{process}`` (1 while RUNNING).
"""

from __future__ import annotations

import argparse
import logging
import sys
from dataclasses import dataclass
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, start_http_server

log = logging.getLogger("webapp.process_metrics")

EVENT_PREFIX = "PROCESS_STATE_"
# The state an event names → what it means for the process's restarts: an exit while it was
# meant to run, or a start that failed (supervisord retries both; STOPPED is an operator's stop).
RESTART_KINDS = {"EXITED": "exited", "BACKOFF": "failed_start"}
# supervisord's own group for an event listener's process; its own events are not the platform's.
OWN_NAME = "processes"


@dataclass(frozen=True)
class ProcessChange:
    """What one state event changes: the process, whether it is up now, and the kind of restart
    it counts as (None when it counts as none)."""

    process: str
    up: bool
    restart: str | None


def process_change(*, event: str, process: str) -> ProcessChange | None:
    """The change an event of supervisord's ``PROCESS_STATE`` family makes (None for any other)."""
    if not event.startswith(EVENT_PREFIX):
        return None
    state = event.removeprefix(EVENT_PREFIX)
    return ProcessChange(process=process, up=state == "RUNNING", restart=RESTART_KINDS.get(state))


class ProcessMetrics:
    """The counters and gauges of supervisord's processes, in a registry of their own."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.restarts = Counter(
            "sportsbook_process_restarts",
            "Times supervisord's process ended unbidden (exited) or failed to start, by process.",
            ("process", "kind"),
            registry=self.registry,
        )
        self.up = Gauge(
            "sportsbook_process_up",
            "1 while supervisord reports the process RUNNING.",
            ("process",),
            registry=self.registry,
        )

    def known(self, process: str) -> None:
        """Show a process's counters at 0 from the start, so their first increase is a rate."""
        for kind in RESTART_KINDS.values():
            self.restarts.labels(process=process, kind=kind)

    def apply(self, change: ProcessChange) -> None:
        self.known(change.process)
        self.up.labels(process=change.process).set(1 if change.up else 0)
        if change.restart is not None:
            self.restarts.labels(process=change.process, kind=change.restart).inc()


def _current_states(metrics: ProcessMetrics, *, server_url: str) -> None:
    """The processes supervisord runs now (this listener may start after them)."""
    import xmlrpc.client

    from supervisor.xmlrpc import SupervisorTransport

    try:
        # The transport speaks to the unix socket; the URL it is given is only a placeholder.
        proxy = xmlrpc.client.ServerProxy("http://127.0.0.1", transport=SupervisorTransport(None, None, server_url))
        infos: list[dict[str, Any]] = proxy.supervisor.getAllProcessInfo()  # type: ignore[assignment]  # XML-RPC answers are untyped
    except Exception as exc:  # the events still come; only the initial states are missing
        log.warning("supervisord's process list not read: %s", exc)
        return
    for info in infos:
        if info["name"] != OWN_NAME:
            metrics.known(info["name"])
            metrics.up.labels(process=info["name"]).set(1 if info["statename"] == "RUNNING" else 0)


def main(argv: list[str] | None = None) -> None:
    from supervisor import childutils

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--listen", required=True, help="host:port to serve /metrics on")
    parser.add_argument("--supervisor", required=True, help="supervisord's server URL (unix:///path/to/socket)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(levelname)s %(message)s")
    host, _, port = args.listen.rpartition(":")
    metrics = ProcessMetrics()
    _current_states(metrics, server_url=args.supervisor)
    start_http_server(int(port), addr=host or "127.0.0.1", registry=metrics.registry)
    log.info("process metrics on http://%s/metrics", args.listen)
    while True:
        headers, payload = childutils.listener.wait(sys.stdin, sys.stdout)
        event_headers, _ = childutils.eventdata(payload + "\n")
        process = event_headers.get("processname", "")
        change = process_change(event=headers.get("eventname", ""), process=process)
        if change is not None and process != OWN_NAME:
            metrics.apply(change)
            if change.restart is not None:
                log.info("%s: %s", process, change.restart)
        childutils.listener.ok(sys.stdout)


if __name__ == "__main__":
    main()
