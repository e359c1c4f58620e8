"""Match state in a browser: each sport's score and clock, ticking between messages."""

from __future__ import annotations

import re
import time

import orjson
import pytest
from playwright.sync_api import Page, Route, expect

from odds.catalogue.models import Competition, Event, Sport
from odds.feed.matchstate import match_state_build
from odds.feed.pricing.tennis import TennisLive, point_played
from reducers import keys, topics
from reducers.matchstate import ConflatedMatch, match_message
from reducers.schemas import Incident
from tests.browser.axe import axe_check
from tests.factories import market_create

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def now_ms() -> int:
    return int(time.time() * 1000)


def in_play(event_id: int) -> None:
    Event.objects.filter(id=event_id).update(status=Event.Status.IN_PLAY)


def tennis_after(games: list[str]) -> TennisLive:
    """The score after each of ``games`` was won to love by that side."""
    live = TennisLive()
    for side in games:
        for _ in range(4):
            live = point_played(live, "home" if side == "home" else "away").live
    return live


def state_of(*, event_id: int, sport: str, seq: int, home: int = 0, away: int = 0, games_won=(), rate: int = 1):
    return match_state_build(
        event_id=event_id,
        seq=seq,
        sport=sport,
        status="in_play",
        elapsed_s=600,
        home=home,
        away=away,
        tennis=tennis_after(list(games_won)) if sport == "tennis" else None,
        incidents=[Incident(kind="goal", side="home", period=1, at=now_ms())] * home,
        now_ms=now_ms(),
        rate=rate,
    )


def store(redis_client, state) -> None:
    message = match_message(item=ConflatedMatch(state, 1, now_ms()), reducer_ts=now_ms())
    redis_client.hset(keys.match_state(state.event_id), mapping={"seq": state.seq, "state": orjson.dumps(message)})


def test_a_football_clock_advances_without_any_message(asgi_server, redis_client, page: Page):
    market = market_create()
    in_play(market.event_id)
    # The demo plays a minute a second; the clock must move on from the one state it was given.
    store(redis_client, state_of(event_id=market.event_id, sport="football", seq=1, rate=60))
    polls: list[str] = []

    def first_poll_only(route: Route) -> None:
        polls.append(route.request.url)
        if len(polls) == 1:
            route.continue_()
        else:
            route.abort()

    page.route("**/live/events*", first_poll_only)
    page.goto(f"{asgi_server}/event/{market.event_id}/")
    clock = page.locator(".event-head [data-clock]")
    expect(clock).to_have_text(re.compile(r"^1[12]'$"))
    expect(clock).to_have_text(re.compile(r"^1[5-9]'$"), timeout=10_000)
    axe_check(page)


def test_a_tennis_event_shows_sets_and_games_and_no_minute_clock(asgi_server, redis_client, page: Page):
    sport, _ = Sport.objects.get_or_create(slug="tennis", defaults={"name": "Tennis"})
    competition, _ = Competition.objects.get_or_create(sport=sport, name="Test Open")
    market = market_create()
    Event.objects.filter(id=market.event_id).update(competition=competition, status=Event.Status.IN_PLAY)
    games = ["home"] * 6 + ["away", "home", "home"]
    store(redis_client, state_of(event_id=market.event_id, sport="tennis", seq=1, games_won=games))
    page.goto(f"{asgi_server}/event/{market.event_id}/")
    head = page.locator(".event-head")
    expect(head.locator("[data-score='home']")).to_have_text("1")
    expect(head.locator("[data-score='away']")).to_have_text("0")
    expect(head.locator("[data-score-detail]")).to_have_text("Games 2-1, points 0-0")
    expect(head.locator("[data-clock]")).to_have_text("Set 2")
    time.sleep(1.5)
    expect(head.locator("[data-clock]")).not_to_have_text(re.compile("'"))
    axe_check(page)


def test_a_goal_pushed_through_the_stream_updates_the_score(
    asgi_server, reducers_running, producer, redis_client, page: Page
):
    market = market_create()
    in_play(market.event_id)
    first = state_of(event_id=market.event_id, sport="football", seq=1)
    producer.produce(topics.match_states(), key=first.key(), value=first.encode())
    producer.flush(10)
    page.goto(f"{asgi_server}/event/{market.event_id}/")
    home = page.locator(".event-head [data-score='home']")
    expect(page.locator(".event-head [data-clock]")).to_have_text(re.compile(r"^1[12]'$"), timeout=30_000)
    goal = state_of(event_id=market.event_id, sport="football", seq=2, home=1)
    producer.produce(topics.match_states(), key=goal.key(), value=goal.encode())
    producer.flush(10)
    expect(home).to_have_text("1", timeout=30_000)


def test_an_open_bet_in_my_bets_shows_its_match_score_and_clock(
    asgi_server, price_query, publish, producer, redis_client, login, page: Page
):
    from decimal import Decimal

    from odds.betting.services.bets import LegRequest, bet_place
    from tests.factories import price_update, user_create

    market = market_create(prices=("2.00", "3.40", "3.80"))
    selection = market.selections.order_by("display_order")[0]
    user = login(user_create(balance="50.00"))
    publish(price_update(market, seq=1, prices=("2.00", "3.40", "3.80")))
    bet = bet_place(
        user=user,
        idempotency_key="match-state-test",
        stake=Decimal("5.00"),
        legs=[LegRequest(selection_id=selection.id, price_seen=Decimal("2.00"))],
        price_policy="none",
    ).bet
    store(redis_client, state_of(event_id=market.event_id, sport="football", seq=1, home=1))

    page.goto(f"{asgi_server}/my-bets/")
    live = page.locator(f'.bet-card[data-bet-id="{bet.id}"] .leg-live')
    expect(live.locator("[data-score='home']")).to_have_text("1", timeout=30_000)
    expect(live.locator("[data-clock]")).to_have_text(re.compile(r"^1[12]'$"))
    goal = state_of(event_id=market.event_id, sport="football", seq=2, home=2)
    producer.produce(topics.match_states(), key=goal.key(), value=goal.encode())
    producer.flush(10)
    expect(live.locator("[data-score='home']")).to_have_text("2", timeout=30_000)
    axe_check(page)
