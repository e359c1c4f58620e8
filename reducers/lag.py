"""Consumer lag of a streaming query, per partition, from its progress reports.

Spark's Kafka source commits nothing to Kafka: a query's progress carries, per partition, the
offset it has processed up to (``endOffset``) and the log-end offset it saw (``latestOffset``).
Lag in records is their difference; lag in seconds is how long the partition has been behind,
measured from the last report in which it was caught up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class PartitionLag:
    topic: str
    partition: int
    processed: int
    log_end: int
    records: int
    seconds: float
    caught_up_at: int  # epoch ms of the last report with no lag

    def to_json(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "partition": self.partition,
            "processed": self.processed,
            "log_end": self.log_end,
            "records": self.records,
            "seconds": round(self.seconds, 3),
            "caught_up_at": self.caught_up_at,
        }


def offsets(raw: Any) -> dict[str, dict[int, int]]:
    """Spark's offset JSON (``{"topic": {"0": 12}}``) as topic → partition → offset."""
    if not isinstance(raw, dict):
        return {}
    return {
        topic: {int(p): int(o) for p, o in parts.items()} for topic, parts in raw.items() if isinstance(parts, dict)
    }


def partition_lags(
    *,
    end: dict[str, dict[int, int]],
    latest: dict[str, dict[int, int]],
    previous: dict[tuple[str, int], int],
    now_ms: int,
) -> list[PartitionLag]:
    """Lag per partition; ``previous`` maps (topic, partition) → caught-up time from the last report."""
    result = []
    for topic, parts in sorted(latest.items()):
        for partition, log_end in sorted(parts.items()):
            processed = end.get(topic, {}).get(partition, 0)
            records = max(0, log_end - processed)
            caught_up_at = now_ms if records == 0 else previous.get((topic, partition), now_ms)
            result.append(
                PartitionLag(
                    topic=topic,
                    partition=partition,
                    processed=processed,
                    log_end=log_end,
                    records=records,
                    seconds=(now_ms - caught_up_at) / 1000,
                    caught_up_at=caught_up_at,
                )
            )
    return result
