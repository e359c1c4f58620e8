"""Sessions that end: a logout, a password change, an account deactivated or self-excluded.

``punter_sessions_end`` ends the punter's subscriber channels (those of one browser session, or
all) through the command topic, and publishes ``session.close`` on the punter's pub-sub channel
(``store.channels.punter_publish``): every web process's sockets of those sessions send ``session.ended``
with the reason and close (the socket's ``Session`` decides, ``odds.streaming.session``). Both
happen after the change that caused them commits.
"""

from __future__ import annotations

import logging

import orjson
from django.db import transaction

from odds.core.connections import redis_shared
from odds.streaming.services.streams import StreamError, stream_end
from odds.streaming.session import session_digest
from reducers import frames
from reducers.frames import SessionCloseMessage, SessionEndReason
from store.channels import live_channels, punter_publish

log = logging.getLogger(__name__)


def punter_sessions_end(*, user_id: int, reason: SessionEndReason, session_key: str | None = None) -> None:
    """After the current transaction commits: end the punter's channels (of ``session_key``'s
    browser session, or all of them) and close the punter's sockets of those sessions."""
    transaction.on_commit(lambda: _sessions_end_now(user_id=user_id, reason=reason, session_key=session_key))


def _sessions_end_now(*, user_id: int, reason: SessionEndReason, session_key: str | None) -> None:
    client = redis_shared()
    message: SessionCloseMessage = {
        "type": "session.close",
        "v": frames.PROTOCOL_VERSION,
        "reason": reason,
        "session": session_digest(session_key) if session_key else None,
    }
    # The sockets first: none of them may attach a channel again while the channels end.
    punter_publish(client, user_id, orjson.dumps(message))
    for channel_id in live_channels(client, user_id=user_id, session_key=session_key):
        try:
            stream_end(channel_id=channel_id, reason=reason, user_id=user_id)
        except StreamError:
            # Kafka did not take the command: the owner binding is released all the same below,
            # and the idle sweeper ends the channel once no socket keeps it alive.
            log.warning("channel %s of punter %s not ended (%s)", channel_id, user_id, reason, exc_info=True)
