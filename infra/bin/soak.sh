#!/usr/bin/env bash
# `make soak DURATION=600 CLIENTS=1000 RATE=1000`: the long soak against the running services.
# Results go to bench/results/soak.json; exits non-zero on a leak, a drop or map growth.
. "$(dirname "$0")/lib.sh"
cd "$ROOT"
for svc in redis postgres; do "$ROOT/infra/bin/$svc.sh" start >/dev/null; done
say "soak: ${DURATION:-600} s, ${CLIENTS:-1000} clients, ${RATE:-1000} updates/s"
exec "$ROOT/.venv/bin/python" -m bench.soak --duration "${DURATION:-600}" --clients "${CLIENTS:-1000}" --rate "${RATE:-1000}"
