"""The seventh version of ``sb_bet_place``: the bets-topic record of a placed bet names the wallet's
currency (odds/betting/sql/sb_bet_place.v7.sql)."""

from django.db import migrations

from odds.betting.sql import sql_file


class Migration(migrations.Migration):
    dependencies = [
        ("betting", "0009_bet_place_play_session"),
    ]

    operations = [
        migrations.RunSQL(sql_file("sb_bet_place.v7.sql"), reverse_sql=sql_file("sb_bet_place.v6.sql")),
    ]
