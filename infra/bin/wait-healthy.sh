#!/usr/bin/env bash
# Wait until GET /healthz answers 200; print what is still failing while waiting. Give up early
# when supervisord has given up on a process (FATAL: it failed every start), showing its log.
. "$(dirname "$0")/lib.sh"
url="http://${WEB_HOST:-127.0.0.1}:${WEB_PORT:-8000}/healthz"
timeout="${1:-180}"
start=$(date +%s)
polls=0
while true; do
  polls=$((polls + 1))
  if [ $((polls % 5)) -eq 0 ]; then
    fatal="$("$ROOT/infra/bin/app.sh" status 2>/dev/null | awk -F': ' '$2 ~ /^fatal/ {print $1}')"
    if [ -n "$fatal" ]; then
      echo >&2
      for name in $fatal; do
        echo "$name failed every start and is not retried (FATAL); last lines of $LOG/$name.log:" >&2
        tail -n 20 "$LOG/$name.log" >&2
      done
      exit 1
    fi
  fi
  body="$(curl -s -m 5 -w '\n%{http_code}' "$url" || true)"
  code="${body##*$'\n'}"
  if [ "$code" = "200" ]; then
    echo "healthy after $(($(date +%s) - start))s"
    exit 0
  fi
  if [ $(($(date +%s) - start)) -ge "$timeout" ]; then
    echo "not healthy after ${timeout}s: ${body%$'\n'*}" >&2
    exit 1
  fi
  failing="$(printf '%s' "${body%$'\n'*}" | python3 -c 'import json,sys
try: print(", ".join(json.load(sys.stdin)["failing"]))
except Exception: print("web not answering")' 2>/dev/null)"
  printf '\r  waiting for: %-60s' "$failing"
  sleep 2
done
