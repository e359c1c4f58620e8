from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from odds.betting.models import Wallet
from odds.betting.selectors.bets import wallets_unreconciled


class Command(BaseCommand):
    help = "Check every wallet's balance against its ledger; fail when any differs."

    def handle(self, *args: Any, **options: Any) -> None:
        mismatches = wallets_unreconciled()
        for wallet, ledger in mismatches:
            self.stdout.write(f"{wallet.user}: balance {wallet.balance}, ledger {ledger}")
        if mismatches:
            raise CommandError(f"{len(mismatches)} wallet(s) do not match their ledger")
        self.stdout.write(f"{Wallet.objects.count()} wallets match their ledger")
