"""``POST /api/bets`` as uvicorn serves it: placed on the event loop, answered as Django answers.

The real ASGI application runs under uvicorn on the test database; punters log in by a session
created as a login creates it (in Redis and PostgreSQL), and send the CSRF token and Origin a
browser sends.
"""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Iterator
from decimal import Decimal
from importlib import import_module
from urllib.parse import urlsplit

import psycopg
import pytest
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.core.cache import caches

from odds.api.placement import POOL_APPLICATION_NAME, database_conninfo
from odds.betting.models import Bet, LedgerEntry, Wallet
from odds.betting.services.bets import bet_event
from odds.catalogue.models import Event, Sport
from odds.models import OutboxMessage
from reducers import topics
from reducers.schemas import decode_bet_event
from tests.conftest import uvicorn_serving, wait_for
from tests.factories import live_state_write, market_create, user_create
from tests.integration.betting.helpers import bet_body, selections_of

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

CSRF = "c" * 32


def session_of(user) -> str:
    store = import_module(settings.SESSION_ENGINE).SessionStore()
    store[SESSION_KEY] = str(user.pk)
    store[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[0]
    store[HASH_SESSION_KEY] = user.get_session_auth_hash()
    store.create()
    return store.session_key


def post(
    url: str, body: object, *, session: str | None, csrf: bool = True, origin: str | None = None
) -> tuple[int, dict[str, str], dict]:
    parts = urlsplit(url)
    headers = {"Content-Type": "application/json", "Origin": origin or url}
    cookies = []
    if session:
        cookies.append(f"sessionid={session}")
    if csrf:
        cookies.append(f"csrftoken={CSRF}")
        headers["X-CSRFToken"] = CSRF
    if cookies:
        headers["Cookie"] = "; ".join(cookies)
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=60)
    try:
        connection.request("POST", "/api/bets", body=json.dumps(body), headers=headers)
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, json.loads(response.read())
    finally:
        connection.close()


@pytest.fixture
def placing(asgi_server, services, redis_client) -> tuple[str, object, str]:
    punter = user_create(balance="100.00")
    return asgi_server, punter, session_of(punter)


def test_bet_is_placed_with_its_stake_held_and_its_event_queued(placing):
    url, punter, session = placing
    market = market_create(prices=("2.10", "3.40", "3.50"))
    home = selections_of(market)[0]

    status, _, body = post(url, bet_body((home.id, "2.10"), stake="10.00"), session=session)

    assert status == 201, body
    assert (body["bet"]["status"], body["bet"]["legs"][0]["selection"]) == ("accepted", home.name)
    bet = Bet.objects.get(id=body["bet"]["id"])
    assert Wallet.objects.get(user=punter).balance == Decimal("90.00")
    assert LedgerEntry.objects.get(bet=bet).kind == LedgerEntry.Kind.STAKE
    # The statement writes the record exactly as the Python encoder does, but for the time.
    raw = OutboxMessage.objects.get(topic=topics.bets(), key=str(bet.id).encode()).value
    assert raw is not None
    value = json.loads(bytes(raw))
    expected = json.loads(bet_event(bet=bet, type="placed", currency="GBP").encode())
    assert {**value, "ts": 0} == {**expected, "ts": 0}


def test_a_retry_with_the_same_key_returns_the_first_bet(placing):
    url, punter, session = placing
    home = selections_of(market_create())[0]
    body = bet_body((home.id, "2.10"), key="same-key")
    first = post(url, body, session=session)
    again = post(url, body, session=session)
    assert (first[0], again[0]) == (201, 200)
    assert again[2]["bet"]["id"] == first[2]["bet"]["id"]
    assert Wallet.objects.get(user=punter).balance == Decimal("90.00")


IGNORED_HEADERS = {"date", "expires", "server", "content-length", "transfer-encoding", "connection"}


@pytest.mark.parametrize(
    ("case", "expected"),
    [("stake_too_low", 400), ("price_changed", 409), ("unknown_selection", 400)],
)
def test_answers_and_headers_are_those_of_the_django_view(placing, client, case, expected):
    url, _, session = placing
    market = market_create(prices=("2.10", "3.40", "3.50"))
    home = selections_of(market)[0]
    request = {
        "stake_too_low": bet_body((home.id, "2.10"), stake="0.01", key="k"),
        "price_changed": bet_body((home.id, "2.50"), key="k"),
        "unknown_selection": bet_body((home.id + 10_000_000, "2.10"), key="k"),
    }[case]
    status, headers, body = post(url, request, session=session)

    twin = user_create(balance="100.00")
    client.force_login(twin)
    django = client.post("/api/bets", data=json.dumps(request), content_type="application/json")

    assert (status, django.status_code) == (expected, expected)

    def comparable(payload: dict) -> dict:
        payload = json.loads(json.dumps(payload))
        payload.pop("bet", None)  # ids and times of two different bets
        return payload

    assert comparable(body) == comparable(django.json())
    django_headers = {k.lower(): v for k, v in django.headers.items()}
    assert {k: v for k, v in headers.items() if k not in IGNORED_HEADERS} == {
        k: v for k, v in django_headers.items() if k not in IGNORED_HEADERS
    }


