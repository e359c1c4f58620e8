"""The live-channel caps hold under concurrency: subscriptions racing for the last places take at
most the cap between them (the check and the count are one step in Redis)."""

from __future__ import annotations

import threading

import pytest

from odds.streaming.services.streams import StreamError, stream_subscribe
from reducers.subscriptions import SubscriptionSpec
from store import keys
from tests.factories import user_create

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def _race(*, user_id: int, sessions: list[str], each: int) -> tuple[list[str], list[str]]:
    """``each`` subscriptions per session, all released at once; (channels created, refusals)."""
    created: list[str] = []
    refused: list[str] = []
    start = threading.Barrier(len(sessions) * each)

    def subscribe(session_key: str) -> None:
        start.wait()
        try:
            created.append(
                stream_subscribe(
                    user_id=user_id, session_key=session_key, spec=SubscriptionSpec(view="markets", markets=(1,))
                ).channel_id
            )
        except StreamError as exc:
            refused.append(exc.code)

    threads = [threading.Thread(target=subscribe, args=(s,)) for s in sessions for _ in range(each)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return created, refused


def test_concurrent_subscriptions_never_exceed_the_sessions_cap(kafka_topics, settings, redis_client):
    settings.STREAM_MAX_CHANNELS_PER_SESSION = 2
    user = user_create(balance="0")
    created, refused = _race(user_id=user.pk, sessions=["racing-session"], each=12)
    assert len(created) == 2
    assert refused == ["too_many_channels"] * 10
    assert redis_client.zcard(keys.live_channels_of_session("racing-session")) == 2


def test_concurrent_subscriptions_never_exceed_the_punters_cap_across_sessions(kafka_topics, settings, redis_client):
    settings.STREAM_MAX_CHANNELS_PER_SESSION = 10
    settings.STREAM_MAX_CHANNELS_PER_USER = 3
    user = user_create(balance="0")
    created, _ = _race(user_id=user.pk, sessions=["tab-a", "tab-b", "tab-c"], each=4)
    assert len(created) == 3
    assert redis_client.zcard(keys.live_channels_of_user(user.pk)) == 3
