"""`make bench`'s channels stage: subscriber channels and shared query channels at scale.

Three measurements, each in a namespace of its own:

  fan-out   ``ChannelStore.fan_out`` timed in this process on the real Redis: the same batch of
            applied market states (``FANOUT_BATCH`` markets, what a micro-batch holds at the
            end-to-end rate) fanned out to 1,000, 5,000 and 10,000 slip and bets channels of 3-8
            legs over ``UNIVERSE`` markets, the channels made by the commands reducer's own store
            (``ChannelStore.apply_command``). Its growth from 1,000 to 10,000 channels is
            reported against 10 (linear), and the largest is profiled (cProfile) to say where a
            batch's time goes.
  queries   the query stage's cost with ``QUERIES`` distinct shared queries over ``UNIVERSE``
            markets: ``ChannelStore.refresh_shared`` on a markets batch of ``QUERY_BATCH``
            kick-offs (what the markets query runs after each batch) and
            ``ChannelStore.refresh_windows`` per tick of the refresher, time moving on a tick a call.
  live      ``CHANNELS`` slip and bets channels and ``FOLLOWERS`` followers of the ``QUERIES``
            queries, held by k6 websocket clients (bench/k6/channels.js) that create, attach and
            begin them through the control API as a browser does, beside clients watching
            markets (as the browser watches), while prices flow at the end-to-end stage's rate
            through Kafka, the reducers and the edge. Every market in a channel delta is timed
            from its source event to its arrival, and so is every market of a plain watch in the
            same window: the channel's p99 against the watch's is the stage's target.

Run alone (``--quick``: small and fast, the reducers without Spark):

    .venv/bin/python -m bench.channels --quick
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import json
import os
import pstats
import random
import re
import secrets
import signal
import statistics
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

# The stage's shape (the issue's): channels of 3-8 legs, half slips and half bets views, and
# followers of distinct queries, over a universe of markets the prices move.
CHANNELS = 10_000
FOLLOWERS = 200
QUERIES = 50
UNIVERSE = 10_000
LEGS = (3, 8)
# Channel counts the fan-out is timed at, and the batch it fans out each time: at the end-to-end
# rate (1,000 prices a second) a micro-batch of about 100 ms holds about 100 markets.
FANOUT_COUNTS = (1_000, 5_000, 10_000)
FANOUT_BATCH = 100
FANOUT_REPEATS = 15
# Channels made one command after the other (and timed) before the others are made on threads.
COMMAND_SAMPLE = 200
# A markets batch of the query stage: this many events kick off at once (each definition's
# event status moves between scheduled and in play, a new version each time).
QUERY_BATCH = 100
QUERY_REPEATS = 15
# Seconds between two ticks of the query refresher (QUERY_REFRESH_SECONDS).
REFRESH_TICK_S = 10
# Sports, and competitions, of the benchmark's events (MATCH_SPORTS).
SPORTS = ("football", "tennis", "basketball")
COMPETITIONS = 40
# Two markets an event: the first is its headline (the one event lists show).
MARKETS_PER_EVENT = 2
# Every tenth event is in play; the others kick off within the next two days.
IN_PLAY_EVERY = 10
KICK_OFF_SPREAD_MIN = 48 * 60
# Claimed prices of the legs of a bets view, and the stakes.
CLAIMED_PRICE = "1.80"
STAKE = "5.00"
# A bets view's legs go in bets of at most this many legs (an accumulator, then what is left).
LEGS_PER_BET = 3
# A plain watch of the same stage: markets a watcher watches.
WATCH_MARKETS = 20
# The channels stage's target: a channel frame's p99 at most this many times a plain watch's.
P99_VS_WATCH_TARGET = 1.5

TARGETS = [
    ("channel_deliveries_per_s", "Channel frames delivered (slip and bets channels, how many below)", "frames/s", None),
    ("channel_p99_ms", "Source event → channel frame on the socket, p99", "ms", None),
    ("channel_watch_p99_ms", "Source event → plain market watch, p99, same stage and prices", "ms", None),
    ("channel_p99_vs_watch", "Channel p99 ÷ the plain watch's p99, same run", "times", f"<= {P99_VS_WATCH_TARGET}"),
    ("channel_fanout_ms_per_batch_1k", "Fan-out of a 100-market batch to 1,000 channels", "ms", None),
    ("channel_fanout_ms_per_batch_5k", "Fan-out of the same batch to 5,000 channels", "ms", None),
    ("channel_fanout_ms_per_batch_10k", "Fan-out of the same batch to 10,000 channels", "ms", None),
    ("channel_fanout_growth_10k_vs_1k", "Fan-out cost at 10,000 ÷ at 1,000 channels (linear: 10)", "times", "< 10"),
    ("query_refresh_ms", "Query stage: refresh_shared on a batch of 100 kick-offs, 50 queries", "ms", None),
    ("query_window_refresh_ms", "Query stage: refresh_windows per tick, 50 queries, 10,000 markets", "ms", None),
]


# --- what the stage holds (pure) --------------------------------------------------------------


def event_of(market_id: int) -> int:
    """The event of a benchmark market (``MARKETS_PER_EVENT`` markets an event, numbered from 1)."""
    return (market_id - 1) // MARKETS_PER_EVENT + 1


def market_definitions(count: int, *, now_ms: int, version: int = 1) -> list[Any]:
    """Definitions of the stage's markets 1 to ``count``: two markets an event, the first its
    headline; sports and competitions in turn; every ``IN_PLAY_EVERY``-th event in play, the
    others kicking off over the next two days, so every query of ``query_specs`` holds some."""
    from reducers.schemas import MarketDefinition

    out = []
    for market_id in range(1, count + 1):
        event = event_of(market_id)
        in_play = event % IN_PLAY_EVERY == 0
        headline = (market_id - 1) % MARKETS_PER_EVENT == 0
        competition = 1 + event % COMPETITIONS
        out.append(
            MarketDefinition(
                market_id=market_id,
                version=version,
                event_id=event,
                sport=SPORTS[event % len(SPORTS)],
                competition=f"Benchmark Cup {competition}",
                competition_id=competition,
                event_name=f"Benchmark {event}",
                kind="match_winner" if headline else "total_goals",
                name="Match winner" if headline else "Total goals",
                status="open",
                event_status="in_play" if in_play else "scheduled",
                starts_at=now_ms - 1_800_000 if in_play else now_ms + 60_000 * (1 + event * 7919 % KICK_OFF_SPREAD_MIN),
                selections=((1, "Home"), (2, "Away")),
                headline=headline,
                ts=now_ms,
            )
        )
    return out


def query_specs(count: int = QUERIES) -> list[dict[str, Any]]:
    """``count`` distinct queries, as the event lists ask for them: the home, In play and Starting
    soon lists, each sport's list, in play and kick-off windows, then each competition's list."""
    found: list[dict[str, Any]] = [
        {"headline": True},
        {"in_play": True, "headline": True},
        {"starting_within_minutes": 120, "headline": True},
    ]
    for sport in SPORTS:
        found += [
            {"sport": sport, "headline": True},
            {"sport": sport, "in_play": True},
            {"sport": sport, "starting_within_minutes": 60},
            {"sport": sport, "starting_within_minutes": 720},
        ]
    found += [{"competition": c, "headline": True} for c in range(1, COMPETITIONS + 1)]
    if count > len(found):
        raise ValueError(f"at most {len(found)} distinct benchmark queries, asked for {count}")
    return found[:count]


def channel_specs(count: int, *, universe: int, seed: int = 48) -> list[dict[str, Any]]:
    """``count`` channel specs as ``POST /api/streams`` takes them: slips and bets views in turn,
    each of ``LEGS`` legs on distinct markets of 1 to ``universe`` (selection 1, the one the
    benchmark's prices move), a bets view's legs in bets of at most ``LEGS_PER_BET`` legs."""
    rng = random.Random(seed)
    specs: list[dict[str, Any]] = []
    bet_id = 0
    for index in range(count):
        markets = rng.sample(range(1, universe + 1), rng.randint(*LEGS))
        if index % 2 == 0:
            specs.append(
                {"view": "slip", "slip": [{"selection_id": 1, "market_id": m} for m in markets], "stake": STAKE}
            )
            continue
        bets = []
        for at in range(0, len(markets), LEGS_PER_BET):
            bet_id += 1
            legs = [
                {"selection_id": 1, "market_id": m, "price": CLAIMED_PRICE} for m in markets[at : at + LEGS_PER_BET]
            ]
            bets.append({"bet_id": bet_id, "stake": STAKE, "legs": legs})
        specs.append({"view": "bets", "bets": bets})
    return specs


def spec_markets(spec: dict[str, Any]) -> list[int]:
    """The markets a channel spec of ``channel_specs`` holds."""
    if spec["view"] == "slip":
        return [leg["market_id"] for leg in spec["slip"]]
    return [leg["market_id"] for bet in spec["bets"] for leg in bet["legs"]]


def channels_per_client_most(settings: Any, *, subscribe_per_minute: int) -> int:
    """The most channels one client (one punter, one browser session) may create and begin in the
    stage's setup without meeting a limit of the product: the live channels per session and per
    punter, subscriptions a minute, and begin requests in a window."""
    return min(
        settings.STREAM_MAX_CHANNELS_PER_SESSION,
        settings.STREAM_MAX_CHANNELS_PER_USER,
        subscribe_per_minute,
        settings.STREAM_CONTROL_LIMIT,
    )


@dataclass(frozen=True)
class Plan:
    """What each k6 virtual user of the live stage does, in order: ``holders`` create, attach and
    begin their channels; ``followers`` follow one query each; ``watchers`` watch markets."""

    holders: list[list[dict[str, Any]]]
    followers: list[dict[str, Any]]
    watchers: list[list[int]]

    def users(self) -> int:
        return len(self.holders) + len(self.followers) + len(self.watchers)


def live_plan(
    *, channels: int, per_client: int, followers: int, queries: int, watchers: int, universe: int, seed: int = 48
) -> Plan:
    """The live stage's clients: ``channels`` specs dealt ``per_client`` to a client, the queries
    dealt round to ``followers`` (so each has ``followers / queries`` of them), and ``watchers``
    clients watching ``WATCH_MARKETS`` markets each."""
    specs = channel_specs(channels, universe=universe, seed=seed)
    asked = query_specs(queries)
    rng = random.Random(seed + 1)
    return Plan(
        holders=[specs[at : at + per_client] for at in range(0, len(specs), per_client)],
        followers=[asked[i % len(asked)] for i in range(followers)],
        watchers=[rng.sample(range(1, universe + 1), min(WATCH_MARKETS, universe)) for _ in range(watchers)],
    )


def k6_plan(plan: Plan, *, cookies: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """One entry per k6 virtual user: its role, what it holds, follows or watches, and for a
    holder its punter's (session key, CSRF token); a watcher is logged in too, a follower is a
    visitor (event lists are for everyone)."""
    if len(cookies) < len(plan.holders) + len(plan.watchers):
        raise ValueError("a holder and a watcher each need a punter of their own")
    users: list[dict[str, Any]] = []
    for index, specs in enumerate(plan.holders):
        session, csrf = cookies[index]
        users.append({"role": "holder", "specs": specs, "session": session, "csrf": csrf})
    users += [{"role": "follower", "query": query} for query in plan.followers]
    for index, markets in enumerate(plan.watchers):
        session, csrf = cookies[len(plan.holders) + index]
        users.append({"role": "watcher", "markets": markets, "session": session, "csrf": csrf})
    return users


def fanout_growth(per_batch: dict[int, float]) -> float | None:
    """The fan-out's cost at the most channels measured ÷ at the fewest (linear growth from 1,000
    to 10,000 channels is 10)."""
    if len(per_batch) < 2:
        return None
    low, high = per_batch[min(per_batch)], per_batch[max(per_batch)]
    return round(high / low, 2) if low else None


def count_label(count: int) -> str:
    """``1k`` for 1,000 channels: the suffix of the fan-out's keys."""
    return f"{count // 1000}k" if count % 1000 == 0 else str(count)


