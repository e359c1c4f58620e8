"""`make bench`'s feed stage: records/s the idempotent producer (acks=all) sustains, and the
price records every stage that feeds the price topic produces."""

from __future__ import annotations

import time
from decimal import Decimal
from typing import Any

from bench.common import median, namespace
from odds.core.kafka import producer_create
from reducers import topics
from reducers.schemas import PriceUpdate, SelectionPrice

TARGETS = [
    ("feed_records_per_s", "Feed → Kafka (acks=all, idempotent)", "records/s", None),
]


def make_updates(count: int, markets: int, *, first: int = 1) -> list[PriceUpdate]:
    """``count`` price updates over ``markets`` markets from ``first`` on, sequences from 1."""
    now = int(time.time() * 1000)
    seqs = [0] * (first + markets)
    out = []
    for i in range(count):
        m = first + i % markets
        seqs[m] += 1
        price = Decimal(101 + (i * 7919) % 800) / 100
        out.append(
            PriceUpdate(m, seqs[m], "open", (SelectionPrice(1, price), SelectionPrice(2, Decimal("1.90"))), now, now)
        )
    return out


def produce_encoded(
    producer: Any, records: list[tuple[bytes, bytes]], *, timeout: float = 120, poll_each: bool = False
) -> int:
    """Produce (key, value) pairs to the price topic and wait for them; returns how many were not
    acknowledged within ``timeout``. ``poll_each``: serve delivery reports after every record,
    as a feed does."""
    for key, value in records:
        while True:
            try:
                producer.produce(topics.prices(), key=key, value=value)
                break
            except BufferError:
                producer.poll(0.01)
        if poll_each:
            producer.poll(0)
    return int(producer.flush(timeout))


def bench_feed(*, records: int, runs: int) -> dict[str, Any]:
    values = [(u.key(), u.encode()) for u in make_updates(records, 1000)]
    rates = []
    for _ in range(runs):
        with namespace():
            producer = producer_create()
            started = time.perf_counter()
            if produce_encoded(producer, values, timeout=60, poll_each=True):
                raise RuntimeError("feed benchmark: records not acknowledged")
            rates.append(records / (time.perf_counter() - started))
    return {"feed_records_per_s": round(median(rates)), "feed_runs": [round(r) for r in rates], "feed_records": records}
