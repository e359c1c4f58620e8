from __future__ import annotations

import sys
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from odds.core import task_names
from odds.feed.services.demo import DEMO_PASSWORD, demo_catalogue_create, demo_users_create, demo_wallets_fund
from reducers.money import money_text


def _bar(done: int, total: int) -> None:
    width = 30
    filled = int(width * done / total)
    sys.stdout.write(f"\rseeding events [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
    if done == total:
        sys.stdout.write("\n")
    sys.stdout.flush()


class Command(BaseCommand):
    help = (
        "Create demo sports, competitions, events, markets and users (idempotent). Development only:"
        " needs SPORTSBOOK_DEMO=1, and never runs in production (the demo users' password is published)."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--seed", type=int, default=7)
        parser.add_argument("--quiet", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        if settings.PRODUCTION or not settings.DEMO:
            raise CommandError(
                "demo data is for development only: set SPORTSBOOK_DEMO=1 (never with SPORTSBOOK_ENV=production)"
            )
        summary = demo_catalogue_create(seed=options["seed"], progress=None if options["quiet"] else _bar)
        users = demo_users_create()
        wallets = demo_wallets_fund()
        # The desk's books convert at the exchange rates from the start (beat keeps them mirrored).
        task_names.enqueue(task_names.EXCHANGE_RATES_APPLY)
        self.stdout.write(
            f"{summary.sports} sports, {summary.events} events, {summary.markets} markets, "
            f"{summary.selections} selections; demo users {', '.join(users)} (password {DEMO_PASSWORD!r}); "
            + ", ".join(f"{w.user.username} {money_text(w.balance, w.currency)}" for w in wallets)
        )