def live_figures(summary: dict[str, Any], *, duration: float) -> dict[str, Any]:
    """The live stage's keys from the k6 summary of its window."""
    channel_p99, watch_p99 = summary["channel_p99_ms"], summary["watch_p99_ms"]
    return {
        "channel_deliveries_per_s": round(summary["channel_frames"] / duration),
        "channel_markets_per_s": round(summary["channel_markets"] / duration),
        "channel_p50_ms": round(summary["channel_p50_ms"], 1),
        "channel_p99_ms": round(channel_p99, 1),
        "channel_max_ms": round(summary["channel_max_ms"], 1),
        "channel_watch_deliveries_per_s": round(summary["watch_markets"] / duration),
        "channel_watch_p50_ms": round(summary["watch_p50_ms"], 1),
        "channel_watch_p99_ms": round(watch_p99, 1),
        "channel_watch_max_ms": round(summary["watch_max_ms"], 1),
        "channel_p99_vs_watch": round(channel_p99 / watch_p99, 2) if watch_p99 else None,
        "channel_seq_gaps": summary["channel_gaps"],
        "query_frames": summary["query_frames"],
        "query_seq_gaps": summary["query_gaps"],
    }


# --- fan-out and the query stage, timed in this process ------------------------------------


def _store() -> Any:
    from django.conf import settings

    from store.channels import ChannelStore
    from store.clients import redis_client

    return ChannelStore(redis_client(settings.REDIS_URL))


