"""A terminal's Ctrl-C goes to the rig's whole process group: the browser and its Playwright driver are outside it,
so a browser step in flight keeps its browser while the rig finishes; and when the rig is killed outright, the
driver and Chromium go with it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import psutil
import pytest

from rig.waiting import wait_until
from tests.rig.test_interrupt import blocked_signals

pytestmark = pytest.mark.browser

CHILD = textwrap.dedent("""
    import signal, sys, psutil
    from rig.browser.host import BrowserHost
    signal.signal(signal.SIGINT, lambda *_: print("sigint", flush=True))  # the rig's own handler takes it
    host = BrowserHost()
    print("pids", *[c.pid for c in psutil.Process().children(recursive=True)], flush=True)
    sys.stdin.readline()

    async def title():
        page = await host.browser.new_page()
        await page.set_content("<title>still here</title>")
        return await page.title()

    print("title", host.call(title(), timeout_s=30), flush=True)
    host.close()
""")


def _start() -> tuple[subprocess.Popen[str], list[int]]:
    child = subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
    assert child.stdout is not None
    line = child.stdout.readline()
    assert line.startswith("pids "), line + (child.stderr.read() if child.stderr else "")
    return child, [int(p) for p in line.split()[1:]]


def _gone(pids: list[int]) -> bool:
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                return False
        except psutil.NoSuchProcess:
            continue
    return True


def test_ctrl_c_of_the_rigs_group_leaves_the_browser_working() -> None:
    child, pids = _start()
    try:
        # the browser's thread blocks the stop signals (they are the rig's main thread's); the driver it starts does
        # not inherit that, so a SIGTERM still ends it (Chromium's own helpers block signals by their own design)
        drivers = [pid for pid in pids if psutil.Process(pid).name().startswith("node")]
        assert drivers, [psutil.Process(pid).name() for pid in pids]
        for pid in drivers:
            blocked = blocked_signals(Path(f"/proc/{pid}/status"))
            assert signal.SIGINT not in blocked and signal.SIGTERM not in blocked, (pid, sorted(blocked))
        os.killpg(child.pid, signal.SIGINT)  # what a terminal does
        assert child.stdout is not None and child.stdin is not None
        assert child.stdout.readline().strip() == "sigint"
        child.stdin.write("go\n")
        child.stdin.flush()
        assert child.stdout.readline().strip() == "title still here"
        assert child.wait(60) == 0
    finally:
        if child.poll() is None:
            child.kill()
    assert wait_until(lambda: _gone(pids), 30.0), "the browser outlived a rig that closed it"


def test_a_killed_rig_takes_its_browser_with_it() -> None:
    child, pids = _start()
    child.kill()
    child.wait(30)
    assert wait_until(lambda: _gone(pids), 30.0), [p for p in pids if psutil.pid_exists(p)]
