"""Staff in a browser: a trader suspends a market and a punter's page shows it; a trader settles
a market and the winner's balance rises; the lag dashboard leaves OK while a reducer query is
stopped with records waiting, and comes back."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from playwright.sync_api import Page, expect

from reducers import topics
from tests.browser.axe import axe_check
from tests.factories import market_create, markets_define, totp_code, totp_enable, user_create

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _log_in_as(page: Page, base: str, user, landing: str) -> None:
    """The login form, and for staff the code of their authenticator (set up here)."""
    secret = totp_enable(user) if user.is_staff else None
    page.goto(f"{base}/login/?next={landing}")
    axe_check(page)
    page.fill('input[name="username"]', user.username)
    page.fill('input[name="password"]', "pw-for-tests")
    page.locator('form [type="submit"]').last.click()
    if secret is not None:
        expect(page).to_have_url(re.compile(r"/accounts/2fa/authenticate/"))
        page.get_by_label("Code").fill(totp_code(secret))
        page.get_by_role("button", name="Sign In").click()
    expect(page).to_have_url(f"{base}{landing}")
    axe_check(page)


def _log_in(page: Page, base: str, user) -> None:
    _log_in_as(page, base, user, "/trading/")


def test_trader_suspends_a_market_and_the_punters_page_shows_it(
    asgi_server, price_query, producer, redis_client, browser
):
    staff = user_create(balance="0", staff=True)
    market = market_create(prices=("2.10", "3.40", "3.50"))
    markets_define(redis_client, market)

    punter = browser.new_context().new_page()
    punter.goto(f"{asgi_server}/event/{market.event_id}/")
    expect(punter.locator("#conn-status")).to_have_attribute("data-state", "live")

    trader = browser.new_context().new_page()
    _log_in(trader, asgi_server, staff)
    row = trader.locator(f'.market-row[data-market="{market.id}"]')
    row.locator('[data-action="suspend"]').click()
    expect(trader.locator(f'.market-row[data-market="{market.id}"]')).to_have_attribute("data-status", "suspended")
    axe_check(trader)

    box = punter.locator(f'[data-market-box="{market.id}"]')
    expect(box).to_have_attribute("data-status", "suspended", timeout=30_000)
    axe_check(punter)
    punter.context.close()
    trader.context.close()


def test_lag_dashboard_leaves_ok_while_a_query_is_stopped_and_comes_back(
    asgi_server, reducers_running, producer, spark, browser, tmp_path
):
    from django.conf import settings

    from spark.jobs import liability

    staff = user_create(balance="0", staff=True)
    page = browser.new_context().new_page()
    _log_in(page, asgi_server, staff)
    page.goto(f"{asgi_server}/ops/lag")
    card = page.locator('[data-query="liability"]')
    expect(card).to_have_attribute("data-status", "OK", timeout=30_000)
    axe_check(page)

    reducers_running["liability"].stop()
    try:
        for i in range(200):
            producer.produce(topics.bets(), key=str(i).encode(), value=b"not a bet event")
        producer.flush(10)
        expect(card.locator('[data-role="status"]')).not_to_have_text("OK", timeout=90_000)
        expect(card).to_have_attribute("data-status", "STOP")
        axe_check(page)
    finally:
        reducers_running["liability"] = liability.start(
            spark,
            bootstrap=settings.KAFKA_BOOTSTRAP_SERVERS,
            redis_url=settings.REDIS_URL,
            checkpoint_dir=str(tmp_path / "liability-restarted"),
        )
    expect(card).to_have_attribute("data-status", "OK", timeout=120_000)
    page.context.close()


def test_lag_dashboard_shows_a_query_waiting_to_be_restarted_with_its_error(
    asgi_server, kafka_topics, redis_client, browser
):
    import time

    import orjson

    from reducers.supervision import Backoff, QueryRun, run_failed, run_restarted, run_started
    from store import keys

    now = int(time.time() * 1000)
    failed = run_failed(
        run_started(QueryRun(), now_ms=now), error="ConnectionError: Redis", now_ms=now, backoff=Backoff()
    )
    back = run_restarted(failed, now_ms=now)
    redis_client.hset(
        keys.reducer_queries(),
        mapping={"liability": orjson.dumps(failed.to_json()), "prices": orjson.dumps(back.to_json())},
    )
    try:
        staff = user_create(balance="0", staff=True)
        page = browser.new_context().new_page()
        _log_in(page, asgi_server, staff)
        page.goto(f"{asgi_server}/ops/lag")
        run = page.locator('[data-query="liability"] [data-role="run"]')
        expect(run).to_contain_text("restarting · 0 restarts", timeout=30_000)
        expect(run).to_contain_text("last error: ConnectionError: Redis")
        expect(run).to_have_class(re.compile(r"run-restarting"))
        expect(page.locator('[data-query="prices"] [data-role="run"]')).to_contain_text("running · 1 restart")
        axe_check(page)
        page.context.close()
    finally:
        redis_client.delete(keys.reducer_queries())


def test_trader_settles_a_market_and_the_winners_balance_rises(
    asgi_server, price_query, celery_worker, redis_client, browser
):
    from odds.betting.services.bets import LegRequest, bet_place

    staff = user_create(balance="0", staff=True)
    punter_user = user_create(balance="100.00")
    market = market_create(prices=("2.00", "3.40", "3.50"))
    markets_define(redis_client, market)
    home = market.selections.order_by("display_order")[0]
    placed = bet_place(
        user=punter_user,
        idempotency_key="settle-browser",
        stake=Decimal("10.00"),
        legs=[LegRequest(selection_id=home.id, price_seen=home.price)],
    )
    assert placed.bet.status == "accepted"

    punter = browser.new_context().new_page()
    _log_in_as(punter, asgi_server, punter_user, "/my-bets/")
    expect(punter.locator("#wallet-balance")).to_have_text(re.compile(r"90\.00"), timeout=30_000)

    trader = browser.new_context().new_page()
    _log_in(trader, asgi_server, staff)
    row = trader.locator(f'.market-row[data-market="{market.id}"]')
    row.locator('select[name="winner"]').select_option(str(home.id))
    row.locator('[data-action="result"]').click()
    expect(trader.locator('[data-impact="bets"]')).to_have_text("1")
    expect(trader.locator('[data-impact="payout"]')).to_have_text("£20.00")
    trader.get_by_role("button", name="Result and settle 1 bet").click()
    expect(trader).to_have_url(re.compile(rf"/trading/markets/{market.id}/settlement$"))
    axe_check(trader)

    # Settled by the Celery worker: the stake back plus winnings, 10.00 at 2.00 → 20.00.
    punter.reload()
    expect(punter.locator("#wallet-balance")).to_have_text(re.compile(r"110\.00"), timeout=60_000)
    axe_check(punter)
    punter.context.close()
    trader.context.close()
