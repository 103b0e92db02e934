"""From a trace to what the load run sends: which sessions, which turns, when (sped up), and with which text.

Options: `speed` (60 means an hour of traffic in a minute; every gap between arrivals is divided by it), a
`window` of the source's timeline (`10m-20m`: only turns inside it, their times counted from its start), a cap
on sessions (each session is one simulated user; the earliest are kept), and `anonymise`: no text of the
source is sent or stored — each question is replaced by a question of the rig's corpus chosen by a digest of
the original (the same question maps to the same replacement), and session keys are digests too. A turn whose
text the export did not carry is mapped the same way. Each session keeps its turns in their original order.
"""

from __future__ import annotations

import hashlib
import re

from pydantic import BaseModel, Field

from rig.errors import ConfigError
from rig.load.replay.trace import Kind, TraceSource

LEAD_S = 2.0  # from the start of the run to the first arrival: every user is spawned and waiting by then
TAIL_S = 5.0  # after the last arrival; runs still in flight then finish (Locust's stop timeout)


class ReplayTurn(BaseModel):
    index: int  # its place in its session
    at_s: float  # when to send it, seconds after the replay's start (sped up)
    kind: Kind
    text: str
    digest: str  # of the source's text (or trace id): what a comparison matches without holding the text


class ReplaySession(BaseModel):
    key: str
    paper_set: int  # which of the load library's paper sets it asks about (deterministic per session)
    turns: list[ReplayTurn]


class ReplayPlan(BaseModel):
    """The replay a load run carries in its plan (`LoadPlan.replay`)."""

    source_sha256: str
    source_format: str
    speed: float
    window_s: tuple[float, float | None] | None = None  # of the source's timeline; None as the end: to its end
    anonymised: bool = False
    sessions: list[ReplaySession] = Field(default_factory=list)

    @property
    def span_s(self) -> float:
        return max((t.at_s for s in self.sessions for t in s.turns), default=0.0)

    @property
    def turns(self) -> int:
        return sum(len(s.turns) for s in self.sessions)

    def duration_s(self) -> float:
        """How long the load run lasts: the lead, the sped-up span, a short tail."""
        return LEAD_S + self.span_s + TAIL_S


def parse_window(text: str | None) -> tuple[float, float] | None:
    """`10m-20m`, `0-90s`, `1h-` (to the end) as seconds of the source's timeline."""
    if not text:
        return None
    found = re.fullmatch(r"\s*([\d.]+)\s*(s|m|h)?\s*-\s*(?:([\d.]+)\s*(s|m|h)?)?\s*", text)
    if not found:
        raise ConfigError(f"--window {text!r} is not START-END", fix="for example 10m-20m, 0-90s, or 1h- to the end")
    scale = {"s": 1, "m": 60, "h": 3600, None: 1}
    start = float(found.group(1)) * scale[found.group(2)]
    end = float(found.group(3)) * scale[found.group(4)] if found.group(3) else float("inf")
    if end <= start:
        raise ConfigError(f"--window {text!r} ends before it starts", fix="give START-END with END after START")
    return start, end


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def plan_replay(source: TraceSource, *, questions: list[str], paper_sets: int, speed: float = 1.0,
                window: tuple[float, float] | None = None, max_sessions: int | None = None,
                anonymise: bool = False) -> ReplayPlan:
    """The replay of `source`: sessions (at most `max_sessions`) with their turns scheduled `speed` times faster."""
    if speed <= 0:
        raise ConfigError(f"--speed {speed} must be positive", fix="for example --speed 60 (an hour in a minute)")
    if not questions or paper_sets <= 0:
        raise ConfigError("the replay has no corpus questions or paper sets to map turns onto")
    start, end = window or (0.0, float("inf"))
    sessions: list[ReplaySession] = []
    for s in source.sessions:
        kept = [t for t in s.turns if start <= t.at_s <= end]
        if not kept:
            continue
        turns = []
        for i, t in enumerate(kept):
            digest = _digest(t.text or t.trace_id)
            mapped = t.text is None or anonymise
            text = questions[int(digest, 16) % len(questions)] if mapped else str(t.text)
            turns.append(ReplayTurn(index=i, at_s=round((t.at_s - start) / speed, 6), kind=t.kind, text=text,
                                    digest=digest))
        key = _digest(s.key) if anonymise else s.key
        sessions.append(ReplaySession(key=key, paper_set=int(_digest(s.key), 16) % paper_sets, turns=turns))
        if max_sessions is not None and len(sessions) >= max_sessions:
            break
    if not sessions:
        raise ConfigError("no turn of the trace falls in the replay window", fix="widen --window or drop it")
    return ReplayPlan(source_sha256=source.sha256, source_format=source.format, speed=speed,
                      window_s=(start, None if end == float("inf") else end) if window else None,
                      anonymised=anonymise, sessions=sessions)
