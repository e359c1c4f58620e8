"""Price-record validation as Spark SQL, built from the limits in ``reducers.schemas``.

The SQL verdict is a fast pre-filter, never the last word: a record SQL accepts is one the
Python validator accepts too (checked by tests on a corpus of bad records), and every record SQL
does not accept goes to the Python validator, which names the reason or lets it through.

The price topic's records are Avro (``reducers/price_update.avsc``). A record is decoded once,
by Spark's Avro reader, into typed columns (a record it cannot decode is null), and accepted
when two things hold:

* **its typed members are within the rules**: version, positive ids, sequence and times, one to
  ``MAX_SELECTIONS`` selections, every price within ``MIN_PRICE``..``MAX_PRICE``. The decoder
  has proved the rest: every member is there and of its type, the statuses and the source are
  symbols of their enums, a price is a decimal of two places.
* **it is all of the record, written in the fewest bytes**: its length is the length the
  decoded members take in Avro's shortest encoding (``canonical_length``). Avro's reader stops
  at the datum's end and ignores what follows, where Python refuses it; the lengths being equal
  proves there is nothing after it, because no encoding of the same members is shorter. A
  record written otherwise but validly (numbers in more bytes than they need, selections in
  several blocks), with an id or a sequence of 2^44 or more (``COUNTED_BELOW``), or with a time
  outside ``TIMES_FROM``..``TIMES_BELOW`` (1970-07 to 2039-09), is left to Python, which decides.

The rules read the selections as arrays of one member (``selections.id``, ``.price``) with
``array_min`` and ``array_max``: no function per selection, which Spark interprets rather than
compiles (about a second a 200,000-record batch for each ``forall`` or ``aggregate``).
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.avro.functions import from_avro

from reducers.schemas import (
    MAX_PRICE,
    MAX_SELECTIONS,
    MIN_PRICE,
    PRICE_AVRO_SCHEMA,
    PRICE_BYTES,
    PRICE_SCHEMA_VERSION,
)
from spark.columns import PerContext
from spark.sources import RAW_COLUMNS

# A record Spark's Avro reader cannot decode is a null record (its verdict: not accepted),
# never a failed batch.
AVRO_OPTIONS = {"mode": "PERMISSIVE"}
# The bytes of an enum's index and of the end of the selections: one each in the fewest bytes
# (every enum has fewer than 64 symbols).
_ONE_BYTE = 1
# The longs whose bytes SQL counts (``varint_bytes``): below 2^44, seven bytes at most. Every
# id and sequence our producers write is far below it.
COUNTED_BELOW = 1 << 44
# The first long of each width from two bytes up to the widest counted: zig-zag doubles a long,
# and a byte holds seven of its bits, so 2^(7k - 1) is the first to take k + 1 bytes.
_WIDTH_STARTS = tuple(1 << (7 * k - 1) for k in range(1, 7))
# The times (epoch ms) SQL counts as six bytes each without counting them: 2^34 (1970-07-29) up
# to 2^41 (2039-09-07), the longs whose doubles take 36 to 42 bits. Event and produce times
# outside it are left to Python.
TIMES_FROM, TIMES_BELOW, _TIME_BYTES = 1 << 34, 1 << 41, 6
# The smallest count that takes two bytes (zig-zag doubles it: 128 needs eight bits); the rules'
# largest count must stay below three bytes' first, 8,192, for ``count_bytes``.
_TWO_BYTE_COUNT = 64
if MAX_SELECTIONS >= 1 << 13:
    raise ImportError(f"count_bytes counts at most two bytes; MAX_SELECTIONS is {MAX_SELECTIONS}")


def parse_record(value: Column) -> Column:
    """The record's bytes decoded by the price topic's Avro schema (null where they are not a
    record of it)."""
    return from_avro(value, PRICE_AVRO_SCHEMA, AVRO_OPTIONS)


def varint_bytes(x: Column) -> Column:
    """The bytes Avro's shortest encoding of the long ``x`` takes, for 0 <= ``x`` <
    ``COUNTED_BELOW``; null from there up, so SQL does not accept a record with such a number
    and Python decides. One byte, and one more for every width start (``_WIDTH_STARTS``) ``x``
    reaches: six comparisons, integers only.

    Counted from the bytes of ``bin(x)``, five bit strings a record took a tenth of the price
    query's task time. Counted from the logarithm, ``floor((floor(log2(x + 1/2)) + 8) / 7)``,
    each count made two calls of ``StrictMath.log`` (Spark's ``log2`` is ``log(x) / log(2)``):
    five counts a record added 65 ms to a cached 200,000-record batch whose whole verdict added
    190 (bench/results/history.md). Written as a ladder of nested conditions instead of a sum, the
    verdict and the price query's aggregation generated a method longer than the JVM compiles
    (8,000 bytes of bytecode): it ran interpreted, 4.1 s a 200,000-record batch against 2.0 s
    (bench/results/history.md, "The price record in Avro, switched")."""
    width = F.lit(1)
    for first in _WIDTH_STARTS:
        width = width + (x >= first).cast("int")
    return F.when(x < COUNTED_BELOW, width)


def times_bytes(event_ts: Column, produce_ts: Column) -> Column:
    """The bytes of a record's two times, both from ``TIMES_FROM`` to below ``TIMES_BELOW``:
    six each, with four comparisons instead of two counts. Null when either is outside, so SQL
    does not accept the record and Python decides."""
    inside = (
        (event_ts >= TIMES_FROM) & (event_ts < TIMES_BELOW) & (produce_ts >= TIMES_FROM) & (produce_ts < TIMES_BELOW)
    )
    return F.when(inside, F.lit(2 * _TIME_BYTES))


def _shortest_bytes(value: int) -> int:
    """The bytes of the long ``value`` >= 0 in Avro's shortest encoding, in Python."""
    return max(1, -(-(value << 1).bit_length() // 7))


def _first_of_next_width(width: Column) -> Column:
    """The smallest long >= 0 that takes more than ``width`` bytes (1 to 7, the widths
    ``varint_bytes`` counts): 2^(7 width - 1)."""
    return F.call_function("shiftleft", F.lit(1).cast("long"), width * 7 - 1)


def count_bytes(count: Column) -> Column:
    """The bytes of a selection count the rules take (1 to ``MAX_SELECTIONS``): one below 64,
    two from 64 up to 8,191. One comparison, cheaper than a ``varint_bytes``."""
    return (count >= _TWO_BYTE_COUNT).cast("int") + _ONE_BYTE


def canonical_length(record: Column) -> Column:
    """How many bytes ``record`` (decoded) takes in Avro's shortest encoding: its members in order,
    the selections in one block. Null when its selections' ids do not all take the same number
    of bytes, a long is too large for ``varint_bytes`` to count, or a time is outside the range
    of ``times_bytes`` (then SQL does not accept it; Python decides).

    The ids share the narrowest one's width when the widest is below the first number of the
    next width: one comparison instead of a second ``varint_bytes``. With the count's
    comparison and the times' range, three ``varint_bytes`` a record instead of seven (with the
    first two alone, five: 1,441 against 1,582 ms a 200,000-record batch, bench/results/history.md)."""
    selections = record["selections"]
    count = F.size(selections)
    ids = selections["id"]
    id_bytes = varint_bytes(F.array_min(ids))
    same_width = F.array_max(ids) < _first_of_next_width(id_bytes)
    selection_bytes = id_bytes + PRICE_BYTES + _ONE_BYTE
    length = (
        F.lit(_shortest_bytes(PRICE_SCHEMA_VERSION))  # the rules take no other version
        + varint_bytes(record["market_id"])
        + varint_bytes(record["seq"])
        + _ONE_BYTE  # status
        + count_bytes(count)
        + count * selection_bytes
        + _ONE_BYTE  # the end of the block
        + times_bytes(record["event_ts"], record["produce_ts"])
        + _ONE_BYTE  # source
    )
    return F.when(same_width, length)


def price_validity(value: Column, record: Column) -> Column:
    """Whether SQL accepts a record, from its bytes and its decoded form (``parse_record`` of
    them). Both are columns, so the record is decoded once however often the rules read it."""
    selections = record["selections"]
    prices = selections["price"]
    # No check against MAX_RECORD_BYTES: the length must equal the datum's shortest encoding,
    # which is under a kilobyte for the most selections the rules take.
    ok = (
        (record["v"] == PRICE_SCHEMA_VERSION)
        & (record["market_id"] >= 1)
        & (record["seq"] >= 1)
        & (record["event_ts"] >= 1)
        & (record["produce_ts"] >= 1)
        & F.size(selections).between(1, MAX_SELECTIONS)
        & (F.array_min(selections["id"]) >= 1)
        & (F.array_min(prices) >= F.lit(MIN_PRICE))
        & (F.array_max(prices) <= F.lit(MAX_PRICE))
        & (F.length(value) == canonical_length(record))
    )
    return F.coalesce(ok, F.lit(False))


# The decoded record and the verdict, built once per Spark context (``spark.columns``): every
# batch's plan holds the same expressions.
_RECORD = PerContext(lambda: parse_record(F.col("value")).alias("r"))
_VERDICT = PerContext(lambda: price_validity(F.col("value"), F.col("r")).alias("ok"))


def with_validity(batch: DataFrame) -> DataFrame:
    """The raw rows with ``r`` (the parsed record) and ``ok`` (SQL accepts it).

    The decoded record is a column of its own projection, which the rules read: written as one
    expression, the decoder could run once for every rule that reads it (``from_json`` did, which
    more than doubled the cost of a batch).
    """
    parsed = batch.select(*RAW_COLUMNS, _RECORD.get())
    return parsed.select(*RAW_COLUMNS, "r", _VERDICT.get())
