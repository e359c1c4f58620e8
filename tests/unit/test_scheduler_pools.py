"""Every reducer query has a fair-scheduler pool of its own, and the allocation file names them."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any, cast

from spark.config import load
from spark.jobs.reducers import POOLS, scheduler_conf, starters


def test_every_query_has_a_pool_and_the_price_path_the_largest_share():
    names = starters(
        cast(Any, None), bootstrap="", redis_url="", checkpoint_root=Path("/nonexistent"), mode="microbatch"
    )
    assert set(POOLS) == set(names)
    assert POOLS["prices"] == max(POOLS.values())


def test_fair_mode_writes_the_pools_and_fifo_writes_nothing(tmp_path):
    fair = load({}).model_copy(update={"checkpoint_dir": tmp_path / "checkpoints"})
    conf = scheduler_conf(fair)
    assert conf["spark.scheduler.mode"] == "FAIR"
    # A file this test just wrote.
    pools = ET.parse(conf["spark.scheduler.allocation.file"]).getroot().findall("pool")  # noqa: S314
    assert {
        pool.get("name"): (int(pool.findtext("weight") or 0), int(pool.findtext("minShare") or 0)) for pool in pools
    } == POOLS

    fifo = fair.model_copy(update={"checkpoint_dir": tmp_path / "fifo", "scheduler_mode": "FIFO"})
    assert scheduler_conf(fifo) == {"spark.scheduler.mode": "FIFO"}
    assert not (tmp_path / "fifo").exists()
