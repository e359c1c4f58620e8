"""The eleventh version of ``sb_bet_place``: the loss limit's window counts a resettlement's
entries by the way they move the wallet (odds/betting/sql/sb_bet_place.v11.sql); the window's
index carries the entries' accounts so that the sums are still read from the index alone."""

from django.db import migrations, models

from odds.betting.sql import sql_file


class Migration(migrations.Migration):
    dependencies = [
        ("betting", "0016_resettlement"),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="ledgerentry",
            name="ledger_wallet_time",
        ),
        migrations.AddIndex(
            model_name="ledgerentry",
            index=models.Index(
                fields=["wallet", "created_at"],
                include=("kind", "amount", "debit", "credit"),
                name="ledger_wallet_time",
            ),
        ),
        migrations.RunSQL(sql_file("sb_bet_place.v11.sql"), reverse_sql=sql_file("sb_bet_place.v10.sql")),
    ]
