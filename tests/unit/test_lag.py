from reducers.lag import offsets, partition_lags


def test_offsets_parse_spark_json():
    assert offsets({"t": {"0": 5, "1": 7}}) == {"t": {0: 5, 1: 7}}
    assert offsets(None) == {}


def test_lag_in_records_and_seconds_since_last_caught_up():
    end = {"t": {0: 10, 1: 4}}
    latest = {"t": {0: 10, 1: 9}}
    first = partition_lags(end=end, latest=latest, previous={}, now_ms=1_000)
    assert [(p.partition, p.records, p.seconds) for p in first] == [(0, 0, 0.0), (1, 5, 0.0)]
    previous = {(p.topic, p.partition): p.caught_up_at for p in first}
    later = partition_lags(end=end, latest={"t": {0: 12, 1: 20}}, previous=previous, now_ms=4_000)
    assert [(p.partition, p.records, p.seconds) for p in later] == [(0, 2, 3.0), (1, 16, 3.0)]


def test_a_partition_the_query_has_not_read_counts_from_zero():
    [lag] = partition_lags(end={}, latest={"t": {0: 3}}, previous={}, now_ms=0)
    assert lag.records == 3
