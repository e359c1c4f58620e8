#!/usr/bin/env bash
# Redis: use REDIS_URL when something listens there, else run a project-local server.
# Usage: redis.sh start|stop|status
. "$(dirname "$0")/lib.sh"

read -r HOST PORT <<<"$(host_port "$REDIS_URL")"
DATA="$VAR/redis"
# State (market books, channels, counters) must never be evicted silently: at the limit Redis
# refuses writes with an OOM error, which the reducers log and /healthz reports.
REDIS_MAXMEMORY="${REDIS_MAXMEMORY:-1gb}"

case "${1:-}" in
start)
  if port_open "$HOST" "$PORT"; then
    echo "redis: something already listens on $HOST:$PORT, using it"
    exit 0
  fi
  command -v redis-server >/dev/null || { echo "redis-server missing: run make deps" >&2; exit 1; }
  mkdir -p "$DATA"
  say "starting Redis on $HOST:$PORT"
  start_bg redis redis-server --bind 127.0.0.1 --port "$PORT" --dir "$DATA" \
    --save "" --appendonly yes --appendfsync everysec --daemonize no \
    --maxclients 20000 --tcp-backlog 511 --client-output-buffer-limit "pubsub 64mb 16mb 60" \
    --maxmemory "$REDIS_MAXMEMORY" --maxmemory-policy noeviction
  wait_port "$HOST" "$PORT" redis 30
  ;;
stop) stop_pid redis ;;
status)
  if port_open "$HOST" "$PORT"; then echo "redis: up on $HOST:$PORT"; else echo "redis: down"; fi
  ;;
*) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
