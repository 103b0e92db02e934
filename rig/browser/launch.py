"""Starting Chromium for Playwright: Playwright's own build when installed, else the system's Chromium."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from rig.errors import BrowserUnavailable

SYSTEM_CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]


def chromium_executable(playwright_path: str | None) -> str | None:
    """The browser to start: `RIG_CHROMIUM`, else Playwright's own when present, else one on PATH."""
    explicit = os.environ.get("RIG_CHROMIUM")
    if explicit:
        return explicit
    if playwright_path and Path(playwright_path).exists():
        return None  # Playwright finds its own
    for name in SYSTEM_CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    raise BrowserUnavailable("neither Playwright's Chromium nor a system Chromium is installed")


async def launch_chromium(playwright: Any, *, headless: bool = True) -> Any:
    """Launch Chromium with flags that work in containers and without network."""
    try:
        own = playwright.chromium.executable_path
    except Exception:  # older Playwright without the attribute
        own = None
    exe = chromium_executable(own)
    args = FLAGS if headless else [f for f in FLAGS if f != "--headless"]
    try:
        return await playwright.chromium.launch(executable_path=exe, headless=headless, args=args)
    except Exception as exc:  # Playwright's own error names the binary and its stderr
        raise BrowserUnavailable(f"{exe or 'Playwright Chromium'} did not start: {str(exc)[:400]}") from exc
