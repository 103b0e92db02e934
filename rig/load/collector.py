"""The garbage collector of a process that runs load users.

A load user holds each run's events until the run ends, so a process with a hundred streams in flight keeps
thousands of young objects alive at any moment. CPython runs a young-generation pass every 700 net allocations:
under load the runs in flight cross that again and again by themselves, and each pass rescans (and promotes, to be
rescanned again) objects that reference counting frees anyway when their run ends — a few percent of the process's
CPU, all of it the rig's own (`bench/ttft_fidelity.py` prints the collector's share). At the test's start a process
that runs users moves what it holds for good (modules, adapters, the plan) out of the collector's sight and raises
the young threshold above what its runs in flight hold; cycles are still collected, less often.
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 50_000  # net allocations between young-generation passes (CPython's default: 700)


def settle_for_load() -> None:
    """Freeze what this process holds now and raise the collector's young-generation threshold (never lower it)."""
    gc.collect()
    gc.freeze()
    young, older, oldest = gc.get_threshold()
    gc.set_threshold(max(young, YOUNG_THRESHOLD), older, oldest)
