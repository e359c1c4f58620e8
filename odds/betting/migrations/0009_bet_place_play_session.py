"""The sixth version of ``sb_bet_place``: a bet is refused for the punter's play session (its time
limit reached, a reality check waiting) in the statement that takes it
(odds/betting/sql/sb_bet_place.v6.sql)."""

from django.db import migrations

from odds.betting.sql import sql_file


class Migration(migrations.Migration):
    dependencies = [
        ("betting", "0008_play_sessions"),
    ]

    operations = [
        migrations.RunSQL(sql_file("sb_bet_place.v6.sql"), reverse_sql=sql_file("sb_bet_place.v5.sql")),
    ]
