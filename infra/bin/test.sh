#!/usr/bin/env bash
# `make test`: lint and type-check, start the real services this run needs (Kafka, Redis,
# PostgreSQL and the mail catcher, reusing any that already run), run the frontend and Python
# suites, then stop only what this run started.
. "$(dirname "$0")/lib.sh"
cd "$ROOT"
PY="$ROOT/.venv/bin/python"

started=()
cleanup() {
  for ((i = ${#started[@]} - 1; i >= 0; i--)); do "$ROOT/infra/bin/${started[$i]}.sh" stop >/dev/null || true; done
}
trap cleanup EXIT

for svc in kafka redis postgres mailpit; do
  if ! "$ROOT/infra/bin/$svc.sh" status | grep -q ': up'; then
    "$ROOT/infra/bin/$svc.sh" start
    started+=("$svc")
  fi
done

say "lint: ruff, mypy, import layers, tsc"
"$PY" -m ruff check .
"$PY" -m ruff format --check .
"$PY" -m mypy .
(cd "$ROOT" && .venv/bin/lint-imports --no-cache)
(cd frontend && npx tsc --noEmit)

say "frontend unit tests (vitest)"
(cd frontend && npx vitest run)

say "Python tests: unit, integration (Kafka, Redis, PostgreSQL, Spark), browser (Chromium)"
# Every test's time lands in var/log/pytest.xml (JUnit XML) for finding what makes the suite long.
"$PY" -m pytest --durations=40 --junitxml="$LOG/pytest.xml" "$@"
