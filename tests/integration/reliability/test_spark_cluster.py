"""The reducers on a Spark standalone cluster: a master and two workers as separate processes,
the reducer application submitted with ``SPARK_MASTER=spark://…`` and its checkpoints in a
directory every process shares. A worker is SIGKILLed mid-stream with its executor: its tasks
move to the other worker, prices keep flowing, and no market's state goes backwards.

Guarantee (seed 004 terms): market state in Redis, exactly-once effect across the loss of a
worker (tasks re-run elsewhere replay at least once; apply-if-newer drops the repeats).
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import defaultdict

import pytest

from tests.conftest import wait_for
from tests.integration.reliability.spark_cluster import SparkCluster
from tests.integration.reliability.streaming import MARKETS, Feed, start_streaming, stored

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True), pytest.mark.timeout(420)]


class Sampler(threading.Thread):
    """Reads every market's stored sequence over and over, keeping what it saw in order."""

    def __init__(self, client) -> None:
        super().__init__(daemon=True)
        self.client = client
        self.seen: dict[int, list[tuple[float, int]]] = defaultdict(list)
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(0.2):
            now = time.monotonic()
            for market in MARKETS:
                state = stored(self.client, market)
                if state is not None:
                    self.seen[market].append((now, state[0]))


def test_killing_a_spark_worker_moves_its_tasks_and_prices_keep_flowing(shared_namespace, tmp_path):
    cluster = SparkCluster(tmp_path / "spark")
    cluster.start()
    try:
        streaming = start_streaming(
            shared_namespace,
            tmp_path / "checkpoints",
            web_hosts=0,
            reducers_env={"SPARK_MASTER": cluster.url},
        )
        client, producer = streaming.client, streaming.producer
        sampler = Sampler(client)
        sampler.start()
        feed = Feed(producer, rate=100)
        feed.start()
        # the application runs an executor on each worker (the worker's directory of the app)
        wait_for(
            lambda: all(any((cluster.root / f"worker-{n}").glob("app-*")) for n in (1, 2)),
            timeout=60,
            what="an executor of the reducers on every worker",
        )
        time.sleep(8)
        cluster.workers[0].kill()
        killed_at = time.monotonic()
        time.sleep(12)
        feed.stopped.set()
        feed.join(30)
        wait_for(
            lambda: all(stored(client, m) == feed.last[m] for m in MARKETS),
            timeout=180,
            what="Redis to hold the last produced price of every market",
        )
        settled_s = time.monotonic() - killed_at
        sampler.stopped.set()
        sampler.join(10)
        assert cluster.alive_workers() == 1
        assert streaming.reducers.alive(), streaming.reducers.tail()
    finally:
        cluster.stop()

    for market, samples in sampler.seen.items():
        seqs = [seq for _, seq in samples]
        assert seqs == sorted(seqs), f"market {market} went backwards: {seqs}"
    advanced = [
        next((at for (_, prev), (at, seq) in itertools.pairwise(samples) if at > killed_at and seq > prev), None)
        for samples in sampler.seen.values()
    ]
    first_after = min((at for at in advanced if at is not None), default=None)
    assert first_after is not None, "no price was applied after the worker was killed"
    print(
        f"\nspark cluster: worker killed; first price applied {first_after - killed_at:.1f} s later; "
        f"Redis on the last of {feed.sent} prices {settled_s:.1f} s after the kill; no market went backwards"
    )
