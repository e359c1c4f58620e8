"""Match state in a browser: each sport's scoreboard, right in the page as served (scripts off)
and ticking, moving and ending with scripts on; the slip knows when a match has ended."""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import Browser, Page, Route, expect

from odds.catalogue.models import Competition, Event, Market, Sport
from odds.feed.matchstate import match_state_build
from odds.feed.pricing.tennis import TennisLive, point_played
from reducers import topics
from reducers.matchstate import ConflatedMatch, encode_match, match_message
from reducers.schemas import Incident, MatchSuspension
from store import keys
from tests.browser.axe import axe_check
from tests.factories import market_create, sign_in, user_create

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def now_ms() -> int:
    return int(time.time() * 1000)


def in_play(event_id: int) -> None:
    Event.objects.filter(id=event_id).update(status=Event.Status.IN_PLAY)


def tennis_after(points: list[str]) -> TennisLive:
    """The score after each point, won by the side named."""
    live = TennisLive()
    for side in points:
        live = point_played(live, "home" if side == "home" else "away").live
    return live


def games(*sides: str) -> list[str]:
    """Points that win each game to love for the side named."""
    return [side for side in sides for _ in range(4)]


def state_of(
    *,
    event_id: int,
    sport: str,
    seq: int,
    home: int = 0,
    away: int = 0,
    tennis: TennisLive | None = None,
    rate: int = 1,
    elapsed_s: float = 600,
    status: str = "in_play",
    suspension: MatchSuspension | None = None,
):
    return match_state_build(
        event_id=event_id,
        seq=seq,
        sport=sport,
        status=status,
        elapsed_s=elapsed_s,
        home=home,
        away=away,
        tennis=tennis,
        incidents=[Incident(kind="goal", side="home", period=1, at=now_ms())] * home,
        now_ms=now_ms(),
        rate=rate,
        suspension=suspension,
    )


def store(redis_client, state) -> None:
    """Stores the state and publishes it on the event's channel, as the match reducer does."""
    message = match_message(item=ConflatedMatch(state, 1, now_ms()), reducer_ts=now_ms())
    encoded = encode_match(message)
    redis_client.hset(keys.match_state(state.event_id), mapping={"seq": state.seq, "state": encoded})
    redis_client.publish(keys.match_channel(state.event_id), encoded)


def tennis_market() -> Market:
    sport, _ = Sport.objects.get_or_create(slug="tennis", defaults={"name": "Tennis"})
    competition, _ = Competition.objects.get_or_create(sport=sport, name="Test Open")
    market = market_create(prices=("1.80", "2.00"))
    Event.objects.filter(id=market.event_id).update(
        competition=competition, status=Event.Status.IN_PLAY, home="Server Smith", away="Returner Jones"
    )
    Market.objects.filter(id=market.id).update(kind="match_winner", name="Match winner")
    return market


def board(page: Page, where: str):
    return page.locator(f"{where} [data-scoreboard]")


# --- as served: scripts off ---


@pytest.fixture
def no_script(browser: Browser):
    context = browser.new_context(java_script_enabled=False)
    yield context.new_page()
    context.close()


def test_without_scripts_the_served_football_clock_and_score_are_the_reducers(asgi_server, redis_client, no_script):
    market = market_create()
    in_play(market.event_id)
    # The catalogue's clock and score are stale; the reducers' match state is the truth.
    Event.objects.filter(id=market.event_id).update(home_score=0, away_score=0, clock="3'")
    store(redis_client, state_of(event_id=market.event_id, sport="football", seq=1, home=2, away=1, elapsed_s=72 * 60))

    no_script.goto(f"{asgi_server}/event/{market.event_id}/")
    head = board(no_script, ".event-head")
    # The second half starts at 49:00 of match time with the clock at 45:00: 68:00 is the 69th minute.
    expect(head.locator("[data-clock]")).to_have_text("69'")
    expect(head.locator("[data-score='home']")).to_have_text("2")
    expect(head.locator("[data-score='away']")).to_have_text("1")

    no_script.goto(f"{asgi_server}/in-play/")
    row = no_script.locator(f'.event-row[data-event-id="{market.event_id}"] [data-scoreboard]')
    expect(row.locator("[data-clock]")).to_have_text("69'")
    expect(row.locator("[data-score='home']")).to_have_text("2")


