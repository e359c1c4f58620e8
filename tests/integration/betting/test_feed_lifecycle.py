"""The feed simulator plays matches: kick-off, scores, full time, results and settlement."""

from __future__ import annotations

import io
import random
import time
from datetime import timedelta
from decimal import Decimal

import orjson
import pytest
from django.core.management import call_command
from django.utils import timezone

from odds.betting.models import Bet
from odds.catalogue.models import Competition, Event, Market, Selection, Sport
from odds.catalogue.services.markets import market_suspend, markets_status_set, selection_price_set
from odds.feed.book import overround, to_ladder
from odds.feed.pricing.football import FootballRates
from odds.feed.services.feed import FeedRunner
from reducers.market_kinds import DOUBLE_CHANCE, KINDS, MATCH_RESULT, OVER_UNDER, Outcome
from reducers.schemas import decode_match_state, decode_price_update_json
from tests.factories import market_create, user_create
from tests.integration.betting.helpers import bet_accepted, selections_of

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def football_event(*, starts_in: float) -> Event:
    sport, _ = Sport.objects.get_or_create(slug="football", defaults={"name": "Football"})
    competition, _ = Competition.objects.get_or_create(sport=sport, name="Lifecycle League")
    event = Event.objects.create(
        competition=competition, home="Rovers", away="United", starts_at=timezone.now() + timedelta(seconds=starts_in)
    )
    result = Market.objects.create(event=event, kind=MATCH_RESULT.key, name="Match result")
    for i, (name, price) in enumerate((("Rovers", "2.10"), ("Draw", "3.40"), ("United", "3.50"))):
        Selection.objects.create(market=result, name=name, price=Decimal(price), display_order=i)
    totals = Market.objects.create(
        event=event, kind=OVER_UNDER.key, name="Total goals 2.5", line=Decimal("2.5"), display_order=1
    )
    for i, (name, price) in enumerate((("Over 2.5", "1.90"), ("Under 2.5", "1.90"))):
        Selection.objects.create(market=totals, name=name, price=Decimal(price), display_order=i)
    double = Market.objects.create(event=event, kind=DOUBLE_CHANCE.key, name="Double chance", display_order=2)
    for i, (name, price) in enumerate(
        (("Rovers or draw", "1.30"), ("Draw or United", "1.60"), ("Rovers or United", "1.33"))
    ):
        Selection.objects.create(market=double, name=name, price=Decimal(price), display_order=i)
    return event


@pytest.fixture
def played(kafka_topics, redis_client, celery_inline):
    """A football match kicking off in a moment, played by the feed at 4,000 times real speed (about 1.4 s),
    with a bet on it."""
    event = football_event(starts_in=0.5)
    result_market = event.markets.get(kind=MATCH_RESULT.key)
    bet = bet_accepted(user_create(), selections_of(result_market)[0], stake="10.00")
    recording = io.BytesIO()
    runner = FeedRunner(rate=100, markets=10, seed=11, record=recording, speed=4000, lifecycle_interval=0.05)
    runner.run(duration=2.5, out=io.StringIO())
    # Full time comes about 2.1 s in; on a loaded machine a late lifecycle tick can push it past
    # the run, so the match is played on (half a second at a time) until the event has finished.
    deadline = time.monotonic() + 30
    while Event.objects.get(pk=event.pk).status != Event.Status.FINISHED and time.monotonic() < deadline:
        runner.run(duration=0.5, out=io.StringIO())
    updates = [orjson.loads(line) for line in recording.getvalue().splitlines()]
    return event, result_market, bet, updates


def test_kick_off_suspends_the_markets_then_reopens_them_in_play(played):
    _, market, _, updates = played
    statuses = [u["status"] for u in updates if u["market_id"] == market.id]
    first_suspension = statuses.index("suspended")
    assert "open" in statuses[first_suspension:]


