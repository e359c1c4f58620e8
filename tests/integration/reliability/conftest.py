"""Isolated stacks for the fault tests.

A fault test that restarts a service runs its own Kafka and Redis on free loopback ports, with
their data under the test's temporary directory (``SPORTSBOOK_VAR``), through the same service
scripts operators use: the shared services on the default ports are never stopped. The
processes under test (uvicorn, the Spark reducers, a Celery worker) are started as subprocesses
pointed at that stack, each in its own session so that a SIGKILL takes its whole process group.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.harness import ROOT, Process, free_port, uvicorn_command, web_up
from tests.conftest import wait_for


def database_url_of_tests() -> str:
    from django.conf import settings

    db = settings.DATABASES["default"]
    return f"postgres://{db['USER']}:{db['PASSWORD']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


class Stack:
    """The environment of one isolated stack, and the processes started on it."""

    def __init__(self, var: Path, *, kafka: str, redis: str, namespace: str) -> None:
        self.var = var
        self.kafka = kafka
        self.redis = redis
        self.namespace = namespace
        self.processes: list[Process] = []

    def env(self, **extra: str) -> dict[str, str]:
        env = {
            **os.environ,
            "SPORTSBOOK_VAR": str(self.var),
            "SPORTSBOOK_NAMESPACE": self.namespace,
            "KAFKA_BOOTSTRAP_SERVERS": self.kafka,
            "REDIS_URL": self.redis,
            "DATABASE_URL": database_url_of_tests(),
            "PYTHONUNBUFFERED": "1",
            **extra,
        }
        env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        env.pop("CELERY_BROKER_URL", None)
        return env

    def service(self, name: str, action: str) -> None:
        """``infra/bin/<name>.sh <action>`` against this stack's ports and data directory."""
        result = subprocess.run(
            [str(ROOT / "infra" / "bin" / f"{name}.sh"), action],
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert result.returncode == 0, f"{name}.sh {action}: {result.stdout}{result.stderr}"

    def process(self, name: str, args: list[str], **extra_env: str) -> Process:
        handle = Process(name, args, env=self.env(**extra_env), log=self.var / "log" / f"{name}.log")
        self.processes.append(handle)
        return handle

    def uvicorn(self, port: int) -> Process:
        return self.process(
            f"web-{port}",
            uvicorn_command(port),
            DJANGO_ALLOWED_HOSTS="127.0.0.1,localhost",
            DJANGO_CSRF_TRUSTED_ORIGINS=f"http://127.0.0.1:{port}",
        )

    def reducers(self, checkpoints: Path, **extra_env: str) -> Process:
        settings = {"SPARK_TRIGGER_MODE": "microbatch", "SPARK_MASTER": "local[2]", **extra_env}
        return self.process(
            "reducers",
            [sys.executable, "-m", "spark.jobs.reducers"],
            SPARK_CHECKPOINT_DIR=str(checkpoints),
            **settings,
        )

    def celery_worker(self) -> Process:
        return self.process(
            "worker",
            [
                str(ROOT / ".venv" / "bin" / "celery"),
                "-A",
                "webapp",
                "worker",
                "-l",
                "INFO",
                "--pool",
                "solo",
                "-n",
                f"reliability-{uuid.uuid4().hex[:6]}@%h",
            ],
        )

    def stop_processes(self) -> None:
        for handle in reversed(self.processes):
            handle.stop()


def wait_web(url: str, process: Process, timeout: float = 60) -> None:
    def up() -> bool:
        if not process.alive():
            pytest.fail(f"{process.name} exited:\n{process.tail()}")
        return web_up(url)

    wait_for(up, timeout=timeout, interval=0.3, what=f"{process.name} to answer")


@pytest.fixture(scope="module")
def isolated(services, tmp_path_factory) -> Iterator[Stack]:
    """Own Kafka and Redis for one test module, on free ports, stopped at the end."""
    var = tmp_path_factory.mktemp("stack")
    stack = Stack(
        var,
        kafka=f"127.0.0.1:{free_port(pair=True)}",
        redis=f"redis://127.0.0.1:{free_port()}/0",
        namespace=f"f{uuid.uuid4().hex[:8]}",
    )
    stack.service("kafka", "start")
    stack.service("redis", "start")
    try:
        yield stack
    finally:
        stack.stop_processes()
        stack.service("kafka", "stop")
        stack.service("redis", "stop")


@contextlib.contextmanager
def namespace_on_shared_kafka(
    monkeypatch: pytest.MonkeyPatch, var: Path, *, redis: str | None = None, prefix: str = "k"
) -> Iterator[Stack]:
    """A fresh namespace (its topics on the shared Kafka, its keys and channels) and a stack on
    it; Redis is the shared one unless ``redis`` names another. The stack's processes are
    stopped and the namespace's topics deleted at the end."""
    from django.conf import settings

    from odds.core.kafka import admin_client, topics_ensure
    from reducers import topics

    name = f"{prefix}{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("SPORTSBOOK_NAMESPACE", name)
    topics_ensure()
    stack = Stack(var, kafka=settings.KAFKA_BOOTSTRAP_SERVERS, redis=redis or settings.REDIS_URL, namespace=name)
    (stack.var / "log").mkdir(parents=True, exist_ok=True)
    try:
        yield stack
    finally:
        stack.stop_processes()
        admin_client().delete_topics([t.name for t in topics.all_topics()], operation_timeout=30)


@pytest.fixture
def shared_namespace(services, monkeypatch, tmp_path) -> Iterator[Stack]:
    """A fresh namespace (topics, keys, channels) on the shared Kafka and Redis, for tests that
    crash only their own processes and never restart a service."""
    with namespace_on_shared_kafka(monkeypatch, tmp_path) as stack:
        yield stack


@pytest.fixture(scope="module")
def stack(isolated: Stack) -> Iterator[Stack]:
    """The isolated stack with its topics, and this process's keys and topics named for it."""
    subprocess.run(
        [sys.executable, "manage.py", "create_topics"], cwd=ROOT, env=isolated.env(), check=True, capture_output=True
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SPORTSBOOK_NAMESPACE", isolated.namespace)
        yield isolated
