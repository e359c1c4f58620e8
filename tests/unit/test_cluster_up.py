"""`make up CLUSTER=1`: supervisord runs a Spark standalone master and two workers beside the
reducers, and a second web server, on loopback; without CLUSTER nothing of it is there."""

from __future__ import annotations

import configparser
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def rendered(tmp_path: Path, **env: str) -> configparser.RawConfigParser:
    done = subprocess.run(
        ["bash", str(ROOT / "infra" / "bin" / "app.sh"), "config"],
        env={**os.environ, "SPORTSBOOK_VAR": str(tmp_path), **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    config = configparser.RawConfigParser(strict=True)
    config.read_string(done.stdout)
    return config


def programs(config: configparser.RawConfigParser) -> set[str]:
    return {s.removeprefix("program:") for s in config.sections() if s.startswith("program:")}


def test_the_single_machine_stack_has_no_cluster_processes(tmp_path):
    assert programs(rendered(tmp_path, MONITORING="0")) == {"reducers", "web", "worker", "beat", "feed", "backups"}


def test_the_monitoring_runs_beside_the_platform_unless_turned_off_and_scrapes_every_web_server(tmp_path):
    import yaml

    monitoring = {"prometheus", "alertmanager", "redis-exporter", "postgres-exporter", "flower"}
    config = rendered(tmp_path, CLUSTER="1", WEB_PORT="8100")
    assert monitoring <= programs(config)
    assert "eventlistener:processes" in config.sections()
    scraped = yaml.safe_load((tmp_path / "run" / "monitoring" / "prometheus.yml").read_text())
    web = next(job for job in scraped["scrape_configs"] if job["job_name"] == "web")
    assert web["static_configs"][0]["targets"] == ["127.0.0.1:8100", "127.0.0.1:8101"]
    assert not monitoring & programs(rendered(tmp_path, MONITORING="0"))


def test_the_cluster_shape_runs_a_spark_master_two_workers_and_two_web_servers(tmp_path):
    config = rendered(tmp_path, CLUSTER="1", SPARK_MASTER_PORT="7123", WEB_PORT="8100", MONITORING="0")
    assert programs(config) == {
        "spark-master",
        "spark-worker-1",
        "spark-worker-2",
        "reducers",
        "web",
        "web-2",
        "worker",
        "beat",
        "feed",
        "backups",
    }
    master = config.get("program:spark-master", "command").split()
    assert master[1] == "org.apache.spark.deploy.master.Master"
    assert master[master.index("--host") + 1] == "127.0.0.1"
    assert master[master.index("--port") + 1] == "7123"
    for name in ("spark-worker-1", "spark-worker-2"):
        worker = config.get(f"program:{name}", "command").split()
        assert worker[1] == "org.apache.spark.deploy.worker.Worker"
        assert worker[-1] == "spark://127.0.0.1:7123"
        assert worker[worker.index("--host") + 1] == "127.0.0.1"
        assert config.getint(f"program:{name}", "priority") < config.getint("program:reducers", "priority")
        assert config.get(f"program:{name}", "autorestart") == "true"
    assert Path(master[0]).name == "spark-class"
    assert Path(master[0]).exists()
    assert config.get("program:web-2", "environment") == 'WEB_PORT="8101"'
    properties = (tmp_path / "run" / "spark-cluster.properties").read_text()
    assert "spark.master.rest.enabled false" in properties


def set_by(script: str, variable: str, tmp_path: Path, **env: str) -> str:
    """What ``infra/bin/<script>`` (sourced, asked for its status) sets ``variable`` to."""
    done = subprocess.run(
        ["bash", "-c", f'set -- status; . {ROOT}/infra/bin/{script} >/dev/null; echo "${variable}"'],
        env={**os.environ, "SPORTSBOOK_VAR": str(tmp_path), **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.strip().splitlines()[-1]


def test_the_reducers_are_submitted_to_the_master_and_nginx_forwards_to_both_servers(tmp_path):
    master = set_by("app.sh", "SPARK_MASTER", tmp_path, CLUSTER="1", SPARK_MASTER_PORT="7123")
    assert master == "spark://127.0.0.1:7123"
    upstream = set_by("nginx.sh", "PROXY_UPSTREAM", tmp_path, CLUSTER="1", WEB_PORT="8100")
    assert upstream == "127.0.0.1:8100,127.0.0.1:8101"
