"""The channels stage at test size (``bench.channels.QUICK``, the reducers without Spark): every
part runs end to end on the real Redis, Kafka and PostgreSQL and reports its figures. No speed
assertion (that is `make bench` and docs/performance.md): only that the stage measured what it
promises, through the product's own paths, with nothing lost."""

from __future__ import annotations

import math
from typing import Any

import pytest

from bench.channels import QUICK, bench_channels, count_label

# The punters the k6 clients log in as live in the test session's database (the server is
# pointed at it).
pytestmark = [pytest.mark.integration, pytest.mark.timeout(180), pytest.mark.django_db]

KEYS = (
    "channel_deliveries_per_s",
    "channel_p99_ms",
    "channel_watch_p99_ms",
    "channel_p99_vs_watch",
    "channel_fanout_growth_10k_vs_1k",
    "query_refresh_ms",
    "query_window_refresh_ms",
)


@pytest.fixture(scope="module")
def result(services, django_db_setup, django_db_blocker) -> dict[str, Any]:
    with django_db_blocker.unblock():
        return bench_channels(quick=True)


def test_every_figure_is_measured(result):
    fanout = [f"channel_fanout_ms_per_batch_{count_label(c)}" for c in QUICK.fanout_counts]
    measured = [k for k in (*KEYS, *fanout) if isinstance(result.get(k), (int, float)) and math.isfinite(result[k])]
    unmeasured = sorted((set(KEYS) | set(fanout)) - set(measured))
    assert not unmeasured, f"the stage measured nothing for {unmeasured}"


def test_the_fan_out_reaches_more_channels_as_they_grow(result):
    low, high = (result[f"channel_fanout_frames_per_batch_{count_label(c)}"] for c in QUICK.fanout_counts)
    assert 0 < low < high
    assert set(result["channel_fanout_profile_ms"]) == {"routes", "frames", "publish"}


def test_the_query_stage_moves_shared_channels(result):
    assert result["query_refresh_channels_changed"] > 0  # a kick-off moves the in-play queries


def test_every_channel_is_made_begun_and_streams_through_the_control_api(result):
    assert result["channels_created"] == result["channels_begun"] == QUICK.channels
    assert result["channel_streaming_at_start"] == QUICK.channels + min(QUICK.followers, QUICK.queries)
    assert result["channel_queries_followed"] == QUICK.followers
    assert result["channel_create_failures"] == result["channel_begin_failures"] == 0
    assert result["channel_server_errors"] == result["channel_socket_errors"] == 0


def test_channel_frames_arrive_in_sequence(result):
    assert result["channel_deliveries_per_s"] > 0
    assert result["channel_seq_gaps"] == 0
    assert result["query_seq_gaps"] == 0