def market_updates(market_ids: Sequence[int], *, seq: int, now_ms: int) -> list[Any]:
    """One price update of each market (selection 1 at a price of its own), at sequence ``seq``."""
    from reducers.prices import conflate
    from reducers.schemas import PriceUpdate, SelectionPrice

    updates = [
        (
            PriceUpdate(
                m,
                seq,
                "open",
                (SelectionPrice(1, Decimal(150 + (m * 7 + seq) % 300) / 100), SelectionPrice(2, Decimal("1.90"))),
                now_ms,
                now_ms,
            ),
            now_ms,
        )
        for m in market_ids
    ]
    return conflate(updates)


def channels_make(store: Any, specs: Sequence[dict[str, Any]], *, user_id: int = 1, threads: int = 8) -> list[str]:
    """Make and begin a channel of each spec through the commands reducer's own store (subscribe,
    then begin: its image is published), on a few threads (each command waits on Redis); returns
    their ids."""
    from concurrent.futures import ThreadPoolExecutor

    from reducers.subscriptions import StreamCommand, spec_from_json

    def make(spec: dict[str, Any]) -> str:
        channel_id = secrets.token_urlsafe(24)
        now = int(time.time() * 1000)
        parsed = spec_from_json(spec)
        store.apply_command(
            StreamCommand(type="subscribe", channel_id=channel_id, user_id=user_id, spec=parsed, ts=now)
        )
        store.apply_command(StreamCommand(type="begin", channel_id=channel_id, user_id=user_id, spec=None, ts=now))
        return channel_id

    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(make, specs))


def commands_timed(store: Any, specs: Sequence[dict[str, Any]], *, user_id: int = 1) -> dict[str, Any]:
    """Make and begin a channel of each spec one command after the other, as the commands query
    applies them on the driver, timing each: the medians of a ``subscribe`` and a ``begin`` and
    the commands a second one thread applies at that pace."""
    from reducers.subscriptions import StreamCommand, spec_from_json

    subscribes, begins = [], []
    for spec in specs:
        channel_id = secrets.token_urlsafe(24)
        now = int(time.time() * 1000)
        command = StreamCommand(
            type="subscribe", channel_id=channel_id, user_id=user_id, spec=spec_from_json(spec), ts=now
        )
        started = time.perf_counter()
        store.apply_command(command)
        subscribed = time.perf_counter()
        store.apply_command(StreamCommand(type="begin", channel_id=channel_id, user_id=user_id, spec=None, ts=now))
        subscribes.append((subscribed - started) * 1000)
        begins.append((time.perf_counter() - subscribed) * 1000)
    subscribe_ms, begin_ms = statistics.median(subscribes), statistics.median(begins)
    return {
        "command_subscribe_ms": round(subscribe_ms, 2),
        "command_begin_ms": round(begin_ms, 2),
        "commands_per_s_one_thread": round(2000 / (subscribe_ms + begin_ms)),
    }


def _profile_lines(profile: cProfile.Profile, *, top: int = 12) -> list[str]:
    """The functions of a profile with the most cumulative time, as ``pstats`` prints them."""
    import io

    out = io.StringIO()
    pstats.Stats(profile, stream=out).sort_stats("cumulative").print_stats(top)
    lines = [line.rstrip() for line in out.getvalue().splitlines()]
    start = next((i for i, line in enumerate(lines) if line.lstrip().startswith("ncalls")), 0)
    return [line for line in lines[start:] if line.strip()]


def profile_split(profile: cProfile.Profile) -> dict[str, float]:
    """Milliseconds of a profiled fan-out in its three parts: the routes' round trip, the frames
    built in Python, and the publishing round trip."""
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    parts = {"routes": "_routes_of", "frames": "view_frame", "publish": "publish_many"}
    return {
        part: round(sum(v[3] for (_, _, name), v in stats.items() if name == function) * 1000, 1)
        for part, function in parts.items()
    }


@contextlib.contextmanager
def scratch_namespaces(count: int) -> Iterator[list[str]]:
    """``count`` fresh namespaces for Redis keys only (entered with ``bench.common.in_namespace``);
    their keys are removed afterwards."""
    import uuid

    from django.conf import settings

    from store.clients import redis_client

    names = [f"bench{uuid.uuid4().hex[:6]}" for _ in range(count)]
    try:
        yield names
    finally:
        client = redis_client(settings.REDIS_URL)
        for name in names:
            for keys_found in _chunks(list(client.scan_iter(match=f"{name}:*", count=1000)), 1000):
                client.delete(*keys_found)


def _chunks(items: list[Any], size: int) -> Iterator[list[Any]]:
    for at in range(0, len(items), size):
        yield items[at : at + size]


