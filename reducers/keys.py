"""The only place Redis keys and pub-sub channel names are spelled."""

from __future__ import annotations

from reducers.topics import namespace


def market_state(market_id: int) -> str:
    """Hash: ``seq`` (last applied sequence) and ``state`` (JSON of the market's latest state)."""
    return f"{namespace()}:mkt:{market_id}"


def market_channel(market_id: int) -> str:
    """Pub-sub channel carrying every applied update of one market."""
    return f"{namespace()}:px:{market_id}"


def market_channel_pattern() -> str:
    return f"{namespace()}:px:*"


def subscriber_channel(channel_id: str) -> str:
    """Pub-sub channel carrying one subscriber's view (image, deltas, control messages)."""
    return f"{namespace()}:ch:{channel_id}"


def heartbeat(component: str) -> str:
    """String: epoch seconds of the component's last sign of life (with an expiry)."""
    return f"{namespace()}:hb:{component}"


def reducer_progress(query: str) -> str:
    """String: JSON of the latest streaming-query progress of one reducer query."""
    return f"{namespace()}:progress:{query}"


def counter(name: str) -> str:
    """Hash of counters of one family (e.g. dead letters by reason)."""
    return f"{namespace()}:count:{name}"


def source_sequences() -> str:
    """Hash market id → last sequence handed out at the source (feed and trader overrides share it)."""
    return f"{namespace()}:srcseq"
