#!/usr/bin/env bash
# Apache Kafka (KRaft, single node) from the Maven-resolved jars in .cache/jars/kafka.
# Usage: kafka.sh start|stop|status
. "$(dirname "$0")/lib.sh"

read -r HOST PORT <<<"$(host_port "$KAFKA_BOOTSTRAP_SERVERS")"
CONTROLLER_PORT=$((PORT + 1))
DATA="$VAR/kafka"
CONF="$VAR/kafka.properties"
CP="$CACHE/jars/kafka/*"
JAVA_OPTS=(-Xms256m -Xmx1g -XX:+UseG1GC -Djava.awt.headless=true
  "-Dlog4j2.configurationFile=$ROOT/infra/conf/log4j2-kafka.yaml")
# The broker's MBeans for Prometheus (the JMX exporter agent, infra/monitoring/kafka-jmx.yml), on
# loopback, on the broker only (not the storage tool); KAFKA_JMX_LISTEN empty runs it without.
AGENT=()
if [ -n "$KAFKA_JMX_LISTEN" ] && [ -f "$KAFKA_JMX_AGENT" ]; then
  AGENT=("-javaagent:$KAFKA_JMX_AGENT=$KAFKA_JMX_LISTEN:$ROOT/infra/monitoring/kafka-jmx.yml")
fi

case "${1:-}" in
start)
  if port_open "$HOST" "$PORT"; then
    echo "kafka: something already listens on $HOST:$PORT, using it"
    exit 0
  fi
  if [ "$HOST" != "127.0.0.1" ] && [ "$HOST" != "localhost" ]; then
    echo "kafka: $KAFKA_BOOTSTRAP_SERVERS is not reachable and is not local" >&2
    exit 1
  fi
  ls "$CACHE"/jars/kafka/kafka_2.13-*.jar >/dev/null 2>&1 || { echo "kafka jars missing: run make deps" >&2; exit 1; }
  mkdir -p "$DATA"
  sed -e "s#@PORT@#$PORT#g" -e "s#@CONTROLLER_PORT@#$CONTROLLER_PORT#g" -e "s#@DATA@#$DATA#g" \
    "$ROOT/infra/conf/kafka.properties" >"$CONF"
  if [ ! -f "$DATA/meta.properties" ]; then
    say "formatting Kafka storage in $DATA"
    java "${JAVA_OPTS[@]}" -cp "$CP" kafka.tools.StorageTool format --standalone \
      -t "$(java -cp "$CP" kafka.tools.StorageTool random-uuid)" -c "$CONF" >>"$LOG/kafka.log" 2>&1
  fi
  say "starting Kafka on $HOST:$PORT"
  start_bg kafka java "${JAVA_OPTS[@]}" "${AGENT[@]}" -cp "$CP" kafka.Kafka "$CONF"
  wait_port "$HOST" "$PORT" kafka 90
  ;;
stop) stop_pid kafka ;;
status)
  if port_open "$HOST" "$PORT"; then echo "kafka: up on $HOST:$PORT"; else echo "kafka: down"; fi
  ;;
*) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