def time_fan_out(
    *,
    counts: Sequence[int] = FANOUT_COUNTS,
    universe: int = UNIVERSE,
    batch: int = FANOUT_BATCH,
    repeats: int = FANOUT_REPEATS,
    seed: int = 48,
) -> dict[str, Any]:
    """``ChannelStore.fan_out`` of the same batch at each channel count. Each count has a namespace
    of its own holding the same markets and the first that many of the same channel specs, and
    the counts are timed turn about, ``repeats`` rounds (on a shared machine the speed of the
    cores drifts over minutes: it drifts alike for every count); each figure is the median of its
    count's rounds. The largest count's fan-out is profiled once more."""
    from bench.common import in_namespace
    from store.markets import MarketStore

    out: dict[str, Any] = {}
    counts = sorted(counts)
    specs = channel_specs(max(counts), universe=universe, seed=seed)
    chosen = sorted(random.Random(seed + 2).sample(range(1, universe + 1), batch))
    with scratch_namespaces(len(counts)) as names:
        stores: dict[int, Any] = {}
        batches: dict[int, Any] = {}
        for count, name in zip(counts, names, strict=True):
            with in_namespace(name):
                store = stores[count] = _store()
                markets = MarketStore(store.r)
                now = int(time.time() * 1000)
                for at in range(0, universe, 1000):
                    markets.apply(market_updates(range(1 + at, 1 + min(universe, at + 1000)), seq=1, now_ms=now))
                # The batch: new states of ``batch`` markets over the universe, applied once and
                # fanned out again every round (the fan-out reads only the maps and the states).
                batches[count] = markets.apply(market_updates(chosen, seq=2, now_ms=now))
                started = time.perf_counter()
                made = 0
                if count == counts[0]:
                    # The first channels one command after the other, as the commands query does.
                    made = min(COMMAND_SAMPLE, count)
                    out.update(commands_timed(store, specs[:made]))
                channels_make(store, specs[made:count])
                log(f"fan-out: {count:,} channels made ({time.perf_counter() - started:.1f} s)")
                out[f"channel_fanout_frames_per_batch_{count_label(count)}"] = store.fan_out(batches[count])
        timings: dict[int, list[float]] = {count: [] for count in counts}
        for _ in range(repeats):
            for count, name in zip(counts, names, strict=True):
                with in_namespace(name):
                    started = time.perf_counter()
                    stores[count].fan_out(batches[count])
                    timings[count].append((time.perf_counter() - started) * 1000)
        per_batch = {count: round(statistics.median(found), 2) for count, found in timings.items()}
        for count in counts:
            out[f"channel_fanout_ms_per_batch_{count_label(count)}"] = per_batch[count]
            log(f"fan-out to {count:,} channels: {per_batch[count]} ms a batch")
        with in_namespace(names[-1]):
            profile = cProfile.Profile()
            profile.enable()
            stores[counts[-1]].fan_out(batches[counts[-1]])
            profile.disable()
    out["channel_fanout_growth_10k_vs_1k"] = fanout_growth(per_batch)
    out["channel_fanout_batch_markets"] = batch
    out["channel_fanout_rounds"] = {count_label(c): [round(t, 1) for t in found] for c, found in timings.items()}
    out["channel_fanout_profile_ms"] = profile_split(profile)
    out["channel_fanout_profile"] = _profile_lines(profile)
    return out


def _kick_off(definition: Any, *, version: int, in_play: bool) -> Any:
    """The definition after its event kicked off (or back before it), at ``version``."""
    import dataclasses

    return dataclasses.replace(definition, version=version, event_status="in_play" if in_play else "scheduled")


def time_query_refresh(
    *,
    markets: int = UNIVERSE,
    queries: int = QUERIES,
    changes: int = QUERY_BATCH,
    repeats: int = QUERY_REPEATS,
    seed: int = 48,
) -> dict[str, Any]:
    """The query stage's two costs with ``queries`` shared channels over ``markets`` markets:
    ``refresh_shared`` of a markets batch of ``changes`` kick-offs (and back, in turn), and
    ``refresh_windows`` per tick, time moving ``REFRESH_TICK_S`` a call (after the store's first
    look, which compares whole windows and is reported apart). Medians of ``repeats``."""
    from bench.common import namespace
    from reducers.subscriptions import StreamCommand, SubscriptionSpec, query_from_json, shared_channel_id

    now = int(time.time() * 1000)
    definitions = market_definitions(markets, now_ms=now)
    with namespace():
        store = _store()
        table_write(store.r, definitions)
        started = time.perf_counter()
        for raw in query_specs(queries):
            query = query_from_json(raw)
            assert query is not None
            spec = SubscriptionSpec(view="markets", query=query)
            store.apply_command(
                StreamCommand(type="share", channel_id=shared_channel_id(query), user_id=None, spec=spec, ts=now)
            )
        shared_s = time.perf_counter() - started
        log(f"queries: {queries} shared channels made over {markets:,} markets in {shared_s:.1f} s")
        # Scheduled events only, so a kick-off changes what the in-play and window queries hold.
        scheduled = [d for d in definitions if d.event_status == "scheduled"]
        chosen = random.Random(seed + 3).sample(scheduled, min(changes, len(scheduled)))
        shared_ms, changed_channels = [], []
        for repeat in range(repeats + 1):
            in_play = repeat % 2 == 0
            old = {d.market_id: _kick_off(d, version=1 + repeat, in_play=not in_play) for d in chosen}
            new = {d.market_id: _kick_off(d, version=2 + repeat, in_play=in_play) for d in chosen}
            started = time.perf_counter()
            changed = store.refresh_shared({m: (old[m], new[m]) for m in new}, now_ms=now)
            if repeat:  # the first call parses and keeps the queries' specs
                shared_ms.append((time.perf_counter() - started) * 1000)
                changed_channels.append(len(changed))
        window_ms, moved = [], []
        first_ms = 0.0
        for tick in range(repeats + 1):
            started = time.perf_counter()
            changed = store.refresh_windows(now_ms=now + (tick + 1) * REFRESH_TICK_S * 1000)
            if tick:
                window_ms.append((time.perf_counter() - started) * 1000)
                moved.append(len(changed))
            else:  # the store's first look compares whole windows
                first_ms = (time.perf_counter() - started) * 1000
    return {
        "query_refresh_ms": round(statistics.median(shared_ms), 2),
        "query_refresh_channels_changed": round(statistics.median(changed_channels)),
        "query_window_refresh_ms": round(statistics.median(window_ms), 2),
        "query_window_first_ms": round(first_ms, 2),
        "query_window_channels_changed": round(statistics.median(moved)),
        "query_batch_markets": len(chosen),
        "query_share_ms": round(shared_s * 1000 / queries, 1),
        "query_specs": queries,
        "query_markets": markets,
    }


def log(message: str) -> None:
    print(f"[bench.channels {time.strftime('%H:%M:%S')}] {message}", flush=True)


# --- the live stage: k6 clients through the control API, the reducers and the edge ----------


K6_SCRIPT = ROOT / "bench" / "k6" / "channels.js"
PUNTER_PREFIX = "bench-ch-"
# About how often a user asks the driver whether the window has started (ms).
POLL_MS = 3000
# Seconds the window waits at most, once every channel streams, for the prices to catch up.
CATCH_UP_S = 300
# A punter of an interrupted run is removed by the next run once it is this old.
PUNTER_STALE_S = 3600


@dataclass
class Pipe:
    """The reducers under the live stage, in a namespace of their own: what they run in, their
    processes (one Spark application, or the plain consumers) and the reducer log to read."""

    namespace: str
    client: Any
    producer: Any
    processes: list[Any]
    reducer_log: Path | None


