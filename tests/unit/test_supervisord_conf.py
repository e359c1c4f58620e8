"""The supervisord configuration `make up` renders (infra/conf/supervisord.conf.in): every process
of the platform is restarted, logged with rotation and stopped with its whole process group, and
supervisord is reachable only through an owner-only unix socket."""

from __future__ import annotations

import configparser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
TEMPLATE = ROOT / "infra" / "conf" / "supervisord.conf.in"
PROGRAMS = {"reducers", "web", "worker", "beat", "feed", "backups"}


def template() -> configparser.RawConfigParser:
    parser = configparser.RawConfigParser(inline_comment_prefixes=(";",))
    parser.read_string(TEMPLATE.read_text())
    return parser


def programs(conf: configparser.RawConfigParser) -> dict[str, configparser.SectionProxy]:
    return {s.removeprefix("program:"): conf[s] for s in conf.sections() if s.startswith("program:")}


def test_every_long_running_process_is_supervised():
    assert set(programs(template())) == PROGRAMS


def test_a_process_that_exits_is_restarted_and_failed_starts_are_retried_for_minutes():
    for name, program in programs(template()).items():
        assert program["autorestart"] == "true", name
        assert program["autostart"] == "true", name
        # supervisord waits 1, 2, 3 … s between failed starts: 30 retries are over seven minutes.
        assert int(program["startretries"]) >= 30, name
        assert int(program["startsecs"]) > 0, name


def test_each_process_logs_to_its_own_rotated_file():
    for name, program in programs(template()).items():
        assert program["stdout_logfile"] == f"@LOG@/{name}.log"
        assert program["redirect_stderr"] == "true"
        assert program["stdout_logfile_maxbytes"].endswith("MB")
        assert int(program["stdout_logfile_backups"]) > 0


def test_stop_signals_the_whole_process_group_and_waits_for_spark():
    conf = programs(template())
    for name, program in conf.items():
        assert (program["stopasgroup"], program["killasgroup"]) == ("true", "true"), name
    assert int(conf["reducers"]["stopwaitsecs"]) >= 60


def test_supervisord_listens_only_on_an_owner_only_unix_socket_under_var_run():
    conf = template()
    assert "inet_http_server" not in conf.sections()
    assert conf["unix_http_server"]["file"] == "@RUN@/supervisord.sock"
    assert conf["unix_http_server"]["chmod"] == "0700"
    assert conf["supervisord"]["pidfile"] == "@RUN@/supervisord.pid"
    assert conf["supervisord"]["nodaemon"] == "false"
    assert conf["supervisorctl"]["serverurl"] == "unix://@RUN@/supervisord.sock"


def test_web_runs_through_the_launcher():
    assert programs(template())["web"]["command"] == "@PY@/python -m webapp.serve"
