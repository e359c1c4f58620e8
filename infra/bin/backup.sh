#!/usr/bin/env bash
# Backups of the project-local PostgreSQL with pgBackRest: full backups, continuous WAL archiving
# into a repository (var/backup by default; another disk or object storage in production), and
# point-in-time restores. Runs pgBackRest as the 'postgres' system user. See docs/reliability.md.
# Usage: backup.sh COMMAND
#   settings DIR PORT ARCHIVE   write DIR/sportsbook.conf: where the cluster listens and whether
#                               it archives WAL (on|off); postgres.sh runs it at every start
#   stanza                      create the repository's stanza (idempotent), take the first full
#                               backup when the repository holds none
#   full                        take a full backup now (older ones expire by BACKUP_RETENTION_FULL)
#   info                        the repository's contents as pgBackRest's JSON
#   check                       switch to a new WAL segment and wait until the archive holds it
#   restore TIME [DIR [PORT]]   restore the newest backup before TIME into DIR (default: the
#                               project's data directory, which must not hold a cluster), replay
#                               the archived WAL up to TIME (or all of it: TIME=latest), start
#                               PostgreSQL there and promote it
# Configuration (environment or .env; README's configuration table):
#   BACKUP_REPO_TYPE      posix (default), s3, or none (no archiving, no backups)
#   BACKUP_REPO_PATH      posix: the repository's directory (default var/backup); s3: the path in the bucket
#   BACKUP_S3_BUCKET, BACKUP_S3_ENDPOINT, BACKUP_S3_REGION, BACKUP_S3_KEY, BACKUP_S3_KEY_SECRET,
#   BACKUP_S3_URI_STYLE   object storage (s3)
#   BACKUP_CIPHER_PASS    encrypt the repository (aes-256-cbc) with this passphrase
#   BACKUP_RETENTION_FULL full backups kept (default 2); WAL older than the oldest one expires
#   BACKUP_ARCHIVE_TIMEOUT_S  a WAL segment is archived at least this often while anything is written (default 60)
. "$(dirname "$0")/lib.sh"

read -r HOST PORT <<<"$(host_port "$DATABASE_URL")"
DATA="$VAR/postgres"
STANZA="${BACKUP_STANZA:-sportsbook}"
REPO_TYPE="${BACKUP_REPO_TYPE:-posix}"
REPO_PATH="${BACKUP_REPO_PATH:-$VAR/backup}"
RETENTION_FULL="${BACKUP_RETENTION_FULL:-2}"
ARCHIVE_TIMEOUT_S="${BACKUP_ARCHIVE_TIMEOUT_S:-60}"
CONF="$RUN/pgbackrest.conf"

pgbackrest_bin() { command -v pgbackrest || { echo "pgBackRest missing: run make deps" >&2; exit 1; }; }

# Render pgBackRest's configuration (owner-only: it may hold object-storage keys and the cipher).
configure() {
  local text
  text="[global]
repo1-type=$REPO_TYPE
repo1-path=$REPO_PATH
repo1-retention-full=$RETENTION_FULL
repo1-retention-full-type=count
compress-type=zst
compress-level=3
start-fast=y
process-max=2
archive-async=y
archive-get-queue-max=1GiB
archive-timeout=120
lock-path=$RUN/pgbackrest
spool-path=$RUN/pgbackrest-spool
log-path=$LOG/pgbackrest
log-level-file=info
log-level-console=warn"
  if [ "$REPO_TYPE" = s3 ]; then
    text+="
repo1-s3-bucket=${BACKUP_S3_BUCKET:?BACKUP_S3_BUCKET is required with BACKUP_REPO_TYPE=s3}
repo1-s3-endpoint=${BACKUP_S3_ENDPOINT:?BACKUP_S3_ENDPOINT is required with BACKUP_REPO_TYPE=s3}
repo1-s3-region=${BACKUP_S3_REGION:-us-east-1}
repo1-s3-key=${BACKUP_S3_KEY:?BACKUP_S3_KEY is required with BACKUP_REPO_TYPE=s3}
repo1-s3-key-secret=${BACKUP_S3_KEY_SECRET:?BACKUP_S3_KEY_SECRET is required with BACKUP_REPO_TYPE=s3}
repo1-s3-uri-style=${BACKUP_S3_URI_STYLE:-host}"
  fi
  if [ -n "${BACKUP_CIPHER_PASS:-}" ]; then
    text+="
repo1-cipher-type=aes-256-cbc
repo1-cipher-pass=$BACKUP_CIPHER_PASS"
  fi
  text+="

[$STANZA]
pg1-path=$DATA
pg1-port=$PORT
pg1-socket-path=$DATA
"
  mkdir -p "$RUN/pgbackrest" "$RUN/pgbackrest-spool" "$LOG/pgbackrest"
  chown postgres:postgres "$RUN/pgbackrest" "$RUN/pgbackrest-spool" "$LOG/pgbackrest" 2>/dev/null || true
  if [ "$REPO_TYPE" = posix ]; then
    mkdir -p "$REPO_PATH"
    chown postgres:postgres "$REPO_PATH" 2>/dev/null || true
    chmod 750 "$REPO_PATH"
  fi
  if [ ! -f "$CONF" ] || [ "$(cat "$CONF")" != "$text" ]; then
    (umask 077 && printf '%s' "$text" >"$CONF")
    chown postgres:postgres "$CONF" 2>/dev/null || true
  fi
}

