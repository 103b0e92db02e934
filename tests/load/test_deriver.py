"""Measuring off the hot path: derivation jobs wait for an idle event loop, the backlog stays bounded, and a
drain at the end leaves nothing behind."""

from __future__ import annotations

import gevent
import gevent.event

from rig.load.deriver import Deriver


def test_jobs_wait_while_the_loop_is_busy_and_run_once_it_is_idle() -> None:
    deriver, ran, busy = Deriver(), [], [True]

    def reader() -> None:  # a user whose reads are always due: the loop is never idle while it runs
        while busy[0]:
            gevent.sleep(0)

    user = gevent.spawn(reader)
    gevent.sleep(0)
    all_ran = gevent.event.Event()
    for i in range(3):
        deriver.submit(lambda i=i: (ran.append(i), i == 2 and all_ran.set()))
    for _ in range(200):
        gevent.sleep(0)
    assert ran == [] and deriver.backlog == 3, "nothing derived while reads were pending"
    busy[0] = False
    user.join()
    assert all_ran.wait(timeout=30), "the jobs never ran once the loop was idle"  # the event, not a sleep, decides
    assert ran == [0, 1, 2] and deriver.backlog == 0 and deriver.done == 3


def test_a_full_backlog_derives_the_oldest_at_once() -> None:
    deriver, ran = Deriver(max_backlog=2), []
    for i in range(5):
        deriver.submit(lambda i=i: ran.append(i))
    assert ran == [0, 1, 2] and deriver.inline == 3 and deriver.backlog == 2 and deriver.peak == 2
    deriver.drain()
    assert ran == [0, 1, 2, 3, 4] and deriver.backlog == 0


def test_a_failing_job_is_counted_and_the_others_still_run() -> None:
    deriver, ran = Deriver(), []

    def broken() -> None:
        raise ValueError("a bug in a derivation")

    deriver.submit(broken)
    deriver.submit(lambda: ran.append("after"))
    deriver.drain()
    assert deriver.failed == 1 and ran == ["after"]
