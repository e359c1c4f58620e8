"""The monitoring of `make up` as Prometheus' and Alertmanager's own tools judge it: the rendered
configurations pass ``promtool check config`` and ``amtool check-config``, the rules pass
``promtool check rules`` and their unit tests (``promtool test rules``, infra/monitoring/tests/),
every alert has a severity and a runbook section, and everything listens on loopback."""

from __future__ import annotations

import configparser
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent.parent
MONITORING = ROOT / "infra" / "monitoring"
RULES = MONITORING / "rules"
RUNBOOKS = ROOT / "docs" / "runbooks.md"
SUPERVISORD = ROOT / "infra" / "conf" / "supervisord.monitoring.conf.in"


def tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: `make deps` (infra/bin/deps.sh system) installs it")
    return found


def run(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> Path:
    """prometheus.yml and alertmanager.yml as `make up` renders them, in a var/ of the test's own."""
    var = tmp_path_factory.mktemp("var")
    env = {
        **os.environ,
        "SPORTSBOOK_VAR": str(var),
        "METRICS_TOKEN": "scrape-secret",
        # As `make up` has them (the test session turns them off for its own processes).
        "SPARK_DRIVER_METRICS": "127.0.0.1:9465",
        "KAFKA_JMX_LISTEN": "127.0.0.1:9404",
    }
    result = run(str(ROOT / "infra" / "bin" / "monitoring.sh"), "render", env=env)
    assert result.returncode == 0, result.stderr
    return var / "run" / "monitoring"


def alerts() -> list[dict]:
    return [
        rule
        for path in sorted(RULES.glob("*.yml"))
        for group in yaml.safe_load(path.read_text())["groups"]
        for rule in group["rules"]
        if "alert" in rule
    ]


def test_the_rendered_prometheus_configuration_passes_promtool_check_config(rendered):
    result = run(tool("promtool"), "check", "config", str(rendered / "prometheus.yml"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_the_rendered_alertmanager_configuration_passes_amtool_check_config(rendered):
    result = run(tool("amtool"), "check-config", str(rendered / "alertmanager.yml"))
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_rules_pass_promtool_check_rules():
    result = run(tool("promtool"), "check", "rules", *map(str, sorted(RULES.glob("*.yml"))))
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_rules_pass_their_unit_tests():
    tests = sorted(p.name for p in (MONITORING / "tests").glob("*.yml"))
    assert tests
    result = run(tool("promtool"), "test", "rules", *tests, cwd=MONITORING / "tests")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("SUCCESS") == len(tests)


def test_every_alert_is_unit_tested():
    tested = set()
    for path in (MONITORING / "tests").glob("*.yml"):
        for case in yaml.safe_load(path.read_text())["tests"]:
            tested |= {check["alertname"] for check in case.get("alert_rule_test", []) if check.get("exp_alerts")}
    assert {rule["alert"] for rule in alerts()} <= tested


def test_every_alert_has_a_severity_and_a_runbook_section():
    text = RUNBOOKS.read_text()
    headings = {re.sub(r"[^a-z0-9]", "", h.lower()) for h in re.findall(r"^## (.+)$", text, re.MULTILINE)}
    for rule in alerts():
        assert rule["labels"]["severity"] in ("page", "ticket"), rule["alert"]
        runbook = rule["annotations"]["runbook"]
        assert runbook == f"docs/runbooks.md#{rule['alert'].lower()}", rule["alert"]
        assert rule["alert"].lower() in headings, f"docs/runbooks.md has no section for {rule['alert']}"


def test_the_scrape_token_reaches_prometheus_in_an_owner_only_file(rendered):
    token = rendered / "metrics-token"
    assert token.read_text() == "scrape-secret"
    assert token.stat().st_mode & 0o077 == 0
    config = yaml.safe_load((rendered / "prometheus.yml").read_text())
    web = next(job for job in config["scrape_configs"] if job["job_name"] == "web")
    assert web["authorization"]["credentials_file"] == str(token)


def test_every_process_is_a_target_and_every_address_is_loopback(rendered):
    config = yaml.safe_load((rendered / "prometheus.yml").read_text())
    jobs = {job["job_name"]: job for job in config["scrape_configs"]}
    assert {"web", "reducers", "processes", "celery", "kafka", "redis", "postgres"} <= set(jobs)
    for job in jobs.values():
        (target,) = job["static_configs"][0]["targets"]
        assert target.startswith("127.0.0.1:"), (job["job_name"], target)
    manager = yaml.safe_load((rendered / "alertmanager.yml").read_text())
    assert manager["receivers"][0]["webhook_configs"][0]["url"].startswith("http://127.0.0.1:")


def test_monitoring_processes_are_supervised_logged_and_listen_on_loopback():
    parser = configparser.RawConfigParser(inline_comment_prefixes=(";",))
    parser.read_string(SUPERVISORD.read_text())
    sections = [s for s in parser.sections() if s.startswith(("program:", "eventlistener:"))]
    assert {s.split(":")[1] for s in sections} == {
        "processes",
        "prometheus",
        "alertmanager",
        "redis-exporter",
        "postgres-exporter",
        "flower",
    }
    for name in sections:
        section = parser[name]
        assert section["autorestart"] == "true", name
        assert (section["stopasgroup"], section["killasgroup"]) == ("true", "true"), name
        assert "@LOG@/" in section.get("stdout_logfile", section.get("stderr_logfile", "")), name
    alertmanager = parser["program:alertmanager"]["command"]
    assert alertmanager.endswith("--cluster.listen-address="), "Alertmanager's cluster port must stay closed"


def test_a_driver_or_broker_without_its_endpoint_is_no_target(tmp_path):
    env = {**os.environ, "SPORTSBOOK_VAR": str(tmp_path), "SPARK_DRIVER_METRICS": "off", "KAFKA_JMX_LISTEN": ""}
    assert run(str(ROOT / "infra" / "bin" / "monitoring.sh"), "render", env=env).returncode == 0
    rendered = tmp_path / "run" / "monitoring" / "prometheus.yml"
    jobs = {job["job_name"]: job for job in yaml.safe_load(rendered.read_text())["scrape_configs"]}
    assert jobs["reducers"]["static_configs"][0]["targets"] == []
    assert jobs["kafka"]["static_configs"][0]["targets"] == []
    assert run(tool("promtool"), "check", "config", str(rendered)).returncode == 0
