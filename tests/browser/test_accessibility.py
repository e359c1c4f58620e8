"""Every page, punter and staff, passes axe-core's WCAG 2 A/AA rules (text contrast among them)
at a desktop and a phone size, with the live parts rendered. With ``A11Y_SCREENSHOTS=DIR`` each
page is also saved there as a full-page screenshot, to be looked at."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, ViewportSize, expect

from tests.browser.axe import axe_check
from tests.factories import market_create, sign_in, user_create

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIZES: dict[str, ViewportSize] = {
    "desktop": {"width": 1400, "height": 1000},
    "phone": {"width": 390, "height": 844},
}
SCREENSHOTS = os.environ.get("A11Y_SCREENSHOTS")


def _look(page: Page, name: str, size: str) -> None:
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=f"{SCREENSHOTS}/{name}-{size}.png", full_page=True)
    axe_check(page)


def _logged_in(browser: Browser, asgi_server: str, user, size: str) -> Page:
    """A page of its own context at ``size``, with ``user``'s session when one is given."""
    from django.test import Client

    context = browser.new_context(viewport=SIZES[size])
    if user is not None:
        client = Client()
        sign_in(client, user)
        context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": asgi_server}])
    return context.new_page()


def _staff_data(redis_client, market, punter) -> str:
    """Liability on the market's selections and one live subscriber channel, as the reducers and
    the edge write them; returns the channel id."""
    from store import keys

    now = int(time.time() * 1000)
    for pence, selection in zip((125_000, 48_050, 9_900), market.selections.order_by("display_order"), strict=True):
        redis_client.hset(keys.liability(selection.id), mapping={"pence": pence, "bets": pence // 2500})
        redis_client.zadd(keys.liability_index(), {str(selection.id): pence})
    channel = "a11ychannel0123456789"
    redis_client.hset(
        keys.channel_meta(channel),
        mapping={"user": punter.id, "spec": '{"view": "slip"}', "status": "streaming", "seq": 42, "created": now},
    )
    redis_client.sadd(keys.channel_markets(channel), market.id)
    redis_client.zadd(keys.channels_index(), {channel: now})
    return channel


@pytest.mark.parametrize("size", list(SIZES))
def test_punter_pages_pass_the_accessibility_rules(asgi_server, browser, size):
    market = market_create(prices=("2.10", "3.40", "3.50"))
    punter = user_create(balance="100.00")

    page = _logged_in(browser, asgi_server, None, size)
    page.goto(f"{asgi_server}/login/")
    _look(page, "login", size)
    page.context.close()

    page = _logged_in(browser, asgi_server, punter, size)
    for name, path in [
        ("home", "/"),
        ("sport", "/sport/football/"),
        ("event", f"/event/{market.event_id}/"),
        ("in-play", "/in-play/"),
        ("my-bets", "/my-bets/"),
        ("wallet", "/wallet/"),
    ]:
        page.goto(f"{asgi_server}{path}")
        expect(page.locator("#conn-status")).to_have_attribute("data-state", "live")
        _look(page, name, size)
    _moving_prices_pass(page, asgi_server, market, size)
    page.goto(f"{asgi_server}/trading/")
    _look(page, "403", size)
    page.context.close()


def _moving_prices_pass(page: Page, asgi_server: str, market, size: str) -> None:
    """A price that moves flashes up or down for a moment, selected or not; each of those states is
    checked with the flash held on (a real move is over before a check could be timed to it)."""
    page.goto(f"{asgi_server}/event/{market.event_id}/")
    expect(page.locator("#conn-status")).to_have_attribute("data-state", "live")
    selected, other = (market.selections.order_by("display_order")[i].id for i in (0, 1))
    page.locator(f'.price[data-selection="{selected}"]').click()
    close = page.get_by_role("button", name="Close bet slip")
    if close.is_visible():  # on a phone the slip opens over the prices: closed, and its slide over
        close.click()
        page.wait_for_function("() => !document.getAnimations().some((a) => a instanceof CSSTransition)")
    page.mouse.move(0, 0)  # a pointer left over the price would show its hover colours instead
    expect(page.locator(f'.price[data-selection="{selected}"]')).to_have_class(re.compile(r"\bselected\b"))
    for direction in ("up", "down"):
        page.evaluate(
            """([ids, direction]) => ids.forEach((id) => {
                const price = document.querySelector(`.price[data-selection="${id}"]`);
                price.classList.remove("up", "down");
                price.classList.add(direction);
            })""",
            [[selected, other], direction],
        )
        _look(page, f"event-moving-{direction}", size)


@pytest.mark.parametrize("size", list(SIZES))
def test_staff_pages_pass_the_accessibility_rules(asgi_server, kafka_topics, redis_client, browser, size):
    from store import keys

    market = market_create(prices=("2.10", "3.40", "3.50"))
    closed = market_create(prices=("1.80", "3.60", "4.50"), status="closed")
    staff = user_create(balance="0", staff=True)
    channel = _staff_data(redis_client, market, user_create())
    page = _logged_in(browser, asgi_server, staff, size)
    try:
        page.goto(f"{asgi_server}/trading/")
        page.locator("#event-create summary").click()
        _look(page, "trading", size)

        page.goto(f"{asgi_server}/trading/?q=Home&sport=football&status=open")
        _look(page, "trading-filtered", size)

        page.goto(f"{asgi_server}/trading/event/{market.event_id}/")
        expect(page.locator("#trading-conn")).to_have_attribute("data-state", "live")
        _look(page, "trading-event", size)

        home = market.selections.order_by("display_order")[0]
        page.goto(f"{asgi_server}/trading/markets/{market.id}/result/confirm?winner={home.id}")
        expect(page.locator('[data-impact="bets"]')).to_be_visible()
        _look(page, "trading-confirm", size)

        page.goto(f"{asgi_server}/trading/liability")
        # This market's three selections (the session's other tests may have liability of their own).
        for selection in market.selections.all():
            expect(page.locator(f'#liability tbody tr[data-selection="{selection.id}"]')).to_have_count(1)
        _look(page, "liability", size)

        page.goto(f"{asgi_server}/trading/subscriptions")
        expect(page.locator(f'#channels tr[data-channel="{channel}"]')).to_be_visible()
        _look(page, "subscriptions", size)

        page.goto(f"{asgi_server}/ops/lag")
        expect(page.locator('[data-query="prices"] [data-role="status"]')).to_be_visible(timeout=30_000)
        expect(page.locator("#platform dd").first).to_be_visible()
        _look(page, "lag", size)

        from django.utils import timezone

        from odds.ops.models import Incident

        now = timezone.now()
        Incident.objects.create(
            fingerprint=f"a11y-{size}",
            alertname="ReducerLagOverObjective",
            severity="page",
            summary="Reducer query prices is 14 s behind, over its objective",
            labels={"alertname": "ReducerLagOverObjective", "query": "prices", "severity": "page"},
            annotations={"runbook": "docs/runbooks.md#reducerlagoverobjective"},
            starts_at=now,
            notified_at=now,
        )
        page.goto(f"{asgi_server}/ops/oncall")
        expect(page.locator("#incidents [data-incident]").first).to_be_visible()
        _look(page, "oncall", size)

        page.goto(f"{asgi_server}/ops/dead-letters?preview=1&source=commands")
        expect(page.locator("#preview")).to_be_visible()
        _look(page, "dead-letters-preview", size)

        page.goto(f"{asgi_server}/trading/markets/{closed.id}/settlement")
        expect(page.locator("#settle-count")).not_to_have_text("…")
        _look(page, "settlement", size)

        for name, path in [
            ("admin", "/admin/"),
            ("admin-subscriptions", "/admin/subscriptions/"),
            ("admin-subscriptions-end", f"/admin/subscriptions/?end={channel}"),
            ("admin-markets", "/admin/catalogue/market/"),
        ]:
            page.goto(f"{asgi_server}{path}")
            _look(page, name, size)

        # The admin's settle action asks for each market's result on a page of its own.
        page.locator(f'input[name="_selected_action"][value="{market.id}"]').check()
        page.locator('select[name="action"]').select_option("settle")
        page.locator('button[name="index"]').click()
        expect(page.locator('input[value="Review the results"]')).to_be_visible()
        _look(page, "admin-settle", size)
        page.locator('input[value="Review the results"]').click()  # then what it does, before it is done
        expect(page.locator("#settle-impact")).to_be_visible()
        _look(page, "admin-settle-confirm", size)
    finally:
        page.context.close()
        redis_client.delete(
            keys.liability_index(), keys.channels_index(), keys.channel_meta(channel), keys.channel_markets(channel)
        )


@pytest.mark.parametrize("size", list(SIZES))
def test_the_404_pages_pass_the_accessibility_rules(asgi_server_not_debug, browser, size):
    staff = user_create(balance="0", staff=True)
    page = _logged_in(browser, asgi_server_not_debug, staff, size)
    for name, path in [("404", "/no-such-page/"), ("staff-404", "/trading/no-such-page/")]:
        page.goto(f"{asgi_server_not_debug}{path}")
        expect(page.get_by_role("heading", name="Page not found", exact=True)).to_be_visible()
        _look(page, name, size)
    page.context.close()
