"""Recording the coverage matrix as the gate's cases call the adapter.

`CoveredAdapter` stands in for the adapter inside a case: each operation on an object is noted with its actor
(the object's owner, another account, or anonymous) and the object's state as the rig last observed it, and what
the operation returns teaches the recorder owners (who created a session, run, message or document) and states
(a run record that ended, a stream that reached its end). Nothing here is the target's say-so about ownership:
an object is its creator's, as the rig saw it created.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from typing import Any

from rig.adapters.base import Adapter
from rig.adapters.models import Resumed, RunDetail, Session, SessionOpened, Submitted, Uploaded
from rig.coverage import Exercise
from rig.errors import TargetHTTPError

RUN_OPS = {"run", "events", "raw_events", "stop", "resume"}
SESSION_OPS = {"session", "set_scope", "ask", "export"}
DOC_OPS = {"document", "download", "page_text"}
CONFIG_OPS = {"model_config", "set_model_config"}
COVERED = RUN_OPS | SESSION_OPS | DOC_OPS | CONFIG_OPS | {"regenerate", "upload", "locate_citation", "open_session"}
TERMINAL_EVENTS = ("done", "error")


class CoverageRecorder:
    """What the rig knows of the objects it made, and the calls made on them since the last item."""

    def __init__(self) -> None:
        self.owners: dict[str, str] = {}  # object id → the username that created it
        self.run_session: dict[str, str] = {}
        self.run_ended: set[str] = set()
        self.stale: set[str] = set()  # ended runs whose checkpoint a later scope/model change invalidated
        self.message_session: dict[str, str] = {}
        self.pending: list[tuple[str, str, str, str]] = []
        self.exercises: list[Exercise] = []

    def own(self, username: str, *object_ids: str | None) -> None:
        """`username` created these objects (the setup's uploads and project, or a case's own)."""
        for oid in object_ids:
            if oid:
                self.owners.setdefault(oid, username)

    # -- states -----------------------------------------------------------------------------------------------
    def _run_state(self, run_id: str) -> str:
        if run_id not in self.run_ended:
            return "running"
        return "stale" if run_id in self.stale else "ended"

    def _session_state(self, session_id: str) -> str:
        runs = [r for r, s in self.run_session.items() if s == session_id]
        return "running" if any(r not in self.run_ended for r in runs) else "ended"

    def _target(self, op: str, args: dict[str, object]) -> tuple[str | None, str]:
        """The object an operation acts on and its state."""

        def arg(name: str) -> str | None:
            value = args.get(name)
            return None if value is None else str(value)

        if op in RUN_OPS:
            return arg("run_id"), self._run_state(str(arg("run_id")))
        if op in SESSION_OPS:
            return arg("session_id"), self._session_state(str(arg("session_id")))
        if op == "regenerate":
            session = self.message_session.get(str(arg("message_id")))
            return arg("message_id"), self._session_state(session) if session else "ended"
        if op in DOC_OPS:
            return arg("doc_id"), "ended"
        if op in ("upload", "open_session"):
            return arg("project_id"), "ended"
        if op == "locate_citation":
            return arg("citation_id"), "ended"
        return None, "ended"

    # -- calls ------------------------------------------------------------------------------------------------
    def call(self, op: str, fn: Callable[..., Any], *a: Any, **kw: Any) -> Any:
        """Make the call, note the exercise, learn from its answer."""
        args = dict(inspect.signature(fn).bind(*a, **kw).arguments)
        auth = args.get("auth")
        user = getattr(auth, "username", None)
        obj, state = self._target(op, args)
        if op in CONFIG_OPS:
            actor = "owner" if user else "anonymous"
        elif obj is None or obj not in self.owners:
            actor = ""  # an object the rig did not see made: not a cell
        else:
            actor = "anonymous" if user is None else "owner" if self.owners[obj] == user else "other"
        streaming = op in ("events", "raw_events")
        try:
            result = fn(*a, **kw)
            if streaming and isinstance(result, Iterator):  # a stream's answer comes with its first read
                return self._follow(op, actor, state, str(args.get("run_id")), result)
        except TargetHTTPError as exc:
            self._note(op, actor, state, str(exc.status))
            raise
        except Exception:
            self._note(op, actor, state, "error")
            raise
        self._note(op, actor, state, "2xx")
        if user is not None:
            self._learn(op, user, args, result)
        return result

    def _note(self, op: str, actor: str, state: str, status: str) -> None:
        if actor and op != "open_session":
            self.pending.append((op, actor, state, status))

    def _follow(self, op: str, actor: str, state: str, run_id: str, stream: Iterator[Any]) -> Iterator[Any]:
        last, noted = None, False
        try:
            for event in stream:
                if not noted:
                    self._note(op, actor, state, "2xx")
                    noted = True
                last = event
                yield event
        except TargetHTTPError as exc:
            if not noted:
                self._note(op, actor, state, str(exc.status))
                noted = True
            raise
        finally:
            if not noted:
                self._note(op, actor, state, "2xx")
        if last is not None and getattr(last, "event", None) in TERMINAL_EVENTS:
            self.run_ended.add(run_id)

    def _learn(self, op: str, user: str, args: dict[str, object], result: Any) -> None:
        if isinstance(result, SessionOpened):
            self.own(user, result.session_id)
        elif isinstance(result, (Submitted, Resumed)):
            message_id = getattr(result, "message_id", None)
            self.own(user, result.run_id, message_id)
            session = args.get("session_id") or self.message_session.get(str(args.get("message_id"))) \
                or self.run_session.get(str(args.get("run_id")))
            if session:
                self.run_session[result.run_id] = str(session)
                if message_id:
                    self.message_session[str(message_id)] = str(session)
        elif isinstance(result, Uploaded):
            self.own(user, result.doc_id)
        elif isinstance(result, RunDetail):
            if result.terminal:
                self.run_ended.add(result.run_id)
            if result.session_id:
                self.run_session.setdefault(result.run_id, result.session_id)
        elif isinstance(result, Session):
            for m in result.messages:
                self.message_session[m.message_id] = result.session_id
                owner = self.owners.get(result.session_id)
                if owner:
                    self.own(owner, m.message_id, *(c.citation_id for c in m.citations))
                if m.run_id:
                    self.run_session.setdefault(m.run_id, result.session_id)
        if op == "set_scope" and self.owners.get(str(args.get("session_id"))) == user:
            self.stale |= {r for r, s in self.run_session.items() if s == args.get("session_id") and r in self.run_ended}
        if op == "set_model_config":
            self.stale |= {r for r in self.run_ended if self.owners.get(r) == user}

    def attribute(self, label: str) -> None:
        """The calls since the last item fed this one (`case N item`)."""
        for op, actor, state, status in self.pending:
            self.exercises.append(Exercise(op=op, actor=actor, state=state, status=status, item=label))
        self.pending.clear()


class CoveredAdapter:
    """The adapter as a case sees it: every covered operation goes through the recorder."""

    def __init__(self, adapter: Adapter, recorder: CoverageRecorder) -> None:
        self._adapter = adapter
        self._recorder = recorder

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._adapter, name)
        if name not in COVERED or not callable(attr):
            return attr
        recorder = self._recorder

        def covered(*a: Any, **kw: Any) -> Any:
            return recorder.call(name, attr, *a, **kw)

        return covered
