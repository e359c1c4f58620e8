"""Every process of `make up` listens on a port of its own at the defaults: the services, the
broker's controller port (Alertmanager's usual 9093), the web hosts, Spark, the monitoring and
the mail catcher (infra/bin/lib.sh, app.sh, kafka.sh)."""

from __future__ import annotations

import os
import subprocess
from collections import Counter

from bench.harness import ROOT

# The listen settings the scripts read, cleared so that their defaults answer.
SETTINGS = (
    "KAFKA_BOOTSTRAP_SERVERS",
    "REDIS_URL",
    "DATABASE_URL",
    "PROMETHEUS_LISTEN",
    "ALERTMANAGER_LISTEN",
    "REDIS_EXPORTER_LISTEN",
    "POSTGRES_EXPORTER_LISTEN",
    "KAFKA_JMX_LISTEN",
    "FLOWER_LISTEN",
    "SPARK_DRIVER_METRICS",
    "PROCESS_METRICS_LISTEN",
    "MAILPIT_SMTP_LISTEN",
    "MAILPIT_UI_LISTEN",
)

SCRIPT = """
. infra/bin/lib.sh
port() { read -r _ p <<<"$(host_port "$1")"; echo "$p"; }
kafka=$(port "$KAFKA_BOOTSTRAP_SERVERS")
echo "kafka $kafka"
echo "kafka-controller $((kafka + 1))"
echo "redis $(port "$REDIS_URL")"
echo "postgres $(port "$DATABASE_URL")"
for name in PROMETHEUS_LISTEN ALERTMANAGER_LISTEN REDIS_EXPORTER_LISTEN POSTGRES_EXPORTER_LISTEN \\
    KAFKA_JMX_LISTEN FLOWER_LISTEN SPARK_DRIVER_METRICS PROCESS_METRICS_LISTEN MAILPIT_SMTP_LISTEN MAILPIT_UI_LISTEN; do
  echo "$name ${!name##*:}"
done
"""

# app.sh's defaults: the two web hosts and the Spark master's ports.
APP_PORTS = {"web": 8000, "web-2": 8001, "spark-master": 7077, "spark-master-ui": 8090}


def default_ports(tmp_path) -> dict[str, int]:
    env = {k: v for k, v in os.environ.items() if k not in SETTINGS}
    env["SPORTSBOOK_VAR"] = str(tmp_path)
    done = subprocess.run(
        ["bash", "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True, check=True, timeout=30
    )
    ports = {name: int(port) for name, port in (line.split() for line in done.stdout.splitlines())}
    return {**ports, **APP_PORTS}


def test_no_two_processes_of_the_stack_listen_on_one_port_by_default(tmp_path):
    ports = default_ports(tmp_path)
    shared = {port for port, count in Counter(ports.values()).items() if count > 1}
    assert not shared, {name: port for name, port in ports.items() if port in shared}
