"""Reading pgBackRest's report and judging backups and the WAL archive (odds/core/backups.py,
odds/ops/services/backups.py), on the JSON pgBackRest 2.45 prints."""

from __future__ import annotations

import orjson

from odds.core.backups import LATE, OFF, OK, UNKNOWN, backup_summary, backup_verdicts
from odds.ops.selectors.backups import duration_text, size_text
from odds.ops.services.backups import backup_due

# `pgbackrest info --output=json` of a stanza with one full backup (pgBackRest 2.45).
INFO = orjson.loads(
    b'[{"archive":[{"database":{"id":1,"repo-key":1},"id":"15-1","max":"000000010000000000000002",'
    b'"min":"000000010000000000000001"}],"backup":[{"archive":{"start":"000000010000000000000002",'
    b'"stop":"000000010000000000000002"},"backrest":{"format":5,"version":"2.45"},"database":{"id":1,'
    b'"repo-key":1},"error":false,"info":{"delta":30489120,"repository":{"delta":3745123,"size":3745123},'
    b'"size":30489120},"label":"20261128-051339F","lsn":{"start":"0/2000028","stop":"0/2000100"},'
    b'"prior":null,"reference":null,"timestamp":{"start":1795842819,"stop":1795842822},"type":"full"}],'
    b'"cipher":"none","db":[{"id":1,"repo-key":1,"system-id":7713086166337101900,"version":"15"}],'
    b'"name":"sportsbook","repo":[{"cipher":"none","key":1,"status":{"code":0,"message":"ok"}}],'
    b'"status":{"code":0,"lock":{"backup":{"held":false}},"message":"ok"}}]'
)
# The same command before the stanza exists (an external PostgreSQL: postgres.sh never made one).
NO_STANZA = orjson.loads(
    b'[{"archive":[],"backup":[],"cipher":"none","db":[],"name":"sportsbook","repo":[{"cipher":"none",'
    b'"key":1,"status":{"code":1,"message":"missing stanza path"}}],"status":{"code":1,'
    b'"lock":{"backup":{"held":false}},"message":"missing stanza path"}}]'
)
ARCHIVING = {"archiving": True, "lag_s": 0.0, "waiting_segments": 0}


def test_the_summary_names_the_newest_backup_and_the_archived_range():
    summary = backup_summary(INFO, now_s=1795842900)
    assert summary["newest_label"] == "20261128-051339F"
    assert (summary["newest_stop"], summary["newest_full_stop"], summary["newest_seconds"]) == (1795842822,) * 2 + (3,)
    assert (summary["backups"], summary["repository_bytes"], summary["status_code"]) == (1, 3745123, 0)
    assert (summary["wal_min"], summary["wal_max"]) == ("000000010000000000000001", "000000010000000000000002")


def test_a_full_backup_is_due_when_there_is_none_or_the_newest_is_older_than_the_interval():
    summary = backup_summary(INFO, now_s=0)
    assert not backup_due(summary, now_s=1795842822 + 3599, interval_s=3600)
    assert backup_due(summary, now_s=1795842822 + 3600, interval_s=3600)
    empty = backup_summary([{**INFO[0], "backup": [], "status": {"code": 2, "message": "no valid backups"}}], now_s=0)
    assert backup_due(empty, now_s=0, interval_s=3600)


def test_no_backup_is_attempted_where_there_is_no_stanza():
    summary = backup_summary(NO_STANZA, now_s=0)
    assert summary["status"] == "missing stanza path"
    assert not backup_due(summary, now_s=10**10, interval_s=3600)


def test_the_newest_backup_is_late_an_hour_past_the_interval():
    summary = backup_summary(INFO, now_s=0)
    judge = lambda age: backup_verdicts(  # noqa: E731
        backups=summary, archive=ARCHIVING, now_s=1795842822 + age, full_interval_s=86400, lag_objective_s=300
    )
    assert judge(86400 + 3600)["backup"] == OK
    assert judge(86400 + 3601)["backup"] == LATE
    assert judge(10)["backup_age_s"] == 10
    assert (
        backup_verdicts(backups=None, archive=ARCHIVING, now_s=0, full_interval_s=1, lag_objective_s=1)["backup"]
        == UNKNOWN
    )


def test_the_archive_is_late_past_its_objective_off_when_not_archiving_unknown_when_unreadable():
    def wal(archive):
        return backup_verdicts(backups=None, archive=archive, now_s=0, full_interval_s=1, lag_objective_s=300)["wal"]

    assert wal(ARCHIVING) == OK
    assert wal({**ARCHIVING, "lag_s": 301.0, "waiting_segments": 3}) == LATE
    assert wal({**ARCHIVING, "archiving": False}) == OFF
    assert wal({**ARCHIVING, "lag_s": None, "waiting_segments": None}) == UNKNOWN


def test_durations_and_sizes_read_as_words():
    assert [duration_text(s) for s in (None, 42, 420, 12600, 259200)] == ["—", "42 s", "7 min", "3.5 h", "3.0 days"]
    assert [size_text(b) for b in (None, 512, 3745123, 3 * 1024**3)] == ["—", "512 B", "3.6 MiB", "3.0 GiB"]
