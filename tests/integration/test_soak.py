"""The short soak (``make soak`` is the long one): 60 s at 1,000 updates/s with 200 websocket
clients on one uvicorn worker. No timed speed assertion: only leaks and drops.

- memory of every process flat: growth from the first to the last third of the run within a
  tolerance suited to one minute (10 %; the long soak holds 5 %);
- no dropped connection;
- the subscription maps (market → channels, channel → markets, the channel index) end the size
  they started;
- the hub's Redis subscriptions stay flat while the clients are connected (one per watched
  market) and are all gone once they have left.
"""

from __future__ import annotations

import pytest

from bench.soak import run

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]


def test_short_soak_keeps_memory_flat_and_drops_no_connection(services):
    result = run(duration=60, clients=200, rate=1000, markets=1000, sample_s=2, warmup=10)
    assert result["dropped_connections"] == 0, result["client_errors"]
    # The client processes are the load generator and keep every latency sample they take;
    # the platform's processes are the server and the publisher (the reducers' sink).
    for name in ("uvicorn", "publisher"):
        pct = result["memory_growth_pct"][name]
        assert pct <= 10, f"{name} memory grew {pct} %: {result['memory_mib'][name]}"
    assert result["maps_after"] == result["maps_before"]
    assert result["maps_after"]["hub_subscriptions"] == 0
    low, high = result["hub_subscriptions_during"]
    assert low == high > 0, f"the hub's subscriptions moved during the run: {low} to {high}"
    assert result["received"] > 0
