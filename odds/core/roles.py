"""The staff roles, as groups holding the model permissions each role's work needs.

Staff are given a role, never superuser: a trader runs markets and voids bets, an operator
watches the platform and ends channels; each staff action checks its own permission
(``odds.core.staff``, the admin's actions). ``roles_sync`` writes the groups after every
``migrate``; a permission a role names must exist (a model's own or its ``Meta.permissions``).
"""

from __future__ import annotations

from django.contrib.auth.models import Group, Permission

TRADERS = "Traders"
OPERATORS = "Operators"

ROLES: dict[str, tuple[str, ...]] = {
    TRADERS: (
        "catalogue.view_sport",
        "catalogue.view_competition",
        "catalogue.view_event",
        "catalogue.add_event",
        "catalogue.view_market",
        "catalogue.view_selection",
        "catalogue.change_selection",
        "catalogue.trade_market",
        "catalogue.result_market",
        "betting.view_bet",
        "betting.view_betleg",
        "betting.void_bet",
        "betting.view_wallet",
        "betting.view_ledgerentry",
        "ops.end_channel",
        "audit.view_auditentry",
        "trading.view_customerlimit",
        "trading.set_customer_limits",
    ),
    OPERATORS: (
        "catalogue.view_event",
        "catalogue.view_market",
        "ops.view_metricsample",
        "ops.end_channel",
        "odds.view_outboxmessage",
        "audit.view_auditentry",
        "trading.view_exchangerate",
        "trading.set_exchange_rate",
    ),
}


def roles_sync() -> dict[str, int]:
    """Create each role's group and give it exactly its permissions (those that exist yet: this
    runs after each app's migrations, the last run sees them all); returns how many each holds."""
    held = {}
    for name, perms in ROLES.items():
        group, _ = Group.objects.get_or_create(name=name)
        wanted = []
        for perm in perms:
            app_label, codename = perm.split(".", 1)
            found = Permission.objects.filter(content_type__app_label=app_label, codename=codename).first()
            if found is not None:
                wanted.append(found)
        group.permissions.set(wanted)
        held[name] = len(wanted)
    return held
