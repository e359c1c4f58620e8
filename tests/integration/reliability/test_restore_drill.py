"""The restore drill: a PostgreSQL of its own, backed up and archived with the project's scripts,
damaged, and restored to a moment before the damage into a fresh data directory on another port.

Everything runs as an operator runs it: ``infra/bin/postgres.sh start`` (initdb, WAL archiving
into a pgBackRest repository, the first full backup), ``manage.py migrate``, ``backup.sh full``
(``make backup``), ``backup.sh restore`` (``make restore``), ``manage.py reconcile_wallets`` and
``manage.py after_restore``, and uvicorn on the restored database. The cluster, its repository
and the restored copy live in a temporary directory and listen on free ports, so the shared
PostgreSQL is never touched; both clusters are stopped at the end. The figures it prints are the
ones docs/reliability.md quotes.
"""

from __future__ import annotations

import re
import shutil
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import datetime

import orjson
import pytest

from tests.conftest import uvicorn_serving
from tests.integration.postgres_cluster import BIN, OwnPostgres, own_postgres

pytestmark = [pytest.mark.integration]

BETS_BEFORE, BETS_AFTER = 24, 6


@pytest.fixture
def drill(own_namespace) -> Iterator[OwnPostgres]:
    # Topics of its own: ``after_restore`` counts every bet of the bets topic the restored
    # database lacks, and other tests place bets on the session's topic too.
    with own_postgres() as cluster:
        yield cluster


def test_a_restore_to_a_moment_before_the_damage_brings_back_every_bet_and_reconciles_every_wallet(drill, tmp_path):
    drill.run("start", [str(BIN / "postgres.sh"), "start"])
    assert drill.sql("SHOW archive_mode") == "on"
    drill.manage("migrate", "migrate", "--no-input", "-v0")
    drill.phase("seed", "seed")
    drill.run("backup", [str(BIN / "backup.sh"), "full"])

    before = drill.phase("bets before", "bets", str(BETS_BEFORE))["accepted"]
    moment = drill.sql("SELECT clock_timestamp()")
    time.sleep(0.2)
    after = drill.phase("bets after", "bets", str(BETS_AFTER))["accepted"]
    damaged = drill.phase("state before the damage", "state")
    drill.sql("DELETE FROM odds_ledgerentry; DROP TABLE odds_betleg CASCADE")
    assert drill.sql("SELECT count(*) FROM odds_ledgerentry") == "0"
    # The damage is archived too, as it would be by the next segment switch (archive_timeout).
    drill.run("archive", [str(BIN / "backup.sh"), "check"])

    restore_started = time.monotonic()
    out = drill.run(
        "restore", [str(BIN / "backup.sh"), "restore", moment, str(drill.restored), str(drill.restored_port)]
    )
    assert f"runs on 127.0.0.1:{drill.restored_port}" in out, out
    assert drill.sql("SELECT pg_is_in_recovery()", port=drill.restored_port, data=drill.restored) == "f"
    assert drill.sql("SHOW archive_mode", port=drill.restored_port, data=drill.restored) == "off"

    state = drill.phase("state after the restore", "state", port=drill.restored_port)
    assert set(before) <= set(state["bets"])
    assert not set(after) & set(state["bets"])
    assert state["unreconciled"] == []
    assert state["wallets"] == 3
    assert 0 < state["ledger_entries"] < damaged["ledger_entries"]
    assert "3 wallets match their ledger" in drill.manage("reconcile", "reconcile_wallets", port=drill.restored_port)
    legs = drill.sql("SELECT count(*) FROM odds_betleg", port=drill.restored_port, data=drill.restored)
    assert int(legs) == len(state["bets"])
    drill.figures["restore to verified"] = round(time.monotonic() - restore_started, 2)

    # Kafka holds the bets placed after the moment: they are dead-lettered, the outbox has
    # nothing left to send, and the next bet id is above every id Kafka has seen.
    out = drill.manage(
        "after_restore", "after_restore", "--skip", "liability", "--skip", "store", port=drill.restored_port
    )
    assert f"lost_bet {len(after)}" in out, out
    assert "left 0" in out, out
    # (PostgreSQL logs sequences ahead of use: a recovered one may already stand further on.)
    next_id = re.search(r"next_bet_id (\d+)", out)
    assert next_id is not None, out
    assert int(next_id[1]) > max(after), out

    with uvicorn_serving(tmp_path, DATABASE_URL=drill.url(drill.restored_port)) as url:
        try:
            answer = urllib.request.urlopen(f"{url}/healthz", timeout=10)  # noqa: S310 - loopback
        except urllib.error.HTTPError as exc:  # 503: no reducers, Celery or feed run in the drill
            answer = exc
        health = orjson.loads(answer.read())
    assert health["components"]["postgres"]["ok"] is True, health
    drill.figures["total"] = round(sum(v for k, v in drill.figures.items() if k != "restore to verified"), 2)
    print(f"\nrestore drill {datetime.now().isoformat(timespec='seconds')}: {orjson.dumps(drill.figures).decode()}")


def test_a_lost_data_directory_is_restored_in_place_with_everything_the_archive_holds(services):
    with own_postgres() as cluster:
        cluster.run("start", [str(BIN / "postgres.sh"), "start"])
        cluster.sql("CREATE TABLE ledger_copy AS SELECT n, n * 100 AS pence FROM generate_series(1, 1000) AS n")
        cluster.run("archive", [str(BIN / "backup.sh"), "check"])
        cluster.stop()
        shutil.rmtree(cluster.var / "postgres")  # the disk is gone; the repository is elsewhere

        out = cluster.run("restore", [str(BIN / "backup.sh"), "restore", "latest"])

        assert f"runs on 127.0.0.1:{cluster.port}, recovered to latest" in out, out
        assert cluster.sql("SELECT count(*), sum(pence) FROM ledger_copy") == "1000|50050000"
        # The project's cluster again: it archives on its new timeline, from a backup of its own.
        assert cluster.sql("SHOW archive_mode") == "on"
        assert cluster.sql("SELECT timeline_id FROM pg_control_checkpoint()") == "2"
        info = orjson.loads(cluster.run("info", [str(BIN / "backup.sh"), "info"]))
        assert len(info[0]["backup"]) == 2
