#!/usr/bin/env bash
# Mailpit, the mail catcher of development: the site sends every mail (verification, password
# reset, notices) by SMTP to MAILPIT_SMTP_LISTEN; a person reads them on the web page at
# MAILPIT_UI_LISTEN, the tests through its REST API (/api/v1/...). Loopback only, no SMTP auth.
# Something already listening on the SMTP address is used instead.
# Usage: mailpit.sh start|stop|status|address
. "$(dirname "$0")/lib.sh"

read -r HOST PORT <<<"$(host_port "$MAILPIT_SMTP_LISTEN")"
read -r UI_HOST UI_PORT <<<"$(host_port "$MAILPIT_UI_LISTEN")"
DATA="$VAR/mailpit"
# The newest mails kept; older ones are deleted as new ones arrive.
MAILPIT_MAX_MESSAGES="${MAILPIT_MAX_MESSAGES:-5000}"

case "${1:-}" in
start)
  if port_open "$HOST" "$PORT"; then
    echo "mailpit: something already listens on $HOST:$PORT, using it"
    exit 0
  fi
  [ -x "$MAILPIT_BIN" ] || { echo "Mailpit missing: run make deps" >&2; exit 1; }
  mkdir -p "$DATA"
  say "starting Mailpit: SMTP $HOST:$PORT, web http://$UI_HOST:$UI_PORT/"
  start_bg mailpit "$MAILPIT_BIN" --smtp "$HOST:$PORT" --listen "$UI_HOST:$UI_PORT" \
    --database "$DATA/mailpit.db" --max "$MAILPIT_MAX_MESSAGES" \
    --smtp-auth-accept-any --smtp-auth-allow-insecure --disable-version-check
  wait_port "$HOST" "$PORT" mailpit 30
  wait_port "$UI_HOST" "$UI_PORT" mailpit 30
  ;;
stop) stop_pid mailpit ;;
status)
  if port_open "$HOST" "$PORT"; then echo "mailpit: up on $HOST:$PORT (web http://$UI_HOST:$UI_PORT/)"; else echo "mailpit: down"; fi
  ;;
address) echo "Mail catcher    http://$UI_HOST:$UI_PORT/   (every mail the site sends: SMTP $HOST:$PORT)" ;;
*) echo "usage: $0 start|stop|status|address" >&2; exit 2 ;;
esac
