#!/usr/bin/env bash
# Install what is missing, idempotently: Debian packages, the Python venv, the Maven jars,
# the npm packages. Downloads are cached (pip, ~/.m2, npm) so reruns are fast.
# Usage: deps.sh [system|python|jars|frontend|k6|mailpit|all]
. "$(dirname "$0")/lib.sh"
STAMPS="$CACHE/stamps"
mkdir -p "$STAMPS"

need_apt=()
system() {
  command -v redis-server >/dev/null || need_apt+=(redis-server)
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need_apt+=(postgresql)
  # Backups and WAL archiving of the local PostgreSQL (infra/bin/backup.sh).
  command -v pgbackrest >/dev/null || need_apt+=(pgbackrest)
  command -v chromium >/dev/null || need_apt+=(chromium)
  command -v chromedriver >/dev/null || need_apt+=(chromium-driver)
  command -v java >/dev/null || need_apt+=(openjdk-17-jre-headless)
  command -v mvn >/dev/null || need_apt+=(maven)
  # The caching proxy in front of the site (infra/bin/nginx.sh), the CDN's stand-in.
  [ -x /usr/sbin/nginx ] || need_apt+=(nginx)
  # Prometheus (and promtool, which the tests run on /metrics and on the alert rules), Alertmanager
  # and the Redis and PostgreSQL exporters: `make up` runs them under supervisord
  # (infra/conf/supervisord.monitoring.conf.in), never as the packages' own services.
  command -v promtool >/dev/null || need_apt+=(prometheus)
  command -v prometheus-alertmanager >/dev/null || need_apt+=(prometheus-alertmanager)
  command -v prometheus-redis-exporter >/dev/null || need_apt+=(prometheus-redis-exporter)
  command -v prometheus-postgres-exporter >/dev/null || need_apt+=(prometheus-postgres-exporter)
  # docker-compose.yml is checked with `docker compose config` where the docker CLI exists.
  if command -v docker >/dev/null && ! docker compose version >/dev/null 2>&1; then
    command -v docker-compose >/dev/null || need_apt+=(docker-compose)
  fi
  if [ "${#need_apt[@]}" -gt 0 ]; then
    say "installing Debian packages: ${need_apt[*]}"
    export DEBIAN_FRONTEND=noninteractive
    # Packages must not start their own services (nginx's default site would listen on every
    # address): the project starts what it needs, on loopback, itself.
    local policy=/usr/sbin/policy-rc.d own_policy=""
    if [ ! -e "$policy" ]; then
      printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && own_policy=1
    fi
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >"$LOG/apt.log" 2>&1 || {
      if [ -n "$own_policy" ]; then rm -f "$policy"; fi
      tail -20 "$LOG/apt.log" >&2
      exit 1
    }
    if [ -n "$own_policy" ]; then rm -f "$policy"; fi
    # The policy kept the servers these packages bring from starting now; nor may they start at
    # boot: each package enables its init script and unit, update-rc.d disables both.
    local service
    for service in prometheus prometheus-alertmanager prometheus-redis-exporter prometheus-postgres-exporter; do
      if [[ " ${need_apt[*]} " == *" $service "* ]]; then
        update-rc.d "$service" disable >/dev/null 2>&1 || true
      fi
    done
  fi
}

python_env() {
  local stamp="$STAMPS/python.$(sha1sum "$ROOT/requirements.lock" | cut -c1-12)"
  [ -f "$stamp" ] && [ -x "$ROOT/.venv/bin/python" ] && return 0
  say "installing Python packages into .venv (requirements.lock)"
  [ -x "$ROOT/.venv/bin/python" ] || python3 -m venv "$ROOT/.venv"
  "$ROOT/.venv/bin/pip" install -q --upgrade pip
  "$ROOT/.venv/bin/pip" install -q -r "$ROOT/requirements.lock"
  touch "$stamp"
}

jars() {
  local name
  for name in kafka spark-kafka jmx; do
    local pom="$ROOT/infra/maven/$name/pom.xml"
    local stamp="$STAMPS/jars-$name.$(sha1sum "$pom" | cut -c1-12)"
    [ -f "$stamp" ] && continue
    say "resolving $name jars with Maven"
    rm -rf "$CACHE/jars/$name"
    mvn -q -B -f "$pom" dependency:copy-dependencies -DincludeScope=runtime \
      -DoutputDirectory="$CACHE/jars/$name" >"$LOG/maven-$name.log" 2>&1 || {
      tail -20 "$LOG/maven-$name.log" >&2
      exit 1
    }
    touch "$stamp"
  done
}

frontend() {
  local stamp="$STAMPS/npm.$(sha1sum "$ROOT/frontend/package-lock.json" | cut -c1-12)"
  if [ ! -f "$stamp" ] || [ ! -d "$ROOT/frontend/node_modules" ]; then
    say "installing npm packages (package-lock.json; npm ci rejects the optional platform packages its own lock omits)"
    (cd "$ROOT/frontend" && npm install --no-audit --no-fund --loglevel=error >"$LOG/npm.log" 2>&1) || {
      tail -20 "$LOG/npm.log" >&2
      exit 1
    }
    touch "$stamp"
  fi
  (cd "$ROOT/frontend" && npm run -s build >"$LOG/frontend-build.log" 2>&1) || {
    cat "$LOG/frontend-build.log" >&2
    exit 1
  }
}

# k6, the load generator of the websocket edge benchmark, built from the Go module proxy.
K6_VERSION=v1.8.1
k6() {
  local bin="$CACHE/bin/k6-$K6_VERSION"
  [ -x "$bin" ] && return 0
  command -v go >/dev/null || { echo "k6 is built with Go: install Go first" >&2; exit 1; }
  say "building k6 $K6_VERSION (Go module proxy)"
  mkdir -p "$CACHE/bin" "$CACHE/go-build"
  GOBIN="$CACHE/go-build" GOFLAGS=-buildvcs=false go install "go.k6.io/k6@$K6_VERSION" >"$LOG/k6-build.log" 2>&1 || {
    tail -20 "$LOG/k6-build.log" >&2
    exit 1
  }
  mv "$CACHE/go-build/k6" "$bin"
}

# Mailpit, the mail catcher of `make services` (infra/bin/mailpit.sh), built from the Go module
# proxy at the version lib.sh names.
mailpit() {
  local bin="$MAILPIT_BIN"
  [ -x "$bin" ] && return 0
  command -v go >/dev/null || { echo "Mailpit is built with Go: install Go first" >&2; exit 1; }
  say "building Mailpit $MAILPIT_VERSION (Go module proxy)"
  mkdir -p "$CACHE/bin" "$CACHE/go-build"
  GOBIN="$CACHE/go-build" GOFLAGS=-buildvcs=false go install "github.com/axllent/mailpit@$MAILPIT_VERSION" >"$LOG/mailpit-build.log" 2>&1 || {
    tail -20 "$LOG/mailpit-build.log" >&2
    exit 1
  }
  mv "$CACHE/go-build/mailpit" "$bin"
}

case "${1:-all}" in
system) system ;;
python) python_env ;;
jars) jars ;;
frontend) frontend ;;
k6) k6 ;;
mailpit) mailpit ;;
all) system; python_env; jars; frontend; k6; mailpit ;;
*) echo "usage: $0 [system|python|jars|frontend|k6|mailpit|all]" >&2; exit 2 ;;
esac
