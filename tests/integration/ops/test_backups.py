"""Backups as operators watch them: the scheduler's record of the repository, the WAL archive's
progress, on ``/metrics`` and the backups page, against a PostgreSQL of the module's own that
archives into its own pgBackRest repository (``tests/integration/postgres_cluster.py``)."""

from __future__ import annotations

import time
import urllib.request
from collections.abc import Iterator

import psycopg
import pytest
from django.db import connection
from prometheus_client.parser import text_string_to_metric_families

from odds.core.backups import LATE, backup_verdicts, wal_archive_status
from odds.ops.selectors.backups import LEVELS
from odds.ops.services.backups import backups_tick
from tests.conftest import uvicorn_serving, wait_for
from tests.integration.postgres_cluster import BIN, OwnPostgres, own_postgres
from tests.promtool import promtool_check

pytestmark = [pytest.mark.integration]


@pytest.fixture(scope="module")
def archived(services) -> Iterator[OwnPostgres]:
    """A cluster started as ``make up`` starts one: archiving on, its first full backup taken."""
    with own_postgres() as cluster:
        cluster.run("start", [str(BIN / "postgres.sh"), "start"])
        yield cluster


def archive_status(cluster: OwnPostgres) -> dict:
    with psycopg.connect(cluster.url(cluster.port).replace("postgres://", "postgresql://")) as conn:
        return wal_archive_status(conn.cursor())


def scrape(url: str) -> dict[str, float]:
    with urllib.request.urlopen(f"{url}/metrics", timeout=30) as answer:  # noqa: S310 - loopback
        text = answer.read()
    checked = promtool_check(text)
    assert (checked.returncode, checked.stderr) == (0, ""), checked.stderr
    return {
        sample.name: sample.value
        for family in text_string_to_metric_families(text.decode())
        for sample in family.samples
        if sample.name.startswith(("sportsbook_backup", "sportsbook_wal"))
    }


def test_metrics_show_the_newest_backup_and_an_archive_keeping_up(archived, kafka_topics, redis_client, tmp_path):
    out = archived.manage("scheduler", "run_backups", "--once")
    assert "backups: 1 kept" in out, out

    with uvicorn_serving(tmp_path, DATABASE_URL=archived.url(archived.port)) as url:
        figures = scrape(url)

    assert 0 <= figures["sportsbook_backup_age_seconds"] < 600, figures
    assert figures["sportsbook_backups"] == 1
    assert figures["sportsbook_backup_repository_bytes"] > 0
    assert figures["sportsbook_wal_archiving"] == 1
    assert figures["sportsbook_wal_archived_segments_total"] >= 1
    assert figures["sportsbook_wal_archive_waiting_segments"] == 0
    assert figures["sportsbook_wal_archive_lag_seconds"] == 0


def test_a_failing_archive_shows_its_waiting_segments_and_lag_until_it_catches_up(archived):
    archived.sql("ALTER SYSTEM SET archive_command = '/bin/false'")
    archived.sql("SELECT pg_reload_conf()")
    try:
        archived.sql("CREATE TABLE IF NOT EXISTS filler AS SELECT generate_series(1, 1000) AS n")
        archived.sql("SELECT pg_switch_wal()")
        wait_for(lambda: archive_status(archived)["failed"] > 0, timeout=60, what="a failed archive attempt")
        time.sleep(1.5)
        status = archive_status(archived)
        assert status["waiting_segments"] >= 1, status
        assert status["lag_s"] >= 1, status
        verdicts = backup_verdicts(
            backups=None, archive=status, now_s=time.time(), full_interval_s=86400, lag_objective_s=1
        )
        assert verdicts["wal"] == LATE
    finally:
        archived.sql("ALTER SYSTEM RESET archive_command")
        archived.sql("SELECT pg_reload_conf()")
    caught_up = wait_for(
        lambda: (s := archive_status(archived))["waiting_segments"] == 0 and s,
        timeout=120,
        what="the archive to catch up",
    )
    assert caught_up["lag_s"] == 0


@pytest.mark.django_db
def test_the_backups_page_shows_the_newest_backup_and_the_archive_of_the_database_in_use(
    archived, staff_client, monkeypatch
):
    # backup.sh finds the module's cluster through the environment, as under supervisord.
    for name, value in archived.env().items():
        if name in ("SPORTSBOOK_VAR", "DATABASE_URL"):
            monkeypatch.setenv(name, value)
    status = backups_tick(interval_s=86400)
    assert status["error"] == ""
    assert status["backups"] >= 1

    page = staff_client.get("/ops/backups").content.decode()

    assert 'data-tile="backup" data-level="ok"' in page
    assert f"{status['newest_label']} (full)" in page
    # The page's database is the tests' own (archiving or not, as the machine's PostgreSQL does).
    archive = wal_archive_status(connection.cursor())
    wal = backup_verdicts(backups=None, archive=archive, now_s=time.time(), full_interval_s=86400, lag_objective_s=300)[
        "wal"
    ]
    assert f'data-tile="wal" data-level="{LEVELS[wal]}"' in page
    if not archive["archiving"]:
        assert "does not archive its WAL" in page
