"""The channels stage's pure parts: what it holds (markets, queries, channel specs), how its
clients are dealt out under the product's limits, and how its figures are read and judged."""

from __future__ import annotations

import http.client
import math
from collections import Counter
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace

import pytest

from bench.channels import (
    LEGS,
    Plan,
    WindowSignal,
    batch_figures,
    channel_specs,
    channels_per_client_most,
    count_label,
    fanout_growth,
    k6_plan,
    live_figures,
    live_plan,
    markdown_lines,
    market_definitions,
    query_specs,
    reducer_batches,
    spec_markets,
)
from bench.soak import channel_faults
from reducers.rules import MAX_RETURN
from reducers.subscriptions import query_from_json, query_matches, shared_channel_id, spec_from_json

NOW = 1_795_000_000_000


def test_fifty_distinct_queries_each_a_shared_channel_of_its_own():
    queries = [query_from_json(raw) for raw in query_specs(50)]
    assert len({shared_channel_id(q) for q in queries if q is not None}) == 50


def test_every_query_holds_markets_of_the_benchmark_universe():
    definitions = market_definitions(10_000, now_ms=NOW)
    for raw in query_specs(50):
        query = query_from_json(raw)
        assert query is not None
        held = sum(1 for d in definitions if query_matches(query, d, now_ms=NOW))
        assert 0 < held < len(definitions), raw


def test_markets_are_two_an_event_the_first_its_headline_and_a_tenth_in_play():
    definitions = market_definitions(1000, now_ms=NOW)
    assert [d.market_id for d in definitions] == list(range(1, 1001))
    assert [d.headline for d in definitions[:4]] == [True, False, True, False]
    assert definitions[0].event_id == definitions[1].event_id != definitions[2].event_id
    in_play = sum(1 for d in definitions if d.event_status == "in_play")
    assert in_play == 100
    assert all(d.starts_at > NOW for d in definitions if d.event_status == "scheduled")


def test_asking_for_more_distinct_queries_than_there_are_is_refused():
    with pytest.raises(ValueError, match="distinct benchmark queries"):
        query_specs(1000)


def test_channel_specs_are_slips_and_bets_views_of_three_to_eight_distinct_legs():
    specs = channel_specs(400, universe=1000)
    assert Counter(s["view"] for s in specs) == {"slip": 200, "bets": 200}
    for spec in specs:
        markets = spec_markets(spec)
        assert LEGS[0] <= len(markets) <= LEGS[1]
        assert len(set(markets)) == len(markets)
        assert all(1 <= m <= 1000 for m in markets)


def test_every_channel_spec_is_one_the_control_api_takes():
    for spec in channel_specs(200, universe=500):
        parsed = spec_from_json(spec)
        assert parsed.explicit_markets() == set(spec_markets(spec))
        for bet in parsed.bets:
            assert bet.stake * math.prod(leg.price for leg in bet.legs) <= Decimal(MAX_RETURN)


def test_bet_ids_are_unique_across_the_bets_views():
    ids = [bet["bet_id"] for spec in channel_specs(300, universe=1000) for bet in spec.get("bets", [])]
    assert len(ids) == len(set(ids))


def test_the_same_arguments_give_the_same_specs():
    assert channel_specs(50, universe=1000) == channel_specs(50, universe=1000)


def test_a_client_holds_no_more_channels_than_the_tightest_limit_allows():
    settings = SimpleNamespace(
        STREAM_MAX_CHANNELS_PER_SESSION=32, STREAM_MAX_CHANNELS_PER_USER=64, STREAM_CONTROL_LIMIT=12
    )
    assert channels_per_client_most(settings, subscribe_per_minute=30) == 12
    assert channels_per_client_most(settings, subscribe_per_minute=8) == 8


def test_the_plan_deals_channels_to_clients_and_queries_round_to_followers():
    plan = live_plan(channels=105, per_client=10, followers=20, queries=5, watchers=3, universe=1000)
    assert [len(h) for h in plan.holders] == [10] * 10 + [5]
    assert Counter(str(sorted(q.items())) for q in plan.followers).most_common()[-1][1] == 4
    assert len(plan.watchers) == 3
    assert all(len(set(w)) == 20 for w in plan.watchers)
    assert plan.users() == 11 + 20 + 3


def test_holders_and_watchers_speak_as_punters_and_followers_as_visitors():
    plan = Plan(holders=[[{"view": "slip"}]], followers=[{"in_play": True}], watchers=[[1, 2]])
    users = k6_plan(plan, cookies=[("s1", "c1"), ("s2", "c2")])
    assert [u["role"] for u in users] == ["holder", "follower", "watcher"]
    assert (users[0]["session"], users[2]["session"]) == ("s1", "s2")
    assert "session" not in users[1]
    with pytest.raises(ValueError, match="punter of their own"):
        k6_plan(plan, cookies=[("s1", "c1")])


