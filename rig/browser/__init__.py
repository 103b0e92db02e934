"""Browser-level timing: Playwright driving Chromium against a target's web UI, stamped from the DOM.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rig.lazy import exports

if TYPE_CHECKING:
    from rig.browser.driver import BrowserTurn, BrowserUser, turn_measures

_EXPORTS = {
    "BrowserTurn": "rig.browser.driver", "BrowserUser": "rig.browser.driver", "turn_measures": "rig.browser.driver",
}
__all__ = ["BrowserTurn", "BrowserUser", "turn_measures"]
__getattr__, __dir__ = exports(__name__, _EXPORTS)