@contextlib.contextmanager
def reducers_for_channels(kind: str) -> Iterator[Pipe]:
    """``spark``: the reducers (micro-batch) as the end-to-end stage runs them; ``plain``: the
    price reducer in one plain consumer (``bench.plain_consumer``) and the channel work in another
    (``bench.plain_channels``), no Spark. Stopped on the way out."""
    from django.conf import settings

    from bench.common import namespace
    from bench.harness import Process, python, wait_until
    from odds.core.kafka import producer_create
    from store import keys
    from store.clients import redis_client

    if kind == "spark":
        from bench.common import environment
        from bench.reducers import reducers_running

        name = "bench-channels-reducers.log"
        # At the machine's own priority: the reducers lower theirs below the web workers'
        # (SPARK_SESSION_NICENESS, 10), which on this shared machine put them below every other
        # engineer's tests too: an empty commands batch took 92 s, and no channel was made in
        # five minutes. The stage's figures compare paths through the same reducers.
        with (
            environment(SPARK_SESSION_NICENESS="0"),
            reducers_running("microbatch", log_name=name, define=False) as running,
        ):
            # The heartbeat comes before the queries start (minutes apart on a busy machine): the
            # setup waits for the queries its commands and prices go through.
            wait_until(
                lambda: all(running.client.get(keys.reducer_progress(q)) for q in ("commands", "prices", "markets")),
                timeout=600,
                interval=1,
                what="the reducers' commands, prices and markets queries",
            )
            yield Pipe(
                running.namespace, running.client, running.producer, [running.process], ROOT / "var" / "log" / name
            )
        return
    with namespace() as ns:
        client = redis_client(settings.REDIS_URL)
        # At the machine's own priority, as the Spark reducers above.
        env = {
            **os.environ,
            "SPORTSBOOK_NAMESPACE": ns,
            "PLAIN_CONSUMER_POLL_S": "0.005",
            "SPARK_SESSION_NICENESS": "0",
        }
        consumers = {"bench.plain_consumer": "plain", "bench.plain_channels": "plain-channels"}
        started = []
        try:
            for module in consumers:
                log_path = ROOT / "var" / "log" / f"{module}.log"
                started.append(Process(module, python("-m", module), env=env, log=log_path).start())
            wait_until(
                lambda: all(client.get(keys.heartbeat(h)) for h in consumers.values()),
                timeout=90,
                what=" and ".join(consumers) + " to start",
            )
            yield Pipe(ns, client, producer_create(), started, None)
        finally:
            for process in started:
                process.stop()


def table_write(client: Any, definitions: Sequence[Any], *, threads: int = 4) -> None:
    """Write the definitions into the markets table through the markets query's own processor
    (``MarketTableProcessor``: the table, the kick-off index, the query stage), in chunks on a few
    threads: through the markets topic, the reducers' markets query wrote 20 definitions a second
    on this machine under other load (one transaction a definition), minutes for the stage's
    10,000. Refused definitions raise."""
    from concurrent.futures import ThreadPoolExecutor

    from django.conf import settings

    from reducers import topics
    from spark.jobs.markets import MarketTableProcessor
    from spark.sinks.dead_letter import DeadLetterSink

    table = MarketTableProcessor(
        redis_client=client,
        dead_letters=DeadLetterSink(
            bootstrap_servers=settings.KAFKA_BOOTSTRAP_SERVERS, topic=topics.markets_dead_letter()
        ),
    )
    rows = [
        {"key": d.key(), "value": d.encode(), "partition": 0, "offset": i, "kafka_ts": d.ts}
        for i, d in enumerate(definitions)
    ]
    with ThreadPoolExecutor(threads) as pool:
        counts = list(pool.map(table.apply_rows, [rows[at : at + 500] for at in range(0, len(rows), 500)]))
    rejected = sum(c["rejected"] for c in counts)
    if rejected:
        raise RuntimeError(f"{rejected} benchmark market definitions rejected: {counts}")


@contextlib.contextmanager
def punters(count: int, *, run: str) -> Iterator[list[tuple[str, str]]]:
    """``count`` logged-in punters of this run: (session key, CSRF token) each, as a browser holds
    them after logging in; removed afterwards, with those of an interrupted run."""
    from datetime import timedelta

    from django.contrib.auth.hashers import make_password
    from django.contrib.auth.models import User
    from django.middleware.csrf import CSRF_ALLOWED_CHARS, CSRF_SECRET_LENGTH
    from django.utils import timezone
    from django.utils.crypto import get_random_string

    from bench.common import migrate_if_needed, session_create, sessions_remove

    migrate_if_needed()
    stale = timezone.now() - timedelta(seconds=PUNTER_STALE_S)
    User.objects.filter(username__startswith=PUNTER_PREFIX, date_joined__lt=stale).delete()
    prefix = f"{PUNTER_PREFIX}{run}-"
    password = make_password(None)
    users = User.objects.bulk_create(User(username=f"{prefix}{n:05d}", password=password) for n in range(count))
    session_keys = [session_create(user=user) for user in users]
    try:
        yield [(key, get_random_string(CSRF_SECRET_LENGTH, CSRF_ALLOWED_CHARS)) for key in session_keys]
    finally:
        sessions_remove(session_keys)
        User.objects.filter(username__startswith=prefix).delete()


@dataclass
class K6Run:
    """A k6 run of the plan: its process, where its summary and its log will be."""

    process: Any
    summary: Path
    log: Path

    def wait(self, *, timeout: float) -> dict[str, Any]:
        from bench.edge import k6_wait

        return k6_wait(self.process, self.summary, timeout=timeout)

    def log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""


@contextlib.contextmanager
def k6_running(*, users: list[dict[str, Any]], port: int, env: dict[str, str]) -> Iterator[K6Run]:
    """k6 on the plan (bench/k6/channels.js) against the server at ``port``; stopped on the way
    out if it still runs."""
    from django.conf import settings

    from bench.edge import k6_binary

    folder = Path(tempfile.mkdtemp(prefix="sportsbook-k6-channels-"))
    (folder / "plan.json").write_text(json.dumps(users))
    k6_env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", str(folder)),
        "BASE": f"http://127.0.0.1:{port}",
        "URL": f"ws://127.0.0.1:{port}/ws/odds/",
        "ORIGIN": f"http://127.0.0.1:{port}",
        "PLAN_FILE": str(folder / "plan.json"),
        "SESSION_COOKIE": settings.SESSION_COOKIE_NAME,
        "CSRF_COOKIE": settings.CSRF_COOKIE_NAME,
        "CSRF_HEADER": settings.CSRF_HEADER_NAME.removeprefix("HTTP_").replace("_", "-"),
        "SUMMARY": str(folder / "summary.json"),
        "K6_NO_USAGE_REPORT": "true",
        **env,
    }
    process = subprocess.Popen(
        [str(k6_binary()), "run", "--quiet", "--no-color", f"--log-output=file={folder / 'k6.log'}", str(K6_SCRIPT)],
        cwd=folder,
        env=k6_env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield K6Run(process, folder / "summary.json", folder / "k6.log")
    finally:
        if process.poll() is None and process.returncode is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)


