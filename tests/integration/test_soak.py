"""The short soak (``make soak`` is the long one): 60 s at 1,000 updates/s with 200 websocket
clients on one uvicorn worker, a quarter of them punters holding a slip and a bets channel and
following a shared query. No timed speed assertion: only leaks, drops and gaps.

- memory of every process flat: growth from the first to the last third of the run within a
  tolerance suited to one minute (10 %; the long soak holds 5 %);
- no dropped connection;
- every channel frame in sequence (no gap) in the punters' channels and the query channels,
  no error frame, no refused request;
- the punters' channel maps flat while the channels live, the query channels' maps not grown;
- the subscription maps (market → channels, channel → markets, the channel index) end the size
  they started, once the punters have ended their channels and the sweeper the shared ones;
- the hub's Redis subscriptions stay flat while the clients are connected (one per watched
  market) and are all gone once they have left.
"""

from __future__ import annotations

from typing import Any

import pytest

from bench.soak import channel_faults, run

# The punters holding channels live in the test session's database (the server is pointed at it).
pytestmark = [pytest.mark.integration, pytest.mark.timeout(300), pytest.mark.django_db]


@pytest.fixture(scope="module")
def result(services, django_db_setup, django_db_blocker) -> dict[str, Any]:
    with django_db_blocker.unblock():
        return run(duration=60, clients=200, rate=1000, markets=1000, sample_s=2, warmup=20, channel_share=0.25)


def test_short_soak_keeps_memory_flat_and_drops_no_connection(result):
    assert result["dropped_connections"] == 0, result["client_errors"]
    # The client processes are the load generator and keep every latency sample they take;
    # the platform's processes are the server, the publisher (the reducers' sink and fan-out)
    # and the channel reducer (commands and the markets table).
    for name in ("uvicorn", "publisher", "channel_reducer"):
        pct = result["memory_growth_pct"][name]
        assert pct <= 10, f"{name} memory grew {pct} %: {result['memory_mib'][name]}"
    assert result["maps_after"] == result["maps_before"]
    assert result["maps_after"]["hub_subscriptions"] == 0
    low, high = result["hub_subscriptions_during"]
    assert low == high > 0, f"the hub's subscriptions moved during the run: {low} to {high}"
    assert result["received"] > 0


def test_short_soak_channels_lose_no_frame_and_leave_no_entry(result):
    assert result["channels"] == 100
    assert result["channel_frames"] > 0
    assert result["query_frames"] > 0, "the definitions changed at each sample moved no query channel"
    assert channel_faults(result, tolerance=10) == [], result["channel_problems"]
