"""The monitoring of `make up` comes up with every target up: the supervisord configuration
``infra/bin/app.sh`` renders (its monitoring part: Prometheus, Alertmanager, the Redis, PostgreSQL
and Celery exporters, the process listener) run by a supervisord of the test's own, with a broker
started by ``infra/bin/kafka.sh`` (so with the JMX exporter agent), the site under uvicorn and the
reducers' driver endpoint beside them, every address a free loopback port. Prometheus must report
every job's target up."""

from __future__ import annotations

import configparser
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.harness import free_port
from spark.metrics import driver_metrics_serve, driver_registry
from tests.conftest import ROOT, uvicorn_serving, wait_for
from tests.integration.ops.monitoring import get_json

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(600)]

JOBS = {"web", "reducers", "processes", "celery", "kafka", "redis", "postgres", "prometheus", "alertmanager"}
MONITORING = {"processes", "prometheus", "alertmanager", "redis-exporter", "postgres-exporter", "flower"}
KEPT = {"unix_http_server", "supervisord", "rpcinterface:supervisor", "supervisorctl"}


def loopback() -> str:
    return f"127.0.0.1:{free_port()}"


@pytest.fixture
def environment(tmp_path: Path) -> Iterator[dict[str, str]]:
    kafka = f"127.0.0.1:{free_port(pair=True)}"
    env = {
        **os.environ,
        "SPORTSBOOK_VAR": str(tmp_path / "var"),
        "MONITORING": "1",
        "KAFKA_BOOTSTRAP_SERVERS": kafka,
        "PROMETHEUS_SCRAPE_INTERVAL": "1s",
        "PROMETHEUS_SCRAPE_TIMEOUT": "1s",
        **{
            name: loopback()
            for name in (
                "PROMETHEUS_LISTEN",
                "ALERTMANAGER_LISTEN",
                "REDIS_EXPORTER_LISTEN",
                "POSTGRES_EXPORTER_LISTEN",
                "FLOWER_LISTEN",
                "PROCESS_METRICS_LISTEN",
                "SPARK_DRIVER_METRICS",
                "KAFKA_JMX_LISTEN",
            )
        },
    }
    started = subprocess.run(
        [str(ROOT / "infra" / "bin" / "kafka.sh"), "start"], env=env, capture_output=True, text=True, check=False
    )
    assert started.returncode == 0, started.stdout + started.stderr
    try:
        yield env
    finally:
        subprocess.run([str(ROOT / "infra" / "bin" / "kafka.sh"), "stop"], env=env, capture_output=True, check=False)


def monitoring_only(env: dict[str, str]) -> Path:
    """supervisord's configuration as app.sh renders it, with the platform's own programs left out."""
    rendered = subprocess.run(
        [str(ROOT / "infra" / "bin" / "app.sh"), "config"], env=env, capture_output=True, text=True, check=False
    )
    assert rendered.returncode == 0, rendered.stderr
    parser = configparser.RawConfigParser(inline_comment_prefixes=(";",))
    parser.read_string(rendered.stdout)
    for section in parser.sections():
        if section not in KEPT and section.split(":", 1)[-1] not in MONITORING:
            parser.remove_section(section)
    assert {s.split(":", 1)[1] for s in parser.sections() if ":" in s and s not in KEPT} == MONITORING
    conf = Path(env["SPORTSBOOK_VAR"]) / "run" / "supervisord-monitoring.conf"
    with conf.open("w") as out:
        parser.write(out)
    return conf


def test_every_target_of_the_monitoring_is_up(environment, tmp_path):
    env = environment
    driver = driver_registry(runs=dict, jvm_pid=None)
    assert driver_metrics_serve(listen=env["SPARK_DRIVER_METRICS"], registry=driver)
    # The web target is the site itself: app.sh's render named WEB_PORT, so it is given here.
    with uvicorn_serving(tmp_path) as web:
        env["WEB_PORT"] = web.rsplit(":", 1)[1]
        conf = monitoring_only(env)
        supervisord = subprocess.run(
            [str(ROOT / ".venv" / "bin" / "supervisord"), "-c", str(conf)], env=env, capture_output=True, check=False
        )
        assert supervisord.returncode == 0, supervisord.stderr
        try:
            prometheus = f"http://{env['PROMETHEUS_LISTEN']}"

            def every_target_up() -> dict[str, str] | None:
                try:
                    targets = get_json(f"{prometheus}/api/v1/targets?state=active")["data"]["activeTargets"]
                except OSError:
                    return None
                health = {t["labels"]["job"]: t["health"] for t in targets}
                return health if set(health) == JOBS and set(health.values()) == {"up"} else None

            def state() -> object:
                try:
                    targets = get_json(f"{prometheus}/api/v1/targets?state=active")["data"]["activeTargets"]
                except OSError as exc:
                    return exc
                return {t["labels"]["job"]: (t["health"], t["lastError"]) for t in targets}

            wait_for(every_target_up, timeout=180, interval=1, what="every target up", detail=state)
            status = subprocess.run(
                [str(ROOT / ".venv" / "bin" / "supervisorctl"), "-c", str(conf), "status"],
                capture_output=True,
                text=True,
                check=False,
            )
            assert status.stdout.count("RUNNING") == len(MONITORING), status.stdout
        finally:
            subprocess.run(
                [str(ROOT / ".venv" / "bin" / "supervisorctl"), "-c", str(conf), "shutdown"],
                capture_output=True,
                check=False,
            )
            pidfile = Path(env["SPORTSBOOK_VAR"]) / "run" / "supervisord.pid"
            wait_for(lambda: not pidfile.exists(), timeout=60, what="supervisord stopped")
