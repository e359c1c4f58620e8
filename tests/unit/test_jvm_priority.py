"""``spark.session.lower_priority``: every thread of a process, and the threads it starts later;
``spark.session.lower_session_priority``: the scheduling group of a session the process leads."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from spark.session import MAX_NICENESS, autogroup_niceness, lower_priority, lower_session_priority

# Niceness of the test's own process, which its children start with.
BASE = os.getpriority(os.PRIO_PROCESS, 0)

# A thread's niceness is raised for good (lowering it back needs privilege), so the thread tests
# need room above their own: run under a niceness over 5 (``nice make test``), they cannot show
# one raised by 10. A new session's group starts at 0 whatever the niceness, so the session tests
# need no such room.
room_above = pytest.mark.skipif(BASE > 5, reason="the tests raise niceness by up to 10 from at most 5")

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


@room_above
def test_every_thread_gets_the_niceness_and_a_thread_started_later_inherits_it(child):
    assert set(niceness(child.pid).values()) == {BASE}
    assert len(niceness(child.pid)) == 2

    assert lower_priority(child.pid, BASE + 7) == 2

    assert set(niceness(child.pid).values()) == {BASE + 7}
    child.stdin.write("\n")
    child.stdin.flush()
    later = int(child.stdout.readline())
    assert niceness(child.pid)[later] == BASE + 7


@room_above
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


ROOT = Path(__file__).resolve().parents[2]
# Calls lower_session_priority with argv[1]; prints its answer and its session group's niceness.
SESSION_CHILD = """
import sys
from spark.session import autogroup_niceness, lower_session_priority
changed = lower_session_priority(int(sys.argv[1]))
print(changed, autogroup_niceness())
"""
# Sessions share the CPU as groups only under autogroup scheduling; without it there is no group
# to lower (the last test covers that case on any kernel).
autogroup_on = pytest.mark.skipif(
    autogroup_niceness() is None, reason="the kernel shares the CPU between sessions only with autogroup scheduling on"
)


def session_child(niceness: int, *, own_session: bool) -> tuple[str, int]:
    done = subprocess.run(
        [sys.executable, "-c", SESSION_CHILD, str(niceness)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        start_new_session=own_session,
        check=True,
    )
    changed, group_niceness = done.stdout.split()
    return changed, int(group_niceness)


@autogroup_on
def test_a_process_leading_its_own_session_lowers_the_sessions_group():
    assert session_child(7, own_session=True) == ("True", 7)
    assert session_child(40, own_session=True) == ("True", MAX_NICENESS)


@autogroup_on
def test_a_process_in_a_shared_session_leaves_the_group_alone():
    # Under supervisord every program shares the daemon's session: lowering the group would
    # lower the web workers with it.
    before = autogroup_niceness()
    assert session_child(7, own_session=False) == ("False", before)


def test_without_autogroup_scheduling_nothing_changes(tmp_path):
    (tmp_path / "sys" / "kernel").mkdir(parents=True)
    (tmp_path / "sys" / "kernel" / "sched_autogroup_enabled").write_text("0\n")
    assert lower_session_priority(10, proc=tmp_path) is False
    assert lower_session_priority(10, proc=tmp_path / "absent") is False
