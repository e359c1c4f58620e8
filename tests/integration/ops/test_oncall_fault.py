"""Scenario: a reducer query stalls at night, and on-call hears of it.

The commands query runs in a process of its own (real Spark, its progress listener committing
its offsets), the site under uvicorn, Prometheus and Alertmanager as `make up` renders them — the
same rules, with ``ReducerLagOverObjective``'s ``for`` shortened to a few seconds and scrapes every
2 s — all in a namespace of this test. Commands keep arriving; the query's process is paused
(SIGSTOP: its source is read no more, nothing is committed). Its lag in seconds passes its
objective, the alert goes pending then firing in Prometheus, reaches Alertmanager, and through
the site's webhook opens an incident on the on-call page, within the rule's window. The process
is resumed (SIGCONT): the query catches up, the alert resolves, and so does the incident.

``ONCALL_SCREENSHOTS=docs/screenshots`` also saves the on-call page and the lag dashboard with
the firing alert, at desktop and phone size (``oncall-*.png``, ``lag-alert-*.png``).
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from django.conf import settings

from bench.harness import free_port
from odds.ops.models import Incident
from reducers import topics
from reducers.subscriptions import StreamCommand
from tests.conftest import ROOT, uvicorn_serving, wait_for
from tests.factories import market_create, sign_in, user_create
from tests.integration.ops.monitoring import Monitoring, get_json, monitoring_running

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(600)]

ALERT = "ReducerLagOverObjective"
QUERY = "commands"
# The test's rule window: the lag must stay over the objective this long before it fires.
FOR = "4s"
SCRAPE_S, EVALUATE_S, GROUP_WAIT_S = 2, 1, 1
# The commands query's objective (OPS_LAG_OBJECTIVES_S), and the most the alert may take to reach
# the on-call page after the stall: objective + for + a scrape, an evaluation and Alertmanager's
# group wait, twice over for the scheduling of two shared cores.
OBJECTIVE_S = 2.0
WINDOW_S = 2 * (OBJECTIVE_S + 4 + SCRAPE_S + EVALUATE_S + GROUP_WAIT_S)


def renamed(name: str, namespace: str) -> str:
    """A topic, group or key of this session spelled in ``namespace`` (every name starts with its
    namespace: reducers/topics.py)."""
    return namespace + name.removeprefix(topics.namespace())


@dataclasses.dataclass
class Stalled:
    namespace: str
    web: str
    monitoring: Monitoring
    reducer: subprocess.Popen[bytes]
    folder: Path


def _cpu_s(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        try:
            root = psutil.Process(pid)
            for process in [root, *root.children(recursive=True)]:
                times = process.cpu_times()
                total += times.user + times.system + times.children_user + times.children_system
        except psutil.NoSuchProcess:
            continue
    return total


@pytest.fixture
def stack(django_db_setup, django_db_blocker, kafka_topics, redis_client, tmp_path) -> Iterator[Stalled]:
    from odds.core.kafka import admin_client, topics_ensure

    namespace = f"f{uuid.uuid4().hex[:8]}"
    specs = [dataclasses.replace(spec, name=renamed(spec.name, namespace)) for spec in topics.all_topics()]
    topics_ensure(specs=specs)
    env = {
        **os.environ,
        "SPORTSBOOK_NAMESPACE": namespace,
        "SPARK_MASTER": "local[1]",
        "SPARK_COMMANDS_TRIGGER": "500 milliseconds",
        "SPARK_CHECKPOINT_DIR": str(tmp_path / "checkpoints"),
    }
    log = (tmp_path / "reducer.log").open("wb")
    reducer = subprocess.Popen(
        [sys.executable, "-m", "tests.integration.ops.one_query", str(tmp_path / "checkpoints" / "commands")],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    prometheus_port = free_port()
    try:
        with (
            uvicorn_serving(
                tmp_path, SPORTSBOOK_NAMESPACE=namespace, PROMETHEUS_URL=f"http://127.0.0.1:{prometheus_port}"
            ) as web,
            monitoring_running(
                tmp_path,
                web=web,
                windows={ALERT: FOR},
                scrape=f"{SCRAPE_S}s",
                evaluate=f"{EVALUATE_S}s",
                prometheus_port=prometheus_port,
            ) as monitoring,
        ):
            yield Stalled(namespace, web, monitoring, reducer, tmp_path)
    finally:
        os.killpg(reducer.pid, signal.SIGCONT)
        reducer.terminate()
        try:
            reducer.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(reducer.pid, signal.SIGKILL)
        log.close()
        admin_client().delete_topics([spec.name for spec in specs], operation_timeout=30)
        for key in redis_client.scan_iter(match=f"{namespace}:*", count=1000):
            redis_client.delete(key)


class Commands(threading.Thread):
    """Unsubscribe commands for channels that do not exist (applied as no-ops), a few a second."""

    def __init__(self, topic: str) -> None:
        super().__init__(daemon=True)
        from odds.core.kafka import producer_create

        self.topic = topic
        self.producer = producer_create(**{"linger.ms": 0})
        self.halt = threading.Event()
        self.sent = 0

    def send(self) -> None:
        self.sent += 1
        command = StreamCommand(
            type="unsubscribe",
            channel_id=f"fault-{self.sent:06d}-0123456789abcdef",
            user_id=1,
            ts=int(time.time() * 1000),
        )
        self.producer.produce(self.topic, key=command.key(), value=command.encode())
        self.producer.flush(5)

    def run(self) -> None:
        while not self.halt.wait(0.3):
            self.send()


def lag_records(monitoring: Monitoring) -> float | None:
    found = monitoring.query(f'sum(sportsbook_reducer_lag_records{{query="{QUERY}"}})')
    return float(found[0]["value"][1]) if found else None


def firing(monitoring: Monitoring) -> list[dict]:
    return [a for a in monitoring.alerts(ALERT) if a["labels"].get("query") == QUERY and a["state"] == "firing"]


def snapshot_alerts(web: str, cookie: str) -> list[dict]:
    """The alerts the lag dashboard's snapshot carries (what it shows beside each query)."""
    request = urllib.request.Request(f"{web}/ops/api/snapshot", headers={"Cookie": cookie})  # noqa: S310 - loopback
    with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310 - loopback
        return list(json.load(answer)["alerts"]["alerts"])


