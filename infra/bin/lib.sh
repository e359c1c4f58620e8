# Shared helpers for the service scripts: paths, pid files, waiting on ports.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VAR="${SPORTSBOOK_VAR:-$ROOT/var}"
CACHE="$ROOT/.cache"
RUN="$VAR/run"
LOG="$VAR/log"
mkdir -p "$RUN" "$LOG"

if [ -f "$ROOT/.env" ]; then
  set -a
  # shellcheck disable=SC1091
  . "$ROOT/.env"
  set +a
fi

# The loopback address `make up`'s nginx reaches the site from, and the only proxy whose
# X-Forwarded-For the site believes (a direct client on 127.0.0.1 cannot choose its address).
PROXY_BIND="${PROXY_BIND-127.0.0.2}"
export TRUSTED_PROXIES="${TRUSTED_PROXIES-$PROXY_BIND}"
KAFKA_BOOTSTRAP_SERVERS="${KAFKA_BOOTSTRAP_SERVERS:-127.0.0.1:9092}"
REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379/0}"
DATABASE_URL="${DATABASE_URL:-postgres://sportsbook:sportsbook@127.0.0.1:5432/sportsbook}"

# PostgreSQL's programs (initdb, pg_ctl, ...) of the installed server version.
pg_bin() {
  local d
  for d in /usr/lib/postgresql/*/bin; do
    [ -x "$d/$1" ] && { echo "$d/$1"; return 0; }
  done
  command -v "$1"
}

# Run as the 'postgres' system user (PostgreSQL and pgBackRest refuse root); as is when already it.
as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
# Monitoring (infra/bin/monitoring.sh, infra/conf/supervisord.monitoring.conf.in): where each
# server and exporter listens, loopback only.
PROMETHEUS_LISTEN="${PROMETHEUS_LISTEN:-127.0.0.1:9090}"
# Not 9093: the broker's controller listens on its port + 1 (9093 for the default 9092).
ALERTMANAGER_LISTEN="${ALERTMANAGER_LISTEN:-127.0.0.1:9095}"
REDIS_EXPORTER_LISTEN="${REDIS_EXPORTER_LISTEN:-127.0.0.1:9121}"
POSTGRES_EXPORTER_LISTEN="${POSTGRES_EXPORTER_LISTEN:-127.0.0.1:9187}"
KAFKA_JMX_LISTEN="${KAFKA_JMX_LISTEN-127.0.0.1:9404}"
FLOWER_LISTEN="${FLOWER_LISTEN:-127.0.0.1:5555}"
SPARK_DRIVER_METRICS="${SPARK_DRIVER_METRICS:-127.0.0.1:9465}"
PROCESS_METRICS_LISTEN="${PROCESS_METRICS_LISTEN:-127.0.0.1:9466}"
# The mail catcher (infra/bin/mailpit.sh): the site sends its mail to its SMTP port; its web page
# and REST API show every mail sent, loopback only.
MAILPIT_SMTP_LISTEN="${MAILPIT_SMTP_LISTEN:-127.0.0.1:1025}"
MAILPIT_UI_LISTEN="${MAILPIT_UI_LISTEN:-127.0.0.1:8025}"
MAILPIT_VERSION=v1.33.1
MAILPIT_BIN="$CACHE/bin/mailpit-$MAILPIT_VERSION"
# The Prometheus JMX exporter agent the broker runs with (infra/maven/jmx, `deps.sh jars`).
KAFKA_JMX_AGENT="$CACHE/jars/jmx/jmx_prometheus_javaagent-1.0.1.jar"

say() { printf '\033[1m==>\033[0m %s\n' "$*"; }

# host_port URL-or-host:port -> "host port"
host_port() {
  local s="${1#*://}"
  s="${s#*@}"
  s="${s%%/*}"
  s="${s%%,*}"
  echo "${s%:*} ${s##*:}"
}

port_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

wait_port() {
  local host="$1" port="$2" what="$3" timeout="${4:-60}" i=0
  until port_open "$host" "$port"; do
    i=$((i + 1))
    if [ "$i" -gt $((timeout * 4)) ]; then
      echo "$what did not open $host:$port within ${timeout}s; see $LOG" >&2
      return 1
    fi
    sleep 0.25
  done
}

pid_alive() { [ -f "$RUN/$1.pid" ] && kill -0 "$(cat "$RUN/$1.pid")" 2>/dev/null; }

# start_bg NAME CMD... : start a process in its own session, log to var/log/NAME.log, pid to var/run/NAME.pid
start_bg() {
  local name="$1"
  shift
  if pid_alive "$name"; then
    echo "$name already running (pid $(cat "$RUN/$name.pid"))"
    return 0
  fi
  setsid "$@" >>"$LOG/$name.log" 2>&1 </dev/null &
  echo $! >"$RUN/$name.pid"
}

# stop_pid NAME : TERM the process group, then KILL after a grace period
stop_pid() {
  local name="$1" pid i
  [ -f "$RUN/$name.pid" ] || return 0
  pid="$(cat "$RUN/$name.pid")"
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for i in $(seq 1 60); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.25
    done
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$RUN/$name.pid"
  echo "stopped $name"
}
