"""`rig load`: Locust load runs against a target, single-process or distributed.

What a load scenario or a load hook imports from here: the Locust side (`AdapterUser`, `install`, `RigShape`, the
per-process deriver and schedules) loads only when one of its names is used, so a command that only plans or reads
a load never loads Locust (which patches the process with gevent).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rig.lazy import exports

if TYPE_CHECKING:
    from rig.load.context import LoadContext
    from rig.load.locust_hooks import install
    from rig.load.options import LoadOptions
    from rig.load.plan import LoadPlan, PaperSet
    from rig.load.process import DERIVER, PROCESS, LoadProcess, replay_of, run_tracer, schedule_of
    from rig.load.replay import ReplaySession, ReplayTurn
    from rig.load.runviews import TERMINAL, RunView, run_views
    from rig.load.session import LoadResult, run_load
    from rig.load.shape import RigShape
    from rig.load.stages import SHAPE_ENV
    from rig.load.user import AdapterUser, RunEndedWithoutBody, error_row, reason_of, stream_failure

_EXPORTS = {
    "AdapterUser": "rig.load.user", "DERIVER": "rig.load.process", "PROCESS": "rig.load.process",
    "LoadProcess": "rig.load.process", "LoadContext": "rig.load.context",
    "LoadOptions": "rig.load.options", "LoadPlan": "rig.load.plan", "LoadResult": "rig.load.session",
    "PaperSet": "rig.load.plan", "ReplaySession": "rig.load.replay", "ReplayTurn": "rig.load.replay",
    "RigShape": "rig.load.shape", "RunEndedWithoutBody": "rig.load.user", "RunView": "rig.load.runviews",
    "SHAPE_ENV": "rig.load.stages", "TERMINAL": "rig.load.runviews", "error_row": "rig.load.user",
    "install": "rig.load.locust_hooks", "reason_of": "rig.load.user", "replay_of": "rig.load.process",
    "run_load": "rig.load.session", "run_tracer": "rig.load.process", "run_views": "rig.load.runviews",
    "schedule_of": "rig.load.process", "stream_failure": "rig.load.user",
}
__all__ = ["PROCESS", "AdapterUser", "DERIVER", "LoadContext", "LoadProcess", "LoadOptions", "LoadPlan", "LoadResult", "PaperSet",
          "ReplaySession", "ReplayTurn", "RigShape", "RunEndedWithoutBody", "RunView", "SHAPE_ENV", "TERMINAL",
          "error_row", "install", "reason_of", "replay_of", "run_load", "run_tracer", "run_views", "schedule_of",
           "stream_failure"]
__getattr__, __dir__ = exports(__name__, _EXPORTS)
