"""A web process's collector policy (webapp/collector.py), each case in a fresh interpreter: the
collector's state is the whole process's."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PRELUDE = """
import gc, json, time, weakref
from webapp.collector import SettledObjects, resident_bytes, settle

class Node:
    pass

def cycle():
    a, b = Node(), Node()
    a.other, b.other = b, a
    return a

def wait_for(check, seconds=10):
    end = time.monotonic() + seconds
    while not check():
        if time.monotonic() > end:
            raise SystemExit("timed out")
        time.sleep(0.01)
"""


def _in_child(code: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(PRELUDE) + textwrap.dedent(code)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_what_survives_a_young_collection_is_kept_out_of_the_older_generations():
    out = _in_child(
        """
        policy = settle(young=50_000, growth=100)
        frozen = gc.get_freeze_count()
        kept = [Node() for _ in range(20_000)]
        gc.collect(0)
        print(json.dumps({
            "threshold": gc.get_threshold(),
            "frozen_grew_by": gc.get_freeze_count() - frozen,
            "middle_and_old": len(gc.get_objects(1)) + len(gc.get_objects(2)),
        }))
        """
    )
    assert out["threshold"] == [50_000, 20, 100]
    assert out["frozen_grew_by"] >= 20_000
    # gc.get_objects(2) lists every generation up to the old one: nothing but what the call made
    assert out["middle_and_old"] < 1_000


def test_a_frozen_object_is_still_freed_when_its_last_reference_goes():
    out = _in_child(
        """
        policy = settle(young=50_000, growth=100)
        kept = Node()
        ref = weakref.ref(kept)
        gc.collect(0)
        frozen = gc.get_freeze_count()
        del kept
        print(json.dumps({"gone": ref() is None, "frozen_shrank": gc.get_freeze_count() < frozen}))
        """
    )
    assert out == {"gone": True, "frozen_shrank": True}


def test_a_cycle_frozen_while_alive_waits_for_the_full_collection_and_is_freed_by_it():
    out = _in_child(
        """
        policy = settle(young=50_000, growth=2)
        garbage = cycle()
        ref = weakref.ref(garbage)
        gc.collect(0)
        del garbage
        gc.collect(2)  # the old generation: the frozen cycle is out of its reach
        waited = ref() is not None
        # grow the process past twice its memory after the last full collection
        first = policy.baseline
        kept = [Node() for _ in range(policy.baseline // 50)]  # about 70 bytes each
        gc.collect(0)
        wait_for(lambda: policy.full_collections == 1)
        print(json.dumps({
            "waited": waited,
            "freed": ref() is None,
            "last_freed": policy.last_freed,
            "baseline_grew": policy.baseline > first,
        }))
        """
    )
    assert out["waited"] is True
    assert out["freed"] is True
    assert out["last_freed"] >= 2
    assert out["baseline_grew"] is True


def test_no_full_collection_while_the_frozen_objects_stay_under_the_growth():
    out = _in_child(
        """
        policy = settle(young=50_000, growth=2)
        kept = bytearray(policy.baseline // 4)
        gc.collect(0)
        time.sleep(0.2)
        print(json.dumps({"full": policy.full_collections}))
        """
    )
    assert out == {"full": 0}
