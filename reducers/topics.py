"""The only place Kafka topic and consumer-group names are spelled.

Every name is prefixed by the namespace (``SPORTSBOOK_NAMESPACE``, default ``sb``) so that
several stacks, or a test session next to a running stack, share one broker without
touching each other's data.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


def namespace() -> str:
    return os.environ.get("SPORTSBOOK_NAMESPACE", "sb")


@dataclass(frozen=True)
class TopicSpec:
    name: str
    partitions: int
    compacted: bool = False
    retention_ms: int | None = None


def _int_env(name: str, default: int) -> int:
    raw = os.environ.get(name, str(default))
    try:
        value = int(raw)
    except ValueError as exc:
        raise ValueError(f"{name} must be a whole number, got {raw!r}") from exc
    if value < 1:
        raise ValueError(f"{name} must be at least 1, got {value}")
    return value


def prices() -> str:
    """Partitioned data topic: price updates keyed by market id."""
    return f"{namespace()}.prices.v1"


def prices_checked() -> str:
    """Real-time mode: every price record as the real-time price query read and checked it, in
    the partition it was read from, for the price reducer's Python effect (spark/jobs/applier.py)."""
    return f"{namespace()}.prices.checked.v1"


def price_windows() -> str:
    """Each market's first and last price snapshot per event-time window, as the price reducer
    folds its batches (``reducers.movers.WindowPartial``), keyed by market id: what the movers
    query ranks, so it never reads every price record again."""
    return f"{namespace()}.prices.windows.v1"


def prices_dead_letter() -> str:
    """Price records that failed parsing or validation, with the reason in a header."""
    return f"{namespace()}.prices.dlq.v1"


def commands() -> str:
    """Stream commands (subscribe, begin, change, unsubscribe), read by every reducer."""
    return f"{namespace()}.commands.v1"


def commands_dead_letter() -> str:
    """Commands the reducers could not decode or apply, with the reason in a header."""
    return f"{namespace()}.commands.dlq.v1"


def markets() -> str:
    """Compacted table of market definitions and status; a tombstone removes a market."""
    return f"{namespace()}.markets.v1"


def markets_dead_letter() -> str:
    """Market-table records the reducers could not decode or apply, with the reason in a header."""
    return f"{namespace()}.markets.dlq.v1"


def bets() -> str:
    """Bet events (placed, cancelled, cashed out, settled) for liability aggregation."""
    return f"{namespace()}.bets.v1"


def bets_dead_letter() -> str:
    """Bet events the liability reducer could not decode or apply, with the reason in a header."""
    return f"{namespace()}.bets.dlq.v1"


def match_states() -> str:
    """Partitioned data topic: match-state snapshots (score, period, clock, incidents) keyed by event id."""
    return f"{namespace()}.matchstate.v1"


def match_states_dead_letter() -> str:
    """Match-state records the reducers could not decode or apply, with the reason in a header."""
    return f"{namespace()}.matchstate.dlq.v1"


def game_events() -> str:
    """The predictor game's match events (kick-off, scores, cards, half and full time, the
    clock's minutes) and traders' voids, keyed by event id: one partition, read whole by every
    bucket of the game reducer (the broadcast role the command topic plays for prices)."""
    return f"{namespace()}.game.events.v1"


def game_events_dead_letter() -> str:
    """Game events the game reducer could not decode, with the reason in a header."""
    return f"{namespace()}.game.events.dlq.v1"


def game_answers() -> str:
    """Partitioned data topic: punters' answers to the game's questions, keyed by punter id (one
    punter's answers in one partition, in order)."""
    return f"{namespace()}.game.answers.v1"


def game_answers_dead_letter() -> str:
    """Answers the game reducer could not decode, with the reason in a header."""
    return f"{namespace()}.game.answers.dlq.v1"


def dead_letter_of(topic: str) -> str:
    """The dead-letter topic of a topic the reducers read."""
    return {
        prices(): prices_dead_letter(),
        commands(): commands_dead_letter(),
        markets(): markets_dead_letter(),
        bets(): bets_dead_letter(),
        match_states(): match_states_dead_letter(),
        game_events(): game_events_dead_letter(),
        game_answers(): game_answers_dead_letter(),
    }[topic]


def reducer_group(query: str) -> str:
    """Consumer group to which a Spark query commits its processed offsets, for lag tools."""
    return f"{namespace()}.reducer.{query}"


# Real-time mode: the price reducer's applier (spark/jobs/applier.py), supervised and shown like
# a query under this name; its consumer group is ``reducer_group(PRICE_APPLIER)``.
PRICE_APPLIER = "prices-apply"


def range_reader_group() -> str:
    """Group id of the reducers' driver-side range reader (spark/sources.py). It assigns the
    partitions it reads itself, so it never joins the group and commits nothing to it."""
    return f"{namespace()}.reducer.range-reader"


def all_topics() -> list[TopicSpec]:
    """Every topic the platform uses, with partition counts from the environment."""
    data_partitions = _int_env("KAFKA_PRICES_PARTITIONS", 12)
    command_partitions = _int_env("KAFKA_COMMANDS_PARTITIONS", 1)
    return [
        TopicSpec(prices(), data_partitions, retention_ms=24 * 3600 * 1000),
        TopicSpec(prices_checked(), data_partitions, retention_ms=24 * 3600 * 1000),
        TopicSpec(price_windows(), data_partitions, retention_ms=24 * 3600 * 1000),
        TopicSpec(prices_dead_letter(), 1, retention_ms=7 * 24 * 3600 * 1000),
        TopicSpec(commands(), command_partitions, retention_ms=24 * 3600 * 1000),
        TopicSpec(commands_dead_letter(), 1, retention_ms=7 * 24 * 3600 * 1000),
        TopicSpec(markets(), data_partitions, compacted=True),
        TopicSpec(markets_dead_letter(), 1, retention_ms=7 * 24 * 3600 * 1000),
        TopicSpec(bets(), data_partitions, retention_ms=7 * 24 * 3600 * 1000),
        TopicSpec(bets_dead_letter(), 1, retention_ms=7 * 24 * 3600 * 1000),
        TopicSpec(match_states(), data_partitions, retention_ms=24 * 3600 * 1000),
        TopicSpec(match_states_dead_letter(), 1, retention_ms=7 * 24 * 3600 * 1000),
        # One partition: every game event in one order, which each bucket of the game reducer applies.
        TopicSpec(game_events(), 1, retention_ms=7 * 24 * 3600 * 1000),
        TopicSpec(game_events_dead_letter(), 1, retention_ms=7 * 24 * 3600 * 1000),
        TopicSpec(game_answers(), data_partitions, retention_ms=7 * 24 * 3600 * 1000),
        TopicSpec(game_answers_dead_letter(), 1, retention_ms=7 * 24 * 3600 * 1000),
    ]
