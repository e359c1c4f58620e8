"""Loss and wager limits beside the deposit limits: the deposit limits become ``WalletLimit``
rows of kind ``deposit`` (every existing limit kept as it is), the wallet's ``bet_limits`` flag,
and the fifth version of ``sb_bet_place``, which enforces the loss and wager limits
(odds/betting/sql/sb_bet_place.v5.sql)."""

import django.db.models.deletion
from django.db import migrations, models

from odds.betting.sql import sql_file


class Migration(migrations.Migration):
    dependencies = [
        ("betting", "0005_wallet_email_unverified"),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="depositlimit", name="deposit_limit_once_per_period"),
        migrations.RemoveConstraint(model_name="depositlimit", name="deposit_limit_positive"),
        migrations.RenameModel(old_name="DepositLimit", new_name="WalletLimit"),
        migrations.AlterModelTable(name="walletlimit", table="odds_walletlimit"),
        migrations.AlterModelOptions(name="walletlimit", options={"ordering": ["wallet", "kind", "period"]}),
        migrations.AddField(
            model_name="walletlimit",
            name="kind",
            field=models.CharField(
                choices=[("deposit", "Deposit"), ("loss", "Loss"), ("wager", "Wager")], default="deposit", max_length=8
            ),
        ),
        migrations.AlterField(
            model_name="walletlimit",
            name="wallet",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="limits",
                to="betting.wallet",
            ),
        ),
        migrations.AddConstraint(
            model_name="walletlimit",
            constraint=models.UniqueConstraint(
                fields=("wallet", "kind", "period"), name="wallet_limit_once_per_kind_and_period"
            ),
        ),
        migrations.AddConstraint(
            model_name="walletlimit",
            constraint=models.CheckConstraint(condition=models.Q(("amount__gt", 0)), name="wallet_limit_positive"),
        ),
        migrations.AddConstraint(
            model_name="walletlimit",
            constraint=models.CheckConstraint(
                condition=models.Q(("pending_amount__isnull", True), ("pending_amount__gt", 0), _connector="OR"),
                name="wallet_limit_pending_positive",
            ),
        ),
        migrations.AddField(
            model_name="wallet",
            name="bet_limits",
            field=models.BooleanField(db_default=False, default=False),
        ),
        # The same arguments: the function is replaced in place.
        migrations.RunSQL(sql_file("sb_bet_place.v5.sql"), reverse_sql=sql_file("sb_bet_place.v4.sql")),
    ]
