"""The reducers' process leaves what it started with out of garbage collection, and collects what
it makes after."""

from __future__ import annotations

import gc
import weakref

from spark.jobs.reducers import freeze_startup_heap


class Cycle:
    """An object that refers to itself: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.itself = self


def test_what_lives_at_start_is_frozen_and_what_comes_after_is_still_collected():
    started = Cycle()
    try:
        frozen = freeze_startup_heap()
        # A frozen object another thread lets go of leaves the count: it can only fall.
        assert 0 < gc.get_freeze_count() <= frozen
        assert not any(o is started for o in gc.get_objects())

        later = Cycle()
        gone = weakref.ref(later)
        del later
        gc.collect()
        assert gone() is None
    finally:
        gc.unfreeze()
