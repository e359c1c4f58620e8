"""The web server raises its own open-files limit and listens with the configured backlog, and
says which host limit is below what it is configured for."""

from __future__ import annotations

import resource
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from webapp import serve

ROOT = Path(__file__).resolve().parents[2]


def _in_child(code: str) -> str:
    """Run ``code`` in a fresh interpreter (a limit changed there leaves this process alone)."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_soft_limit_is_raised_to_what_is_wanted_within_the_hard_limit():
    out = _in_child(
        """
        import resource
        from webapp.serve import open_files_raise
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
        print(*open_files_raise(wanted=1024), hard)
        """
    )
    soft, hard, was_hard = (int(x) for x in out.split())
    assert hard == was_hard, "the hard limit is never touched"
    assert soft == min(1024, hard)


def _may_raise_hard_limits() -> bool:
    """Whether this process holds CAP_SYS_RESOURCE (root in a container often does not)."""
    effective = next(line for line in Path("/proc/self/status").read_text().splitlines() if line.startswith("CapEff"))
    return bool(int(effective.split()[1], 16) >> 24 & 1)


def test_the_soft_limit_is_never_lowered_and_the_hard_one_raised_only_when_allowed():
    out = _in_child(
        """
        import resource
        from webapp.serve import open_files_raise
        resource.setrlimit(resource.RLIMIT_NOFILE, (512, 2048))
        print(*open_files_raise(wanted=100_000), *open_files_raise(wanted=300))
        """
    )
    if _may_raise_hard_limits():
        assert out.split() == ["100000", "100000", "100000", "100000"]
    else:
        assert out.split() == ["2048", "2048", "2048", "2048"]


def test_a_hard_limit_below_the_wanted_files_and_a_small_somaxconn_are_both_reported(tmp_path, monkeypatch):
    somaxconn = tmp_path / "somaxconn"
    somaxconn.write_text("128\n")
    monkeypatch.setattr(serve, "SOMAXCONN", somaxconn)
    monkeypatch.setattr(serve, "open_files_raise", lambda *, wanted: (4096, 4096))
    warnings = serve.host_limits_report(wanted_files=65_536, backlog=4096)
    assert len(warnings) == 2
    assert "open files limited to 4096" in warnings[0]
    assert "WEB_OPEN_FILES=65536" in warnings[0]
    assert "net.core.somaxconn=128" in warnings[1]
    assert "WEB_BACKLOG=4096" in warnings[1]


def test_a_host_that_allows_what_is_configured_gets_no_warning(tmp_path, monkeypatch):
    somaxconn = tmp_path / "somaxconn"
    somaxconn.write_text("8192\n")
    monkeypatch.setattr(serve, "SOMAXCONN", somaxconn)
    monkeypatch.setattr(serve, "open_files_raise", lambda *, wanted: (wanted, resource.RLIM_INFINITY))
    assert serve.host_limits_report(wanted_files=65_536, backlog=4096) == []


def test_uvicorn_is_started_with_the_configured_backlog(monkeypatch, settings):
    import uvicorn

    settings.WEB_BACKLOG = 1234
    settings.WEB_OPEN_FILES = 2048
    seen: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kwargs: seen.update(kwargs))
    monkeypatch.setattr(serve, "host_limits_report", lambda *, wanted_files, backlog: [f"{wanted_files}/{backlog}"])
    serve.main()
    assert seen["backlog"] == 1234


def test_uvicorn_runs_the_configured_websocket_protocol(monkeypatch, settings):
    import uvicorn
    from django.core.exceptions import ImproperlyConfigured

    from webapp.settings.env import load

    assert load({}).ws_protocol == "websockets-sansio"
    with pytest.raises(ImproperlyConfigured, match="WS_PROTOCOL"):
        load({"WS_PROTOCOL": "h11"})
    settings.WS_PROTOCOL = "wsproto"
    seen: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kwargs: seen.update(kwargs))
    monkeypatch.setattr(serve, "host_limits_report", lambda *, wanted_files, backlog: [])
    serve.main()
    assert seen["ws"] == "wsproto"


@pytest.mark.parametrize(
    ("name", "value"),
    [("WEB_BACKLOG", "12"), ("WEB_OPEN_FILES", "10"), ("WEB_GC_FULL_GROWTH", "1.0"), ("WEB_GC_FULL_GROWTH", "x")],
)
def test_limits_below_their_minimum_are_refused_at_start(name, value):
    done = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env={**_env(), name: value},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert name in done.stderr


def _env() -> dict[str, str]:
    import os

    return {**os.environ, "DJANGO_SETTINGS_MODULE": "webapp.settings"}


def test_each_server_process_moves_its_start_up_objects_out_of_the_collectors_reach_and_collects_young_less_often():
    out = _in_child(
        """
        import gc
        import os
        os.environ["WEB_GC_YOUNG"] = "40000"
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
        import django
        django.setup()
        from webapp import serve
        serve.application_load()
        from webapp.collector import SettledObjects
        hooks = [h for h in gc.callbacks if isinstance(getattr(h, "__self__", None), SettledObjects)]
        print(gc.get_threshold(), gc.get_freeze_count() > 10_000, len(hooks), hooks[0].__self__.growth)
        """
    )
    assert out == "(40000, 20, 100) True 1 4.0"