def test_a_stalled_query_pages_on_call_within_its_window_and_resolves_once_it_recovers(stack, client):
    from django.core.management import call_command

    from odds.management.commands.screenshots import PUNTER, TRADER

    monitoring, namespace = stack.monitoring, stack.namespace
    commands = Commands(renamed(topics.commands(), namespace))
    wait_for(lambda: b"query started" in (stack.folder / "reducer.log").read_bytes(), timeout=180, what="query up")
    # Running: what arrives is processed and committed; Prometheus sees the query caught up.
    commands.send()
    wait_for(lambda: lag_records(monitoring) == 0, timeout=120, interval=1, what="the query caught up, scraped")
    cpu_before = _cpu_s([stack.reducer.pid, *(p.pid for p in monitoring.processes)])
    started = time.monotonic()

    os.killpg(stack.reducer.pid, signal.SIGSTOP)
    stalled_at = time.monotonic()
    commands.start()
    pending = wait_for(
        lambda: [a for a in monitoring.alerts(ALERT) if a["labels"].get("query") == QUERY],
        timeout=WINDOW_S,
        interval=0.5,
        what="the lag alert pending",
    )
    assert pending[0]["state"] == "pending"
    wait_for(lambda: firing(monitoring), timeout=WINDOW_S, interval=0.5, what="the lag alert firing")
    fired_s = time.monotonic() - stalled_at
    wait_for(
        lambda: [a for a in monitoring.notified(ALERT) if a["labels"].get("query") == QUERY],
        timeout=WINDOW_S,
        interval=0.5,
        what="the alert in Alertmanager",
    )
    incident = wait_for(
        lambda: Incident.objects.filter(alertname=ALERT, labels__query=QUERY, status="open").first(),
        timeout=WINDOW_S,
        interval=0.5,
        what="the incident on the on-call page",
    )
    paged_s = time.monotonic() - stalled_at
    assert paged_s <= WINDOW_S
    assert incident.severity == "page"
    assert "Reducer query commands is" in incident.summary

    staff = user_create(staff=True)
    sign_in(client, staff)
    page = client.get("/ops/oncall").content.decode()
    assert f'data-incident="{incident.pk}" data-status="open" data-alert="{ALERT}"' in page
    cookie = f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"
    beside = [a for a in snapshot_alerts(stack.web, cookie) if a["labels"].get("query") == QUERY]
    states = {a["name"]: a["state"] for a in beside}
    assert states.pop(ALERT) == "firing"
    # The query's stall is also seen by the lag window's evaluation by then on a slow run: its
    # own alert waits its minute, pending.
    assert states in ({}, {"ReducerQueryStalled": "pending"})

    if os.environ.get("ONCALL_SCREENSHOTS"):
        for username, is_staff in ((PUNTER, False), (TRADER, True)):
            user = user_create(staff=is_staff)
            user.username = username
            user.save()
        market_create()  # the command wants an event to show, whichever pages it takes
        out = ROOT / os.environ["ONCALL_SCREENSHOTS"]
        call_command("screenshots", url=stack.web, out=str(out), settle=3.0, pages=["oncall"])
        call_command("screenshots", url=stack.web, out=str(out), settle=3.0, pages=["lag"], tag="alert")

    # Resumed: the query reads its backlog, commits, and the alert and the incident resolve.
    commands.halt.set()
    commands.join(5)
    os.killpg(stack.reducer.pid, signal.SIGCONT)
    resumed_at = time.monotonic()
    wait_for(lambda: not firing(monitoring), timeout=120, interval=0.5, what="the alert resolved in Prometheus")
    resolved = wait_for(
        lambda: Incident.objects.filter(pk=incident.pk, status="resolved").first(),
        timeout=60,
        interval=0.5,
        what="the incident resolved by Alertmanager",
    )
    recovered_s = time.monotonic() - resumed_at
    assert resolved.resolved_by is None
    assert resolved.ends_at is not None
    assert Incident.objects.filter(alertname=ALERT, labels__query=QUERY).count() == 1
    cpu_s = _cpu_s([stack.reducer.pid, *(p.pid for p in monitoring.processes)]) - cpu_before
    print(
        f"\nstall -> firing {fired_s:.1f} s, -> incident {paged_s:.1f} s (window {WINDOW_S:.0f} s); "
        f"resume -> resolved {recovered_s:.1f} s; {commands.sent} commands; "
        f"reducer + Prometheus + Alertmanager CPU {cpu_s:.1f} s over {time.monotonic() - started:.0f} s "
        f"(the reducer's Spark from its start: {_cpu_s([stack.reducer.pid]):.1f} s)"
    )
    assert get_json(f"{monitoring.alertmanager}/api/v2/status")["cluster"]["status"] in ("disabled", "ready")
