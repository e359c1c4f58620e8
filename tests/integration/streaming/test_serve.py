"""`python -m webapp.serve`, the ASGI server `make up` runs: the server itself refuses websocket
frames above ``WS_MAX_FRAME_BYTES``, takes no permessage-deflate a browser offers unless told to,
and uvicorn's workers end with their master."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest
import websockets
from django.conf import settings
from websockets.typing import Origin

from bench.harness import free_port, web_up
from tests.conftest import ROOT, wait_for
from tests.integration.reliability.conftest import database_url_of_tests

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


@dataclass
class Served:
    base: str
    process: subprocess.Popen[bytes]
    log: Path


def serve(tmp_path: Path, *, workers: int, **extra_env: str) -> Served:
    """``python -m webapp.serve`` on a free port, on the test database, ``extra_env`` on top."""
    port = free_port()
    env = {
        **os.environ,
        "WEB_HOST": "127.0.0.1",
        "WEB_PORT": str(port),
        "WEB_WORKERS": str(workers),
        "DATABASE_URL": database_url_of_tests(),
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DJANGO_CSRF_TRUSTED_ORIGINS": f"http://127.0.0.1:{port}",
        "PYTHONUNBUFFERED": "1",
        **extra_env,
    }
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "webapp.serve"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    served = Served(f"http://127.0.0.1:{port}", process, log)

    def up() -> bool:
        if process.poll() is not None:
            pytest.fail(f"webapp.serve exited:\n{log.read_text(errors='replace')}")
        return web_up(served.base)

    wait_for(up, timeout=90, interval=0.3, what="webapp.serve to answer")
    return served


def stop(served: Served) -> None:
    try:
        os.killpg(served.process.pid, signal.SIGTERM)
        served.process.wait(30)
    except ProcessLookupError:
        pass
    except subprocess.TimeoutExpired:
        os.killpg(served.process.pid, signal.SIGKILL)
        served.process.wait(30)


@pytest.fixture
def one_worker(services, tmp_path) -> Iterator[Served]:
    served = serve(tmp_path, workers=1)
    yield served
    stop(served)


async def _send_and_receive(base: str, frame: str) -> str:
    """Send ``frame`` after the hello and return the answer; a closed connection raises."""
    uri = base.replace("http://", "ws://") + "/ws/odds/"
    async with websockets.connect(uri, origin=Origin(base), max_size=None) as ws:
        assert '"hello"' in str(await ws.recv())
        await ws.send(frame)
        return str(await asyncio.wait_for(ws.recv(), timeout=30))


def test_a_frame_above_the_limit_is_refused_by_the_server_with_1009(one_worker):
    frame = '{"type": "ping", "pad": "' + "x" * (1024 * 1024) + '"}'
    with pytest.raises(websockets.ConnectionClosedError) as closed:
        # Had the application read the frame it would answer with a frame_too_large error.
        asyncio.run(_send_and_receive(one_worker.base, frame))
    assert closed.value.rcvd is not None
    assert closed.value.rcvd.code == 1009


def test_a_frame_of_exactly_the_limit_reaches_the_application(one_worker):
    head, tail = '{"type": "ping", "pad": "', '"}'
    frame = head + "x" * (settings.WS_MAX_FRAME_BYTES - len(head) - len(tail)) + tail
    assert len(frame.encode()) == settings.WS_MAX_FRAME_BYTES
    assert '"pong"' in asyncio.run(_send_and_receive(one_worker.base, frame))


async def _extensions(base: str) -> list[str]:
    """The extensions the server agreed to, to a client offering permessage-deflate as browsers do."""
    uri = base.replace("http://", "ws://") + "/ws/odds/"
    async with websockets.connect(uri, origin=Origin(base), compression="deflate") as ws:
        assert '"hello"' in str(await ws.recv())
        return [extension.name for extension in ws.protocol.extensions]


def test_a_browsers_offer_of_compression_is_declined(one_worker):
    assert asyncio.run(_extensions(one_worker.base)) == []


def test_compression_is_taken_when_the_setting_turns_it_on(services, tmp_path):
    served = serve(tmp_path, workers=1, WS_PER_MESSAGE_DEFLATE="true")
    try:
        assert asyncio.run(_extensions(served.base)) == ["permessage-deflate"]
    finally:
        stop(served)


def test_workers_end_when_their_master_is_killed(services, tmp_path):
    served = serve(tmp_path, workers=2)
    try:
        master = psutil.Process(served.process.pid)

        def spawned_workers() -> list[psutil.Process] | None:
            found = [c for c in master.children() if "spawn_main" in " ".join(c.cmdline())]
            return found if len(found) == 2 else None

        workers = wait_for(spawned_workers, timeout=60, what="two uvicorn workers")
        served.process.send_signal(signal.SIGKILL)
        served.process.wait(30)
        wait_for(
            lambda: not any(w.is_running() and w.status() != psutil.STATUS_ZOMBIE for w in workers),
            timeout=60,
            what="the workers of the killed master to end",
        )
        assert not web_up(served.base)
    finally:
        stop(served)
