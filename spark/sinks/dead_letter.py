"""Dead-letter sink: records that failed validation, with the reason in headers."""

from __future__ import annotations

from confluent_kafka import Producer


class DeadLetterSink:
    def __init__(self, *, bootstrap_servers: str, topic: str) -> None:
        self._topic = topic
        self._producer = Producer(
            {
                "bootstrap.servers": bootstrap_servers,
                "acks": "all",
                "enable.idempotence": True,
                "linger.ms": 5,
            }
        )

    def send(self, *, key: bytes | None, value: bytes | None, reason: str, detail: str, origin: str) -> None:
        self._producer.produce(
            self._topic,
            key=key,
            value=value,
            headers=[("reason", reason.encode()), ("detail", detail[:500].encode()), ("origin", origin.encode())],
        )
        self._producer.poll(0)

    def flush(self, timeout: float = 30.0) -> None:
        """Block until every record is acknowledged; raise if some are not."""
        remaining = self._producer.flush(timeout)
        if remaining:
            raise RuntimeError(f"{remaining} dead-letter records not acknowledged within {timeout}s")