pgbr() { as_pg "$(pgbackrest_bin)" "--config=$CONF" "--stanza=$STANZA" "$@"; }

enabled() { [ "$REPO_TYPE" != none ]; }

require_enabled() {
  enabled || { echo "backups are off (BACKUP_REPO_TYPE=none)" >&2; exit 1; }
}

# The cluster in $DATA is this project's and runs: backups read its files, so an external
# PostgreSQL (one already listening when postgres.sh started) is out of their reach.
require_local() {
  if [ ! -f "$DATA/postmaster.pid" ] || ! kill -0 "$(head -1 "$DATA/postmaster.pid")" 2>/dev/null; then
    echo "no project-local PostgreSQL runs in $DATA: pgBackRest backs up the cluster whose files it" >&2
    echo "can read; an external server is backed up where it runs (docs/reliability.md)" >&2
    exit 1
  fi
}

# settings DIR PORT ARCHIVE: the part of the cluster's configuration this project owns.
settings() {
  local dir="$1" port="$2" archive="$3" command="''"
  if [ "$archive" = on ]; then
    configure
    command="'$(pgbackrest_bin) --config=$CONF --stanza=$STANZA archive-push %p'"
  fi
  cat >"$dir/sportsbook.conf" <<CONF
# Written by infra/bin/backup.sh at every start: edits here are lost.
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir'
wal_level = replica
archive_mode = $archive
archive_command = $command
archive_timeout = ${ARCHIVE_TIMEOUT_S}s
CONF
  chown postgres:postgres "$dir/sportsbook.conf"
  grep -q "^include_if_exists = 'sportsbook.conf'" "$dir/postgresql.conf" ||
    echo "include_if_exists = 'sportsbook.conf'" >>"$dir/postgresql.conf"
}

psql_at() { as_pg "$(pg_bin psql)" -h "$1" -p "$2" -d postgres -qtAc "$3"; }

# Create the stanza unless it exists: stanza-create takes the archive's lock, which the
# asynchronous archiver may hold while PostgreSQL pushes WAL.
stanza_ensure() {
  local attempt
  for attempt in 1 2 3 4 5 6 7 8 9 10; do
    pgbr --output=json info | grep -q '"message":"missing stanza path"' || return 0
    pgbr stanza-create >/dev/null 2>&1 && return 0
    sleep 1
  done
  pgbr stanza-create >/dev/null
}

has_backup() {
  pgbr --output=json info | grep -q '"label"'
}

full() {
  require_enabled
  require_local
  configure
  if [ "$(psql_at "$DATA" "$PORT" 'SHOW archive_mode')" = off ]; then
    echo "PostgreSQL in $DATA does not archive its WAL yet (it was started before archiving was" >&2
    echo "configured): restart it (make down && make up), then back up" >&2
    exit 1
  fi
  stanza_ensure
  say "full backup of $DATA into the $REPO_TYPE repository $REPO_PATH"
  local started=$SECONDS
  pgbr --type=full backup
  echo "backup: full backup done in $((SECONDS - started)) s"
}

