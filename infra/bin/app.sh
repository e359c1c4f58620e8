#!/usr/bin/env bash
# The platform's own processes: Spark reducers, web (ASGI), Celery worker and beat, feed, backups. They run
# under supervisord (config rendered from infra/conf/supervisord.conf.in into var/run/), which
# restarts any that dies; logs are var/log/<name>.log, supervisord's own var/log/supervisord.log.
# Usage: app.sh start|stop|status [name...]
#   start            start supervisord, which starts every process; with it already running,
#                    start whatever is stopped (a running process is left alone)
#   start NAME...    start those processes under the running supervisord
#   stop             stop every process, then supervisord; stop NAME... stops only those
#   status [NAME...] one line per process: "NAME: running (pid N, uptime H:MM:SS)", "NAME: stopped", ...
#   config           render supervisord's configuration and print it
# With CLUSTER=1 the reducers run on a Spark standalone master and two workers, beside a second
# web server (the nginx of `make up` then forwards to both). Unless MONITORING=0, Prometheus,
# Alertmanager and the exporters run beside them (infra/conf/supervisord.monitoring.conf.in).
. "$(dirname "$0")/lib.sh"
cd "$ROOT"
PY="$ROOT/.venv/bin"
export PYTHONUNBUFFERED=1 DJANGO_SETTINGS_MODULE=webapp.settings
export WEB_HOST="${WEB_HOST:-127.0.0.1}" WEB_PORT="${WEB_PORT:-8000}" WEB_WORKERS="${WEB_WORKERS:-2}"
CELERY_CONCURRENCY="${CELERY_CONCURRENCY:-2}"
FEED_RATE="${FEED_RATE:-50}"
FEED_MARKETS="${FEED_MARKETS:-1000}"
ALL=(reducers web worker beat feed backups)
TEMPLATE="$ROOT/infra/conf/supervisord.conf.in"
# CLUSTER=1: the reducers on a Spark standalone master with two workers, and two web servers
# (infra/conf/supervisord.cluster.conf.in).
CLUSTER="${CLUSTER:-}"
CLUSTER_TEMPLATE="$ROOT/infra/conf/supervisord.cluster.conf.in"
MONITORING="${MONITORING:-1}"
MONITORING_TEMPLATE="$ROOT/infra/conf/supervisord.monitoring.conf.in"
# The reducers' driver serves its metrics here (spark/jobs/reducers.py); supervisord's programs
# inherit its environment.
export SPARK_DRIVER_METRICS
if [ "$CLUSTER" = 1 ]; then
  SPARK_MASTER_PORT="${SPARK_MASTER_PORT:-7077}"
  SPARK_MASTER_UI_PORT="${SPARK_MASTER_UI_PORT:-8090}"
  SPARK_WORKER_CORES="${SPARK_WORKER_CORES:-2}"
  SPARK_WORKER_MEMORY="${SPARK_WORKER_MEMORY:-2g}"
  WEB_PORT_2="${WEB_PORT_2:-$((WEB_PORT + 1))}"
  SPARK_HOME="$("$PY/python" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')"
  SPARK_CLASS="$SPARK_HOME/bin/spark-class"
  # supervisord's programs inherit its environment: the reducers submit to the master.
  export SPARK_MASTER="spark://127.0.0.1:$SPARK_MASTER_PORT"
  ALL=(spark-master spark-worker-1 spark-worker-2 reducers web web-2 worker beat feed backups)
fi
if [ "$MONITORING" = 1 ]; then
  ALL+=(processes prometheus alertmanager redis-exporter postgres-exporter flower)
  PROMETHEUS_RETENTION="${PROMETHEUS_RETENTION:-15d}"
  # redis_exporter takes the redis:// URL; behind Sentinel, point REDIS_EXPORTER_ADDR at a server.
  REDIS_EXPORTER_ADDR="${REDIS_EXPORTER_ADDR:-$REDIS_URL}"
  POSTGRES_EXPORTER_DSN="${POSTGRES_EXPORTER_DSN:-$DATABASE_URL$([[ "$DATABASE_URL" == *\?* ]] && echo '&' || echo '?')sslmode=disable}"
  FLOWER_HOST="${FLOWER_LISTEN%:*}" FLOWER_PORT="${FLOWER_LISTEN##*:}"
fi
CONF="$RUN/supervisord.conf"
PIDFILE="$RUN/supervisord.pid"

ctl() { "$PY/supervisorctl" -c "$CONF" "$@"; }

# A process that has not exited (a zombie not yet reaped by its parent has).
running() {
  local state
  state="$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)"
  [ -n "$state" ] && [ "$state" != Z ]
}

supervisord_alive() { [ -f "$PIDFILE" ] && running "$(cat "$PIDFILE")"; }

