"""The tenth version of ``sb_bet_place``: the loss and wager limits count the part of a referred
bet's stake that a trader's lower offer gave back off the stakes
(odds/betting/sql/sb_bet_place.v10.sql)."""

from django.db import migrations

from odds.betting.sql import sql_file


class Migration(migrations.Migration):
    dependencies = [
        ("betting", "0014_referral_offer"),
    ]

    operations = [
        migrations.RunSQL(sql_file("sb_bet_place.v10.sql"), reverse_sql=sql_file("sb_bet_place.v9.sql")),
    ]
