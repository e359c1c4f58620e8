#!/usr/bin/env bash
# `make soak DURATION=600 CLIENTS=1000 RATE=1000`: the long soak against the running services.
# A quarter of the clients hold subscriber channels (CHANNEL_SHARE), which the command topic
# carries: Kafka runs too. Results go to bench/results/soak.json; exits non-zero on a leak, a
# drop, a channel frame gap or map growth.
. "$(dirname "$0")/lib.sh"
cd "$ROOT"
for svc in kafka redis postgres; do "$ROOT/infra/bin/$svc.sh" start >/dev/null; done
say "soak: ${DURATION:-600} s, ${CLIENTS:-1000} clients (a share of ${CHANNEL_SHARE:-0.25} holding channels), ${RATE:-1000} updates/s"
exec "$ROOT/.venv/bin/python" -m bench.soak --duration "${DURATION:-600}" --clients "${CLIENTS:-1000}" --rate "${RATE:-1000}" \
  --channel-share "${CHANNEL_SHARE:-0.25}"
