"""The `rig` command line; plug-ins that add commands print through its `terminal` and end with `fail`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rig.lazy import exports

if TYPE_CHECKING:
    from rig.cli.console import console as terminal
    from rig.cli.console import fail

_EXPORTS = {
    "terminal": "rig.cli.console:console", "fail": "rig.cli.console",
}
__all__ = ["fail", "terminal"]
__getattr__, __dir__ = exports(__name__, _EXPORTS)