def test_full_time_closes_the_markets_on_the_price_topic(played):
    _, market, _, updates = played
    statuses = [u["status"] for u in updates if u["market_id"] == market.id]
    assert statuses[-1] == "closed"


def test_full_time_finishes_the_event(played):
    event, *_ = played
    event.refresh_from_db()
    assert (event.status, event.clock) == (Event.Status.FINISHED, "FT")


def test_markets_are_resulted_from_the_final_score(played):
    event, *_ = played
    event.refresh_from_db()
    for market in event.markets.all():
        expected = KINDS[market.kind].winners(
            Outcome(event.home_score, event.away_score), line=market.line, selections=market.selections.count()
        )
        assert expected is not None
        winners = [i for i, s in enumerate(selections_of(market)) if s.result == Selection.Result.WON]
        assert tuple(winners) == expected


def test_bets_on_a_finished_match_are_settled(played):
    event, market, bet, _ = played
    for row in (event, market, bet):
        row.refresh_from_db()
    home_won = event.home_score > event.away_score
    assert (market.status, bet.status) == (Market.Status.SETTLED, Bet.Status.WON if home_won else Bet.Status.LOST)


def test_every_book_in_play_stays_on_the_ladder_with_a_realistic_overround(played):
    event, *_, updates = played
    winning = {market.id: KINDS[market.kind].winning for market in event.markets.all()}
    for update in updates:
        prices = [Decimal(s["price"]) for s in update["selections"]]
        assert all(to_ladder(p) == p for p in prices)
        # Double chance's selections win in pairs: its book is twice a one-winner book.
        assert Decimal("1.03") <= overround(prices) / winning[update["market_id"]] <= Decimal("1.10"), prices


def test_the_feed_does_not_move_a_market_a_trader_suspended(kafka_topics, redis_client):
    market = market_create()
    runner = FeedRunner(rate=100, markets=10, seed=3, record=io.BytesIO(), speed=1, lifecycle=False)
    market_suspend(market=market)
    runner.sync_catalogue()
    sent = runner.sent
    runner.tick_prices(20)
    assert runner.sent == sent


def test_a_trader_price_becomes_the_feeds_starting_point(kafka_topics, redis_client):
    market = market_create()
    runner = FeedRunner(rate=100, markets=10, seed=3, record=io.BytesIO(), speed=1, lifecycle=False)
    selection_price_set(selection=selections_of(market)[0], price=Decimal("1.80"))
    runner.sync_catalogue()
    assert runner.by_id[market.id].prices[0] == Decimal("1.80")


class Scripted(random.Random):
    """A random source whose first draws are given (then it carries on as seeded)."""

    def __init__(self, first: list[float], seed: int = 1) -> None:
        super().__init__(seed)
        self.first = list(first)

    def random(self) -> float:
        return self.first.pop(0) if self.first else super().random()


def test_a_goal_suspends_the_markets_with_its_reason_and_shortens_the_scorer(kafka_topics, redis_client):
    event = football_event(starts_in=60)
    market = event.markets.get(kind=MATCH_RESULT.key)
    recording = io.BytesIO()
    runner = FeedRunner(rate=100, markets=10, seed=5, record=recording, speed=60)
    match = runner.matches[event.id]
    match.params = FootballRates(0.01, 0.01)  # nothing happens by itself in the minute played here
    runner.tick_lifecycle(match.starts_at + 0.01)  # kick-off
    runner.tick_lifecycle(match.starts_at + 1.0)  # reopened in play
    home_before = runner.by_id[market.id].prices[0]
    # The next incident is due now; the scripted draws make it a home goal that VAR does not check.
    match.next_at = match.starts_at + 2.0
    runner.rng = Scripted([0.0, 0.99])
    runner.tick_lifecycle(match.starts_at + 2.0)

    last = [u for u in map(orjson.loads, recording.getvalue().splitlines()) if u["market_id"] == market.id][-1]
    event.refresh_from_db()
    market.refresh_from_db()
    assert (event.home_score, event.away_score) == (1, 0)
    assert (last["market_id"], last["status"]) == (market.id, "suspended")
    assert Decimal(last["selections"][0]["price"]) < home_before
    assert (market.status, market.suspension_reason, market.suspended_by) == ("suspended", "goal", "feed")
    state = match_states_of(event.id)[-1]
    assert state["suspension"]["reason"] == "goal"
    assert state["score"] == {"home": 1, "away": 0, "periods": [[1, 0]]}


