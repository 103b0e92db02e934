"""One Locust process's part of a replay: its sessions in order of their first arrival, and the replay's start.

Sessions are shared between processes by their place in the plan (session i goes to process i mod shares);
each process counts the replay's start from the moment its users start (`start()`, at Locust's test start),
and every turn is due that long after it. A simulated user takes the next session from the queue and
replays it, turn by turn, each at its time or — when the previous turn is still running — as soon as it ends
(the lateness is kept as send lag, never hidden).
"""

from __future__ import annotations

from collections import deque

from rig.clock import now_ns
from rig.load.replay.plan import LEAD_S, ReplayPlan, ReplaySession, ReplayTurn


class ReplayQueue:
    """This process's sessions, handed out in order; `due_ns()` is when a turn is to be sent."""

    def __init__(self, plan: ReplayPlan, share: int = 0, shares: int = 1) -> None:
        self._sessions = deque(s for i, s in enumerate(plan.sessions) if i % max(shares, 1) == share)
        self.total = len(self._sessions)
        self.t0_ns: int | None = None

    def start(self) -> None:
        """Count the replay from now (the first arrival is LEAD_S later, once every user is spawned)."""
        if self.t0_ns is None:
            self.t0_ns = now_ns() + int(LEAD_S * 1e9)

    def take(self) -> ReplaySession | None:
        """The next session to replay, or None when this process has replayed all of its own."""
        self.start()
        return self._sessions.popleft() if self._sessions else None

    def due_ns(self, turn: ReplayTurn) -> int:
        self.start()
        assert self.t0_ns is not None
        return self.t0_ns + int(turn.at_s * 1e9)
