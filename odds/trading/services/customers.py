"""Customers' stake limits, as traders set them (docs/referral.md): a stake factor and a largest
stake per sport. A bet above the limit they give is referred to a trader at placement
(``sb_bet_place``); the wallet's ``customer_limits`` flag tells the placement statement to look,
so a customer never limited pays nothing for the rule."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from odds.audit.models import AuditEntry
from odds.audit.services.audit import Actor, audit_record, staff_actor
from odds.betting.models import Wallet
from odds.betting.services.wallet import wallet_get_or_create
from odds.catalogue.models import Sport
from odds.trading.models import CustomerLimit, CustomerSportLimit
from reducers.rules import MAX_STAKE
from reducers.trading import STAKE_FACTOR_MAX, STAKE_FACTOR_MIN, STAKE_FACTOR_REFUSED, sport_limit_checked


class LimitRefused(ValueError):
    """A limit that cannot be set; ``str()`` says why."""


def customer_limits_set(
    *,
    customer: User,
    stake_factor: Decimal | None,
    sport_limits: Mapping[int, Decimal | None],
    by: Actor,
    note: str = "",
) -> bool:
    """Set ``customer``'s stake factor (None: none) and the largest stake on each sport named in
    ``sport_limits`` (None: none on that sport; sports not named keep theirs), in one transaction
    with one audit entry holding what changed. Returns whether anything changed. ``LimitRefused``
    for a value out of bounds or an unknown sport, with nothing changed."""
    if stake_factor is not None and not STAKE_FACTOR_MIN <= stake_factor <= STAKE_FACTOR_MAX:
        raise LimitRefused(STAKE_FACTOR_REFUSED)
    checked: dict[int, Decimal | None] = {}
    for sport_id, amount in sport_limits.items():
        try:
            checked[sport_id] = None if amount is None else sport_limit_checked(amount, max_stake=MAX_STAKE)
        except ValueError as exc:
            raise LimitRefused(str(exc)) from None
    sports = dict(Sport.objects.filter(id__in=checked).values_list("id", "name"))
    if unknown := sorted(set(checked) - set(sports)):
        raise LimitRefused(f"there is no sport {unknown[0]}")
    now, trader = timezone.now(), staff_actor(by)
    with transaction.atomic():
        # The customer's wallet first, as all money code locks it: a bet being placed now sees
        # the limits before or after, never half of them.
        wallet = Wallet.objects.select_for_update().get(id=wallet_get_or_create(user=customer).id)
        row = CustomerLimit.objects.select_for_update().filter(user=customer).first()
        current = {
            limit.sport_id: limit
            for limit in CustomerSportLimit.objects.select_for_update().filter(user=customer, sport_id__in=checked)
        }
        before: dict[str, str | None] = {}
        after: dict[str, str | None] = {}
        old_factor = row.stake_factor if row else None
        if old_factor != stake_factor:
            before["stake_factor"], after["stake_factor"] = _text(old_factor), _text(stake_factor)
            if row is None:
                CustomerLimit.objects.create(user=customer, stake_factor=stake_factor, set_by=trader, set_at=now)
            else:
                row.stake_factor, row.set_by, row.set_at = stake_factor, trader, now
                row.save(update_fields=["stake_factor", "set_by", "set_at"])
        for sport_id, amount in checked.items():
            old = current.get(sport_id)
            if (old.max_stake if old else None) == amount:
                continue
            name = f"max_stake:{sports[sport_id]}"
            before[name], after[name] = _text(old.max_stake if old else None), _text(amount)
            if amount is None:
                if old is not None:
                    old.delete()
            elif old is None:
                CustomerSportLimit.objects.create(
                    user=customer, sport_id=sport_id, max_stake=amount, set_by=trader, set_at=now
                )
            else:
                old.max_stake, old.set_by, old.set_at = amount, trader, now
                old.save(update_fields=["max_stake", "set_by", "set_at"])
        if not after:
            return False
        if not wallet.customer_limits:
            wallet.customer_limits = True
            wallet.save(update_fields=["customer_limits", "updated_at"])
        audit_record(
            by=by,
            kind=AuditEntry.Kind.CUSTOMER_LIMIT_SET,
            object_type="user",
            object_id=customer.pk,
            label=customer.get_username(),
            before=before,
            after=after,
            reason=note,
        )
    return True


def _text(value: Decimal | None) -> str | None:
    return None if value is None else str(value)
