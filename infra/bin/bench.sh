#!/usr/bin/env bash
# `make bench`: start the services the benchmarks need, check the harness at smoke size (the `load`
# tests: every stage end to end and a minute of soak, about 7 minutes; BENCH_CHECK=0 skips them),
# run the benchmarks, stop what this run started. `make bench-check` (`bench.sh --check`) runs the
# smoke tests alone.
. "$(dirname "$0")/lib.sh"
cd "$ROOT"
started=()
cleanup() {
  for ((i = ${#started[@]} - 1; i >= 0; i--)); do "$ROOT/infra/bin/${started[$i]}.sh" stop >/dev/null || true; done
}
trap cleanup EXIT
for svc in kafka redis postgres; do
  if ! "$ROOT/infra/bin/$svc.sh" status | grep -q ': up'; then
    "$ROOT/infra/bin/$svc.sh" start
    started+=("$svc")
  fi
done
if [[ "${1:-}" == --check || "${BENCH_CHECK:-1}" != 0 ]]; then
  say "benchmark harness at smoke size: pytest -m load"
  "$ROOT/.venv/bin/python" -m pytest -m load -q
fi
[[ "${1:-}" == --check ]] && exit 0
"$ROOT/.venv/bin/python" -m bench.run "$@"