def test_a_write_without_the_csrf_token_is_refused(placing):
    url, punter, session = placing
    home = selections_of(market_create())[0]
    status, _, body = post(url, bet_body((home.id, "2.10")), session=session, csrf=False)
    assert (status, body["error"]["code"]) == (403, "csrf_failed")
    assert not Bet.objects.filter(user=punter).exists()


def test_a_write_from_another_origin_is_refused(placing):
    url, punter, session = placing
    home = selections_of(market_create())[0]
    status, _, body = post(url, bet_body((home.id, "2.10")), session=session, origin="http://evil.example")
    assert (status, body["error"]["code"]) == (403, "csrf_failed")
    assert not Bet.objects.filter(user=punter).exists()


def test_without_a_session_the_answer_is_401(placing):
    url, _, _ = placing
    home = selections_of(market_create())[0]
    status, _, body = post(url, bet_body((home.id, "2.10")), session=None)
    assert (status, body["error"]["code"]) == (401, "not_authenticated")


def test_a_session_gone_from_redis_is_read_from_the_database(placing):
    url, punter, session = placing
    home = selections_of(market_create())[0]
    store = import_module(settings.SESSION_ENGINE).SessionStore
    caches[settings.SESSION_CACHE_ALIAS].delete(store.cache_key_prefix + session)

    status, _, body = post(url, bet_body((home.id, "2.10")), session=session)

    assert status == 201, body
    assert Wallet.objects.get(user=punter).balance == Decimal("90.00")


def test_a_bet_at_the_live_price_is_taken_at_it(placing, redis_client):
    url, _, session = placing
    market = market_create(prices=("2.10", "3.40", "3.50"))
    live_state_write(redis_client, market, prices=("2.30", "3.40", "3.50"))
    home = selections_of(market)[0]
    status, _, body = post(url, bet_body((home.id, "2.10")), session=session)
    assert (status, body["error"]["code"], body["error"]["selections"][0]["price"]) == (409, "price_changed", "2.30")
    status, _, body = post(url, bet_body((home.id, "2.30")), session=session)
    assert (status, body["bet"]["legs"][0]["price"]) == (201, "2.30")


@pytest.fixture(scope="module")
def narrow_server(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[str]:
    """One web process with one placement connection and room for one request to wait for it;
    a wait for the connection never times out, so only the queue limit refuses."""
    with uvicorn_serving(
        tmp_path_factory.mktemp("narrow"), BET_POOL_SIZE="1", BET_POOL_MAX_WAITING="1", BET_POOL_TIMEOUT_MS="60000"
    ) as url:
        yield url


def test_a_saturated_pool_refuses_at_once_with_503_and_records_nothing(narrow_server, services, redis_client):
    punter = user_create(balance="100.00")
    session = session_of(punter)
    home = selections_of(market_create())[0]
    results: dict[str, tuple[int, dict[str, str], dict]] = {}

    def place(key: str) -> None:
        results[key] = post(narrow_server, bet_body((home.id, "2.10"), key=key), session=session)

    # Hold the punter's wallet: the first bet takes the only connection and waits for the lock.
    with psycopg.connect(database_conninfo()) as holder:
        holder.execute("SELECT balance FROM odds_wallet WHERE user_id = %s FOR UPDATE", [punter.pk])
        first = threading.Thread(target=place, args=("first",))
        first.start()

        def first_waits_for_the_lock() -> bool:
            with psycopg.connect(database_conninfo()) as probe:
                row = probe.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE %s",
                    ["%sb_bet_place%"],
                ).fetchone()
                return bool(row and row[0])

        wait_for(first_waits_for_the_lock, timeout=30, what="the first bet to wait for the wallet")
        others = [threading.Thread(target=place, args=(key,)) for key in ("second", "third")]
        for thread in others:
            thread.start()
        # One of the two waits for the connection; the other is refused without waiting.
        wait_for(lambda: len(results) == 1, timeout=30, what="a refusal while the wallet is held")
        ((refused, (status, headers, body)),) = results.items()
        holder.rollback()
    for thread in [first, *others]:
        thread.join(60)

    assert (status, body["error"]["code"], headers.get("retry-after")) == (503, "overloaded", "1")
    assert body["error"]["retry_after_s"] == 1
    assert sorted(results[key][0] for key in results if key != refused) == [201, 201]
    assert not Bet.objects.filter(user=punter, idempotency_key=refused).exists()
    assert Wallet.objects.get(user=punter).balance == Decimal("80.00")