def test_without_scripts_a_tennis_match_is_served_in_sets_games_and_points_with_the_server(
    asgi_server, redis_client, no_script
):
    market = tennis_market()
    # Home takes the first set 6-0; in the second each holds once, and the receiver leads 15-30.
    live = tennis_after(games(*["home"] * 6) + games("home", "away") + ["away", "home", "away"])
    store(redis_client, state_of(event_id=market.event_id, sport="tennis", seq=1, tennis=live))

    no_script.goto(f"{asgi_server}/event/{market.event_id}/")
    head = board(no_script, ".event-head")
    expect(head.locator("[data-clock]")).to_have_text("Set 2")
    expect(head.locator("thead th")).to_have_text(["Side", "Sets", "S1", "Games", "Points"])
    expect(head.locator("tr[data-side='home'] td")).to_have_text(["1", "6", "1", "15"])
    expect(head.locator("tr[data-side='away'] td")).to_have_text(["0", "0", "1", "30"])
    expect(head.locator("tr[data-side='home'] .sb-serve")).to_have_count(1)
    expect(head.locator("tr[data-side='away'] .sb-serve")).to_have_count(0)

    no_script.goto(f"{asgi_server}/sport/tennis/")
    row = no_script.locator(f'.event-row[data-event-id="{market.event_id}"] [data-scoreboard]')
    expect(row.locator("tr[data-side='home'] td")).to_have_text(["1", "1", "15"])


def test_without_scripts_the_traders_event_page_serves_the_reducers_score_and_clock(
    asgi_server, redis_client, browser: Browser
):
    from django.test import Client

    market = market_create()
    in_play(market.event_id)
    suspension = MatchSuspension(reason="goal", since=now_ms() - 20_000)
    store(redis_client, state_of(event_id=market.event_id, sport="football", seq=1, home=1, suspension=suspension))
    staff = user_create(balance="0.00", staff=True)
    client = Client()
    sign_in(client, staff)
    context = browser.new_context(java_script_enabled=False)
    context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": asgi_server}])
    page = context.new_page()
    page.goto(f"{asgi_server}/trading/event/{market.event_id}/")
    head = page.locator(".trading-board [data-scoreboard]")
    expect(head.locator("[data-clock]")).to_have_text("11'")
    expect(head.locator("[data-score='home']")).to_have_text("1")
    expect(head.locator("[data-suspension]")).to_have_text("Goal — back soon")
    context.close()


def test_a_suspension_is_shown_to_the_punter_with_its_reason(asgi_server, redis_client, page: Page):
    from odds.catalogue.services.markets import markets_status_set

    market = market_create()
    in_play(market.event_id)
    markets_status_set(
        market_ids=[market.id], status="suspended", only_from=["open"], publish=False, reason="var", by="feed"
    )
    suspension = MatchSuspension(reason="var", since=now_ms())
    store(redis_client, state_of(event_id=market.event_id, sport="football", seq=1, home=1, suspension=suspension))
    page.goto(f"{asgi_server}/event/{market.event_id}/")
    expect(board(page, ".event-head").locator("[data-suspension]")).to_have_text("VAR check — back soon")
    expect(page.locator(f'[data-market-box="{market.id}"] .market-status')).to_have_text("VAR check — back soon")
    axe_check(page)


# --- with scripts: the board ticks and moves ---


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
    clock = board(page, ".event-head").locator("[data-clock]")
    expect(clock).to_have_text(re.compile(r"^1[12]'$"))
    expect(clock).to_have_text(re.compile(r"^1[5-9]'$"), timeout=10_000)
    axe_check(page)


