"""Adapters with a seeded bug of the rig's own (never the target's): for the tests that prove such a crash is
counted as `rig_error` and leaves the run undecided, with its traceback kept and none on the console."""

from __future__ import annotations

from typing import Any

from rig.adapters import Capabilities, WorkbenchAdapter
from rig.adapters.models import Submitted


class CrashingAdapter(WorkbenchAdapter):
    """The workbench adapter, except that every third question of a process crashes in the rig's code."""

    asked = 0

    def ask(self, *args: Any, **kwargs: Any) -> Submitted:
        type(self).asked += 1
        if type(self).asked % 3 == 0:
            raise ZeroDivisionError("seeded crash in the rig's load user")
        return super().ask(*args, **kwargs)


class CrashingSetupAdapter(WorkbenchAdapter):
    """The workbench adapter, except that reading its capabilities (done at setup) crashes."""

    def capabilities(self) -> Capabilities:
        raise KeyError("seeded crash in the rig's setup")
