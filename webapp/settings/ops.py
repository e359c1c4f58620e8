"""Operations: the /metrics token, the metrics history, the lag window and the service-level
objectives the lag dashboard and /metrics judge each reducer query by."""

from reducers.queries import lag_objectives
from webapp.settings.env import PRODUCTION, read, secret


def objectives(name: str, default: str) -> dict[str, float]:
    """``name=seconds,…``: how far behind in time each reducer query may fall before it is out
    of its objective (a price stream seconds, a ranking of movers a minute), or how long a
    latency stage may take."""
    result: dict[str, float] = {}
    for item in read.text(name, default).split(","):
        query, sep, seconds = item.strip().partition("=")
        try:
            value = float(seconds)
        except ValueError:
            value = -1.0
        if not sep or not query or not value > 0:
            read.problems.append(f"{name} must be name=seconds pairs separated by commas, got {item!r}")
            continue
        result[query.strip()] = value
    return result


# Production: always required, and /metrics answers no one without it (a local reverse proxy
# makes every client look like loopback). Development: unset means loopback clients only.
METRICS_TOKEN = secret("METRICS_TOKEN", "")
METRICS_TOKEN_REQUIRED = PRODUCTION
# Alertmanager's notifications to /ops/alerts/webhook: the same rule (its bearer token, or
# loopback only in development).
ALERTS_WEBHOOK_TOKEN = secret("ALERTS_WEBHOOK_TOKEN", "")
# The Prometheus the lag dashboard asks for the alerts firing and pending now (empty: none);
# `make up` runs one on PROMETHEUS_LISTEN.
PROMETHEUS_URL = read.text("PROMETHEUS_URL", "http://" + read.text("PROMETHEUS_LISTEN", "127.0.0.1:9090"))
# /healthz runs its checks at most this often per process (its answer is kept that long).
HEALTH_PUBLIC_CACHE_S = read.seconds("HEALTH_PUBLIC_CACHE_S", 2)
OPS_SAMPLE_INTERVAL_S = read.whole("OPS_SAMPLE_INTERVAL_S", 5)
OPS_METRICS_RETENTION_HOURS = read.number("OPS_METRICS_RETENTION_HOURS", 168)
OPS_LAG_WINDOW_SAMPLES = read.whole("OPS_LAG_WINDOW_SAMPLES", 8)
OPS_LAG_WINDOW_SPACING_MS = read.whole("OPS_LAG_WINDOW_SPACING_MS", 2000)
# Seconds behind (the age of the oldest record a query has not processed) each query may reach.
OPS_LAG_OBJECTIVES_S = objectives(
    "OPS_LAG_OBJECTIVES_S", ",".join(f"{name}={seconds:g}" for name, seconds in lag_objectives().items())
)
# The 99th percentile each latency stage may reach (reducers/latency.py STAGES): a bet's placement,
# and a price's age as a web process sends its frame. The alerts compare against them.
OPS_LATENCY_OBJECTIVES_S = objectives("OPS_LATENCY_OBJECTIVES_S", "placement=0.25,frame=1")
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
