"""Waits that follow progress: a deadline restarts while the thing waited on keeps changing."""

from __future__ import annotations

import itertools
import time

from rig.waiting import wait_while_moving


def test_a_target_that_keeps_moving_is_waited_for_past_the_stall_window() -> None:
    ticks = itertools.count()
    began = time.monotonic()
    # progress changes on every poll for ~0.5 s, well past the 0.1 s stall window; then the check holds
    value = wait_while_moving(lambda: time.monotonic() - began > 0.5 and "done", lambda: next(ticks), stall_s=0.1,
                              interval_s=0.01)
    assert value == "done"


def test_a_target_that_stands_still_ends_the_wait_without_a_value() -> None:
    polls = itertools.count()
    value = wait_while_moving(lambda: (next(polls), False)[1], lambda: "same", stall_s=0.05, interval_s=0.01)
    assert value is None
    assert next(polls) >= 3, "it polled until the stall window passed"
