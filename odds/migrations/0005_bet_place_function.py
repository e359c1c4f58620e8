"""``sb_bet_place``: a bet's whole money part in one statement (see odds/betting/services/placement.py).

The function locks the punter's wallet, answers a repeated idempotency key with the bet of the
first attempt, checks every leg against the catalogue (the newest trader and lifecycle decision)
and the live quote the caller read from the reducers' state, and records the bet: accepted (stake
held in the ledger, ``placed`` event in the outbox), pending (stake held, decided after the
in-play delay of its sport) or rejected (with the reason). ``sb_bet_json`` is a bet as the API
shows it, amounts as decimal strings and times in epoch microseconds.
"""

from django.db import migrations

from odds.betting.sql import sql_file

BET_JSON = sql_file("sb_bet_json.v1.sql")
BET_PLACE = sql_file("sb_bet_place.v1.sql")


class Migration(migrations.Migration):
    dependencies = [("odds", "0004_in_play_delay")]

    operations = [
        # In lists: each function is one statement, not split at the semicolons of its body.
        migrations.RunSQL([BET_JSON], reverse_sql=["DROP FUNCTION IF EXISTS sb_bet_json(bigint)"]),
        migrations.RunSQL(
            [BET_PLACE],
            reverse_sql=[
                "DROP FUNCTION IF EXISTS sb_bet_place(integer, text, text, text, numeric, jsonb, numeric, text)"
            ],
        ),
    ]
