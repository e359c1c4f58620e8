#!/usr/bin/env bash
# nginx in front of the web servers, in the foreground of its container (docker-compose.cluster.yml).
# infra/bin/nginx.sh renders infra/conf/nginx.conf.in from PROXY_LISTEN and PROXY_UPSTREAM (a
# comma list of host:port), checks it and starts nginx; this script lives as long as nginx does.
# Docker's stop is passed on as SIGQUIT: nginx stops accepting and lets open requests finish
# (websockets still open when the stop grace period ends are cut, and their clients reconnect).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
"$here/../bin/nginx.sh" start
pid="$(cat "${SPORTSBOOK_VAR:?}/run/nginx.pid")"
stopping=0
trap 'stopping=1; kill -QUIT "$pid" 2>/dev/null || true' TERM INT
while kill -0 "$pid" 2>/dev/null; do
  sleep 1 &
  wait $! || true
done
[ "$stopping" = 1 ] && exit 0
echo "nginx exited; the end of ${SPORTSBOOK_VAR}/log/nginx-error.log:" >&2
tail -n 20 "${SPORTSBOOK_VAR}/log/nginx-error.log" >&2 || true
exit 1
