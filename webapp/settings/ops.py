"""Operations: the /metrics token, the metrics history, the lag window and the service-level
objectives the lag dashboard and /metrics judge each reducer query by."""

from webapp.settings.env import PRODUCTION, read


def objectives(name: str, default: str) -> dict[str, float]:
    """``query=seconds,…``: how far behind in time each reducer query may fall before it is out
    of its objective (a price stream seconds, a ranking of movers a minute)."""
    result: dict[str, float] = {}
    for item in read.text(name, default).split(","):
        query, sep, seconds = item.strip().partition("=")
        try:
            value = float(seconds)
        except ValueError:
            value = -1.0
        if not sep or not query or not value > 0:
            read.problems.append(f"{name} must be query=seconds pairs separated by commas, got {item!r}")
            continue
        result[query.strip()] = value
    return result


# Production: always required, and /metrics answers no one without it (a local reverse proxy
# makes every client look like loopback). Development: unset means loopback clients only.
METRICS_TOKEN = read.text("METRICS_TOKEN", "", production_default=False)
METRICS_TOKEN_REQUIRED = PRODUCTION
OPS_SAMPLE_INTERVAL_S = read.whole("OPS_SAMPLE_INTERVAL_S", 5)
OPS_METRICS_RETENTION_HOURS = read.number("OPS_METRICS_RETENTION_HOURS", 168)
OPS_LAG_WINDOW_SAMPLES = read.whole("OPS_LAG_WINDOW_SAMPLES", 8)
OPS_LAG_WINDOW_SPACING_MS = read.whole("OPS_LAG_WINDOW_SPACING_MS", 2000)
# Seconds behind (the age of the oldest record a query has not processed) each query may reach.
OPS_LAG_OBJECTIVES_S = objectives(
    "OPS_LAG_OBJECTIVES_S", "prices=2,prices-apply=2,commands=2,markets=5,matches=5,liability=30,movers=60"
)
# A query that has said nothing (no progress report, no idle event) for this long is stale: its
# figures are the last it gave, not the present.
OPS_REPORT_STALE_S = read.number("OPS_REPORT_STALE_S", 30)
# Backups (infra/bin/backup.sh): `manage.py run_backups` (the `backups` program of `make up`)
# takes a full backup when the newest is older than BACKUP_FULL_INTERVAL_H and reads the
# repository every BACKUP_CHECK_INTERVAL_S; the ops page marks the newest backup late past the
# interval plus an hour, and the WAL archive late when a finished segment has waited longer
# than BACKUP_ARCHIVE_LAG_OBJECTIVE_S.
BACKUP_FULL_INTERVAL_H = read.number("BACKUP_FULL_INTERVAL_H", 24)
BACKUP_CHECK_INTERVAL_S = read.whole("BACKUP_CHECK_INTERVAL_S", 60)
BACKUP_ARCHIVE_LAG_OBJECTIVE_S = read.number("BACKUP_ARCHIVE_LAG_OBJECTIVE_S", 300)
