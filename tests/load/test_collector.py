"""A process that runs load users settles its collector at the test's start: what it holds for good frozen out of the
collector's sight, the young generation's threshold above what its runs in flight hold."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from rig.load.collector import YOUNG_THRESHOLD, settle_for_load


@pytest.fixture
def collector() -> Iterator[None]:
    """The test process's collector as it was, after the test."""
    before = gc.get_threshold()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)


def test_settling_freezes_what_the_process_holds_and_raises_the_young_threshold(collector: None) -> None:
    gc.set_threshold(700, 10, 10)
    held = [object()]  # a container the process holds when the test starts
    settle_for_load()
    assert gc.get_freeze_count() > 0 and not any(o is held for o in gc.get_objects())  # frozen: out of sight
    assert gc.get_threshold() == (YOUNG_THRESHOLD, 10, 10)


def test_settling_never_lowers_a_threshold_set_higher(collector: None) -> None:
    gc.set_threshold(YOUNG_THRESHOLD * 2, 5, 5)
    settle_for_load()
    assert gc.get_threshold() == (YOUNG_THRESHOLD * 2, 5, 5)