def test_the_feed_reopens_its_own_suspension_once_the_goal_has_settled(kafka_topics, redis_client):
    event = football_event(starts_in=60)
    market = event.markets.get(kind=MATCH_RESULT.key)
    runner = FeedRunner(rate=100, markets=10, seed=5, record=io.BytesIO(), speed=60)
    match = runner.matches[event.id]
    match.params = FootballRates(0.01, 0.01)  # nothing happens by itself in the minute played here
    runner.tick_lifecycle(match.starts_at + 0.01)
    market.refresh_from_db()
    assert (market.status, market.suspension_reason) == ("suspended", "kick_off")
    runner.tick_lifecycle(match.starts_at + 1.0)
    market.refresh_from_db()
    assert (market.status, market.suspension_reason, market.suspended_by) == ("open", "", "")


def test_a_trader_who_suspends_during_the_feeds_suspension_keeps_the_market_suspended(kafka_topics, redis_client):
    event = football_event(starts_in=60)
    market = event.markets.get(kind=MATCH_RESULT.key)
    runner = FeedRunner(rate=100, markets=10, seed=5, record=io.BytesIO(), speed=60)
    match = runner.matches[event.id]
    match.params = FootballRates(0.01, 0.01)
    runner.tick_lifecycle(match.starts_at + 0.01)  # kick-off: the feed suspends
    market_suspend(market=Market.objects.get(id=market.id))
    runner.sync_catalogue()
    runner.tick_lifecycle(match.starts_at + 1.0)  # the feed lifts its own suspensions
    market.refresh_from_db()
    assert (market.status, market.suspension_reason, market.suspended_by) == ("suspended", "trader", "system")
    others = event.markets.exclude(id=market.id).values_list("status", flat=True)
    assert set(others) == {"open"}


def test_markets_a_stopped_feed_left_suspended_are_reopened_when_it_starts_again(kafka_topics, redis_client):
    event = football_event(starts_in=600)
    market = event.markets.get(kind=MATCH_RESULT.key)
    markets_status_set(
        market_ids=[market.id], status="suspended", only_from=["open"], publish=False, reason="goal", by="feed"
    )
    FeedRunner(rate=100, markets=10, seed=5, record=io.BytesIO(), speed=1)
    market.refresh_from_db()
    assert market.status == "open"


def test_a_traders_suspension_stays_when_the_feed_starts_again(kafka_topics, redis_client):
    event = football_event(starts_in=600)
    market = event.markets.get(kind=MATCH_RESULT.key)
    market_suspend(market=market)
    FeedRunner(rate=100, markets=10, seed=5, record=io.BytesIO(), speed=1)
    market.refresh_from_db()
    assert (market.status, market.suspension_reason) == ("suspended", "trader")


def test_prices_follow_the_score_a_side_two_down_at_89_minutes_is_a_long_shot(kafka_topics, redis_client):
    event = football_event(starts_in=-89 * 60)
    Event.objects.filter(id=event.id).update(status=Event.Status.IN_PLAY, home_score=0, away_score=2)
    market = event.markets.get(kind=MATCH_RESULT.key)
    totals = event.markets.get(kind=OVER_UNDER.key)
    runner = FeedRunner(rate=100, markets=10, seed=5, record=io.BytesIO(), speed=1, lifecycle=False)
    home, draw, away = runner.by_id[market.id].prices
    assert home >= Decimal("50")
    assert draw >= Decimal("10")
    assert away <= Decimal("1.05")
    # Over 2.5 needs a third goal in the minutes left: under is the short price.
    over, under = runner.by_id[totals.id].prices
    assert under < Decimal("1.3") < Decimal("4") < over