def test_a_tennis_scoreboard_moves_point_by_point_and_the_serve_changes_ends(asgi_server, redis_client, page: Page):
    market = tennis_market()
    first = tennis_after([*games("home"), "home", "home"])  # 1-0, the away player serving at 0-30
    store(redis_client, state_of(event_id=market.event_id, sport="tennis", seq=1, tennis=first))
    page.goto(f"{asgi_server}/event/{market.event_id}/")
    head = board(page, ".event-head")
    expect(head.locator("tr[data-side='home'] td")).to_have_text(["0", "1", "30"])
    expect(head.locator("tr[data-side='away'] td")).to_have_text(["0", "0", "0"])
    expect(head.locator("tr[data-side='away'] .sb-serve")).to_have_count(1)

    later = tennis_after([*games("home"), "home", "home", "home", "home"])  # the break: 2-0, home serving
    store(redis_client, state_of(event_id=market.event_id, sport="tennis", seq=2, tennis=later))
    expect(head.locator("tr[data-side='home'] td")).to_have_text(["0", "2", "0"], timeout=15_000)
    expect(head.locator("tr[data-side='home'] .sb-serve")).to_have_count(1)
    expect(head.locator("tr[data-side='away'] .sb-serve")).to_have_count(0)
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
    head = board(page, ".event-head")
    expect(head.locator("[data-clock]")).to_have_text(re.compile(r"^1[12]'$"), timeout=30_000)
    goal = state_of(event_id=market.event_id, sport="football", seq=2, home=1)
    producer.produce(topics.match_states(), key=goal.key(), value=goal.encode())
    producer.flush(10)
    expect(head.locator("[data-score='home']")).to_have_text("1", timeout=30_000)


def test_an_open_bet_in_my_bets_shows_its_match_score_and_clock(
    asgi_server, price_query, publish, producer, redis_client, login, page: Page
):
    from decimal import Decimal

    from odds.betting.services.bets import LegRequest, bet_place
    from tests.factories import price_update

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
    live = page.locator(f'.bet-card[data-bet-id="{bet.id}"] [data-scoreboard]')
    expect(live.locator("[data-score='home']")).to_have_text("1", timeout=30_000)
    expect(live.locator("[data-clock]")).to_have_text(re.compile(r"^1[12]'$"))
    goal = state_of(event_id=market.event_id, sport="football", seq=2, home=2)
    producer.produce(topics.match_states(), key=goal.key(), value=goal.encode())
    producer.flush(10)
    expect(live.locator("[data-score='home']")).to_have_text("2", timeout=30_000)
    axe_check(page)


# --- the slip knows the match ---


def test_a_selection_of_a_finished_match_says_so_and_leaves_the_slip(asgi_server, redis_client, page: Page):
    market = market_create()
    other = market_create()
    in_play(market.event_id)
    store(redis_client, state_of(event_id=market.event_id, sport="football", seq=1, home=1))
    page.goto(f"{asgi_server}/")
    # The page is live and shows the match's clock before anything is clicked: a click that lands
    # while the listing re-renders for the kick-off could meet a row being replaced.
    expect(page.locator("#conn-status")).to_have_attribute("data-state", "live")
    expect(page.locator(f'.event-row[data-event-id="{market.event_id}"] [data-clock]').first).to_be_visible()
    legs = page.locator(".slip-leg")
    page.locator(f'.price[data-selection="{market.selections.order_by("display_order")[0].id}"]').click()
    expect(legs).to_have_count(1)
    page.locator(f'.price[data-selection="{other.selections.order_by("display_order")[0].id}"]').click()
    expect(legs).to_have_count(2)
    expect(legs.first.locator("[data-scoreboard] [data-clock]")).to_have_text(re.compile(r"^1[12]'$"))

    store(
        redis_client,
        state_of(event_id=market.event_id, sport="football", seq=2, home=1, status="finished", elapsed_s=95 * 60),
    )
    expect(legs).to_have_count(1, timeout=15_000)
    event = market.event
    alert = page.locator(".slip-alert")
    expect(alert).to_contain_text(f"{event.home} v {event.away} has finished: Home is no longer in your slip.")
    axe_check(page)
