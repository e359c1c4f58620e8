from reducers.lag import iso_ms, offsets, partition_lags, rows_read_outside_spark


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


def _progress(rows: int, start: object, end: object, *, at: str = "2026-11-24T10:00:01.000Z") -> dict:
    return {
        "timestamp": at,
        "numInputRows": rows,
        "inputRowsPerSecond": 0.0,
        "processedRowsPerSecond": 0.0,
        "durationMs": {"triggerExecution": 50},
        "sources": [{"startOffset": start, "endOffset": end, "numInputRows": rows}],
    }


def test_a_batch_read_outside_spark_counts_its_offset_span_as_its_rows():
    # Offsets as Spark writes them: JSON text, or objects. A partition the start does not name
    # is not counted: where its records began is not known.
    report = _progress(0, '{"p": {"0": 10, "1": 4}}', {"p": {"0": 25, "1": 6, "2": 3}})
    counted = rows_read_outside_spark(report, previous_trigger_ms=iso_ms("2026-11-24T10:00:00.500Z"))
    assert counted["sources"][0]["numInputRows"] == 15 + 2
    assert counted["numInputRows"] == 17
    assert counted["processedRowsPerSecond"] == 17 * 1000 / 50
    assert counted["inputRowsPerSecond"] == 17 * 1000 / 500


def test_a_batch_spark_scanned_or_an_empty_one_is_left_as_spark_reported_it():
    scanned = _progress(7, {"p": {"0": 0}}, {"p": {"0": 9}})  # a compacted topic: fewer rows than offsets
    assert rows_read_outside_spark(dict(scanned), previous_trigger_ms=0) == scanned
    empty = _progress(0, {"p": {"0": 9}}, {"p": {"0": 9}})
    assert rows_read_outside_spark(dict(empty), previous_trigger_ms=0) == empty


def test_the_input_rate_needs_the_previous_trigger():
    counted = rows_read_outside_spark(_progress(0, {"p": {"0": 0}}, {"p": {"0": 4}}), previous_trigger_ms=None)
    assert (counted["numInputRows"], counted["inputRowsPerSecond"]) == (4, 0.0)
