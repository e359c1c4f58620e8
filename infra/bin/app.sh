#!/usr/bin/env bash
# The platform's own processes: web (ASGI), Celery worker and beat, feed, Spark reducers.
# Usage: app.sh start|stop|status [name...]
. "$(dirname "$0")/lib.sh"
cd "$ROOT"
PY="$ROOT/.venv/bin"
export PYTHONUNBUFFERED=1 DJANGO_SETTINGS_MODULE=webapp.settings

WEB_HOST="${WEB_HOST:-127.0.0.1}"
WEB_PORT="${WEB_PORT:-8000}"
ALL=(reducers web worker beat feed)

start_one() {
  case "$1" in
  reducers) start_bg reducers "$PY/python" -m spark.jobs.reducers ;;
  web)
    start_bg web "$PY/uvicorn" webapp.asgi:application --host "$WEB_HOST" --port "$WEB_PORT" \
      --workers "${WEB_WORKERS:-2}" --no-access-log --ws websockets --lifespan off
    wait_port "$WEB_HOST" "$WEB_PORT" web 60
    ;;
  worker) start_bg worker "$PY/celery" -A webapp worker -l INFO --concurrency "${CELERY_CONCURRENCY:-2}" -n "worker@%h" ;;
  beat) start_bg beat "$PY/celery" -A webapp beat -l INFO -s "$VAR/celerybeat-schedule" ;;
  feed) start_bg feed "$PY/python" manage.py run_feed --rate "${FEED_RATE:-50}" --markets "${FEED_MARKETS:-1000}" ;;
  *) echo "unknown process $1" >&2; exit 2 ;;
  esac
}

cmd="${1:-}"
shift || true
names=("$@")
[ "${#names[@]}" -gt 0 ] || names=("${ALL[@]}")

case "$cmd" in
start) for n in "${names[@]}"; do start_one "$n"; done ;;
stop)
  for ((i = ${#names[@]} - 1; i >= 0; i--)); do stop_pid "${names[$i]}"; done
  ;;
status)
  for n in "${names[@]}"; do
    if pid_alive "$n"; then echo "$n: running (pid $(cat "$RUN/$n.pid"))"; else echo "$n: stopped"; fi
  done
  ;;
*) echo "usage: $0 start|stop|status [name...]" >&2; exit 2 ;;
esac
