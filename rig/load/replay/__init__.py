"""Load as users made it: a trace export replayed with its sessions, turns and arrival times (`rig load --replay`)."""

from __future__ import annotations

from rig.load.replay.plan import ReplayPlan, ReplaySession, ReplayTurn, parse_window, plan_replay
from rig.load.replay.queue import ReplayQueue
from rig.load.replay.trace import TraceSource, read_trace

__all__ = ["ReplayPlan", "ReplayQueue", "ReplaySession", "ReplayTurn", "TraceSource", "parse_window", "plan_replay",
           "read_trace"]
