"""Price-record validation as Spark SQL, built from the limits in ``reducers.schemas``.

The SQL verdict is a fast pre-filter, never the last word: a record SQL accepts is one the
Python validator accepts too (checked by tests on a corpus of bad records), and every record SQL
does not accept goes to the Python validator, which names the reason or lets it through.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from reducers.schemas import (
    MARKET_STATUSES,
    MAX_PRICE,
    MAX_RECORD_BYTES,
    MAX_SELECTIONS,
    MIN_PRICE,
    PRICE_SCHEMA_VERSION,
    SELECTION_STATUSES,
    SOURCES,
)
from spark.sources import RAW_COLUMNS

# ``from_json`` reads the first JSON value of a text and ignores whatever follows it, where
# Python refuses the record. The record is parsed with this member added inside its outermost
# object, in place of the text's last character (which must be that object's ``}``): the member
# is found only if the object closes exactly there, so a text with anything after its first
# value is not accepted. A text that names the member itself is not accepted either.
END_MEMBER = "__end__"
_END_SUFFIX = f',"{END_MEMBER}":1}}'
# Spark's JSON reader is more lenient than JSON by default; these make it as strict.
STRICT_JSON = {"allowSingleQuotes": "false", "allowNonNumericNumbers": "false"}

PRICE_RECORD = T.StructType(
    [
        T.StructField("v", T.LongType()),
        T.StructField("market_id", T.LongType()),
        T.StructField("seq", T.LongType()),
        T.StructField("status", T.StringType()),
        T.StructField(
            "selections",
            T.ArrayType(
                T.StructType(
                    [
                        T.StructField("id", T.LongType()),
                        T.StructField("price", T.StringType()),
                        T.StructField("status", T.StringType()),
                    ]
                )
            ),
        ),
        T.StructField("event_ts", T.LongType()),
        T.StructField("produce_ts", T.LongType()),
        T.StructField("source", T.StringType()),
    ]
)
# What the price query parses: the record with the end marker (``END_MEMBER``).
_PARSED_RECORD = T.StructType([*PRICE_RECORD.fields, T.StructField(END_MEMBER, T.LongType())])

PRICE_TEXT = r"^[0-9]{1,4}(\.[0-9]{1,2})?$"
# A price written as a JSON number parses into the string field; the raw text shows it.
NUMERIC_PRICE = r'"price"\s*:\s*[-0-9]'


def _selection_ok(s: Column) -> Column:
    price = s["price"].cast(T.DecimalType(12, 2))
    return (
        (s["id"] >= 1)
        & s["price"].rlike(PRICE_TEXT)
        & (price >= F.lit(MIN_PRICE))
        & (price <= F.lit(MAX_PRICE))
        & F.coalesce(s["status"], F.lit("active")).isin(*SELECTION_STATUSES)
    )


def text_plain(text: Column) -> Column:
    """The text checks parsing cannot make: valid UTF-8 (Spark reads past bad bytes), one object
    ending the text, no escapes (a key spelled with one, such as a price's, would slip past the
    text checks) and no ``null`` (parsed, it is indistinguishable from a member left out, which
    takes its default where Python refuses the null). Records our producers write pass all of
    them; any other record is left to the Python validator."""
    return (
        F.is_valid_utf8(text)
        & text.endswith("}")
        & ~text.contains("\\")
        & ~text.contains("null")
        & ~text.contains(END_MEMBER)
    )


def parse_record(text: Column) -> Column:
    """``text`` parsed with the end marker in place of its last character (see ``END_MEMBER``)."""
    marked = F.concat(F.left(text, F.length(text) - 1), F.lit(_END_SUFFIX))
    return F.from_json(marked, _PARSED_RECORD, STRICT_JSON)


def price_validity(text: Column, record: Column) -> Column:
    """Whether SQL accepts a record, from its text and its parsed form (``parse_record`` of the
    text). Both are columns, so the record is parsed once however often the rules read it."""
    ok = (
        (F.length(text) <= MAX_RECORD_BYTES)
        & text_plain(text)
        & ~text.rlike(NUMERIC_PRICE)
        & (record[END_MEMBER] == 1)
        & (record["v"] == PRICE_SCHEMA_VERSION)
        & (record["market_id"] >= 1)
        & (record["seq"] >= 1)
        & (record["event_ts"] >= 1)
        & (record["produce_ts"] >= 1)
        & record["status"].isin(*MARKET_STATUSES)
        & (F.size(record["selections"]) >= 1)
        & (F.size(record["selections"]) <= MAX_SELECTIONS)
        & F.forall(record["selections"], _selection_ok)
        & F.coalesce(record["source"], F.lit("feed")).isin(*SOURCES)
    )
    return F.coalesce(ok, F.lit(False))


def with_validity(batch: DataFrame) -> DataFrame:
    """The raw rows with ``r`` (the parsed record) and ``ok`` (SQL accepts it).

    The text and the parsed record are columns of their own projections: written as one
    expression, the rules would each evaluate ``from_json`` again (it has no generated code, so
    no common subexpression is shared), which more than doubled the cost of a batch.
    """
    text = batch.select(*RAW_COLUMNS, F.col("value").cast("string").alias("text"))
    parsed = text.select(*RAW_COLUMNS, "text", parse_record(F.col("text")).alias("r"))
    return parsed.select(*RAW_COLUMNS, "r", price_validity(F.col("text"), F.col("r")).alias("ok"))
