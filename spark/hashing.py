"""Spark's hash partitioning, computed in Python: which of a shuffle's partitions a value goes to.

A shuffle on a key (``groupBy``, and so a stateful operator's state) puts a row in partition
``pmod(murmur3(key, seed 42), partitions)`` (Spark's ``HashPartitioning``, the SQL function
``hash``). The game picks the labels of its buckets with it, so that each partition of its state
holds as many buckets as another (``spark.jobs.game.bucket_labels``).
"""

from __future__ import annotations

_MASK = 0xFFFFFFFF
# Spark's seed for a shuffle's hash (``Murmur3Hash``'s default).
SEED = 42


def _rotl(value: int, bits: int) -> int:
    return ((value << bits) | (value >> (32 - bits))) & _MASK


def hash_int(value: int, seed: int = SEED) -> int:
    """Spark's ``hash`` of a 32-bit int (Murmur3 x86 32-bit, ``Murmur3_x86_32.hashInt``), signed."""
    k1 = (value & _MASK) * 0xCC9E2D51 & _MASK
    k1 = _rotl(k1, 15) * 0x1B873593 & _MASK
    h1 = seed ^ k1
    h1 = (_rotl(h1, 13) * 5 + 0xE6546B64) & _MASK
    h1 ^= 4  # the input's length in bytes
    h1 ^= h1 >> 16
    h1 = h1 * 0x85EBCA6B & _MASK
    h1 ^= h1 >> 13
    h1 = h1 * 0xC2B2AE35 & _MASK
    h1 ^= h1 >> 16
    return h1 - (1 << 32) if h1 & 0x80000000 else h1


def int_partition(value: int, partitions: int) -> int:
    """The shuffle partition of an int key among ``partitions``."""
    return hash_int(value) % partitions