stanza() {
  enabled || return 0
  configure
  stanza_ensure
  if ! has_backup; then
    full
  fi
}

# A timestamp GNU date understands, as UTC with microseconds (unambiguous for PostgreSQL).
utc_time() {
  date -u -d "$1" '+%Y-%m-%d %H:%M:%S.%6N+00' 2>/dev/null ||
    { echo "not a time: '$1' (e.g. '2026-11-28 10:15:00+00')" >&2; exit 2; }
}

restore() {
  require_enabled
  local target dir="${2:-$DATA}" port="${3:-$PORT}" archive=off started=$SECONDS
  [ -n "${1:-}" ] || { echo "usage: backup.sh restore TIME|latest [DIR [PORT]]  (make restore TIME=...)" >&2; exit 2; }
  # 'latest': every transaction the archive holds (a lost disk); a time: the moment before a mistake.
  local recovery=(--type=default)
  target=latest
  if [ "$1" != latest ]; then
    target="$(utc_time "$1")"
    recovery=(--type=time "--target=$target" --target-action=promote)
  fi
  if [ -f "$dir/PG_VERSION" ]; then
    echo "$dir holds a cluster already. Stop it (make down) and move it aside (mv $dir $dir.damaged)," >&2
    echo "or restore beside it: make restore TIME='$1' RESTORE_DIR=/path RESTORE_PORT=5433" >&2
    exit 1
  fi
  if port_open 127.0.0.1 "$port"; then
    echo "something listens on 127.0.0.1:$port: choose a free RESTORE_PORT" >&2
    exit 1
  fi
  # Restored in place, the cluster is the project's again and archives on, on a new timeline;
  # beside a running one it archives nothing until an operator makes it the primary.
  [ "$dir" = "$DATA" ] && archive=on
  configure
  mkdir -p "$dir"
  chown postgres:postgres "$dir"
  chmod 700 "$dir"
  say "restoring $STANZA to $target into $dir"
  pgbr --pg1-path="$dir" "${recovery[@]}" restore
  # The backup copied the socket's lock file (the socket lives in the data directory): it names
  # the postmaster that ran then, and PostgreSQL refuses to start while that PID exists.
  rm -f "$dir"/.s.PGSQL.*.lock
  settings "$dir" "$port" "$archive"
  touch "$LOG/postgres-restore.log" && chown postgres "$LOG/postgres-restore.log"
  say "replaying the archived WAL up to $target"
  if ! as_pg "$(pg_bin pg_ctl)" -D "$dir" -l "$LOG/postgres-restore.log" -w -t 3600 start >/dev/null; then
    echo "PostgreSQL did not start in $dir; the end of $LOG/postgres-restore.log:" >&2
    tail -n 25 "$LOG/postgres-restore.log" >&2
    exit 1
  fi
  local waited=0
  until [ "$(psql_at "$dir" "$port" 'SELECT pg_is_in_recovery()')" = f ]; do
    waited=$((waited + 1))
    if [ "$waited" -gt 36000 ]; then
      echo "PostgreSQL in $dir did not finish recovery; see $LOG/postgres-restore.log" >&2
      exit 1
    fi
    sleep 0.1
  done
  echo "restore: $dir runs on 127.0.0.1:$port, recovered to $target, last transaction replayed at" \
    "$(psql_at "$dir" "$port" 'SELECT pg_last_xact_replay_timestamp()'), in $((SECONDS - started)) s"
  if [ "$dir" = "$DATA" ]; then
    head -1 "$dir/postmaster.pid" >"$RUN/postgres.pid"
    # The promoted cluster writes a new timeline: a full backup gives it a base of its own.
    full
    echo "restore: next, .venv/bin/python manage.py after_restore (docs/reliability.md)"
  else
    echo "restore: archiving is off there; stop it with: $(pg_bin pg_ctl) -D $dir stop (as postgres)"
  fi
}

check() {
  require_enabled
  require_local
  configure
  pgbr check
}

case "${1:-}" in
settings) settings "$2" "$3" "$4" ;;
stanza) stanza ;;
full) full ;;
info) require_enabled; configure; pgbr --output=json info ;;
check) check ;;
restore) shift; restore "$@" ;;
*) echo "usage: $0 settings|stanza|full|info|check|restore" >&2; exit 2 ;;
esac
