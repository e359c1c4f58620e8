"""The partitioners as pure functions, against the values Kafka's and librdkafka's own tests use."""

from __future__ import annotations

import zlib

import pytest

from reducers.partitioning import (
    crc32_partition,
    market_partition,
    murmur2,
    murmur2_partition,
    partition_for,
    to_positive,
)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        # org.apache.kafka.common.utils.UtilsTest#testMurmur2
        (b"21", -973932308),
        (b"foobar", -790332482),
        (b"a-little-bit-long-string", -985981536),
        (b"a-little-bit-longer-string", -1486304829),
        (b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971),
        (b"abc", 479470107),
    ],
)
def test_murmur2_matches_kafkas_java_hash(data: bytes, expected: int):
    assert murmur2(data) == expected


def test_murmur2_stays_within_signed_32_bits_for_every_tail_length():
    for n in range(0, 40):
        value = murmur2(bytes(range(n)))
        assert -(2**31) <= value < 2**31


def test_to_positive_clears_only_the_sign_bit():
    assert to_positive(-1) == 0x7FFFFFFF
    assert to_positive(-973932308) == -973932308 & 0x7FFFFFFF
    assert to_positive(12345) == 12345


def test_crc32_partition_is_librdkafkas_consistent_partitioner():
    assert crc32_partition(b"hejsan", 6) == zlib.crc32(b"hejsan") % 6


def test_market_partition_hashes_the_id_as_ascii_digits():
    assert market_partition(21, 12) == to_positive(-973932308) % 12
    assert market_partition(21, 12, partitioner="consistent_random") == zlib.crc32(b"21") % 12


def test_every_market_lands_in_range_and_spreads_over_partitions():
    seen = {market_partition(m, 12) for m in range(1, 500)}
    assert seen == set(range(12))


def test_unknown_partitioner_is_refused():
    with pytest.raises(ValueError, match="unsupported partitioner"):
        partition_for(b"1", 4, partitioner="sticky")


def test_zero_partitions_is_refused():
    with pytest.raises(ValueError, match="at least one partition"):
        murmur2_partition(b"1", 0)
