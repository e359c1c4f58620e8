"""Every background task is registered under the name odds/core/task_names.py gives it, and the beat
schedule runs only tasks that exist."""

from __future__ import annotations

import subprocess
import sys

from celery import current_app
from django.conf import settings

from odds.core import task_names


def declared() -> set[str]:
    return {value for name, value in vars(task_names).items() if name.isupper() and isinstance(value, str)}


def test_every_named_task_is_registered_under_its_name():
    import odds.tasks  # noqa: F401 - registers the tasks

    registered = {name for name in current_app.tasks if name.startswith("odds.")}
    assert registered == declared()


def test_the_beat_schedule_runs_named_tasks_only():
    scheduled = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert scheduled <= declared()
    assert task_names.SETTLEMENT_SWEEP in scheduled


def test_a_process_that_never_imported_the_tasks_finds_them_by_name():
    """The site enqueues settlement by name without importing odds.tasks; the name still
    resolves to the task, so eager runs and the broker both get the real task."""
    code = (
        "import sys, django; django.setup(); "
        "from odds.core import task_names; "
        "assert 'odds.tasks' not in sys.modules; "
        "print(task_names.registered(task_names.MARKET_SETTLE).name)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == task_names.MARKET_SETTLE
