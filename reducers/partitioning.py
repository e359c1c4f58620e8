"""Which Kafka partition a key lands on: the producers' partitioners as pure functions.

Two partitioners matter here. Java clients (Spark's Kafka sink, Kafka's own tools) and
librdkafka's ``murmur2_random`` hash the key bytes with murmur2 and take the positive part
modulo the partition count. librdkafka's built-in default, ``consistent_random``, uses CRC-32
instead. The platform's keys are market ids written as ASCII digits, so the partition of a
market is a pure function of its id, the partition count and the producer's partitioner.
"""

from __future__ import annotations

import zlib

MURMUR2_SEED = 0x9747B28C
_M = 0x5BD1E995
_MASK = 0xFFFFFFFF

# librdkafka's names; "murmur2" is what Java's default partitioner does for keyed records.
MURMUR2 = ("murmur2", "murmur2_random")
CRC32 = ("consistent", "consistent_random")
LIBRDKAFKA_DEFAULT = "consistent_random"


def murmur2(data: bytes) -> int:
    """Kafka's murmur2 hash of ``data`` as a signed 32-bit integer (Java's ``Utils.murmur2``)."""
    length = len(data)
    h = (MURMUR2_SEED ^ length) & _MASK
    whole = length - length % 4
    for i in range(0, whole, 4):
        k = data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24)
        k = (k * _M) & _MASK
        k ^= k >> 24
        k = (k * _M) & _MASK
        h = (h * _M) & _MASK
        h ^= k
    extra = length % 4
    if extra == 3:
        h ^= data[whole + 2] << 16
    if extra >= 2:
        h ^= data[whole + 1] << 8
    if extra >= 1:
        h ^= data[whole]
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def to_positive(value: int) -> int:
    """Java's ``Utils.toPositive``: the hash with its sign bit cleared."""
    return value & 0x7FFFFFFF


def murmur2_partition(key: bytes, partitions: int) -> int:
    """The partition Java's default partitioner (and librdkafka's ``murmur2_random``) picks."""
    _require_partitions(partitions)
    return to_positive(murmur2(key)) % partitions


def crc32_partition(key: bytes, partitions: int) -> int:
    """The partition librdkafka's ``consistent_random`` (its default) picks for a non-empty key."""
    _require_partitions(partitions)
    return zlib.crc32(key) % partitions


def partition_for(key: bytes, partitions: int, *, partitioner: str = "murmur2_random") -> int:
    """The partition of ``key`` under the named partitioner (librdkafka's names)."""
    if partitioner in MURMUR2:
        return murmur2_partition(key, partitions)
    if partitioner in CRC32:
        return crc32_partition(key, partitions)
    raise ValueError(f"unsupported partitioner {partitioner!r}; expected one of {MURMUR2 + CRC32}")


def market_partition(market_id: int, partitions: int, *, partitioner: str = "murmur2_random") -> int:
    """The partition of a market's records: the key is the market id as ASCII digits."""
    return partition_for(str(market_id).encode("ascii"), partitions, partitioner=partitioner)


def _require_partitions(partitions: int) -> None:
    if partitions < 1:
        raise ValueError(f"a topic has at least one partition, got {partitions}")
