"""The lag dashboard as someone on call reads it, over a stack of its own where no reducer runs:
every query stale until heard from; a query behind its objective breached even while its trend
is OK; all clear once it catches up; usable on a phone; dead letters browsable."""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer, TopicPartition
from playwright.sync_api import Browser, Page, expect

from reducers.queries import QUERIES as REGISTRY
from tests.browser.axe import axe_check
from tests.conftest import uvicorn_serving
from tests.factories import sign_in, user_create

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = os.environ.get("A11Y_SCREENSHOTS")
# Every query of the registry, prices last (the one this test puts behind).
QUERIES = (*(query.name for query in REGISTRY if query.name != "prices"), "prices")


@contextlib.contextmanager
def _namespace(name: str) -> Iterator[None]:
    before = os.environ["SPORTSBOOK_NAMESPACE"]
    os.environ["SPORTSBOOK_NAMESPACE"] = name
    try:
        yield
    finally:
        os.environ["SPORTSBOOK_NAMESPACE"] = before


@pytest.fixture
def quiet_stack(django_db_setup, services, redis_client, tmp_path) -> Iterator[tuple[str, str]]:
    """Topics, Redis keys and an ASGI server of a namespace of their own: nothing reads it."""
    from odds.core.kafka import admin_client, topics_ensure
    from reducers.topics import all_topics

    name = f"q{uuid.uuid4().hex[:8]}"
    with _namespace(name):
        topics_ensure()
        names = [t.name for t in all_topics()]
    try:
        with uvicorn_serving(tmp_path, SPORTSBOOK_NAMESPACE=name) as url:
            yield url, name
    finally:
        for future in admin_client().delete_topics(names, operation_timeout=30).values():
            future.result()
        for key in redis_client.scan_iter(match=f"{name}:*", count=1000):
            redis_client.delete(key)


def _look(page: Page, name: str) -> None:
    """Accessibility rules on the page as it stands; with ``A11Y_SCREENSHOTS=DIR`` a full-page
    screenshot too, to be looked at."""
    if SCREENSHOTS:
        page.screenshot(path=f"{SCREENSHOTS}/{name}.png", full_page=True)
    axe_check(page)


def _heard_from_now(redis_client, namespace: str) -> None:
    from store import keys

    with _namespace(namespace):
        redis_client.hset(keys.reducer_seen(), mapping=dict.fromkeys(QUERIES, int(time.time() * 1000)))


def _commit_as_the_reducers(namespace: str, behind: dict[tuple[str, int], int]) -> None:
    """Each query's group commits the log end of every partition of its topic (as the reducers'
    progress listener does), except the offsets in ``behind``."""
    from django.conf import settings

    from odds.core.metrics import QUERY_TOPICS, log_end_offsets, topic_partitions
    from reducers import topics

    with _namespace(namespace):
        for query, topic_of in QUERY_TOPICS.items():
            topic = topic_of()
            ends = log_end_offsets((topic, p) for p in topic_partitions(topic))
            offsets = [TopicPartition(t, p, behind.get((query, p), end)) for (t, p), end in ends.items()]
            consumer = Consumer(
                {"bootstrap.servers": settings.KAFKA_BOOTSTRAP_SERVERS, "group.id": topics.reducer_group(query)}
            )
            consumer.commit(offsets=offsets, asynchronous=False)
            consumer.close()


def _staff_page(browser: Browser, url: str, width: int, height: int) -> Page:
    from django.test import Client

    staff = user_create(balance="0", staff=True)
    client = Client()
    sign_in(client, staff)
    context = browser.new_context(viewport={"width": width, "height": height})
    context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": url}])
    return context.new_page()


def test_on_call_reads_stale_then_breached_then_all_clear(quiet_stack, browser, producer, redis_client):
    from reducers import topics

    url, namespace = quiet_stack
    with _namespace(namespace):
        prices = topics.prices()
    old = int(time.time() * 1000) - 60_000
    for _ in range(3):
        producer.produce(prices, value=b"{}", partition=0, timestamp=old)
    producer.flush(10)

    page = _staff_page(browser, url, 1400, 1000)
    page.goto(f"{url}/ops/lag")
    verdict = page.locator("#verdict")
    tile = page.locator('[data-tile="prices"]')
    # Nothing has been heard from any query: every figure is stale, whatever it says.
    expect(tile.locator('[data-role="standing"]')).to_have_text("STALE", timeout=30_000)
    expect(verdict).to_have_attribute("data-level", "bad")
    expect(verdict).to_contain_text("prices: never heard from; its figures are not current")
    _look(page, "lag-stale")

    # Heard from now: prices is a minute behind its 2 s objective while every other query is within.
    _commit_as_the_reducers(namespace, {("prices", 0): 0})
    _heard_from_now(redis_client, namespace)
    expect(tile.locator('[data-role="standing"]')).to_have_text("BREACHED", timeout=10_000)
    expect(tile.locator('[data-role="behind"]')).to_contain_text("/ 2.0 s")
    expect(verdict).to_contain_text("prices is ")
    expect(verdict).to_contain_text("behind, objective 2.0 s")
    card = page.locator('[data-query="prices"]')
    expect(card).to_have_attribute("data-level", "bad")
    expect(card.locator('tr[data-partition="0"] [data-role="lag"]')).to_have_text("3")
    seconds = float(card.locator('tr[data-partition="0"] [data-role="lag-seconds"]').inner_text().split()[0])
    assert 59 <= seconds < 120
    expect(card.locator('tr[data-partition="1"] [data-role="lag-seconds"]')).to_have_text("0.0 s")
    for other in QUERIES[:-1]:
        expect(page.locator(f'[data-tile="{other}"] [data-role="standing"]')).to_have_text("OK")
    _look(page, "lag-breached")

    # Caught up: all clear.
    _commit_as_the_reducers(namespace, {})
    _heard_from_now(redis_client, namespace)
    expect(verdict).to_have_text(f"All {len(QUERIES)} queries within their objectives", timeout=10_000)
    expect(verdict).to_have_attribute("data-level", "ok")
    expect(tile.locator('[data-role="standing"]')).to_have_text("OK")

    # On a phone: the verdict and the tiles come first, nothing widens the page.
    page.set_viewport_size({"width": 390, "height": 844})
    expect(tile).to_be_in_viewport()
    assert page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth")
    _look(page, "lag-clear-phone")
    page.context.close()


def test_dead_letters_are_browsed_by_reason_in_the_browser(quiet_stack, browser, producer):
    from reducers import topics

    url, namespace = quiet_stack
    with _namespace(namespace):
        dead = topics.commands_dead_letter()
    for n, reason in enumerate(("missing_field", "undecodable", "missing_field")):
        producer.produce(
            dead,
            key=b"ch-1",
            value=f'{{"type": "subscribe", "n": {n}}}'.encode(),
            headers=[("reason", reason.encode()), ("detail", b"no spec"), ("origin", f"c/0/{n}".encode())],
        )
    producer.flush(10)

    page = _staff_page(browser, url, 390, 844)
    page.goto(f"{url}/ops/lag")
    page.get_by_role("link", name="Browse, replay or discard the dead letters").click()
    rows = page.locator("#dead-letters tbody tr")
    expect(rows).to_have_count(3)
    expect(rows.first).to_have_attribute("data-origin", "c/0/2")
    page.locator("#reasons").get_by_role("link", name="missing_field").click()
    expect(rows).to_have_count(2)
    rows.first.locator("summary").click()
    expect(rows.first.locator("pre")).to_have_text('{"type": "subscribe", "n": 2}')
    assert page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth")
    _look(page, "dead-letters-phone")
    page.context.close()
