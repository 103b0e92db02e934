"""The `rig` command line; plug-ins that add commands print through its console.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rig.lazy import exports

if TYPE_CHECKING:
    from rig.cli.console import console, fail

_EXPORTS = {
    "console": "rig.cli.console", "fail": "rig.cli.console",
}
__all__ = ["console", "fail"]
__getattr__, __dir__ = exports(__name__, _EXPORTS)
