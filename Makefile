# Sportsbook: `make up` runs the whole stack, `make test` runs every test. See README.md.
SHELL := /bin/bash
.DEFAULT_GOAL := help
PY := .venv/bin/python
BIN := infra/bin
# `make up` is the development stack: demo data (punters, a trader, an operator, the demo catalogue)
# and the login page's demo accounts. `SPORTSBOOK_DEMO=0 make up` (or in .env) leaves them out.
export SPORTSBOOK_DEMO ?= 1

.PHONY: help deps services services-stop topics migrate seed up down status test lint rules contract unit bench bench-check bench-quick lock logs backup restore targets

help:
	@echo "make up       install what is missing, start the whole stack, wait until healthy"
	@echo "make down     stop everything 'make up' started (supervisord and its processes, then the services)"
	@echo "make status   show what runs (supervisord's processes, then the services)"
	@echo "make test     lint, type-check and run every test against real services"
	@echo "make bench    check the harness (make bench-check), run the benchmarks (writes docs/performance.md)"
	@echo "make backup   take a full backup of the local PostgreSQL now (pgBackRest; WAL is archived all along)"
	@echo "make restore TIME='2026-11-28 10:15:00+00' [RESTORE_DIR=... RESTORE_PORT=...]"
	@echo "              restore PostgreSQL as it was at TIME, or TIME=latest: all the archive holds"
	@echo "              (docs/reliability.md; then manage.py after_restore)"
	@echo "make rules    write frontend/src/rules.json from reducers/rules.py (bet limits, the odds ladder)"
	@echo "make contract write frontend/src/contract/ (the browser's API and websocket types) from the pydantic schemas"

deps:
	@$(BIN)/deps.sh all

services: deps
	@$(BIN)/kafka.sh start
	@$(BIN)/redis.sh start
	@$(BIN)/postgres.sh start
	@$(BIN)/mailpit.sh start

services-stop:
	@$(BIN)/mailpit.sh stop
	@$(BIN)/kafka.sh stop
	@$(BIN)/redis.sh stop
	@$(BIN)/postgres.sh stop

topics: services
	@$(PY) manage.py create_topics

migrate: services
	@$(PY) manage.py migrate --no-input -v0

seed: migrate
	@if [ "$(SPORTSBOOK_DEMO)" = 1 ]; then $(PY) manage.py seed_demo --quiet; fi

up: topics seed
	@$(PY) manage.py collectstatic --no-input -v0
	@$(BIN)/app.sh start
	@$(BIN)/wait-healthy.sh 240
	@$(BIN)/nginx.sh start
	@echo
	@echo "Sportsbook      http://127.0.0.1:8000/"
	@echo "Admin           http://127.0.0.1:8000/admin/"
	@echo "Health          http://127.0.0.1:8000/healthz"
	@echo "Through a cache http://127.0.0.1:8080/   (nginx caching the public pages and /api/views/, as a CDN would)"
	@$(BIN)/mailpit.sh address
	@$(BIN)/monitoring.sh addresses
	@echo "Demo punters    alice, bob, carol   staff: trader, operator   password: sportsbook-demo"
	@echo "                staff pages also need a code from an authenticator app holding the demo secret"
	@echo "                SPORTSBOOKDEMOSTAFFTOTPSECRET234 (odds/feed/services/demo.py)"
	@echo "Logs            var/log/ (restarts: var/log/supervisord.log)    stop with: make down"

down:
	@$(BIN)/nginx.sh stop
	@$(BIN)/app.sh stop
	@$(MAKE) -s services-stop

status:
	@$(BIN)/app.sh status
	@$(BIN)/nginx.sh status
	@$(BIN)/kafka.sh status
	@$(BIN)/redis.sh status
	@$(BIN)/postgres.sh status
	@$(BIN)/mailpit.sh status

# Each Prometheus target's health (`make up` starts Prometheus unless MONITORING=0).
targets:
	@$(BIN)/monitoring.sh targets

rules: deps
	$(PY) -m reducers.rules --write

contract: deps
	$(PY) manage.py contract --write

lint: deps
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy .
	.venv/bin/lint-imports
	$(PY) manage.py contract --check
	cd frontend && npx tsc --noEmit

test: deps
	@$(BIN)/test.sh

bench: deps
	@$(BIN)/bench.sh

lock:
	.venv/bin/pip install -q -r requirements.in && .venv/bin/pip freeze | grep -v '^-e' > requirements.lock

logs:
	@tail -n 20 var/log/*.log

bench-check: deps
	@$(BIN)/bench.sh --check

bench-quick: deps
	@.venv/bin/python -m bench.run --quick

.PHONY: soak
soak: deps
	@DURATION=$(or $(DURATION),600) CLIENTS=$(or $(CLIENTS),1000) RATE=$(or $(RATE),1000) \
		CHANNEL_SHARE=$(or $(CHANNEL_SHARE),0.25) $(BIN)/soak.sh

backup:
	@$(BIN)/backup.sh full

restore:
	@test -n "$(TIME)" || { echo "usage: make restore TIME='2026-11-28 10:15:00+00' [RESTORE_DIR=... RESTORE_PORT=...]" >&2; exit 2; }
	@$(BIN)/backup.sh restore "$(TIME)" $(if $(RESTORE_DIR),"$(RESTORE_DIR)" $(RESTORE_PORT))
