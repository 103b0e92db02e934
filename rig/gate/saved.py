"""What was saved stays saved: one check for every control action.

Before an action the rig reads what the target has saved for the owner — each session message with its citations,
each ended run's final record fields, each export the adapter declares and can read back — and keeps a content
hash per object. After the action it reads them again. A missing or altered object is FAIL with both versions in
the evidence; new objects are allowed (an action may add a run or an answer). What the contract documents an action
to change is named by the caller (`may_change`): a regenerate switches the session's current branch, so its
exports may change.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from rig.adapters.models import Auth
from rig.errors import CapabilityMissing
from rig.jsonvalue import JsonObject
from rig.verdict import Item, Verdict

if TYPE_CHECKING:
    from rig.gate.context import CaseContext

RUN_FINAL = ("state", "end_reason", "resume_from", "ended_at_ms", "ended_at")


class SavedObject(BaseModel):
    kind: str  # message, run, export
    sha256: str
    content: Any


class SavedSnapshot(BaseModel):
    """The owner's saved objects at one moment, by key (`message <id>`, `run <id>`, `export <fmt> <sid> <hash>`)."""

    session_ids: list[str]
    run_ids: list[str]
    objects: dict[str, SavedObject] = Field(default_factory=dict)
    unread: list[str] = Field(default_factory=list)  # what the target offers no way to read back


def _put(snap: SavedSnapshot, kind: str, key: str, content: Any) -> None:
    text = json.dumps(content, sort_keys=True, ensure_ascii=False, default=str)
    snap.objects[key] = SavedObject(kind=kind, sha256=hashlib.sha256(text.encode()).hexdigest(), content=content)


def _message(m: Any) -> JsonObject:
    return {"role": m.role, "content": m.content.strip(), "parent_id": m.parent_id, "branch_id": m.branch_id,
            "run_id": m.run_id, "citations": sorted([c.doc_id, c.page, c.quote, c.marker] for c in m.citations)}


def snapshot(ctx: CaseContext, session_ids: list[str], run_ids: list[str], *, auth: Auth | None = None
             ) -> SavedSnapshot:
    """Read what `auth` (A by default) has saved in these sessions and runs, with its exports."""
    auth = auth or ctx.a
    snap = SavedSnapshot(session_ids=list(session_ids), run_ids=list(run_ids))
    records = not ctx.caps.missing("run_detail")
    ended: dict[str, bool] = {}

    def still_written(run_id: str | None) -> bool:
        """A message of a run still running is still being written: compared only once its run has ended."""
        if not run_id or not records:
            return False
        if run_id not in ended:
            ended[run_id] = ctx.adapter.run(auth, run_id).terminal
        return not ended[run_id]

    texts: set[str] = set()
    if ctx.caps.missing("sessions"):
        snap.unread.append("sessions")
    else:
        for sid in session_ids:
            for m in ctx.adapter.session(auth, sid).messages:
                if still_written(m.run_id):
                    continue
                _put(snap, "message", f"message {m.message_id}", _message(m))
                texts.add(m.content.strip())
    if not records:
        snap.unread.append("run_detail")
    else:
        for rid in run_ids:
            d = ctx.adapter.run(auth, rid)
            if d.terminal:  # a running run's record is still being written: only final records are compared
                _put(snap, "run", f"run {rid}", {
                    **{k: getattr(d, k, None) for k in RUN_FINAL},
                    "checkpoints": sorted(c.checkpoint_id for c in d.checkpoints),
                    "tool_calls": sorted([t.tool_call_id, t.ok] for t in d.tool_calls)})
    for fmt in ctx.caps.export:
        for sid in session_ids:
            try:
                read = ctx.adapter.read_export(ctx.adapter.export(auth, sid, fmt))
            except CapabilityMissing as exc:
                snap.unread.append(f"export {fmt} ({exc.capability})")
                break
            for m in read.messages:
                if texts and m.content.strip() not in texts:  # a message still being written, or not one of these
                    continue
                body = {"role": m.role, "content": m.content.strip(),
                        "cited": sorted([c.paper_id or c.doc_id, c.page] for c in m.citations)}
                digest = hashlib.sha256(json.dumps(body, ensure_ascii=False, default=str).encode()).hexdigest()[:16]
                _put(snap, "export", f"export {fmt} {sid} {digest}", body)
    return snap


def kept(ctx: CaseContext, before: SavedSnapshot, action: str, *, name: str | None = None,
         may_change: tuple[str, ...] = (), auth: Auth | None = None) -> Item:
    """Re-read what `before` saw and record item `name` (default `saved_kept_after_<action>`): PASS when every
    object is still there, unchanged (kinds in `may_change` excepted); BLOCKED when the target keeps nothing the rig
    can read back."""
    name = name or "saved_kept_after_" + re.sub(r"[^a-z0-9]+", "_", action.lower()).strip("_")
    if not before.objects:
        missing = [u for u in before.unread] or ["nothing saved to compare"]
        return ctx.item(name, Verdict.BLOCKED, f"missing capability: {', '.join(missing)}")
    after = snapshot(ctx, before.session_ids, before.run_ids, auth=auth)
    compared = {k: v for k, v in before.objects.items() if v.kind not in may_change}
    lost = [k for k in compared if k not in after.objects]
    altered = [k for k in compared if k in after.objects and after.objects[k].sha256 != compared[k].sha256]
    e = ctx.evidence("saved", f"saved objects before and after {action}", {
        "action": action, "compared": len(compared), "may_change": list(may_change), "lost": lost, "altered": altered,
        "before": {k: compared[k].content for k in lost + altered},
        "after": {k: after.objects[k].content for k in altered}})
    kinds = sorted({v.kind for v in compared.values()})
    return ctx.item(name, not lost and not altered, f"what was saved before the {action} ({len(compared)} "
                    f"object(s): {', '.join(kinds)}) re-reads the same", e,
                    seen={"lost": lost[:4], "altered": altered[:4], "compared": len(compared)})