# The template with every @NAME@ replaced; "%" doubled, as supervisord expands %(...)s in values.
render() {
  local conf name value names=(ROOT VAR RUN LOG PY CELERY_CONCURRENCY FEED_RATE FEED_MARKETS)
  conf="$(<"$TEMPLATE")"
  if [ "$CLUSTER" = 1 ]; then
    conf+=$'\n'"$(<"$CLUSTER_TEMPLATE")"
    names+=(SPARK_CLASS SPARK_HOME SPARK_MASTER_PORT SPARK_MASTER_UI_PORT SPARK_WORKER_CORES SPARK_WORKER_MEMORY WEB_PORT_2)
    # No REST submission server (it would take the fixed port 6066); the master's page on loopback.
    printf 'spark.master.rest.enabled false\nspark.ui.reverseProxy false\n' >"$RUN/spark-cluster.properties"
  fi
  if [ "$MONITORING" = 1 ]; then
    conf+=$'\n'"$(<"$MONITORING_TEMPLATE")"
    names+=(PROCESS_METRICS_LISTEN PROMETHEUS_LISTEN PROMETHEUS_RETENTION ALERTMANAGER_LISTEN REDIS_EXPORTER_LISTEN
      REDIS_EXPORTER_ADDR POSTGRES_EXPORTER_LISTEN POSTGRES_EXPORTER_DSN FLOWER_HOST FLOWER_PORT)
    "$ROOT/infra/bin/monitoring.sh" render
  fi
  for name in "${names[@]}"; do
    value="${!name}"
    conf="${conf//@$name@/${value//%/%%}}"
  done
  if [[ "$conf" =~ @[A-Z_]+@ ]]; then
    echo "$TEMPLATE: no value for ${BASH_REMATCH[0]}" >&2
    exit 1
  fi
  printf '%s\n' "$conf" >"$CONF.tmp"
  mv "$CONF.tmp" "$CONF"
}

# Processes started by an earlier app.sh with a pid file of their own, before supervisord ran
# them: stopped, so that supervisord's copies can take their ports.
stop_unsupervised() {
  local n
  for n in "$@"; do
    if pid_alive "$n"; then stop_pid "$n"; fi
  done
}

# Processes a supervisord of this checkout started, found by its socket in their environment
# (supervisord sets SUPERVISOR_SERVER_URL in each, and their children inherit it): were
# supervisord itself to die, they would run on unsupervised, and a new start would double them.
orphans() {
  grep -lsxzF "SUPERVISOR_SERVER_URL=unix://$RUN/supervisord.sock" /proc/[0-9]*/environ |
    sed 's#^/proc/\([0-9]*\)/environ$#\1#' || true
}

end_orphans() {
  local pids i
  pids="$(orphans)"
  [ -n "$pids" ] || return 0
  echo "stopping processes left running by a supervisord that died:" $pids
  # shellcheck disable=SC2086 # one pid per word
  kill -TERM $pids 2>/dev/null || true
  for i in $(seq 1 60); do
    pids="$(orphans)"
    [ -n "$pids" ] || return 0
    sleep 0.5
  done
  # shellcheck disable=SC2086
  kill -KILL $pids 2>/dev/null || true
}

# supervisorctl start/stop: an already started or stopped process is not an error; a process that
# fails to start stays supervisord's to retry (BACKOFF), so it is reported, not fatal.
ctl_quiet() {
  local out
  out="$(ctl "$@" 2>&1)" || true
  printf '%s\n' "$out" | grep -v -e 'already started' -e 'not running' -e '^$' || true
}

start() {
  stop_unsupervised "${ALL[@]}"
  if supervisord_alive; then
    if [ "$#" -gt 0 ]; then ctl_quiet start "$@"; else ctl_quiet start all; fi
  else
    if [ "$#" -gt 0 ]; then
      echo "supervisord is not running: 'app.sh start' (no names) starts it with every process" >&2
      exit 1
    fi
    end_orphans
    render
    say "starting supervisord (${ALL[*]}); logs in $LOG"
    "$PY/supervisord" -c "$CONF"
    local i
    for i in $(seq 1 120); do
      ctl pid >/dev/null 2>&1 && supervisord_alive && break
      sleep 0.25
    done
    supervisord_alive || { echo "supervisord did not start; see $LOG/supervisord.log" >&2; exit 1; }
  fi
  if [ "$#" -eq 0 ] || [[ " $* " == *" web "* ]]; then
    wait_port "$WEB_HOST" "$WEB_PORT" web 120
  fi
}

stop() {
  if supervisord_alive; then
    if [ "$#" -gt 0 ]; then
      ctl_quiet stop "$@"
    else
      local pid i
      pid="$(cat "$PIDFILE")" # read first: supervisord removes it as it exits
      ctl_quiet stop all
      ctl shutdown >/dev/null || true
      for i in $(seq 1 240); do
        running "$pid" || break
        sleep 0.5
      done
      echo "stopped supervisord and ${ALL[*]}"
    fi
  fi
  [ "$#" -gt 0 ] || end_orphans
  if [ "$#" -gt 0 ]; then stop_unsupervised "$@"; else stop_unsupervised "${ALL[@]}"; fi
}

status() {
  local names=("$@")
  [ "${#names[@]}" -gt 0 ] || names=("${ALL[@]}")
  if ! supervisord_alive; then
    for n in "${names[@]}"; do echo "$n: stopped (supervisord not running)"; done
    return 0
  fi
  # "web   RUNNING   pid 12, uptime 0:01:02" -> "web: running (pid 12, uptime 0:01:02)"
  { ctl status "${names[@]}" || true; } | awk '{
    name = $1; sub(/:$/, "", name); state = tolower($2); $1 = ""; $2 = ""; sub(/^ +/, "")
    print name ": " state ($0 == "" ? "" : ($0 ~ /^\(/ ? " " $0 : " (" $0 ")"))
  }'
}

cmd="${1:-}"
shift || true
case "$cmd" in
start) start "$@" ;;
stop) stop "$@" ;;
status) status "$@" ;;
config) render && cat "$CONF" ;;
*) echo "usage: $0 start|stop|status|config [name...]" >&2; exit 2 ;;
esac
