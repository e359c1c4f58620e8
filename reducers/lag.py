"""Consumer lag of a streaming query, per partition, from its progress reports.

Spark's Kafka source commits nothing to Kafka: a query's progress carries, per partition, the
offset it has processed up to (``endOffset``) and the log-end offset it saw (``latestOffset``).
Lag in records is their difference; lag in seconds is how long the partition has been behind,
measured from the last report in which it was caught up.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
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


def offset_span(start: Any, end: Any) -> int:
    """Records between two of Spark's offset JSONs of one source; a partition either leaves out
    counts none (where its records began is not known)."""
    begun, ended = offsets(start), offsets(end)
    return sum(
        max(until - begun.get(topic, {}).get(partition, until), 0)
        for topic, parts in ended.items()
        for partition, until in parts.items()
    )


def rows_read_outside_spark(progress: dict[str, Any], *, previous_trigger_ms: int | None) -> dict[str, Any]:
    """The progress report with the rows of Kafka sources that Spark did not scan itself.

    A micro-batch the price reducer reads from Kafka on the driver (spark/sources.py,
    ``RangeReader``) runs no Spark scan, so Spark reports 0 input rows for it although its offsets
    moved. For a source with 0 rows and a non-empty offset span, the span is its rows, and the
    query's rows and rates are counted again from them, as Spark counts them: input rate over the
    time since the previous trigger started (``previous_trigger_ms``), processing rate over this
    trigger's execution. Other reports are returned unchanged.
    """
    sources = progress.get("sources") or []
    added = 0
    for source in sources:
        span = offset_span(json_field(source.get("startOffset")), json_field(source.get("endOffset")))
        if not source.get("numInputRows") and span:
            source["numInputRows"] = span
            added += span
    if not added:
        return progress
    rows = int(progress.get("numInputRows") or 0) + added
    progress["numInputRows"] = rows
    execution_ms = (progress.get("durationMs") or {}).get("triggerExecution") or 0
    progress["processedRowsPerSecond"] = rows * 1000 / execution_ms if execution_ms else 0.0
    started_ms = iso_ms(progress.get("timestamp"))
    if started_ms is not None and previous_trigger_ms is not None and started_ms > previous_trigger_ms:
        progress["inputRowsPerSecond"] = rows * 1000 / (started_ms - previous_trigger_ms)
    return progress


def iso_ms(value: object) -> int | None:
    """Epoch milliseconds of a progress report's ISO timestamp (``…Z``), or None."""
    if not isinstance(value, str):
        return None
    try:
        return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


def json_field(value: object) -> object:
    """Offsets arrive as JSON text in some progress reports and as objects in others."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return None
    return value
