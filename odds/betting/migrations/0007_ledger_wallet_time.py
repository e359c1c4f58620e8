"""The index of a wallet's ledger by time, holding each entry's kind and amount: the sums of a
rolling window (the limits') read from the index alone. Built without locking the ledger
against writes, so bets go on while it builds."""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("betting", "0006_wallet_limits"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="ledgerentry",
            index=models.Index(fields=["wallet", "created_at"], include=["kind", "amount"], name="ledger_wallet_time"),
        ),
    ]