@contextlib.contextmanager
def web_server(namespace: str, *, workers: int) -> Iterator[int]:
    """The site under uvicorn (``workers`` processes) in the namespace, reading the punters from
    this process's database (a test session's included); yields its port at once (it listens
    there once started: ``bench.edge.port_wait``), stopped afterwards."""
    from bench.common import database_url
    from bench.edge import PRODUCT_APP, server_start
    from bench.harness import free_port

    port = free_port()
    env = {**os.environ, "SPORTSBOOK_NAMESPACE": namespace, "PYTHONUNBUFFERED": "1", "DATABASE_URL": database_url()}
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    server = server_start("uvicorn", port=port, workers=workers, app=PRODUCT_APP, env=env)
    try:
        yield port
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(30)


@contextlib.contextmanager
def price_feed(namespace: str, *, markets: int, rate: float, seconds: float) -> Iterator[None]:
    """Prices produced to Kafka at ``rate`` over ``markets`` markets (the end-to-end stage's feed,
    ``bench.edge.kafka_feed_process``) for at most ``seconds``; stopped on the way out."""
    import multiprocessing as mp

    from bench.edge import kafka_feed_process

    feed = mp.Process(target=kafka_feed_process, args=(namespace, markets, rate, seconds, mp.Queue()))
    feed.start()
    try:
        yield
    finally:
        if feed.is_alive():
            feed.terminate()
        feed.join(10)


