"""Background jobs of the operators: metrics sampling and pruning, kick-off suspension, digest."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.core import mail
from django.utils import timezone

from odds.catalogue.models import Event, Market
from odds.ops.models import MetricSample
from odds.tasks import digest_weekly, markets_kickoff_suspend, metrics_prune, metrics_sample
from tests.factories import live_state_write, market_create, sign_in, user_create

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def locmem_email(settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"


def test_sampling_task_keeps_one_sample_per_slot(kafka_topics, redis_client, monkeypatch):
    import time as clock
    from types import SimpleNamespace

    from odds.ops.services import metrics_history

    MetricSample.objects.all().delete()
    # Both runs in one slot: the middle of the current one, however slow the first run is.
    interval = metrics_history.sample_interval_s()
    frozen = (clock.time() // interval + 0.5) * interval
    monkeypatch.setattr(metrics_history, "time", SimpleNamespace(time=lambda: frozen))
    metrics_sample.delay()
    metrics_sample.delay()
    sample = MetricSample.objects.get()
    assert "lag.prices" in sample.values
    assert "redis_memory_bytes" in sample.values
    assert sample.values["redis_memory_bytes"] > 0


def test_pruning_task_deletes_only_samples_older_than_the_retention(settings, services):
    settings.OPS_METRICS_RETENTION_HOURS = 1
    now = timezone.now()
    old = MetricSample.objects.create(slot=1, ts=now - timedelta(hours=2), values={})
    recent = MetricSample.objects.create(slot=2, ts=now - timedelta(minutes=30), values={})
    metrics_prune.delay()
    assert list(MetricSample.objects.filter(id__in=[old.id, recent.id])) == [recent]


def test_history_api_returns_columns_for_the_range(client, services):
    from django.contrib.auth.models import User

    staff = User.objects.create_user("ops-history", password="x", is_staff=True)
    sign_in(client, staff, password="x")
    now = timezone.now()
    MetricSample.objects.create(slot=10, ts=now - timedelta(minutes=2), values={"lag.prices": 3.0})
    MetricSample.objects.create(slot=11, ts=now - timedelta(hours=2), values={"lag.prices": 9.0})
    body = client.get("/ops/api/history?range=15m").json()
    assert body["series"]["lag.prices"] == [3.0]
    assert len(body["ts"]) == 1
    assert client.get("/ops/api/history?range=2y").status_code == 400


def test_kickoff_task_suspends_open_markets_of_events_past_kick_off(services, redis_client):
    late = market_create()
    Event.objects.filter(id=late.event_id).update(starts_at=timezone.now() - timedelta(minutes=5))
    upcoming = market_create()
    markets_kickoff_suspend.delay()
    markets_kickoff_suspend.delay()
    late.refresh_from_db()
    upcoming.refresh_from_db()
    assert late.status == Market.Status.SUSPENDED
    assert (late.suspension_reason, late.suspended_by) == ("feed_lost", "feed watch")
    assert upcoming.status == Market.Status.OPEN


def test_in_play_markets_are_suspended_when_the_feed_stops_beating_and_the_feed_lifts_it(services, redis_client):
    import time

    from odds.feed.services.feed import FeedRunner
    from store import keys

    playing = market_create()
    Event.objects.filter(id=playing.event_id).update(status=Event.Status.IN_PLAY, starts_at=timezone.now())
    upcoming = market_create()
    redis_client.set(keys.heartbeat("feed"), int(time.time()) - 5, ex=60)
    markets_kickoff_suspend.delay()
    playing.refresh_from_db()
    assert playing.status == Market.Status.OPEN  # a beat 5 s old: the feed is alive
    redis_client.set(keys.heartbeat("feed"), int(time.time()) - 45, ex=60)
    markets_kickoff_suspend.delay()
    playing.refresh_from_db()
    upcoming.refresh_from_db()
    assert (playing.status, playing.suspension_reason, playing.suspended_by) == ("suspended", "feed_lost", "feed watch")
    assert upcoming.status == Market.Status.OPEN
    FeedRunner(rate=1, markets=10, seed=1, record=None, speed=1)
    playing.refresh_from_db()
    assert (playing.status, playing.suspension_reason) == ("open", "")


def test_no_market_is_suspended_for_a_feed_that_never_ran(services, redis_client):
    from store import keys

    playing = market_create()
    Event.objects.filter(id=playing.event_id).update(status=Event.Status.IN_PLAY, starts_at=timezone.now())
    redis_client.delete(keys.heartbeat("feed"))
    markets_kickoff_suspend.delay()
    playing.refresh_from_db()
    assert playing.status == Market.Status.OPEN


def _place(user, market, redis_client):
    from odds.betting.services.bets import LegRequest, bet_place

    selection = market.selections.order_by("display_order")[0]
    live_state_write(redis_client, market, prices=("2.10", "3.40", "3.50"))
    return bet_place(
        user=user,
        idempotency_key=f"digest-{user.id}-{market.id}",
        stake=Decimal("5.00"),
        legs=[LegRequest(selection_id=selection.id, price_seen=Decimal("2.10"))],
    ).bet


def test_digest_goes_only_to_users_with_open_bets_once_a_week(locmem_email, services, redis_client):
    market = market_create()
    with_bet = user_create(balance="50.00")
    with_bet.email = "open@example.com"
    with_bet.save()
    without = user_create(balance="50.00")
    without.email = "none@example.com"
    without.save()
    bet = _place(with_bet, market, redis_client)
    assert bet.status == "accepted"

    digest_weekly.delay()
    digest_weekly.delay()

    assert [m.to for m in mail.outbox] == [["open@example.com"]]
    assert f"#{bet.id}" in mail.outbox[0].body
    assert market.event.name in mail.outbox[0].body
