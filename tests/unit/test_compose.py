"""docker-compose.yml describes the whole stack, parses with the Docker tooling and restarts what
exits, as supervisord does for `make up`."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent.parent
REQUIRED = {"kafka", "postgres", "redis", "web", "worker", "beat", "feed", "reducer"}


def compose_command() -> list[str] | None:
    if shutil.which("docker") and subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0:
        return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    return None


@pytest.mark.skipif(compose_command() is None, reason="neither `docker compose` nor `docker-compose` is installed")
def test_compose_file_parses_and_has_every_service():
    command = compose_command()
    assert command is not None
    check = subprocess.run([*command, "config", "-q"], cwd=ROOT, capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stderr
    services = subprocess.run(
        [*command, "config", "--services"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert set(services) >= REQUIRED


def compose_services() -> dict[str, dict]:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]


def one_shot_services(services: dict[str, dict]) -> set[str]:
    """Services another one waits on to have completed (migrations, topics, seed data)."""
    return {
        name
        for service in services.values()
        for name, condition in (service.get("depends_on") or {}).items()
        if isinstance(condition, dict) and condition.get("condition") == "service_completed_successfully"
    }


def test_every_long_running_service_is_restarted_unless_stopped():
    services = compose_services()
    long_running = set(services) - one_shot_services(services)
    assert long_running >= REQUIRED
    assert {name: services[name].get("restart") for name in long_running} == dict.fromkeys(
        long_running, "unless-stopped"
    )


def test_one_shot_jobs_are_run_again_only_on_failure():
    services = compose_services()
    one_shots = one_shot_services(services)
    assert one_shots, "the init job is awaited by the services that need it"
    assert {name: services[name].get("restart") for name in one_shots} == dict.fromkeys(one_shots, "on-failure")


def test_web_runs_the_same_launcher_as_make_up():
    web = compose_services()["web"]
    assert web["command"] == ["python", "-m", "webapp.serve"]
    # Its own settings come on top of the application's, not instead of them.
    assert web["environment"]["WEB_PORT"] == "8000"
    assert web["environment"]["DATABASE_URL"].startswith("postgres://")
