"""Play-session reads: the punter's preferences, their latest session and its summary (time
played, time left, the next reality check, the net result of the session's bets)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from django.contrib.auth.models import User
from django.db.models import Sum

from odds.betting.models import Bet, PlayPreferences, PlaySession, Wallet
from odds.betting.play import (
    PlayState,
    check_due_at,
    check_pending,
    net_result,
    session_ends_at,
    time_left,
    time_played,
)
from reducers.rules import BOOK_CURRENCY

ZERO = Decimal("0.00")


def _length(seconds: int | None) -> timedelta | None:
    return None if seconds is None else timedelta(seconds=seconds)


def play_state_of(
    *, started_at: datetime, time_limit_s: int | None, reality_check_s: int | None, acknowledged_at: datetime | None
) -> PlayState:
    """A session's columns as the rules (``odds.betting.play``) take them."""
    return PlayState(
        started_at=started_at,
        time_limit=_length(time_limit_s),
        reality_check=_length(reality_check_s),
        acknowledged_at=acknowledged_at,
    )


def play_session_state(*, session: PlaySession) -> PlayState:
    return play_state_of(
        started_at=session.started_at,
        time_limit_s=session.time_limit_s,
        reality_check_s=session.reality_check_s,
        acknowledged_at=session.acknowledged_at,
    )


def play_preferences_get(*, user: User) -> PlayPreferences:
    """The punter's preferences (unsaved, with no limit and no checks, when never chosen)."""
    return PlayPreferences.objects.filter(user=user).first() or PlayPreferences(user=user)


def play_session_latest(*, user: User) -> PlaySession | None:
    """The punter's latest open play session: the one placement checks."""
    return PlaySession.objects.filter(user=user, ended_at__isnull=True).order_by("-id").first()


@dataclass(frozen=True)
class PlaySummary:
    session: PlaySession
    played: timedelta
    ends_at: datetime | None
    time_left: timedelta | None
    check_due_at: datetime | None
    check_pending: bool
    staked: Decimal
    returned: Decimal
    net: Decimal
    currency: str


def play_summary(*, session: PlaySession, now: datetime) -> PlaySummary:
    """What the reality check shows: time played and the net result (returns minus stakes) of the
    bets placed since the session started, in the wallet's currency."""
    state = play_session_state(session=session)
    bets = Bet.objects.filter(user_id=session.user_id, placed_at__gte=session.started_at).exclude(
        status=Bet.Status.REJECTED
    )
    if session.ended_at is not None:
        bets = bets.filter(placed_at__lt=session.ended_at)
    # Summed by the database: a session of many bets is one row, not one per bet.
    totals = bets.aggregate(staked=Sum("stake", default=ZERO), returned=Sum("payout", default=ZERO))
    staked, returned = totals["staked"], totals["returned"]
    wallet = Wallet.objects.filter(user_id=session.user_id).only("currency").first()
    return PlaySummary(
        session=session,
        played=time_played(state=state, now=now),
        ends_at=session_ends_at(state=state),
        time_left=time_left(state=state, now=now),
        check_due_at=check_due_at(state=state),
        check_pending=check_pending(state=state, now=now),
        staked=staked,
        returned=returned,
        net=net_result(bets=[(staked, returned)]),
        currency=wallet.currency if wallet is not None else BOOK_CURRENCY,
    )
