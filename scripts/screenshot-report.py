"""Screenshot a report page in headless Chromium: `python scripts/screenshot-report.py REPORT.html OUT.png [HEADING]`.

Used for the pictures of the pre-release report in docs/; the page is opened from the file, offline. With
HEADING the shot starts at that section heading (for example "Quality metrics").
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from playwright.async_api import async_playwright

from rig.browser.launch import launch_chromium


async def shoot(report: Path, out: Path, heading: str | None = None, width: int = 1280, height: int = 1600) -> None:
    async with async_playwright() as pw:
        browser = await launch_chromium(pw)
        page = await browser.new_page(viewport={"width": width, "height": height})
        await page.goto(report.resolve().as_uri())
        if heading:
            await page.evaluate("h => [...document.querySelectorAll('h2')].find(e => e.textContent.startsWith(h))"
                                ".scrollIntoView()", heading)
        await page.screenshot(path=str(out), full_page=False)
        await browser.close()


if __name__ == "__main__":
    asyncio.run(shoot(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else None))
