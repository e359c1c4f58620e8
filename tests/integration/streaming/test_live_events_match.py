"""``/live/events``, the fallback of pages without a channel, returns the same match state."""

from __future__ import annotations

import orjson
import pytest

from store import keys
from tests.factories import market_create, user_create
from tests.integration.security.conftest import logged_in

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def punter(services):
    return user_create(balance="100.00")


def test_live_events_returns_the_match_state_the_channels_get(punter, redis_client):
    event_id = market_create().event_id
    state = {"type": "match", "v": 1, "event_id": event_id, "seq": 4, "score": {"home": 1, "away": 0}}
    redis_client.hset(keys.match_state(event_id), mapping={"seq": 4, "state": orjson.dumps(state)})
    response = logged_in(punter).get("/live/events", {"ids": str(event_id)})
    assert response.json()["events"][0]["match"] == state


def test_live_events_without_a_match_state_keeps_the_catalogue_score(punter):
    event_id = market_create().event_id
    event = logged_in(punter).get("/live/events", {"ids": str(event_id)}).json()["events"][0]
    assert event["match"] is None
    assert (event["home_score"], event["away_score"]) == (0, 0)
