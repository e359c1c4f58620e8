#!/usr/bin/env bash
# PostgreSQL: use DATABASE_URL when something listens there, else run a project-local
# cluster under var/postgres (owned by the 'postgres' system user, as PostgreSQL refuses root).
# The local cluster archives its WAL with pgBackRest from its first start, and its first full
# backup is taken then (infra/bin/backup.sh; BACKUP_REPO_TYPE=none turns both off). A server
# that already listens is used as it is: nothing here configures, archives or backs it up.
# Usage: postgres.sh start|stop|status
. "$(dirname "$0")/lib.sh"

read -r HOST PORT <<<"$(host_port "$DATABASE_URL")"
DATA="$VAR/postgres"
creds="${DATABASE_URL#*://}"
creds="${creds%%@*}"
DB_USER="${creds%%:*}"
DB_PASS="${creds#*:}"
DB_NAME="${DATABASE_URL##*/}"
DB_NAME="${DB_NAME%%\?*}"

case "${1:-}" in
start)
  if port_open "$HOST" "$PORT"; then
    echo "postgres: something already listens on $HOST:$PORT, using it (its backups are not this script's)"
    exit 0
  fi
  INITDB="$(pg_bin initdb)" || { echo "PostgreSQL missing: run make deps" >&2; exit 1; }
  PG_CTL="$(pg_bin pg_ctl)"
  mkdir -p "$DATA"
  chown postgres:postgres "$DATA"
  chmod 700 "$DATA"
  if [ ! -f "$DATA/PG_VERSION" ]; then
    say "initialising PostgreSQL cluster in $DATA"
    as_pg "$INITDB" -D "$DATA" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >>"$LOG/postgres.log" 2>&1
    cat >>"$DATA/postgresql.conf" <<CONF
max_connections = 200
shared_buffers = 256MB
fsync = on
synchronous_commit = on
logging_collector = off
CONF
  fi
  # Where it listens and how it archives: rewritten at every start, so a cluster made before
  # archiving existed archives from its next start on.
  archive=on
  [ "${BACKUP_REPO_TYPE:-posix}" = none ] && archive=off
  "$(dirname "$0")/backup.sh" settings "$DATA" "$PORT" "$archive"
  say "starting PostgreSQL on $HOST:$PORT"
  touch "$LOG/postgres.log" && chown postgres "$LOG/postgres.log"
  as_pg "$PG_CTL" -D "$DATA" -l "$LOG/postgres.log" -w -t 60 start >/dev/null
  head -1 "$DATA/postmaster.pid" >"$RUN/postgres.pid"
  wait_port "$HOST" "$PORT" postgres 60
  as_pg psql -h "$DATA" -p "$PORT" -d postgres -qtAc \
    "DO \$\$BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$DB_USER') THEN
       CREATE ROLE \"$DB_USER\" LOGIN CREATEDB PASSWORD '$DB_PASS'; END IF; END\$\$;" >/dev/null
  if ! as_pg psql -h "$DATA" -p "$PORT" -d postgres -qtAc "SELECT 1 FROM pg_database WHERE datname = '$DB_NAME'" | grep -q 1; then
    as_pg psql -h "$DATA" -p "$PORT" -d postgres -qc "CREATE DATABASE \"$DB_NAME\" OWNER \"$DB_USER\"" >/dev/null
  fi
  # The platform reads the archiver's progress (pg_stat_archiver, the archive status directory).
  as_pg psql -h "$DATA" -p "$PORT" -d postgres -qc "GRANT pg_monitor TO \"$DB_USER\"" >/dev/null
  "$(dirname "$0")/backup.sh" stanza
  ;;
stop)
  if [ -f "$RUN/postgres.pid" ] && [ -f "$DATA/postmaster.pid" ]; then
    as_pg "$(pg_bin pg_ctl)" -D "$DATA" -m fast -w stop >/dev/null 2>&1 || stop_pid postgres
    rm -f "$RUN/postgres.pid"
    echo "stopped postgres"
  fi
  ;;
status)
  if port_open "$HOST" "$PORT"; then echo "postgres: up on $HOST:$PORT"; else echo "postgres: down"; fi
  ;;
*) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
