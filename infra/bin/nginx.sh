#!/usr/bin/env bash
# nginx as the caching proxy in front of the site (infra/conf/nginx.conf.in), on loopback.
# PROXY_LISTEN (127.0.0.1:8080) in front of PROXY_UPSTREAM (127.0.0.1:8000; several web hosts
# comma-separated, balanced round-robin, a host that refuses connections skipped).
# Usage: nginx.sh start|stop|status
. "$(dirname "$0")/lib.sh"

PROXY_LISTEN="${PROXY_LISTEN:-127.0.0.1:8080}"
if [ "${CLUSTER:-}" = 1 ]; then
  # The two web servers of `make up CLUSTER=1` (infra/bin/app.sh).
  PROXY_UPSTREAM="${PROXY_UPSTREAM:-127.0.0.1:${WEB_PORT:-8000},127.0.0.1:$((${WEB_PORT:-8000} + 1))}"
fi
PROXY_UPSTREAM="${PROXY_UPSTREAM:-127.0.0.1:8000}"
# The address nginx connects to the site from (lib.sh: 127.0.0.2 by default; empty: the system's
# choice, for upstreams on other hosts, which then trust this host's address).
if [ -n "$PROXY_BIND" ]; then BIND="proxy_bind $PROXY_BIND;"; else BIND=""; fi
DATA="$VAR/nginx"
read -r HOST PORT <<<"$(host_port "$PROXY_LISTEN")"

case "${1:-}" in
start)
  [ -x /usr/sbin/nginx ] || { echo "nginx missing: run make deps" >&2; exit 1; }
  if pid_alive nginx; then
    echo "nginx already running (pid $(cat "$RUN/nginx.pid"))"
    exit 0
  fi
  mkdir -p "$DATA/cache" "$DATA/tmp"
  sed -e "s|@USER@|$(id -un) $(id -gn)|g" -e "s|@RUN@|$RUN|g" -e "s|@LOG@|$LOG|g" -e "s|@DATA@|$DATA|g" \
    -e "s|@UPSTREAM@|${PROXY_UPSTREAM//,/; server }|g" -e "s|@LISTEN@|$PROXY_LISTEN|g" -e "s|@BIND@|$BIND|g" \
    "$ROOT/infra/conf/nginx.conf.in" >"$DATA/nginx.conf"
  /usr/sbin/nginx -t -q -c "$DATA/nginx.conf" -p "$DATA" 2>>"$LOG/nginx-error.log" || {
    tail -5 "$LOG/nginx-error.log" >&2
    exit 1
  }
  say "starting nginx on $PROXY_LISTEN in front of $PROXY_UPSTREAM"
  start_bg nginx /usr/sbin/nginx -c "$DATA/nginx.conf" -p "$DATA"
  wait_port "$HOST" "$PORT" nginx 30
  ;;
stop) stop_pid nginx ;;
status)
  if pid_alive nginx; then echo "nginx: up on $PROXY_LISTEN"; else echo "nginx: down"; fi
  ;;
*) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
