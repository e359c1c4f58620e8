"""The eighth version of ``sb_bet_place``: every bet it records goes on the bets topic, a pending
and a rejected one too, for the trading desk's ticker (odds/betting/sql/sb_bet_place.v8.sql)."""

from django.db import migrations

from odds.betting.sql import sql_file


class Migration(migrations.Migration):
    dependencies = [
        ("betting", "0010_bet_place_currency"),
    ]

    operations = [
        migrations.RunSQL(sql_file("sb_bet_place.v8.sql"), reverse_sql=sql_file("sb_bet_place.v7.sql")),
    ]
