"""A wallet's ``email_unverified`` flag and the fourth version of ``sb_bet_place``, which refuses
a bet while it is set (odds/betting/sql/sb_bet_place.v4.sql)."""

from django.db import migrations, models

from odds.betting.sql import sql_file


class Migration(migrations.Migration):
    dependencies = [
        ("betting", "0004_bet_void_reason"),
    ]

    operations = [
        migrations.AddField(
            model_name="wallet",
            name="email_unverified",
            field=models.BooleanField(db_default=False, default=False),
        ),
        # The same arguments: the function is replaced in place.
        migrations.RunSQL(sql_file("sb_bet_place.v4.sql"), reverse_sql=sql_file("sb_bet_place.v3.sql")),
    ]
