"""Reads for the trader and operator pages: markets, liability, subscriber channels, settlement
progress and the metrics history."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import redis
from confluent_kafka import TopicPartition
from django.conf import settings
from django.db.models import Count, Prefetch, Q
from django.db.models.functions import Mod
from django.utils import timezone

from odds.betting.models import Bet
from odds.catalogue.models import Event, Market, Selection
from odds.core.kafka import message_headers, reader_create
from odds.core.metrics import topic_partitions
from odds.ops.models import MetricSample
from reducers import topics
from reducers.dead_letters import HEADER_REPLAYS, SOURCES
from reducers.partitioning import LIBRDKAFKA_DEFAULT, market_partition
from reducers.rules import BOOK_CURRENCY
from reducers.schemas import describe_price_record
from store.channels import channels_recent
from store.clients import PRODUCER_DEFAULTS, redis_client
from store.liability import BookStore


@functools.cache
def _redis() -> redis.Redis:
    return redis_client(settings.REDIS_URL)


def trading_events(*, limit: int = 100, include_settled: bool = False) -> list[Event]:
    """Events with their markets and selections, soonest first, for the market management page."""
    markets = Market.objects.order_by("display_order", "id").prefetch_related(
        Prefetch("selections", queryset=Selection.objects.order_by("display_order", "id"))
    )
    if not include_settled:
        markets = markets.exclude(status=Market.Status.SETTLED)
    events = (
        Event.objects.select_related("competition__sport")
        .filter(markets__isnull=False)
        .distinct()
        .order_by("starts_at", "id")
    )
    if not include_settled:
        events = events.filter(markets__status__in=[Market.Status.OPEN, Market.Status.SUSPENDED, Market.Status.CLOSED])
    return list(events.prefetch_related(Prefetch("markets", queryset=markets))[:limit])


def market_settlement_progress(*, market_id: int) -> dict[str, Any]:
    """How many of the bets with a leg in the market are settled (not open any more)."""
    market = Market.objects.get(id=market_id)
    counts = (
        Bet.objects.filter(legs__market_id=market_id)
        .exclude(status=Bet.Status.REJECTED)
        .aggregate(
            total=Count("id", distinct=True),
            open=Count("id", distinct=True, filter=Q(status__in=Bet.OPEN_STATUSES)),
        )
    )
    total, still_open = counts["total"] or 0, counts["open"] or 0
    return {
        "market_id": market_id,
        "market_status": market.status,
        "total": total,
        "settled": total - still_open,
        "done": market.status == Market.Status.SETTLED and still_open == 0,
    }


def liability_top(*, limit: int = 50) -> list[dict[str, Any]]:
    """Selections by open liability (the liability reducer's aggregate), largest first, in the
    book's currency: every wallet's exposure converted at the operator's current rates."""
    ranked = BookStore(_redis()).riskiest_selections(limit=limit)
    if not ranked:
        return []
    selections = Selection.objects.select_related("market__event").in_bulk([s for s, _, _ in ranked])
    rows = []
    for selection_id, pence, bets in ranked:
        selection = selections.get(selection_id)
        rows.append(
            {
                "selection_id": selection_id,
                "selection": selection.name if selection else f"#{selection_id}",
                "market_id": selection.market_id if selection else None,
                "market": selection.market.name if selection else "",
                "event": selection.market.event.name if selection else "",
                "price": str(selection.price) if selection else "",
                "liability": str(Decimal(pence).scaleb(-2)),
                "liability_pence": pence,
                "currency": BOOK_CURRENCY,
                "bets": bets,
            }
        )
    return rows


def price_partitioner() -> str:
    """The partitioner the platform's producers use (librdkafka's default unless configured)."""
    return str(PRODUCER_DEFAULTS.get("partitioner", LIBRDKAFKA_DEFAULT))


def channels_active(*, limit: int = 200) -> list[dict[str, Any]]:
    """Live subscriber channels, most recently active first, with the reducer partitions of
    their markets (the partition of the price topic each market's updates arrive on)."""
    listed = channels_recent(_redis(), limit=limit)
    if not listed:
        return []
    partitions = len(topic_partitions(topics.prices())) or 1
    partitioner = price_partitioner()
    from django.contrib.auth.models import User

    names = dict(User.objects.filter(id__in={c.user_id for c in listed}).values_list("id", "username"))
    rows = []
    for channel in listed:
        by_partition: dict[int, int] = {}
        for market_id in channel.markets:
            p = market_partition(market_id, partitions, partitioner=partitioner)
            by_partition[p] = by_partition.get(p, 0) + 1
        rows.append(
            {
                "channel": channel.channel_id,
                "user_id": channel.user_id,
                "user": names.get(channel.user_id, f"#{channel.user_id}"),
                "view": channel.spec.get("view", ""),
                "query": channel.spec.get("query"),
                "markets": channel.markets,
                "status": channel.status,
                "seq": channel.seq,
                "created": channel.created_ms,
                "seen": channel.seen_ms,
                "partitions": {str(p): n for p, n in sorted(by_partition.items())},
            }
        )
    return rows


RANGES: dict[str, timedelta] = {
    "5m": timedelta(minutes=5),
    "15m": timedelta(minutes=15),
    "1h": timedelta(hours=1),
    "6h": timedelta(hours=6),
    "24h": timedelta(hours=24),
    "7d": timedelta(days=7),
}
HISTORY_MAX_POINTS = 720


def metrics_history(*, range_name: str, now: datetime | None = None, interval_s: int = 5) -> dict[str, Any]:
    """Sampled figures over the range as column arrays (``ts`` in epoch ms and one array per
    series), thinned to at most ``HISTORY_MAX_POINTS`` rows by keeping every n-th slot."""
    if range_name not in RANGES:
        raise ValueError(f"range must be one of {', '.join(RANGES)}")
    now = now or timezone.now()
    span = RANGES[range_name]
    stride = max(1, int(span.total_seconds() // interval_s // HISTORY_MAX_POINTS))
    rows = MetricSample.objects.filter(ts__gte=now - span).order_by("ts")
    if stride > 1:
        rows = rows.annotate(phase=Mod("slot", stride)).filter(phase=0)
    ts: list[int] = []
    series: dict[str, list[float | None]] = {}
    for when, values in rows.values_list("ts", "values"):
        index = len(ts)
        ts.append(int(when.timestamp() * 1000))
        for name, value in values.items():
            column = series.setdefault(name, [None] * index)
            column.append(value)
        for column in series.values():
            if len(column) < index + 1:
                column.append(None)
    return {"v": 1, "range": range_name, "stride_s": stride * interval_s, "ts": ts, "series": series}


# --- Dead letters ----------------------------------------------------------------------------

# Source name → its dead-letter topic (``reducers.dead_letters.SOURCES``).
DEAD_LETTER_SOURCES: dict[str, Callable[[], str]] = {name: source.dead_letter for name, source in SOURCES.items()}
# Records read from the end of each dead-letter topic per page; the newest are what is browsed.
DEAD_LETTERS_SCANNED = 500
DEAD_LETTER_VALUE_CHARS = 2000
DEAD_LETTERS_TIMEOUT_S = 3.0


def _clipped(text: str, limit: int = DEAD_LETTER_VALUE_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _text(raw: bytes | None, limit: int = DEAD_LETTER_VALUE_CHARS) -> str:
    return "" if raw is None else _clipped(raw.decode("utf-8", errors="replace"), limit)


def dead_letter_shown(source: str, raw: bytes | None) -> str:
    """A dead letter's value for people: a price record (Avro) described by its members or its
    bytes (``describe_price_record``), the others' JSON as text."""
    if source == "prices" and raw is not None:
        return _clipped(describe_price_record(raw))
    return _text(raw)


def dead_letters_recent(*, source: str | None = None, reason: str | None = None, limit: int = 100) -> dict[str, Any]:
    """The newest dead letters, newest first: of every dead-letter topic (or of ``source``'s),
    of every reason (or of ``reason``), each with its reason, detail and origin headers, key,
    value, topic position and time. Also the reasons seen among the records read, with counts."""
    names = [source] if source else list(DEAD_LETTER_SOURCES)
    unknown = [name for name in names if name not in DEAD_LETTER_SOURCES]
    if unknown:
        raise ValueError(f"no dead-letter topic for {unknown[0]!r}; choose one of {', '.join(DEAD_LETTER_SOURCES)}")
    wanted = {DEAD_LETTER_SOURCES[name](): name for name in names}
    reader = reader_create()
    records: list[dict[str, Any]] = []
    try:
        starts: dict[tuple[str, int], tuple[int, int]] = {}
        for topic in wanted:
            for partition in topic_partitions(topic):
                low, high = reader.get_watermark_offsets(
                    TopicPartition(topic, partition), timeout=DEAD_LETTERS_TIMEOUT_S, cached=False
                )
                if high > low:
                    starts[(topic, partition)] = (max(low, high - DEAD_LETTERS_SCANNED), high)
        if starts:
            reader.assign([TopicPartition(t, p, start) for (t, p), (start, _) in starts.items()])
            left = {tp: end for tp, (_, end) in starts.items()}
            deadline = time.monotonic() + DEAD_LETTERS_TIMEOUT_S
            while left and time.monotonic() < deadline:
                for message in reader.consume(num_messages=500, timeout=0.2):
                    if message.error() is not None:
                        continue
                    tp: tuple[str, int] = (str(message.topic()), int(message.partition() or 0))
                    offset = int(message.offset() or 0)
                    headers = {name: _text(value, 500) for name, value in message_headers(message).items()}
                    records.append(
                        {
                            "source": wanted[str(message.topic())],
                            "topic": message.topic(),
                            "partition": message.partition(),
                            "offset": message.offset(),
                            "ts": message.timestamp()[1],
                            "when": datetime.fromtimestamp(message.timestamp()[1] / 1000, tz=UTC),
                            "reason": headers.get("reason", ""),
                            "detail": headers.get("detail", ""),
                            "origin": headers.get("origin", ""),
                            "key": _text(message.key(), 200),
                            "value": dead_letter_shown(wanted[str(message.topic())], message.value()),
                            "replays": headers.get(HEADER_REPLAYS, ""),
                        }
                    )
                    if tp in left and offset >= left[tp] - 1:
                        del left[tp]
    finally:
        reader.close()
    reasons: dict[str, int] = {}
    for record in records:
        reasons[record["reason"]] = reasons.get(record["reason"], 0) + 1
    chosen = [r for r in records if reason is None or r["reason"] == reason]
    chosen.sort(key=lambda r: (r["ts"], r["offset"]), reverse=True)
    chosen = chosen[:limit]
    handled = _handled_kinds(chosen)
    for record in chosen:
        record["handled"] = handled.get((record["topic"], record["partition"], record["offset"]), "")
    return {"records": chosen, "reasons": dict(sorted(reasons.items())), "scanned": len(records)}


def _handled_kinds(records: list[dict[str, Any]]) -> dict[tuple[str, int, int], str]:
    """Which of the records shown were replayed or discarded (by place: the action's kind)."""
    from odds.ops.selectors.dead_letters import dead_letters_handled

    found: dict[tuple[str, int, int], str] = {}
    for topic in {r["topic"] for r in records}:
        offsets = [(r["partition"], r["offset"]) for r in records if r["topic"] == topic]
        for (partition, offset), kind in dead_letters_handled(topic=topic, offsets=offsets).items():
            found[(topic, partition, offset)] = kind
    return found
