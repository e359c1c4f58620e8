"""View snapshots (GET /api/views/…) against real PostgreSQL and Redis: live sequences and prices,
shareable by a cache (same bytes for everyone, no cookies, an entity tag and 304), and a stream
started after a snapshot that brings only what moved since."""

from __future__ import annotations

import orjson
import pytest
from django.test import Client

from tests.factories import live_state_write, market_create, user_create
from tests.integration.streaming.test_odds_consumer import connect

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def _content(body: bytes) -> dict:
    """A snapshot without the time it was taken."""
    return {k: v for k, v in orjson.loads(body).items() if k != "at"}


def _market_of(snapshot: dict, market_id: int) -> dict:
    return next(m for event in snapshot["events"] for m in event["markets"] if m["market_id"] == market_id)


def test_a_snapshot_carries_each_markets_live_sequence_and_prices(services, redis_client):
    live = market_create(prices=("2.10", "3.40", "3.50"))
    live_state_write(redis_client, live, prices=("2.20", "3.30", "3.40"), seq=9)
    unpriced = market_create(prices=("1.50", "4.00", "6.00"))

    response = Client().get("/api/views/home")
    assert response.status_code == 200
    snapshot = orjson.loads(response.content)
    assert (snapshot["type"], snapshot["v"], snapshot["view"]) == ("view.snapshot", 1, "home")
    assert isinstance(snapshot["at"], int)
    shown = _market_of(snapshot, live.id)
    assert (shown["seq"], shown["status"]) == (9, "open")
    assert [s["price"] for s in shown["selections"]] == ["2.20", "3.30", "3.40"]
    not_yet = _market_of(snapshot, unpriced.id)
    assert not_yet["seq"] == 0
    assert [s["price"] for s in not_yet["selections"]] == ["1.50", "4.00", "6.00"]


def test_a_snapshot_is_the_same_for_every_punter_and_sets_no_cookie(services, redis_client):
    market = market_create()
    live_state_write(redis_client, market, prices=("2.10", "3.40", "3.50"), seq=3)
    anonymous = Client().get(f"/api/views/event/{market.event_id}")
    logged_in = Client()
    logged_in.force_login(user_create(balance="25.00"))
    personal = logged_in.get(f"/api/views/event/{market.event_id}")

    for response in (anonymous, personal):
        assert response.status_code == 200
        assert "Set-Cookie" not in response.headers
        assert "cookie" not in response.headers.get("Vary", "").lower()
        assert response["Cache-Control"] == "public, max-age=2, stale-while-revalidate=10"
    assert anonymous["ETag"] == personal["ETag"]
    assert _content(anonymous.content) == _content(personal.content)


def test_a_copy_still_current_is_answered_304_and_a_moved_price_gives_a_new_tag(services, redis_client):
    market = market_create()
    live_state_write(redis_client, market, prices=("2.10", "3.40", "3.50"), seq=3)
    first = Client().get("/api/views/sport/football")
    again = Client().get("/api/views/sport/football", HTTP_IF_NONE_MATCH=first["ETag"])
    assert (again.status_code, again.content, again["ETag"]) == (304, b"", first["ETag"])

    live_state_write(redis_client, market, prices=("2.00", "3.40", "3.60"), seq=4)
    moved = Client().get("/api/views/sport/football", HTTP_IF_NONE_MATCH=first["ETag"])
    assert moved.status_code == 200
    assert moved["ETag"] != first["ETag"]
    assert _market_of(orjson.loads(moved.content), market.id)["seq"] == 4


def test_the_in_play_view_lists_only_events_in_play(services, redis_client):
    from odds.catalogue.models import Event

    playing, waiting = market_create(), market_create()
    Event.objects.filter(id=playing.event_id).update(status=Event.Status.IN_PLAY)
    snapshot = orjson.loads(Client().get("/api/views/in-play").content)
    listed = {event["id"] for event in snapshot["events"]}
    assert playing.event_id in listed
    assert waiting.event_id not in listed


def test_starting_soon_lists_events_kicking_off_within_the_window_soonest_first(services, redis_client):
    from datetime import timedelta

    from django.utils import timezone

    from odds.catalogue.models import Event
    from odds.catalogue.selectors.catalogue import STARTING_SOON

    later_today, next_up, next_week, playing = (market_create() for _ in range(4))
    now = timezone.now()
    Event.objects.filter(id=later_today.event_id).update(starts_at=now + STARTING_SOON - timedelta(minutes=5))
    Event.objects.filter(id=next_up.event_id).update(starts_at=now + timedelta(minutes=10))
    Event.objects.filter(id=next_week.event_id).update(starts_at=now + timedelta(days=7))
    Event.objects.filter(id=playing.event_id).update(status=Event.Status.IN_PLAY, starts_at=now)

    snapshot = orjson.loads(Client().get("/api/views/starting-soon").content)
    assert snapshot["view"] == "starting-soon"
    ours = {later_today.event_id, next_up.event_id, next_week.event_id, playing.event_id}
    assert [e["id"] for e in snapshot["events"] if e["id"] in ours] == [next_up.event_id, later_today.event_id]

    page = Client().get("/starting-soon/")
    assert page.status_code == 200
    assert page["Cache-Control"] == "public, max-age=2, stale-while-revalidate=10"
    html = page.content.decode()
    assert f'data-event-id="{next_up.event_id}"' in html
    assert f'data-event-id="{next_week.event_id}"' not in html
    assert f'data-event-id="{playing.event_id}"' not in html


def test_starting_soon_says_so_when_nothing_kicks_off(services):
    from odds.catalogue.models import Event

    Event.objects.all().update(status=Event.Status.FINISHED)
    html = Client().get("/starting-soon/").content.decode()
    assert "Nothing starts in the next 2 hours." in html