class WindowSignal:
    """The driver's answer to the k6 users' question "when does the window start?": ``GET
    /window`` on a loopback port answers 204 until ``open`` names the start (epoch ms), then 200
    with it. Served from a thread of its own (asyncio: one thread however many users keep a
    connection open)."""

    def __init__(self) -> None:
        from bench.harness import free_port

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._start: int | None = None
        self._loop: Any = None
        self._stopping: Any = None
        self._thread: Any = None

    def open(self, start_ms: int) -> None:
        self._start = start_ms

    async def _serve(self, reader: Any, writer: Any) -> None:
        import asyncio

        try:
            while True:
                request = await reader.readuntil(b"\r\n\r\n")
                if not request:
                    break
                if self._start is None:
                    writer.write(b"HTTP/1.1 204 No Content\r\n\r\n")
                else:
                    body = str(self._start).encode()
                    writer.write(
                        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s"
                        % (len(body), body)
                    )
                await writer.drain()
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass  # a user gone: its connection with it
        finally:
            writer.close()

    def __enter__(self) -> WindowSignal:
        import asyncio
        import threading

        listening = threading.Event()

        async def serve() -> None:
            self._loop = asyncio.get_running_loop()
            self._stopping = asyncio.Event()
            server = await asyncio.start_server(self._serve, "127.0.0.1", self.port, backlog=4096)
            listening.set()
            await self._stopping.wait()
            server.close()
            for task in asyncio.all_tasks() - {asyncio.current_task()}:
                task.cancel()  # the connections still open

        def run() -> None:
            asyncio.run(serve())

        self._thread = threading.Thread(target=run, name="window-signal", daemon=True)
        self._thread.start()
        if not listening.wait(10):
            raise RuntimeError("the window signal did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._stopping.set)
        self._thread.join(10)


def price_lag_ms(client: Any, *, universe: int, sample: int = 300) -> float:
    """How far behind the source the applied prices are: now less the newest source event time
    among ``sample`` markets of the universe (a backlog of prices shows as seconds)."""
    from reducers import frames
    from store.markets import queue_states, raw_states

    market_ids = sorted(random.Random(time.time()).sample(range(1, universe + 1), min(sample, universe)))
    pipe = client.pipeline(transaction=False)
    queue_states(pipe, market_ids)
    found = raw_states(market_ids, pipe.execute())
    newest = max((frames.read_market(raw)["ts"]["event"] for raw in found.values()), default=0)
    return time.time() * 1000 - newest


def await_prices(pipe: Pipe, *, universe: int, timeout: float, most_lag_ms: float = 2000) -> float:
    """Wait (``timeout`` at most) until the reducers apply prices within ``most_lag_ms`` of their
    source: a setup's commands share the reducers' driver with the price query, which may have
    fallen behind meanwhile. Returns the lag then."""
    deadline = time.time() + timeout
    while (lag := price_lag_ms(pipe.client, universe=universe)) > most_lag_ms and time.time() < deadline:
        log(f"live: prices applied {lag / 1000:.1f} s behind their source; waiting for them to catch up")
        time.sleep(5)
    return lag


def note_commands(pipe: Pipe, batches: dict[int, Any]) -> None:
    """Keep the commands query's progress reports (Spark's: rows and time of each batch) under
    their batch ids; the reducers keep the last 200."""
    if pipe.reducer_log is not None:
        from bench.reducers import note_progress

        note_progress(pipe.client, batches, "commands")


def command_figures(batches: dict[int, Any]) -> dict[str, Any]:
    """How fast the commands query applied the setup's commands: rows over the time its batches
    were busy (each command is applied in turn on the driver, whatever the topic's partitions)."""
    busy = [b for b in batches.values() if b.rows]
    busy_ms = sum(b.ms for b in busy)
    if not busy or not busy_ms:
        return {}
    return {
        "command_rows": sum(b.rows for b in busy),
        "command_batches": len(busy),
        "commands_applied_per_s": round(sum(b.rows for b in busy) / (busy_ms / 1000)),
        "command_batch_ms_max": max(b.ms for b in busy),
    }


def streaming_channels(client: Any) -> int:
    """How many channels of the namespace stream (begun punters' channels and shared ones)."""
    from store import keys

    ids = [raw.decode() for raw in client.zrange(keys.channels_index(), 0, -1)]
    pipe = client.pipeline(transaction=False)
    for channel_id in ids:
        pipe.hget(keys.channel_meta(channel_id), "status")
    return sum(1 for status in pipe.execute() if status == b"streaming")


# A price batch's line in the reducers' log: its time, then its stats (spark/jobs/prices.py).
BATCH_LINE = re.compile(r"^(\S+ \S+) INFO spark\.jobs\.prices batch \d+ \(read by \w+\): (\{.*\})$")


def reducer_batches(log_path: Path, *, since: float, until: float) -> list[dict[str, int]]:
    """The price batches the reducers logged between two times (epoch s), their stats each."""
    import ast
    from datetime import datetime

    found = []
    for line in log_path.read_text(errors="replace").splitlines():
        match = BATCH_LINE.match(line)
        if not match:
            continue
        at = datetime.strptime(match.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp()
        if since <= at <= until:
            found.append(ast.literal_eval(match.group(2)))
    return found


def batch_figures(batches: list[dict[str, int]]) -> dict[str, Any]:
    """What the reducers' own stats say of the price batches of the window: how many, their
    time, the frames each fanned out and the fan-out's own time."""
    if not batches:
        return {}

    def p(values: list[int], q: float) -> float:
        ordered = sorted(values)
        return ordered[min(len(ordered) - 1, int(len(ordered) * q))]

    out: dict[str, Any] = {
        "channel_live_batches": len(batches),
        "channel_live_batch_ms_p50": p([b["ms"] for b in batches], 0.5),
        "channel_live_batch_ms_p99": p([b["ms"] for b in batches], 0.99),
        "channel_live_frames_per_batch_p50": p([b.get("frames", 0) for b in batches], 0.5),
    }
    fanned = [b["fanout_ms"] for b in batches if "fanout_ms" in b]
    if fanned:
        out["channel_live_fanout_ms_p50"] = p(fanned, 0.5)
        out["channel_live_fanout_ms_p99"] = p(fanned, 0.99)
    return out


def await_setup(pipe: Pipe, *, expected: int, deadline: float) -> tuple[int, dict[int, Any]]:
    """Wait until ``expected`` channels stream (or the deadline), saying how far it got every few
    seconds; returns how many stream and the commands query's batches meanwhile."""
    streaming = 0
    commands: dict[int, Any] = {}
    while time.time() < deadline:
        time.sleep(min(5.0, max(0.0, deadline - time.time())))
        streaming = streaming_channels(pipe.client)
        note_commands(pipe, commands)
        log(f"live: {streaming:,} of {expected:,} channels streaming")
        if streaming >= expected:
            break
    note_commands(pipe, commands)
    return streaming, commands


def run_live(
    *,
    channels: int = CHANNELS,
    per_client: int = 10,
    followers: int = FOLLOWERS,
    queries: int = QUERIES,
    watchers: int = FOLLOWERS,
    universe: int = UNIVERSE,
    rate: float = 1000,
    setup_s: float = 240,
    ramp_s: float = 120,
    prices_s: float = 60,
    warmup_s: float = 10,
    duration_s: float = 30,
    workers: int = 2,
    reducers: str = "spark",
    batch: bool = False,
) -> dict[str, Any]:
    """The live stage (the module's docstring): returns its figures. The users set themselves up
    over ``setup_s`` at most; once every channel streams, prices flow at ``rate`` for ``prices_s``
    and until the reducers keep up with them, then the window starts (``warmup_s``, then
    ``duration_s`` measured)."""
    from django.conf import settings

    from bench.edge import port_wait

    most = channels_per_client_most(settings, subscribe_per_minute=settings.STREAM_SUBSCRIBE_LIMIT)
    if per_client > most:
        raise ValueError(f"a client may hold at most {most} channels under the product's limits")
    plan = live_plan(
        channels=channels,
        per_client=per_client,
        followers=followers,
        queries=queries,
        watchers=watchers,
        universe=universe,
    )
    expected = channels + min(followers, queries)
    out: dict[str, Any] = {
        "channel_clients": len(plan.holders),
        "channel_followers": len(plan.followers),
        "channel_watchers": len(plan.watchers),
        "channel_universe": universe,
        "channel_rate": rate,
        "channel_reducers": reducers,
        "channel_watch_batched": batch,
    }
    with contextlib.ExitStack() as stack:
        pipe = stack.enter_context(reducers_for_channels(reducers))
        # The server starts while the markets table is written and the punters are made.
        port = stack.enter_context(web_server(pipe.namespace, workers=workers))
        log(f"live: {universe:,} market definitions into the markets table")
        table_write(pipe.client, market_definitions(universe, now_ms=int(time.time() * 1000)))
        users = k6_plan(
            plan, cookies=stack.enter_context(punters(len(plan.holders) + len(plan.watchers), run=pipe.namespace))
        )
        port_wait(port, timeout=90)
        started = time.time()
        window = stack.enter_context(WindowSignal())
        k6 = stack.enter_context(
            k6_running(
                users=users,
                port=port,
                env={
                    "RAMP_MS": str(int(ramp_s * 1000)),
                    "SIGNAL": window.url,
                    "POLL_MS": str(POLL_MS),
                    "WARMUP_MS": str(int(warmup_s * 1000)),
                    "DURATION_MS": str(int(duration_s * 1000)),
                    "MAX_S": str(int(setup_s + prices_s + CATCH_UP_S + warmup_s + duration_s + 180)),
                    "BATCH": "1" if batch else "0",
                },
            )
        )
        log(f"live: k6 started, {len(users):,} users; waiting up to {setup_s:.0f} s for {expected:,} channels")
        streaming, commands = await_setup(pipe, expected=expected, deadline=started + setup_s)
        out.update(command_figures(commands))
        out["channel_streaming_at_start"] = streaming
        out["channel_setup_wall_s"] = round(time.time() - started, 1)
        # Prices once every channel streams. Fed during the setup, they fell behind: the commands
        # query applies its batches (minutes of them for thousands of channels) in the same
        # Python process as the price query, whose batches then grew to a minute of prices each
        # and never caught up on this machine (bench/NOTES.md, "Channels at scale").
        stack.enter_context(
            price_feed(
                pipe.namespace, markets=universe, rate=rate, seconds=prices_s + CATCH_UP_S + warmup_s + duration_s + 60
            )
        )
        log(f"live: prices at {rate:,.0f} a second for {prices_s:.0f} s before the window")
        time.sleep(prices_s)
        out["channel_price_lag_at_start_ms"] = round(await_prices(pipe, universe=universe, timeout=CATCH_UP_S))
        # Every user asks for the window at least every 1.5 POLL_MS: it starts once all know it.
        window_start = time.time() + 1.5 * POLL_MS / 1000
        window.open(int(window_start * 1000))
        stop_at = window_start + warmup_s + duration_s
        log(f"live: measuring {warmup_s:.0f} + {duration_s:.0f} s")
        summary = k6.wait(timeout=stop_at - time.time() + 120)
        if pipe.reducer_log is not None:
            out.update(batch_figures(reducer_batches(pipe.reducer_log, since=window_start + warmup_s, until=stop_at)))
    if not summary["channel_frames"] or not summary["watch_markets"]:
        raise RuntimeError(f"channels stage: nothing measured ({summary}); k6 log: {k6.log_tail()}")
    out.update(live_figures(summary, duration=duration_s))
    out.update(
        {
            "channel_setup_s": round(summary["setup_max_ms"] / 1000, 1),
            "channel_late_setups": summary["late_setups"],
            "channels_created": summary["channels_created"],
            "channels_begun": summary["channels_begun"],
            "channel_create_failures": summary["create_failures"],
            "channel_begin_failures": summary["begin_failures"],
            "channel_queries_followed": summary["queries_followed"],
            "channel_server_errors": summary["server_errors"],
            "channel_socket_errors": summary["socket_errors"],
            "channel_open_retries": summary["open_retries"],
            "channel_stale_frames": summary["stale_frames"],
            "channel_generator_cpu_s": round(summary["cpu_s"], 1),
        }
    )
    return out


# --- the stage ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sizes:
    """How big each part of the stage runs."""

    fanout_counts: tuple[int, ...]
    fanout_repeats: int
    universe: int
    queries: int
    query_repeats: int
    channels: int
    followers: int
    watchers: int
    rate: float
    setup_s: float
    ramp_s: float
    prices_s: float
    warmup_s: float
    duration_s: float
    reducers: str
    workers: int


FULL = Sizes(
    fanout_counts=FANOUT_COUNTS,
    fanout_repeats=FANOUT_REPEATS,
    universe=UNIVERSE,
    queries=QUERIES,
    query_repeats=QUERY_REPEATS,
    channels=CHANNELS,
    followers=FOLLOWERS,
    watchers=FOLLOWERS,
    # The end-to-end stage's price rate (bench/run.py's e2e arguments).
    rate=1000,
    # At most: the window starts as soon as every channel streams. The commands query applied
    # 10-17 commands a second here under other engineers' load (each command is several Redis
    # round trips, one after the other): 10,000 channels are 20,000 commands.
    setup_s=2400,
    ramp_s=120,
    prices_s=60,
    warmup_s=10,
    duration_s=30,
    reducers="spark",
    # The web processes of `make up` (WEB_WORKERS).
    workers=2,
)
# Small and fast, the reducers without Spark: a smoke test of every part (`make bench --quick`,
# tests/integration/test_bench_channels.py).
QUICK = Sizes(
    fanout_counts=(100, 300),
    fanout_repeats=3,
    universe=500,
    queries=5,
    query_repeats=3,
    channels=60,
    followers=5,
    watchers=5,
    rate=200,
    setup_s=60,
    ramp_s=2,
    prices_s=3,
    warmup_s=2,
    duration_s=5,
    reducers="plain",
    workers=1,
)
PARTS = ("fanout", "queries", "live")


def bench_channels(*, quick: bool = False, sizes: Sizes | None = None, parts: Sequence[str] = PARTS) -> dict[str, Any]:
    """The stage: the fan-out and the query stage timed in this process, then the live run."""
    size = sizes or (QUICK if quick else FULL)
    out: dict[str, Any] = {}
    if "fanout" in parts:
        log("fan-out of one batch at each channel count, in this process")
        out.update(time_fan_out(counts=size.fanout_counts, universe=size.universe, repeats=size.fanout_repeats))
    if "queries" in parts:
        log("the query stage: shared queries compared with a markets batch, and the window ticks")
        out.update(time_query_refresh(markets=size.universe, queries=size.queries, repeats=size.query_repeats))
    if "live" in parts:
        log("live: channels held by k6 clients through the control API, the reducers and the edge")
        out.update(
            run_live(
                channels=size.channels,
                followers=size.followers,
                queries=size.queries,
                watchers=size.watchers,
                universe=size.universe,
                rate=size.rate,
                setup_s=size.setup_s,
                ramp_s=size.ramp_s,
                prices_s=size.prices_s,
                warmup_s=size.warmup_s,
                duration_s=size.duration_s,
                reducers=size.reducers,
                workers=size.workers,
            )
        )
    return out


def markdown_lines(results: dict[str, Any]) -> list[str]:
    """The stage's lines under the table of docs/performance.md: the live run's shape, the
    fan-out's profile split and what the reducers logged during the window."""
    if results.get("channel_p99_ms") is None:
        return []
    r = results
    lines = [
        "",
        f"Channels stage: {r.get('channels_created', 0):,} channels held by {r.get('channel_clients', 0):,} k6 "
        f"clients, {r.get('channel_queries_followed', 0)} followers of {r.get('query_specs')} queries and "
        f"{r.get('channel_watchers', 0)} watchers over {r.get('channel_universe', 0):,} markets at "
        f"{r.get('channel_rate', 0):,.0f} prices/s (reducers: {r.get('channel_reducers')}); channel p50 "
        f"{r.get('channel_p50_ms')} ms, watch p50 {r.get('channel_watch_p50_ms')} ms; sequence gaps: "
        f"{r.get('channel_seq_gaps')} in channels, {r.get('query_seq_gaps')} in query channels.",
    ]
    if r.get("channel_live_note"):
        lines.append(f"Note: {r['channel_live_note']}.")
    split = r.get("channel_fanout_profile_ms") or {}
    if split:
        lines.append(
            f"Fan-out to {max(FANOUT_COUNTS):,} channels, profiled (cProfile, ms of one batch): routes' round trip "
            f"{split.get('routes')}, frames built {split.get('frames')}, publishing round trip {split.get('publish')}."
        )
    if r.get("channel_live_batches"):
        fanout = (
            f", fan-out p50 {r['channel_live_fanout_ms_p50']} ms (p99 {r['channel_live_fanout_ms_p99']})"
            if "channel_live_fanout_ms_p50" in r
            else ""
        )
        lines.append(
            f"The reducers during the window: {r['channel_live_batches']} price batches, p50 "
            f"{r['channel_live_batch_ms_p50']} ms (p99 {r['channel_live_batch_ms_p99']}), "
            f"{r['channel_live_frames_per_batch_p50']} channel frames a batch (p50){fanout}."
        )
    if r.get("commands_applied_per_s"):
        lines.append(
            f"The commands query during the setup: {r['command_rows']:,} commands in {r['command_batches']} batches, "
            f"{r['commands_applied_per_s']:,} a second while busy (the longest batch {r['command_batch_ms_max']:,} ms)."
        )
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small and fast, the reducers without Spark")
    parser.add_argument("--only", choices=PARTS, nargs="*", help="parts to run (all)")
    parser.add_argument("--out", type=Path, help="write the figures to this JSON file")
    parser.add_argument("--channels", type=int, help="slip and bets channels of the live part (the full size's)")
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
    import django

    django.setup()
    size = QUICK if args.quick else FULL
    if args.channels is not None:
        size = replace(size, channels=args.channels)
    results = bench_channels(sizes=size, parts=args.only or PARTS)
    body = json.dumps(results, indent=2, default=str)
    if args.out is not None:
        args.out.write_text(body)
    print(body)


if __name__ == "__main__":
    main()