@pytest.fixture(scope="module")
def limited_server(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[str]:
    """One web process allowing three bet attempts per punter in a window longer than any test."""
    with uvicorn_serving(tmp_path_factory.mktemp("limited"), BET_PLACE_LIMIT="3", BET_PLACE_WINDOW_S="600") as url:
        yield url


def test_every_attempt_counts_on_the_event_loop_path_malformed_ones_too(limited_server, services, redis_client):
    punter = user_create(balance="100.00")
    session = session_of(punter)
    home = selections_of(market_create())[0]
    for malformed in ({}, {"v": 1, "stake": "x"}, {"v": 1, "idempotency_key": "k", "stake": "1.00", "selections": []}):
        assert post(limited_server, malformed, session=session)[0] == 400
    status, headers, body = post(limited_server, bet_body((home.id, "2.10")), session=session)
    assert (status, body["error"]["code"]) == (429, "rate_limited")
    assert int(headers["retry-after"]) >= 1
    assert not Bet.objects.filter(user=punter).exists()


def _pool_activity() -> list[tuple[object, ...]]:
    """What this test database's placement pool connections last did (when, and what)."""
    with psycopg.connect(database_conninfo()) as probe:
        return probe.execute(
            "SELECT pid, query_start, query FROM pg_stat_activity"
            " WHERE application_name = %s AND datname = current_database() ORDER BY pid",
            [POOL_APPLICATION_NAME],
        ).fetchall()


def test_a_punter_over_the_limit_never_touches_the_bet_pool(limited_server, services, redis_client):
    punter = user_create(balance="100.00")
    session = session_of(punter)
    home = selections_of(market_create())[0]
    for _ in range(3):
        assert post(limited_server, bet_body((home.id, "2.10"), stake="0.10"), session=session)[0] == 201
    # A selection the process has never seen would be looked up in the database first.
    unseen = selections_of(market_create())[0]
    before = _pool_activity()
    status, _, body = post(limited_server, bet_body((unseen.id, "2.10")), session=session)
    assert (status, body["error"]["code"]) == (429, "rate_limited")
    assert _pool_activity() == before


def test_a_bet_in_play_is_held_for_the_sports_delay_with_its_stake(placing):
    url, punter, session = placing
    market = market_create(prices=("2.10", "3.40", "3.50"))
    Event.objects.filter(id=market.event_id).update(status=Event.Status.IN_PLAY)
    Sport.objects.filter(competitions__events=market.event_id).update(in_play_delay_s=7)
    home = selections_of(market)[0]

    status, _, body = post(url, bet_body((home.id, "2.10"), stake="10.00"), session=session)

    assert (status, body["bet"]["status"]) == (202, "pending")
    assert body["bet"]["accept_at"] - body["bet"]["placed_at"] == 7000
    assert Wallet.objects.get(user=punter).balance == Decimal("90.00")
    # On the bets topic as pending (the ticker's), in no book until the delay accepts it.
    [message] = OutboxMessage.objects.filter(topic=topics.bets(), key=str(body["bet"]["id"]).encode())
    assert message.value is not None
    assert decode_bet_event(bytes(message.value)).type == "pending"


def test_a_logout_holds_at_once_for_a_session_the_endpoint_knows(placing):
    url, punter, session = placing
    home = selections_of(market_create())[0]
    assert post(url, bet_body((home.id, "2.10")), session=session)[0] == 201
    import_module(settings.SESSION_ENGINE).SessionStore(session_key=session).delete()

    status, _, body = post(url, bet_body((home.id, "2.10")), session=session)

    assert (status, body["error"]["code"]) == (401, "not_authenticated")
    assert Bet.objects.filter(user=punter).count() == 1


def _pool_connections() -> int:
    with psycopg.connect(database_conninfo()) as probe:
        row = probe.execute(
            # This test database's only: other sessions' servers on the machine have pools too.
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s AND datname = current_database()",
            [POOL_APPLICATION_NAME],
        ).fetchone()
        return int(row[0]) if row else 0


def test_a_web_process_fills_its_bet_pool_before_it_answers_and_closes_it_when_it_stops(
    django_db_setup, django_db_blocker, tmp_path_factory
):
    """After a restart at a peak, no bet waits on a new database connection (nor is refused for it)."""
    before = _pool_connections()
    with uvicorn_serving(tmp_path_factory.mktemp("warm"), BET_POOL_SIZE="3"):
        # Ready means answering, and nothing has placed a bet on this server yet.
        assert _pool_connections() == before + 3
    wait_for(lambda: _pool_connections() == before, timeout=10, what="the pool's connections to close")
