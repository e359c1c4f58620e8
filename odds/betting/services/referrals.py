"""Referred bets (docs/referral.md): a bet above the customer's stake limit is placed ``pending``
with its stake held and ``referred_limit`` set (``sb_bet_place``); a trader accepts or declines it
before its ``accept_at``, or the delay resolver declines it then
(``odds.betting.services.bet_delay``).

A decision locks the wallet and then the bet, like all money code, so two traders deciding one
bet, or a trader and the resolver, are served one after the other: the first decides, the second
is told it was decided. Accepting judges the bet as the in-play delay would, but at the price the
punter took: a market suspended since the bet was placed, or a selection that cannot be backed
now, refuses it with that reason instead.
"""

from __future__ import annotations

import logging

from django.contrib.auth.models import AnonymousUser, User
from django.db import transaction
from django.utils import timezone

from odds.audit.models import AuditEntry
from odds.audit.services.audit import audit_record, staff_actor
from odds.betting.models import Bet, Wallet
from odds.betting.services.bet_delay import held_bet_decide, held_verdict

log = logging.getLogger(__name__)

DECLINED = "referral_declined"
REASON_MAX_CHARS = 200


class ReferralRefused(Exception):
    """A decision that cannot be taken; ``str()`` says why, for the trader."""


def referral_decide(*, bet_id: int, accept: bool, by: User | AnonymousUser, reason: str = "") -> Bet:
    """Accept (``accept``) or decline a referred bet as trader ``by``, with an optional
    ``reason`` the punter reads when it is declined; audited. Returns the bet as decided:
    accepting a bet whose market was suspended since, or whose selection cannot be backed now,
    refuses it with that reason. ``ReferralRefused`` for a bet that was not referred, is decided
    already or whose time to answer has passed."""
    reason = " ".join(reason.split())[:REASON_MAX_CHARS]
    user_id = Bet.objects.filter(id=bet_id).values_list("user_id", flat=True).first()
    if user_id is None:
        raise ReferralRefused(f"there is no bet {bet_id}")
    with transaction.atomic():
        wallet = Wallet.objects.select_for_update().get(user_id=user_id)
        bet = Bet.objects.select_for_update().get(id=bet_id)
        if bet.referred_limit is None:
            raise ReferralRefused(f"bet #{bet.id} was not referred")
        if bet.status != Bet.Status.PENDING:
            decided = f" by {bet.decided_by}" if bet.decided_by else ""
            raise ReferralRefused(f"bet #{bet.id} was decided already{decided}: {bet.get_status_display().lower()}")
        if bet.accept_at is not None and bet.accept_at <= timezone.now():
            raise ReferralRefused(f"the time to answer bet #{bet.id} has passed: it is declined")
        if accept:
            legs = list(bet.legs.select_related("selection__market__event", "market", "event"))
            code, message = held_verdict(bet, legs, price=False)
        else:
            code = DECLINED
            # A sentence: the punter's page shows it as it is (frontend/src/refusals.ts).
            message = f"A trader declined this bet: {reason.rstrip('.')}." if reason else "A trader declined this bet."
        bet.decided_by = staff_actor(by)
        held_bet_decide(wallet=wallet, bet=bet, code=code, message=message)
        audit_record(
            by=by,
            kind=AuditEntry.Kind.REFERRAL_ACCEPT if accept else AuditEntry.Kind.REFERRAL_DECLINE,
            obj=bet,
            before={"status": Bet.Status.PENDING, "referred_limit": bet.referred_limit},
            after={"status": bet.status, "reject_code": bet.reject_code},
            reason=reason,
        )
    log.info("referred bet %s %s by %s %s", bet.id, bet.status, by, bet.reject_code)
    return bet