def test_a_recorded_feed_replays_the_same_updates(kafka_topics, redis_client, tmp_path):
    market_create()
    path = tmp_path / "feed.jsonl"
    call_command(
        "run_feed", "--rate", "200", "--markets", "5", "--duration", "1", "--record", str(path), stdout=io.StringIO()
    )
    recorded = [decode_price_update_json(line) for line in path.read_bytes().splitlines()]
    out = io.StringIO()
    call_command("run_feed", "--replay", str(path), "--rate", "10000", stdout=out)
    assert recorded
    assert out.getvalue().strip() == f"replayed {len(recorded)} updates"


def match_states_of(event_id: int) -> list[dict]:
    """Every match state the feed published for an event, in order (this session's topic)."""
    from reducers import topics
    from tests.integration.topic_records import records_from_start

    states = [
        decode_match_state(record.value())
        for record in records_from_start(topics.match_states())
        if record.key() == str(event_id).encode()
    ]
    return [s.to_json() for s in sorted(states, key=lambda s: s.seq)]


def test_the_feed_publishes_the_match_state_from_kick_off_to_full_time(played):
    event, *_ = played
    event.refresh_from_db()
    states = match_states_of(event.id)
    assert states[0]["incidents"][-1]["kind"] == "kick_off"
    assert states[0]["clock"]["running"] is True
    assert any(s["status"] == "break" and s["clock"]["running"] is False for s in states)
    assert any(s["period"] == 2 for s in states)
    final = states[-1]
    assert final["status"] == "finished"
    assert (final["score"]["home"], final["score"]["away"]) == (event.home_score, event.away_score)
    halves = final["score"].get("periods", [])
    assert [sum(h for h, _ in halves), sum(a for _, a in halves)] == [event.home_score, event.away_score]
    goals = [i for i in final["incidents"] if i["kind"] == "goal"]
    assert len(goals) == event.home_score + event.away_score
    assert [s["seq"] for s in states] == sorted({s["seq"] for s in states})


def test_a_tennis_match_is_played_point_by_point_and_resulted_on_sets_and_games(kafka_topics, redis_client):
    sport, _ = Sport.objects.get_or_create(slug="tennis", defaults={"name": "Tennis"})
    competition, _ = Competition.objects.get_or_create(sport=sport, name="Lifecycle Open")
    event = Event.objects.create(
        competition=competition, home="Server", away="Returner", starts_at=timezone.now() + timedelta(seconds=0.5)
    )
    markets = {}
    for order, (kind, line, names) in enumerate(
        (("match_winner", None, ("Server", "Returner")), ("over_under", Decimal("22.5"), ("Over 22.5", "Under 22.5")))
    ):
        markets[kind] = Market.objects.create(event=event, kind=kind, name=kind, line=line, display_order=order)
        for i, name in enumerate(names):
            Selection.objects.create(market=markets[kind], name=name, price=Decimal("1.90"), display_order=i)
    runner = FeedRunner(rate=50, markets=10, seed=3, record=io.BytesIO(), speed=4000, lifecycle_interval=0.05)
    runner.run(duration=4.0, out=io.StringIO())

    states = match_states_of(event.id)
    assert any(s["score"]["points"] != ["0", "0"] for s in states)
    assert {s["score"]["server"] for s in states} == {"home", "away"}
    final = states[-1]
    assert final["status"] == "finished"
    sets = final["score"]["sets"]
    assert max(sets) == 2
    winner = 0 if sets[0] == 2 else 1
    games = sum(h + a for h, a in final["score"]["set_games"])
    results = {kind: [s.result for s in selections_of(market)] for kind, market in markets.items()}
    assert results["match_winner"][winner] == Selection.Result.WON
    assert results["over_under"][0 if games > 22.5 else 1] == Selection.Result.WON
