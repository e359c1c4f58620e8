"""docker-compose.yml describes the whole stack and parses with the Docker tooling."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

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
