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

No regular expression runs over the record's text; the only one left checks a price's few
characters, because the number of decimal places Python counts is the one written ("2.500" is
refused where "2.50" is not), which no decimal type keeps.
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
PRICE_TEXT = r"^[0-9]{1,4}(\.[0-9]{1,2})?$"
# Wide enough for every price PRICE_TEXT lets through.
_PRICE_DECIMAL = T.DecimalType(6, 2)


def _selection_ok(s: Column) -> Column:
    price = s["price"].try_cast(_PRICE_DECIMAL)
    return (
        (s["id"] >= 1)
        & s["price"].rlike(PRICE_TEXT)
        & price.between(F.lit(MIN_PRICE), F.lit(MAX_PRICE))
        & s["status"].isin(*SELECTION_STATUSES)
    )


def parse_record(value: Column) -> Column:
    """The record's bytes parsed into ``PRICE_RECORD`` (null members where it does not fit)."""
    return F.from_json(value.cast("string"), PRICE_RECORD, STRICT_JSON)


def printed(column: Column, data_type: T.DataType) -> Column:
    """``column`` as our producers print it: compact JSON, members in ``data_type``'s order.

    Strings are printed between quotes as they are, without escapes: every string of a record
    the typed rules accept is a known status or source or a price's digits, which JSON prints
    so. (A record whose strings need escapes is refused by the rules whatever this prints.)
    Concatenated from the typed columns: on 200,000 records, parse, verdict and a
    newest-per-market aggregation took a median 3.40 s of CPU, against 3.70 s with ``to_json``
    of the parsed record and 3.39 s with no canonical comparison.
    """
    if isinstance(data_type, T.StructType):
        parts: list[Column] = []
        for index, field in enumerate(data_type.fields):
            name = F.lit(("{" if index == 0 else ",") + f'"{field.name}":')
            parts += [name, printed(column[field.name], field.dataType)]
        return F.concat(*parts, F.lit("}"))
    if isinstance(data_type, T.ArrayType):
        element = data_type.elementType
        items = F.transform(column, lambda item: printed(item, element))
        return F.concat(F.lit("["), F.array_join(items, ","), F.lit("]"))
    if isinstance(data_type, T.StringType):
        return F.concat(F.lit('"'), column, F.lit('"'))
    if isinstance(data_type, T.LongType):
        return column.cast("string")
    raise TypeError(f"no printed form for {data_type}")


def canonical(value: Column, record: Column) -> Column:
    """Whether ``value`` is byte for byte what ``record`` (its parsed ``PRICE_RECORD``) prints as
    (null when a member is null)."""
    return printed(record, PRICE_RECORD).cast("binary") == value


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
        & F.forall(selections, _selection_ok)
        & record["source"].isin(*SOURCES)
    )
    return F.coalesce(ok, F.lit(False))


class _Verdict:
    """The verdict column of ``with_validity``, built once per Spark context.

    ``F.forall`` names its lambda's variable afresh each time it is called, and the name is in
    the code Spark generates for the query: a verdict built for every micro-batch made every
    batch's code new, compiled again (Janino) and then by the JVM's JIT, a second or more of CPU
    a batch. Built once, every batch's code is the same and is found in Spark's code cache.
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
