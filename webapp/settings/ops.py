"""Operations: the /metrics token, the metrics history, the lag window and the service-level
objectives the lag dashboard and /metrics judge each reducer query by."""

from webapp.settings.env import PRODUCTION, env

# Production: always required, and /metrics answers no one without it (a local reverse proxy
# makes every client look like loopback). Development: unset means loopback clients only.
METRICS_TOKEN = env.metrics_token
METRICS_TOKEN_REQUIRED = PRODUCTION
# Alertmanager's notifications to /ops/alerts/webhook: the same rule (its bearer token, or
# loopback only in development).
ALERTS_WEBHOOK_TOKEN = env.alerts_webhook_token
# The Prometheus the lag dashboard asks for the alerts firing and pending now (empty: none);
# `make up` runs one on PROMETHEUS_LISTEN.
PROMETHEUS_URL = env.prometheus_url
# /healthz runs its checks at most this often per process (its answer is kept that long).
HEALTH_PUBLIC_CACHE_S = env.health_public_cache_s
OPS_SAMPLE_INTERVAL_S = env.ops_sample_interval_s
OPS_METRICS_RETENTION_HOURS = env.ops_metrics_retention_hours
OPS_LAG_WINDOW_SAMPLES = env.ops_lag_window_samples
OPS_LAG_WINDOW_SPACING_MS = env.ops_lag_window_spacing_ms
# Seconds behind (the age of the oldest record a query has not processed) each query may reach,
# ``name=seconds,…`` (by default each query's own, reducers.queries.lag_objectives).
OPS_LAG_OBJECTIVES_S = env.ops_lag_objectives_s
# The 99th percentile each latency stage may reach (reducers/latency.py STAGES): a bet's placement,
# and a price's age as a web process sends its frame. The alerts compare against them.
OPS_LATENCY_OBJECTIVES_S = env.ops_latency_objectives_s
# A query that has said nothing (no progress report, no idle event) for this long is stale: its
# figures are the last it gave, not the present.
OPS_REPORT_STALE_S = env.ops_report_stale_s
# Backups (infra/bin/backup.sh): `manage.py run_backups` (the `backups` program of `make up`)
# takes a full backup when the newest is older than BACKUP_FULL_INTERVAL_H and reads the
# repository every BACKUP_CHECK_INTERVAL_S; the ops page marks the newest backup late past the
# interval plus an hour, and the WAL archive late when a finished segment has waited longer
# than BACKUP_ARCHIVE_LAG_OBJECTIVE_S.
BACKUP_FULL_INTERVAL_H = env.backup_full_interval_h
BACKUP_CHECK_INTERVAL_S = env.backup_check_interval_s
BACKUP_ARCHIVE_LAG_OBJECTIVE_S = env.backup_archive_lag_objective_s
