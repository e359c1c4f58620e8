"""``spark.session.lower_priority``: every thread of a process, and the threads it starts later."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from spark.session import MAX_NICENESS, lower_priority

# Niceness of the test's own process, which its children start with.
BASE = os.getpriority(os.PRIO_PROCESS, 0)

# A niceness is raised for good (lowering it back needs privilege), so the tests need room above
# their own: run under a niceness over 5 (``nice make test``), they cannot show one raised by 10.
pytestmark = pytest.mark.skipif(BASE > 5, reason="the tests raise niceness by up to 10 from at most 5")

# A process with a second thread; on a line from stdin it starts a third and prints its id.
CHILD = """
import sys, threading
def wait():
    threading.Event().wait()
threading.Thread(target=wait, daemon=True).start()
print("ready", flush=True)
sys.stdin.readline()
started = threading.Event()
ids = []
def later():
    ids.append(threading.get_native_id())
    started.set()
    threading.Event().wait()
threading.Thread(target=later, daemon=True).start()
started.wait()
print(ids[0], flush=True)
sys.stdin.readline()
"""


def niceness(pid: int) -> dict[int, int]:
    return {int(tid): os.getpriority(os.PRIO_PROCESS, int(tid)) for tid in os.listdir(f"/proc/{pid}/task")}


@pytest.fixture
def child():
    process = subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "ready"
    yield process
    process.kill()
    process.wait(10)


def test_every_thread_gets_the_niceness_and_a_thread_started_later_inherits_it(child):
    assert set(niceness(child.pid).values()) == {BASE}
    assert len(niceness(child.pid)) == 2

    assert lower_priority(child.pid, BASE + 7) == 2

    assert set(niceness(child.pid).values()) == {BASE + 7}
    child.stdin.write("\n")
    child.stdin.flush()
    later = int(child.stdout.readline())
    assert niceness(child.pid)[later] == BASE + 7


def test_a_priority_is_only_ever_lowered_and_the_niceness_is_clamped(child):
    assert lower_priority(child.pid, BASE + 10) == 2
    assert lower_priority(child.pid, BASE + 4) == 0
    assert set(niceness(child.pid).values()) == {BASE + 10}
    assert lower_priority(child.pid, 40) == 2
    assert set(niceness(child.pid).values()) == {MAX_NICENESS}


def test_a_process_that_is_gone_changes_nothing():
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait(10)
    assert lower_priority(process.pid, 10) == 0
