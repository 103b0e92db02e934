"""Linking what a target saved to the runs the rig made, without the target's run ids.

A target need not carry the rig's run id on the messages it saves (R2R's conversations carry none; some keep no
run ids at all). The rig then links a saved answer to its run by its own correlation: the session the question was
sent in, the order of the messages there, and the answer text the rig streamed, compared after normalising
whitespace and punctuation (a target may store quotes with its own punctuation). A message the target linked keeps
its `run_id` as said (`run_link = "target"`); a message the rig linked gets the run id with `run_link = "text"`
(its text matched the streamed answer) or `"question"` (it answers the question the run asked, in order). Every link
the rig made is recorded as an observation, so a reader sees which evidence rests on the rig's correlation.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rig.adapters.base import Adapter
from rig.adapters.models import Auth, Message, Session
from rig.jsonvalue import JsonObject
from rig.measure.transcript import RunTranscript


def normalised(text: str) -> str:
    """`text` without whitespace, punctuation or symbols, case-folded and NFKC-folded (full-width forms too)."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return "".join(ch for ch in folded if not ch.isspace() and unicodedata.category(ch)[0] not in "PSZC")


@dataclass
class AskedRun:
    """A run the rig read to its end in a session: what it asked and the answer it streamed."""

    run_id: str
    question: str
    answer: str


@dataclass
class RunLinks:
    """Every run the rig read, per session, in the order it asked them (shared by all cases of a workload)."""

    by_session: dict[str, list[AskedRun]] = field(default_factory=dict)

    def add(self, run: RunTranscript) -> None:
        """Remember a run when it is asked, and again when read (its session, question and the answer streamed so
        far): a run whose stream the rig closed early is still linked by its question."""
        if not run.session_id:
            return
        runs = self.by_session.setdefault(run.session_id, [])
        known = next((r for r in runs if r.run_id == run.run_id), None)
        if known is None:
            runs.append(AskedRun(run.run_id, run.question, run.answer))
        else:
            known.answer = run.answer

    def link(self, session: Session) -> tuple[Session, list[JsonObject]]:
        """The session with each unlinked assistant message given the run the rig correlates it with, and the
        links made (run id, message id, how). Messages the target linked itself are left as they are."""
        runs = self.by_session.get(session.session_id, [])
        assistant = [m for m in session.messages if m.role == "assistant"]
        taken = {m.run_id for m in assistant if m.run_id}
        todo = [r for r in runs if r.run_id not in taken]
        free = [m for m in assistant if not m.run_id]
        if not todo or not free:
            return session, []
        questions = {m.message_id: normalised(m.content) for m in session.messages if m.role == "user"}
        linked: dict[str, tuple[str, str]] = {}  # message id → (run id, how)
        for how, matches in (("text", _same_text), ("question", _same_question(session.messages, questions))):
            cursor = 0  # order: a later run links to a later message
            for run in todo:
                if run.run_id in {v[0] for v in linked.values()}:
                    continue
                for i in range(cursor, len(free)):
                    m = free[i]
                    if m.message_id not in linked and matches(run, m):
                        linked[m.message_id] = (run.run_id, how)
                        cursor = i + 1
                        break
        if not linked:
            return session, []
        messages = [m.model_copy(update={"run_id": linked[m.message_id][0], "run_link": linked[m.message_id][1]})
                    if m.message_id in linked else m for m in session.messages]
        notes = [{"run_id": run_id, "message_id": mid, "how": how} for mid, (run_id, how) in linked.items()]
        return session.model_copy(update={"messages": messages}), notes


def _same_text(run: AskedRun, message: Message) -> bool:
    answer = normalised(run.answer)
    return bool(answer) and normalised(message.content) == answer


def _same_question(messages: list[Message], questions: dict[str, str]) -> Callable[[AskedRun, Message], bool]:
    """A match on the question: the message answers (by parent, or as the next message) the run's question."""
    before: dict[str, str] = {}
    last_user = ""
    for m in messages:
        if m.role == "user":
            last_user = m.message_id
        else:
            before[m.message_id] = m.parent_id if m.parent_id in questions else last_user

    def matches(run: AskedRun, message: Message) -> bool:
        asked = normalised(run.question)
        return bool(asked) and questions.get(before.get(message.message_id, ""), None) == asked

    return matches


class LinkedAdapter:
    """The adapter as a case sees it: sessions read back with the rig's links filled in where the target gave none;
    `on_link` is told each link the rig made, once (recorded as an observation)."""

    def __init__(self, adapter: Adapter, links: RunLinks, on_link: Callable[[Session, list[JsonObject]], None]
                 ) -> None:
        self._adapter = adapter
        self._links = links
        self._on_link = on_link
        self._told: set[tuple[str, str]] = set()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._adapter, name)

    def session(self, auth: Auth | None, session_id: str) -> Session:
        """The session as the target saved it, its unlinked answers linked to the rig's runs by correlation."""
        session, notes = self._links.link(self._adapter.session(auth, session_id))
        new = [n for n in notes if (n["message_id"], n["run_id"]) not in self._told]
        if new:
            self._told |= {(n["message_id"], n["run_id"]) for n in new}
            self._on_link(session, new)
        return session
