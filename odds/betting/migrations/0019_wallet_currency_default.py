"""The twelfth version of ``sb_bet_place`` (odds/betting/sql/sb_bet_place.v12.sql): a missing
wallet is opened in the currency column's default, the book's, which the database now keeps; the
exclusion column has a database default too (without it the statement's insert of a missing
wallet failed on its not-null constraint)."""

from django.db import migrations, models

from odds.betting.sql import sql_file
from reducers.rules import BOOK_CURRENCY


class Migration(migrations.Migration):
    dependencies = [
        ("betting", "0018_owed_claims"),
    ]

    operations = [
        migrations.AlterField(
            model_name="wallet",
            name="currency",
            field=models.CharField(db_default=BOOK_CURRENCY, default=BOOK_CURRENCY, max_length=3),
        ),
        migrations.AlterField(
            model_name="wallet",
            name="exclusion",
            field=models.CharField(blank=True, db_default="", help_text="time_out or self_exclusion", max_length=16),
        ),
        migrations.RunSQL(sql_file("sb_bet_place.v12.sql"), reverse_sql=sql_file("sb_bet_place.v11.sql")),
    ]
