"""Price-record validation as Spark SQL, built from the limits in ``reducers.schemas``.

The SQL verdict is a fast pre-filter, never the last word: a record SQL accepts is one the
Python validator accepts too (checked by tests on a corpus of bad records), and every record SQL
does not accept goes to the Python validator, which names the reason or lets it through.

A record is parsed once, into typed columns, and accepted when two things hold:

* **it is canonical**: its bytes are exactly what its parsed fields print as in our producers'
  form (``PriceUpdate.encode``: the fields in the schema's order, compact, every default
  written). That one comparison refuses everything Spark's lenient reader would let past that
  Python refuses: text after the first JSON value, single quotes, a member set to ``null`` or
  left out (the printed form is null), a key spelled with an escape, a price written as a
  number (it prints as a string), duplicate keys, whitespace, unknown members, bytes that are
  not UTF-8 (they read as U+FFFD, which prints as other bytes). Our producers' records pass;
  any other record is left to Python, which decides.
* **its typed fields are within the limits**: version, positive ids, sequence and times, known
  statuses and source, one to ``MAX_SELECTIONS`` selections, each price a decimal of at most two
  places within ``MIN_PRICE``..``MAX_PRICE``.

No regular expression runs over the record's text; the only one left checks the prices' few
characters (a record's prices joined, one match a record), because the number of decimal places
Python counts is the one written ("2.500" is refused where "2.50" is not), which no decimal type
keeps. No rule calls a function per selection (``forall``, ``transform``): the selections are
read as arrays of one member each.
"""

from __future__ import annotations

from pyspark import SparkContext
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

# Spark's JSON reader is more lenient than JSON by default; these make it as strict. (The
# canonical check refuses what they let through anyway; they make the parse fail early.)
STRICT_JSON = {"allowSingleQuotes": "false", "allowNonNumericNumbers": "false"}

# The price record in the order our producers write its members (``PriceUpdate``): the
# canonical check compares the record with these fields printed in this order.
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

# A price as Python's validator takes it, in the digits SQL accepts: up to four before the point
# (MAX_PRICE is 1000), one or two after it.
PRICE_TEXT = r"[0-9]{1,4}(\.[0-9]{1,2})?"
# A record's prices joined with commas, a null as "?": every one of them written as PRICE_TEXT.
# (No price with a comma in it gets this far: it is no decimal, and the cast check refuses it.)
PRICES_TEXT = f"^{PRICE_TEXT}(,{PRICE_TEXT})*$"
# Wide enough for every price PRICE_TEXT lets through.
_PRICE_DECIMAL = T.DecimalType(6, 2)


def parse_record(value: Column) -> Column:
    """The record's bytes parsed into ``PRICE_RECORD`` (null members where it does not fit)."""
    return F.from_json(value.cast("string"), PRICE_RECORD, STRICT_JSON)


def canonical(value: Column, record: Column) -> Column:
    """Whether ``value`` is byte for byte what ``record`` (its parsed ``PRICE_RECORD``) prints as:
    compact JSON, members in the schema's order, a null member printed as null.

    Strings print between quotes with JSON's escapes: every string of a record the typed rules
    accept is a known status or source or a price's digits, which print as they are written.
    """
    return F.to_json(record, {"ignoreNullFields": "false"}).cast("binary") == value


def _no_nulls(values: Column) -> Column:
    return F.size(F.array_compact(values)) == F.size(values)


def _selections_ok(selections: Column) -> Column:
    """The rules on every selection, read as whole arrays of one member each (``selections.id``)
    rather than with a function called per selection (``forall``): the array functions run in
    the generated code of the projection; the lambda of a higher-order function cost about as
    much as the rest of the verdict."""
    ids, prices, statuses = selections["id"], selections["price"], selections["status"]
    decimals = prices.try_cast(T.ArrayType(_PRICE_DECIMAL))
    known = F.array(*(F.lit(status) for status in SELECTION_STATUSES))
    return (
        _no_nulls(ids)
        & (F.array_min(ids) >= 1)
        & F.array_join(prices, ",", "?").rlike(PRICES_TEXT)
        & _no_nulls(decimals)
        & (F.array_min(decimals) >= F.lit(MIN_PRICE))
        & (F.array_max(decimals) <= F.lit(MAX_PRICE))
        & (F.size(F.array_except(statuses, known)) == 0)
    )


def price_validity(value: Column, record: Column) -> Column:
    """Whether SQL accepts a record, from its bytes and its parsed form (``parse_record`` of
    them). Both are columns, so the record is parsed once however often the rules read it."""
    selections = record["selections"]
    ok = (
        (F.length(value) <= MAX_RECORD_BYTES)
        & canonical(value, record)
        & (record["v"] == PRICE_SCHEMA_VERSION)
        & (record["market_id"] >= 1)
        & (record["seq"] >= 1)
        & (record["event_ts"] >= 1)
        & (record["produce_ts"] >= 1)
        & record["status"].isin(*MARKET_STATUSES)
        & F.size(selections).between(1, MAX_SELECTIONS)
        & _selections_ok(selections)
        & record["source"].isin(*SOURCES)
    )
    return F.coalesce(ok, F.lit(False))


class _Verdict:
    """The verdict column of ``with_validity``, built once per Spark context.

    Built once, every batch's plan is the same and its generated code is found in Spark's code
    cache. (A higher-order function such as ``F.forall`` names its lambda's variable afresh each
    time it is called, and the name is in the generated code: while the verdict had one, a verdict
    built for every micro-batch was compiled again for every batch, a second or more of CPU.)
    """

    def __init__(self) -> None:
        self._context: object | None = None
        self._column: Column | None = None

    def column(self) -> Column:
        context = SparkContext._active_spark_context
        if self._column is None or context is not self._context:
            self._column = price_validity(F.col("value"), F.col("r"))
            self._context = context
        return self._column


_VERDICT = _Verdict()


def with_validity(batch: DataFrame) -> DataFrame:
    """The raw rows with ``r`` (the parsed record) and ``ok`` (SQL accepts it).

    The parsed record is a column of its own projection: written as one expression, every rule
    would evaluate ``from_json`` again (it has no generated code, so no common subexpression is
    shared), which more than doubled the cost of a batch.
    """
    parsed = batch.select(*RAW_COLUMNS, parse_record(F.col("value")).alias("r"))
    return parsed.select(*RAW_COLUMNS, "r", _VERDICT.column().alias("ok"))