def test_fan_out_growth_is_the_largest_count_over_the_smallest():
    assert fanout_growth({1000: 4.0, 5000: 9.0, 10_000: 20.0}) == 5.0
    assert fanout_growth({1000: 4.0}) is None
    assert (count_label(1000), count_label(10_000), count_label(300)) == ("1k", "10k", "300")


def _summary(**overrides):
    summary = {
        "channel_frames": 3000,
        "channel_markets": 3300,
        "channel_p50_ms": 41.26,
        "channel_p99_ms": 120.0,
        "channel_max_ms": 300.0,
        "watch_markets": 600,
        "watch_p50_ms": 30.0,
        "watch_p99_ms": 100.0,
        "watch_max_ms": 150.0,
        "channel_gaps": 0,
        "query_frames": 12,
        "query_gaps": 0,
    }
    return {**summary, **overrides}


def test_live_figures_are_per_second_over_the_window_with_the_ratio_of_the_p99s():
    figures = live_figures(_summary(), duration=30)
    assert figures["channel_deliveries_per_s"] == 100
    assert figures["channel_watch_deliveries_per_s"] == 20
    assert figures["channel_p50_ms"] == 41.3
    assert figures["channel_p99_vs_watch"] == 1.2


def test_no_watch_latency_gives_no_ratio():
    assert live_figures(_summary(watch_p99_ms=0), duration=30)["channel_p99_vs_watch"] is None


def test_the_reducers_price_batches_of_the_window_are_read_from_their_log(tmp_path: Path):
    log = tmp_path / "reducers.log"
    log.write_text(
        "2026-11-28 06:30:00,100 INFO spark.jobs.prices batch 7 (read by kafka): "
        "{'records': 90, 'frames': 400, 'fanout_ms': 20, 'ms': 60}\n"
        "2026-11-28 06:30:01,100 INFO spark.jobs.prices batch 8 (read by kafka): "
        "{'records': 95, 'frames': 500, 'fanout_ms': 30, 'ms': 70}\n"
        "2026-11-28 06:30:01,200 INFO spark.jobs.markets batch 3: {'written': 1}\n"
        "2026-11-28 06:31:00,000 INFO spark.jobs.prices batch 9 (read by kafka): "
        "{'records': 99, 'frames': 999, 'fanout_ms': 99, 'ms': 99}\n"
    )
    from datetime import datetime

    since = datetime(2026, 11, 28, 6, 30, 0).timestamp()
    batches = reducer_batches(log, since=since, until=since + 10)
    assert [b["frames"] for b in batches] == [400, 500]
    figures = batch_figures(batches)
    assert figures["channel_live_batches"] == 2
    assert figures["channel_live_fanout_ms_p99"] == 30
    assert batch_figures([]) == {}


def test_the_stage_writes_its_lines_only_when_it_ran():
    assert markdown_lines({}) == []
    lines = markdown_lines(
        {
            "channel_p99_ms": 120.0,
            "channels_created": 10_000,
            "channel_clients": 1000,
            "channel_fanout_profile_ms": {"routes": 5.0, "frames": 20.0, "publish": 6.0},
        }
    )
    assert any("10,000 channels" in line for line in lines)
    assert any("frames built 20.0" in line for line in lines)


def test_the_window_signal_answers_no_content_until_the_window_is_named():
    with WindowSignal() as window:
        connection = http.client.HTTPConnection("127.0.0.1", window.port, timeout=5)
        connection.request("GET", "/window")
        first = connection.getresponse()
        first.read()
        window.open(1_795_000_000_000)
        connection.request("GET", "/window")  # the same connection, kept open
        second = connection.getresponse()
        assert (first.status, second.status, second.read()) == (204, 200, b"1795000000000")
        connection.close()


def _soak(**overrides):
    result = {
        "channels": 100,
        "channel_frames": 5000,
        "channel_gaps": 0,
        "query_gaps": 0,
        "channel_errors": 0,
        "channel_failed_requests": 0,
        "channel_maps_during": {"market_channels_members": [550, 550], "channels_index": [110, 110]},
        "query_maps_growth_pct": 0.0,
    }
    return {**result, **overrides}


def test_a_soak_whose_channels_kept_every_frame_has_no_fault():
    assert channel_faults(_soak(), tolerance=5) == []
    assert channel_faults({"received": 1}, tolerance=5) == []  # no channels held


def test_a_soak_fails_on_a_gap_a_moving_map_or_growing_queries():
    faults = channel_faults(
        _soak(
            channel_gaps=2,
            channel_maps_during={"market_channels_members": [550, 561]},
            query_maps_growth_pct=12.0,
        ),
        tolerance=5,
    )
    assert faults == ["channel_gaps 2", "market_channels_members moved [550, 561]", "query maps grew 12.0 %"]