@pytest.mark.parametrize(
    "path", ["/api/views/event/999999999", "/api/views/sport/curling", "/api/views/sport/football/999999999"]
)
def test_a_view_of_nothing_is_a_json_404(services, path):
    response = Client().get(path)
    assert response.status_code == 404
    assert orjson.loads(response.content)["error"]["code"] == "not_found"


async def test_a_watch_after_a_snapshot_gets_only_the_markets_that_moved_in_between(services, redis_client):
    still = market_create()
    moved = market_create()
    for market in (still, moved):
        live_state_write(redis_client, market, prices=("2.10", "3.40", "3.50"), seq=5)
    snapshot = orjson.loads(Client().get("/api/views/home").content)
    since = {
        str(m["market_id"]): [m["seq"], m["status"]]
        for event in snapshot["events"]
        for m in event["markets"]
        if m["market_id"] in (still.id, moved.id)
    }
    live_state_write(redis_client, moved, prices=("2.40", "3.20", "3.10"), seq=6)  # between snapshot and watch

    communicator = await connect()
    await communicator.send_json_to({"type": "watch", "markets": [still.id, moved.id], "since": since})
    image = await communicator.receive_json_from(timeout=5)
    assert [(m["market_id"], m["seq"]) for m in image["markets"]] == [(moved.id, 6)]
    await communicator.disconnect()


def _held(html: str) -> dict:
    start = html.index('<script id="held-markets" type="application/json">') + len(
        '<script id="held-markets" type="application/json">'
    )
    return orjson.loads(html[start : html.index("</script>", start)])


def test_a_page_shows_its_markets_live_and_names_the_sequences_it_was_built_with(services, redis_client):
    market = market_create(prices=("2.10", "3.40", "3.50"))
    live_state_write(redis_client, market, prices=("2.40", "3.20", "3.10"), seq=8)
    unpriced = market_create(prices=("1.50", "4.00", "6.00"))

    event_page = Client().get(f"/event/{market.event_id}/").content.decode()
    assert 'data-price="2.40"' in event_page
    assert 'data-price="2.10"' not in event_page
    assert f'data-market-box="{market.id}" data-status="open" data-seq="8"' in event_page
    assert _held(event_page) == {str(market.id): [8, "open"]}

    listing = Client().get("/sport/football/").content.decode()
    assert _held(listing) == {str(market.id): [8, "open"]}  # the unpriced market is watched from nothing
    assert f'data-market="{unpriced.id}"' in listing


def test_a_page_shows_a_market_the_stream_suspended_as_suspended(services, redis_client):
    market = market_create()
    live_state_write(redis_client, market, prices=("2.10", "3.40", "3.50"), seq=3, status="suspended")
    page = Client().get(f"/event/{market.event_id}/").content.decode()
    assert f'data-market-box="{market.id}" data-status="suspended"' in page
    assert _held(page) == {str(market.id): [3, "suspended"]}


PUBLIC_PAGES = ("/", "/in-play/", "/starting-soon/", "/sport/football/")


@pytest.mark.parametrize("path", PUBLIC_PAGES)
def test_a_public_page_for_a_visitor_not_logged_in_is_shareable(services, redis_client, path):
    market = market_create()
    live_state_write(redis_client, market, prices=("2.10", "3.40", "3.50"), seq=3)
    first = Client().get(path)
    # A visitor holding cookies of an earlier visit (a CSRF cookie from the login page) gets the
    # same bytes: nothing personal is read.
    second = Client(HTTP_COOKIE="csrftoken=abcdefghijklmnopqrstuvwxyzABCDEF").get(path)
    for response in (first, second):
        assert response.status_code == 200
        assert "Set-Cookie" not in response.headers, response.headers.get("Set-Cookie")
        assert response["Cache-Control"] == "public, max-age=2, stale-while-revalidate=10"
        page = response.content.decode()
        assert "csrfmiddlewaretoken" not in page
        assert 'data-user=""' in page
    assert first["ETag"] == second["ETag"]
    assert first.content == second.content

    again = Client().get(path, HTTP_IF_NONE_MATCH=first["ETag"])
    assert (again.status_code, again.content) == (304, b"")


def test_an_event_page_gets_a_new_tag_when_its_market_moves(services, redis_client):
    market = market_create()
    live_state_write(redis_client, market, prices=("2.10", "3.40", "3.50"), seq=3)
    path = f"/event/{market.event_id}/"
    first = Client().get(path)
    assert Client().get(path, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304
    live_state_write(redis_client, market, prices=("2.00", "3.40", "3.60"), seq=4)
    moved = Client().get(path, HTTP_IF_NONE_MATCH=first["ETag"])
    assert moved.status_code == 200
    assert moved["ETag"] != first["ETag"]
    assert _held(moved.content.decode()) == {str(market.id): [4, "open"]}


def test_a_logged_in_punters_page_is_personal_and_kept_by_no_cache(services, redis_client):
    market = market_create()
    live_state_write(redis_client, market, prices=("2.10", "3.40", "3.50"), seq=3)
    punter = Client()
    user = user_create(balance="25.00")
    punter.force_login(user)
    response = punter.get(f"/event/{market.event_id}/")
    assert response.status_code == 200
    cache_control = {part.strip() for part in response["Cache-Control"].split(",")}
    assert {"private", "no-cache"} <= cache_control
    assert "public" not in cache_control
    assert "ETag" not in response
    assert "cookie" in response["Vary"].lower()
    assert "csrftoken" in response.cookies  # the page's forms and scripts post with it
    page = response.content.decode()
    assert f'data-user="{user.username}"' in page
    assert "csrfmiddlewaretoken" in page  # the logout form
