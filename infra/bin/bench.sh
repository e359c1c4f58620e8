#!/usr/bin/env bash
# `make bench`: start the services the benchmarks need, run them, stop what this run started.
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
"$ROOT/.venv/bin/python" -m bench.run "$@"
