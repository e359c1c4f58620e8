"""Prometheus and Alertmanager as `make up` runs them (configurations rendered by
infra/bin/monitoring.sh), on free loopback ports with their data in a test's directory, and
with the rule windows a test asks for: the same rules, only shorter ``for``."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from bench.harness import free_port
from tests.conftest import ROOT, wait_for

RULES = ROOT / "infra" / "monitoring" / "rules"


def rules_with_windows(out: Path, windows: dict[str, str]) -> Path:
    """A copy of the alert rules where each alert named in ``windows`` has that ``for``."""
    out.mkdir(parents=True, exist_ok=True)
    for path in RULES.glob("*.yml"):
        rules = yaml.safe_load(path.read_text())
        for group in rules["groups"]:
            for rule in group["rules"]:
                if rule.get("alert") in windows:
                    rule["for"] = windows[rule["alert"]]
        (out / path.name).write_text(yaml.safe_dump(rules, sort_keys=False))
    return out


def get_json(url: str, timeout: float = 3) -> Any:
    with urllib.request.urlopen(url, timeout=timeout) as answer:  # noqa: S310 - loopback
        return json.load(answer)


@dataclass
class Monitoring:
    prometheus: str
    alertmanager: str
    processes: list[subprocess.Popen[bytes]]

    def alerts(self, name: str) -> list[dict[str, Any]]:
        """Prometheus' alerts of that name, firing and pending."""
        found = get_json(f"{self.prometheus}/api/v1/alerts")["data"]["alerts"]
        return [a for a in found if a["labels"].get("alertname") == name]

    def notified(self, name: str) -> list[dict[str, Any]]:
        """The alerts of that name Alertmanager holds (active, as Prometheus sent them)."""
        return [a for a in get_json(f"{self.alertmanager}/api/v2/alerts") if a["labels"].get("alertname") == name]

    def query(self, promql: str) -> list[dict[str, Any]]:
        from urllib.parse import quote

        return list(get_json(f"{self.prometheus}/api/v1/query?query={quote(promql)}")["data"]["result"])


def _ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/-/ready", timeout=1) as answer:  # noqa: S310 - loopback
            return answer.status == 200
    except OSError:
        return False


@contextlib.contextmanager
def monitoring_running(
    folder: Path,
    *,
    web: str,
    windows: dict[str, str],
    scrape: str = "2s",
    evaluate: str = "1s",
    prometheus_port: int | None = None,
) -> Iterator[Monitoring]:
    """Prometheus (on ``prometheus_port`` when given) scraping the web server at ``web`` (every
    other target on a port where nothing listens) and Alertmanager sending to its webhook, both
    started here and stopped after."""
    ports = {name: free_port() for name in ("prometheus", "alertmanager", "none")}
    if prometheus_port is not None:
        ports["prometheus"] = prometheus_port
    unused = f"127.0.0.1:{ports['none']}"
    host, _, port = web.removeprefix("http://").rpartition(":")
    env = {
        **os.environ,
        "SPORTSBOOK_VAR": str(folder / "var"),
        "WEB_HOST": host,
        "WEB_PORT": port,
        "PROMETHEUS_LISTEN": f"127.0.0.1:{ports['prometheus']}",
        "ALERTMANAGER_LISTEN": f"127.0.0.1:{ports['alertmanager']}",
        "PROMETHEUS_SCRAPE_INTERVAL": scrape,
        "PROMETHEUS_SCRAPE_TIMEOUT": scrape,
        "PROMETHEUS_EVALUATION_INTERVAL": evaluate,
        "PROMETHEUS_RULES_DIR": str(rules_with_windows(folder / "rules", windows)),
        "ALERT_GROUP_WAIT": "1s",
        "ALERT_GROUP_INTERVAL": "1s",
        **dict.fromkeys(("REDIS_EXPORTER_LISTEN", "POSTGRES_EXPORTER_LISTEN", "KAFKA_JMX_LISTEN"), unused),
        **dict.fromkeys(("FLOWER_LISTEN", "SPARK_DRIVER_METRICS", "PROCESS_METRICS_LISTEN"), unused),
    }
    rendered = subprocess.run(
        [str(ROOT / "infra" / "bin" / "monitoring.sh"), "render"], env=env, capture_output=True, text=True, check=False
    )
    assert rendered.returncode == 0, rendered.stderr
    conf = folder / "var" / "run" / "monitoring"
    logs = {name: (folder / f"{name}.log").open("wb") for name in ("prometheus", "alertmanager")}
    processes = [
        subprocess.Popen(
            [
                "/usr/bin/prometheus",
                f"--config.file={conf / 'prometheus.yml'}",
                f"--storage.tsdb.path={folder / 'prometheus'}",
                f"--web.listen-address=127.0.0.1:{ports['prometheus']}",
            ],
            stdout=logs["prometheus"],
            stderr=subprocess.STDOUT,
        ),
        subprocess.Popen(
            [
                "/usr/bin/prometheus-alertmanager",
                f"--config.file={conf / 'alertmanager.yml'}",
                f"--storage.path={folder / 'alertmanager'}",
                f"--web.listen-address=127.0.0.1:{ports['alertmanager']}",
                "--cluster.listen-address=",
            ],
            stdout=logs["alertmanager"],
            stderr=subprocess.STDOUT,
        ),
    ]
    running = Monitoring(
        f"http://127.0.0.1:{ports['prometheus']}", f"http://127.0.0.1:{ports['alertmanager']}", processes
    )
    try:
        for url in (running.prometheus, running.alertmanager):
            wait_for(lambda url=url: _ready(url), timeout=60, what=f"{url} ready")
        yield running
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
        for log in logs.values():
            log.close()
