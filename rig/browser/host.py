"""A browser for synchronous callers: Playwright's asyncio API on its own thread and event loop.

The gate and `rig load` are synchronous; `BrowserHost.call(coro)` runs one coroutine on the host's loop
and returns its result, so one Chromium process serves every browser step of a run.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Coroutine
from typing import Any, TypeVar

from rig.browser.driver_session import driver_in_own_session
from rig.browser.launch import launch_chromium
from rig.errors import BrowserUnavailable
from rig.interrupt import helper_thread

T = TypeVar("T")


class BrowserHost:
    """Owns Playwright and one Chromium; `call()` from any thread, `close()` when done."""

    def __init__(self, *, headless: bool = True) -> None:
        self.headless = headless
        self.loop = asyncio.new_event_loop()
        self._thread = helper_thread(self.loop.run_forever, "rig-browser")  # the stop signals stay the main thread's
        self.playwright: Any = None
        self.browser: Any = None
        try:
            self.call(self._start(), timeout_s=60)
        except BaseException:
            self.close()
            raise

    async def _start(self) -> None:
        try:
            from playwright.async_api import async_playwright
        except ImportError as exc:
            raise BrowserUnavailable("Playwright is not installed") from exc
        with driver_in_own_session():  # a terminal's Ctrl-C reaches the rig, not the browser's driver
            self.playwright = await async_playwright().start()
        self.browser = await launch_chromium(self.playwright, headless=self.headless)

    def call(self, coro: Coroutine[Any, Any, T], timeout_s: float = 120) -> T:
        """Run `coro` on the browser's loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout_s)

    def browser_pss_mb(self) -> float:
        """Memory of every browser process this host started (MiB), as PSS so shared pages count once."""

        import psutil

        total = 0
        for child in psutil.Process(os.getpid()).children(recursive=True):
            try:
                if "chrom" in child.name().lower():
                    total += child.memory_full_info().pss
            except psutil.Error:
                continue
        return total / 2**20

    async def _stop(self) -> None:
        if self.browser is not None:
            await self.browser.close()
        if self.playwright is not None:
            await self.playwright.stop()

    def close(self) -> None:
        if self.loop.is_running():
            try:
                asyncio.run_coroutine_threadsafe(self._stop(), self.loop).result(30)
            except Exception:
                pass
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(10)
        self.loop.close()

    def __enter__(self) -> BrowserHost:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
