"""A socket's session ending: which sockets a ``session.close`` message on the punter's channel
closes, decided by the socket's pure ``Session`` (odds.streaming.session)."""

from __future__ import annotations

import orjson
import pytest

from odds.streaming.session import EndSession, Limits, Session, session_digest

pytestmark = pytest.mark.unit

PUNTER = b"sb:punter:7"


def socket(session_key: str | None) -> Session:
    limits = Limits(frames_per_s=20, image_markets_per_min=2000, markets=500, events=500)
    return Session(limits=limits, punter=PUNTER, session_digest=session_digest(session_key) if session_key else None)


def close(reason: str, session: str | None) -> str:
    return orjson.dumps({"type": "session.close", "v": 1, "reason": reason, "session": session}).decode()


def test_a_close_of_every_session_closes_any_socket_of_the_punter():
    assert socket("abc").deliver(PUNTER, close("password_changed", None)) == [EndSession("password_changed")]
    assert socket(None).deliver(PUNTER, close("deactivated", None)) == [EndSession("deactivated")]


def test_a_close_of_one_session_closes_only_that_sessions_sockets():
    message = close("logged_out", session_digest("laptop-session"))
    assert socket("laptop-session").deliver(PUNTER, message) == [EndSession("logged_out")]
    assert socket("phone-session").deliver(PUNTER, message) == []
    assert socket(None).deliver(PUNTER, message) == []


def test_the_close_message_is_never_queued_for_the_client():
    session = socket("abc")
    session.deliver(PUNTER, close("logged_out", session_digest("another")))
    assert list(session.ordered) == []


def test_the_punters_other_news_is_queued_and_closes_nothing():
    decided = orjson.dumps({"type": "bet.decided", "bet": {"id": 1, "status": "accepted", "reject": None}}).decode()
    session = socket("abc")
    assert session.deliver(PUNTER, decided) == []
    assert list(session.ordered) == [decided]


def test_the_message_never_carries_the_session_key_itself():
    assert "secret-session-key" not in close("logged_out", session_digest("secret-session-key"))
