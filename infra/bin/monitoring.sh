#!/usr/bin/env bash
# Prometheus and Alertmanager of `make up`: their configurations, rendered from the templates in
# infra/monitoring/ into var/run/monitoring/, and their checks. supervisord runs the servers and
# the exporters (infra/conf/supervisord.monitoring.conf.in; app.sh renders through here first).
# Usage: monitoring.sh render|check|test|targets|addresses
#   render   write prometheus.yml, alertmanager.yml and the bearer-token files into var/run/monitoring/
#   check    render, then `promtool check config` (the rules it loads included) and `amtool check-config`
#   test     `promtool test rules` on every file of infra/monitoring/tests/
#   targets  each scrape target's health as the running Prometheus sees it
#   addresses  where Prometheus, Alertmanager and the on-call page are (what `make up` prints)
# Settings (environment or .env): PROMETHEUS_SCRAPE_INTERVAL (15s), PROMETHEUS_EVALUATION_INTERVAL
# (15s), PROMETHEUS_RULES_DIR (infra/monitoring/rules), ALERT_GROUP_WAIT (10s),
# ALERT_GROUP_INTERVAL (1m), ALERTS_WEBHOOK_URL (the site's /ops/alerts/webhook), the *_LISTEN
# addresses of infra/bin/lib.sh.
. "$(dirname "$0")/lib.sh"
MON="$ROOT/infra/monitoring"
OUT="$RUN/monitoring"
WEB_HOST="${WEB_HOST:-127.0.0.1}" WEB_PORT="${WEB_PORT:-8000}"
SCRAPE_INTERVAL="${PROMETHEUS_SCRAPE_INTERVAL:-15s}"
SCRAPE_TIMEOUT="${PROMETHEUS_SCRAPE_TIMEOUT:-10s}"
EVALUATION_INTERVAL="${PROMETHEUS_EVALUATION_INTERVAL:-15s}"
RULES="${PROMETHEUS_RULES_DIR:-$MON/rules}"
ALERT_GROUP_WAIT="${ALERT_GROUP_WAIT:-10s}"
ALERT_GROUP_INTERVAL="${ALERT_GROUP_INTERVAL:-1m}"
ALERTS_WEBHOOK_URL="${ALERTS_WEBHOOK_URL:-http://$WEB_HOST:$WEB_PORT/ops/alerts/webhook}"
NAMESPACE="${SPORTSBOOK_NAMESPACE:-sb}"
# Every web host is a target (CLUSTER=1 runs a second one on the next port).
WEB_TARGETS="\"$WEB_HOST:$WEB_PORT\""
if [ "${CLUSTER:-}" = 1 ]; then WEB_TARGETS+=", \"$WEB_HOST:${WEB_PORT_2:-$((WEB_PORT + 1))}\""; fi

# TEMPLATE OUT: the template with every @NAME@ replaced by the value of $NAME.
render_template() {
  local text name value
  text="$(<"$1")"
  for name in RUN RULES NAMESPACE SCRAPE_INTERVAL SCRAPE_TIMEOUT EVALUATION_INTERVAL WEB_TARGETS \
    ALERTMANAGER_LISTEN PROMETHEUS_LISTEN REDUCERS_TARGETS PROCESS_METRICS_LISTEN FLOWER_LISTEN \
    KAFKA_TARGETS REDIS_EXPORTER_LISTEN POSTGRES_EXPORTER_LISTEN ALERT_GROUP_WAIT ALERT_GROUP_INTERVAL \
    ALERTS_WEBHOOK_URL; do
    value="${!name}"
    text="${text//@$name@/$value}"
  done
  if [[ "$text" =~ @[A-Z_]+@ ]]; then
    echo "$1: no value for ${BASH_REMATCH[0]}" >&2
    exit 1
  fi
  printf '%s\n' "$text" >"$2.tmp"
  mv "$2.tmp" "$2"
}

# A bearer token for Prometheus or Alertmanager to send, in a file only the owner reads (empty:
# the site then answers loopback clients only, in development).
token_file() {
  (umask 077 && printf '%s' "$2" >"$OUT/$1.tmp" && mv "$OUT/$1.tmp" "$OUT/$1")
}

render() {
  mkdir -p "$OUT"
  # The driver's and the broker's endpoints can be turned off (SPARK_DRIVER_METRICS=off,
  # KAFKA_JMX_LISTEN empty): their jobs then have no target.
  REDUCERS_TARGETS="" KAFKA_TARGETS=""
  if [ -n "$SPARK_DRIVER_METRICS" ] && [ "$SPARK_DRIVER_METRICS" != off ]; then REDUCERS_TARGETS="\"$SPARK_DRIVER_METRICS\""; fi
  if [ -n "$KAFKA_JMX_LISTEN" ]; then KAFKA_TARGETS="\"$KAFKA_JMX_LISTEN\""; fi
  render_template "$MON/prometheus.yml.in" "$OUT/prometheus.yml"
  render_template "$MON/alertmanager.yml.in" "$OUT/alertmanager.yml"
  token_file metrics-token "${METRICS_TOKEN:-}"
  token_file alerts-token "${ALERTS_WEBHOOK_TOKEN:-}"
}

check() {
  render
  promtool check config "$OUT/prometheus.yml"
  amtool check-config "$OUT/alertmanager.yml"
}

test_rules() {
  (cd "$MON/tests" && promtool test rules ./*.yml)
}

targets() {
  "$ROOT/.venv/bin/python" - "http://$PROMETHEUS_LISTEN" <<'PY'
import json, sys, urllib.request
with urllib.request.urlopen(f"{sys.argv[1]}/api/v1/targets?state=active", timeout=5) as answer:
    found = json.load(answer)["data"]["activeTargets"]
for target in sorted(found, key=lambda t: (t["labels"]["job"], t["scrapeUrl"])):
    error = f"  {target['lastError']}" if target["lastError"] else ""
    print(f"{target['labels']['job']:<13} {target['health']:<8} {target['scrapeUrl']}{error}")
PY
}

addresses() {
  [ "${MONITORING:-1}" = 1 ] || return 0
  echo "Prometheus      http://$PROMETHEUS_LISTEN/   (alerts: /alerts; targets: infra/bin/monitoring.sh targets)"
  echo "Alertmanager    http://$ALERTMANAGER_LISTEN/"
  echo "On call         http://$WEB_HOST:$WEB_PORT/ops/oncall   (incidents from Alertmanager; runbooks: docs/runbooks.md)"
}

case "${1:-}" in
render) render ;;
addresses) addresses ;;
check) check ;;
test) test_rules ;;
targets) targets ;;
*) echo "usage: $0 render|check|test|targets|addresses" >&2; exit 2 ;;
esac
