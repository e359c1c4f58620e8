"""The Django admin for traders: the subscriptions page (channels live in Redis, not in a model)
and deleting markets, which counts their open bets and refuses markets that still have some."""

from __future__ import annotations

import time
from decimal import Decimal

import pytest

from odds.betting.services.bets import LegRequest, bet_place
from odds.catalogue.models import Market
from store import keys
from tests.factories import live_state_write, market_create, user_create

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

SUBSCRIPTIONS = "/admin/subscriptions/"


@pytest.fixture
def channel(redis_client, punter):
    """A live channel of ``punter`` as the edge and the reducers write it."""
    channel_id = "adminchannel0123456789"
    now = int(time.time() * 1000)
    redis_client.hset(
        keys.channel_meta(channel_id),
        mapping={"user": punter.id, "spec": '{"view": "slip"}', "status": "streaming", "seq": 3, "created": now},
    )
    redis_client.sadd(keys.channel_markets(channel_id), 7, 8)
    redis_client.zadd(keys.channels_index(), {channel_id: now})
    redis_client.set(keys.channel_owner(channel_id), f"{punter.id}:session-key")
    yield channel_id
    redis_client.delete(
        keys.channels_index(),
        keys.channel_meta(channel_id),
        keys.channel_markets(channel_id),
        keys.channel_ended(channel_id),
        keys.channel_owner(channel_id),
    )


def test_admin_index_lists_the_subscriptions_page(staff_client):
    assert SUBSCRIPTIONS in staff_client.get("/admin/").content.decode()


def test_subscriptions_page_lists_live_channels_with_owner_spec_and_markets(staff_client, channel, punter):
    page = staff_client.get(SUBSCRIPTIONS).content.decode()
    assert f'data-channel="{channel}"' in page
    assert punter.username in page
    assert "slip" in page
    assert "7, 8" in page


def test_subscriptions_filter_by_owner_leaves_out_other_owners(staff_client, channel):
    page = staff_client.get(SUBSCRIPTIONS, {"owner": "someone-else"}).content.decode()
    assert f'data-channel="{channel}"' not in page


def test_ending_a_channel_asks_first_then_ends_it_through_the_stream_service(
    staff_client, channel, redis_client, kafka_topics
):
    asked = staff_client.get(SUBSCRIPTIONS, {"end": channel}).content.decode()
    assert f"End channel {channel}?" in asked
    assert not redis_client.exists(keys.channel_ended(channel))
    response = staff_client.post(SUBSCRIPTIONS, {"channel": channel, "confirm": "yes"}, follow=True)
    assert "ended" in response.content.decode()
    assert redis_client.hget(keys.channel_ended(channel), "reason") == b"ended_by_staff"


def test_subscriptions_page_is_for_staff_only(client, punter):
    client.force_login(punter)
    assert client.get(SUBSCRIPTIONS).status_code == 302


def test_deleting_a_market_with_open_bets_is_refused_in_words(staff_client, kafka_topics, redis_client):
    market = market_create()
    live_state_write(redis_client, market, prices=("2.10", "3.40", "3.50"))
    home = market.selections.order_by("display_order")[0]
    bet_place(
        user=user_create(balance="20.00"),
        idempotency_key="delete-refused",
        stake=Decimal("5.00"),
        legs=[LegRequest(selection_id=home.id, price_seen=home.price)],
    )
    body = {"action": "delete_selected", "_selected_action": [str(market.id)]}
    page = staff_client.post("/admin/catalogue/market/", body).content.decode()
    assert "has 1 open bet: result and settle it, or void it, before deleting it." in page
    staff_client.post("/admin/catalogue/market/", {**body, "post": "yes"})
    assert Market.objects.filter(id=market.id).exists()


def test_bulk_delete_of_markets_without_bets_shows_none_affected_and_deletes(staff_client):
    market = market_create()
    market.selections.all().delete()
    body = {"action": "delete_selected", "_selected_action": [str(market.id)]}
    assert "Open bets affected: 0" in staff_client.post("/admin/catalogue/market/", body).content.decode()
    staff_client.post("/admin/catalogue/market/", {**body, "post": "yes"})
    assert not Market.objects.filter(id=market.id).exists()
