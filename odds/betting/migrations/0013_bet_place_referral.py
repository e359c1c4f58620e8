"""The ninth version of ``sb_bet_place``: a bet above the customer's stake limit is referred to a
trader (odds/betting/sql/sb_bet_place.v9.sql). Two parameters more (the market's maximum stake
and the referral window), so the eighth's signature is dropped, not replaced."""

from django.db import migrations

from odds.betting.sql import sql_file

V8 = "sb_bet_place(integer, text, text, text, integer[], numeric, jsonb, numeric, text)"
V9 = "sb_bet_place(integer, text, text, text, integer[], numeric, jsonb, numeric, text, numeric, integer)"


class Migration(migrations.Migration):
    dependencies = [
        ("betting", "0012_referral"),
        ("trading", "0002_customer_limits"),
    ]

    operations = [
        migrations.RunSQL(
            f"DROP FUNCTION {V8};\n" + sql_file("sb_bet_place.v9.sql"),
            reverse_sql=f"DROP FUNCTION {V9};\n" + sql_file("sb_bet_place.v8.sql"),
        ),
    ]
