"""登录与隔离 — login and isolation (reliability cases 1–5)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from rig.gate import CaseContext, case
from scenarios.reliability.foreign import foreign_actions
from scenarios.reliability.steps import UNLINKED_TRIED, answer_cited, attempt, export_format, run_ended

CASE1_QUESTION = "请概括《Reputation and Regulations- Evidence from eBay》的主要发现"


@dataclass
class Answered:
    """A's session with one answer on P32, and what the other account must not get at."""

    session_id: str
    run_id: str
    fragment: str  # a line of the answer (its content, as leak marker)
    citation: str = ""  # a citation id of the answer
    sources: list[str] = field(default_factory=list)  # the documents the answer rests on


def _answered_session(ctx: CaseContext) -> Answered:
    opened = ctx.open_session(ctx.a, [ctx.doc("P32")])
    run = ctx.chat(ctx.a, opened.session_id, "2.9%指什么？")
    answer = answer_cited(ctx, opened.session_id, run)
    cites = answer.citations if answer else []
    fragment = next((line for line in run.answer.splitlines() if "2.9" in line), run.answer[:40])
    return Answered(opened.session_id, run.run_id, fragment.strip(), cites[0].citation_id if cites else "",
                    sorted({c.doc_id for c in cites if c.doc_id}))


@case(1, "可靠性-01-1", codes=("T3", "T4", "T7", "T8"), papers=("P32",))
def login_and_first_answer(ctx: CaseContext) -> None:
    """Log in as A, open A's project, ask the case-1 question about P32.

    Expects: the identity and the project are A's, the answer comes from materials A may use, and the
    request is linked to its run (run id, trace id). Evidence: login/me, project list, the run.
    """
    with ctx.part("identity"):  # a target that names nobody leaves the identity to what login returned
        me = ctx.adapter.me(ctx.a)
        e_me = ctx.observe("identity after login", me.model_dump())
        ctx.item("identity", me.user_id == ctx.a.user_id and me.username == ctx.a.username,
                 f"logged in as {me.username}", e_me)
    docs = {d.doc_id for d in ctx.adapter.documents(ctx.a, ctx.target.setup.project_a)}
    if ctx.caps.missing("projects"):  # one shared namespace: A's materials are that namespace's documents
        e_proj = ctx.observe("A's documents (the target has no projects)", {"documents": len(docs)})
        ctx.item("project", ctx.doc("P32") in docs, "A's documents list P32 (the target has no projects: one "
                 "shared namespace)", e_proj, seen={"documents": len(docs), "p32_present": ctx.doc("P32") in docs})
    else:
        projects = {p.project_id for p in ctx.adapter.projects(ctx.a)}
        e_proj = ctx.observe("A's project and documents", {"projects": sorted(projects), "documents": len(docs)})
        ctx.item("project", ctx.target.setup.project_a in projects and ctx.doc("P32") in docs,
                 "A's project is listed and holds P32", e_proj,
                 seen={"project_listed": ctx.target.setup.project_a in projects, "documents": len(docs),
                       "p32_present": ctx.doc("P32") in docs})
    opened = ctx.open_session(ctx.a, [ctx.doc("P32")])
    run = ctx.chat(ctx.a, opened.session_id, CASE1_QUESTION)
    answer = answer_cited(ctx, opened.session_id, run, item="answer_from_allowed_materials")
    cited = {c.doc_id for c in answer.citations} if answer else set()
    # What A may use: the chosen paper where the target scopes a question, else every document A can read
    allowed = {ctx.doc("P32")} if not ctx.caps.missing("scope") else docs
    e_ans = ctx.observe("answer and its sources", {"answer": run.answer, "cited_docs": sorted(cited),
                                                   "allowed": sorted(allowed), "scoped": not ctx.caps.missing("scope"),
                                                   "answer_from": answer.source if answer else None})
    ended = run_ended(run)
    ok = ended == "completed" and bool(run.answer.strip())
    if answer is not None:  # (else recorded U: the rig could not link the saved answer)
        # an answer citing nothing cannot be shown to come from anywhere: undecided (a citation outside is a FAIL)
        undecided = ended is None or (ok and not cited)
        ctx.item("answer_from_allowed_materials", None if undecided else ok and cited <= allowed,
                 f"run {ended}; cited {len(cited)} document(s), all among those A may use", e_ans,
                 seen={"ended": ended, "cited": sorted(ctx.paper_of(d) for d in cited),
                       "outside": sorted(ctx.paper_of(d) for d in cited - allowed)})
    linked = run.detail is not None and run.detail.session_id == opened.session_id
    ctx.item("request_linked", linked, f"run {run.run_id} belongs to session "
             f"{run.detail.session_id if run.detail else None} (opened {opened.session_id})", e_ans,
             needs=("run_detail",))
    trace = run.detail.trace_id if run.detail else None
    ctx.declared("trace_linked", "trace_ids", bool(trace), f"run {run.run_id} carries trace id {trace}", e_ans)


@case(2, "可靠性-02-1", papers=("P32",))
def anonymous_access(ctx: CaseContext) -> None:
    """Without logging in, request A's session, run record, run event stream, original file, page text, export
    and citation; then try every state-changing operation on A's objects (stop A's running run, resume A's stopped
    one, regenerate A's answer, post into A's session, change its scope, upload into A's project).

    Expects: every request is refused and no protected text, file bytes or run content comes back;
    hiding a menu would not count; A's re-read finds nothing changed. Evidence: each request's status and
    (redacted) body, A's saved objects before and after.
    """
    got = _answered_session(ctx)
    sid, run_id, fragment, citation = got.session_id, got.run_id, got.fragment, got.citation
    doc = ctx.doc("P32")
    fmt = export_format(ctx)
    tries = {
        "session": lambda: ctx.adapter.session(None, sid),
        "run_detail": lambda: ctx.adapter.run(None, run_id),
        "run_events": lambda: list(ctx.adapter.events(None, run_id, timeout_s=30)),
        "original_file": lambda: ctx.adapter.download(None, doc),
        "page_text": lambda: ctx.adapter.page_text(None, doc, 1),
        "document": lambda: ctx.adapter.document(None, doc),
        "export": lambda: ctx.adapter.export(None, sid, fmt),
        "citation": lambda: ctx.adapter.locate_citation(None, citation),
    }
    for name, fn in tries.items():
        if name == "citation" and not citation and not ctx.caps.missing("locate_citation"):
            ctx.could_not(name, "find a citation of A's answer to ask for", UNLINKED_TRIED)
            continue
        with ctx.part(name):  # an entry the target does not have is BLOCKED; the others still count
            result = attempt(fn)
            leaked = "%PDF" in result.body or (fragment and fragment[:20] in result.body) or "2.9%" in result.body
            e = ctx.observe(f"anonymous {name}", {"status": result.status, "content_leaked": bool(leaked)})
            ctx.item(name, result.denied and not leaked, f"status {result.status}, content leaked: {bool(leaked)}", e)
    foreign_actions(ctx, None, "anon")  # and no state-changing operation on A's objects either


@case(3, "可靠性-03-1", papers=("P32",))
def cross_account_original(ctx: CaseContext) -> None:
    """B asks for A's P32 by its known id: metadata, preview (page text) and download.

    Expects: B gets neither the file nor any fragment; A still can. Evidence: both identities' responses.
    """
    doc = ctx.doc("P32")
    expected = ctx.manifest.paper("P32").sha256
    for name, fn in {"metadata": lambda: ctx.adapter.document(ctx.b, doc),
                     "preview": lambda: ctx.adapter.page_text(ctx.b, doc, 1),
                     "download": lambda: ctx.adapter.download(ctx.b, doc)}.items():
        with ctx.part(f"b_{name}"):
            result = attempt(fn)
            leaked = "%PDF" in result.body or "buyer protection" in result.body.lower()
            e = ctx.observe(f"B {name} of A's P32", {"status": result.status, "content_leaked": leaked,
                                                     "body": result.body[:300]})
            ctx.item(f"b_{name}", result.denied and not leaked, f"B got {result.status}"
                     + ("" if result.denied else f" with A's {name}") + (", and the paper's content" if leaked else ""), e)

    with ctx.part("a_still_works"):
        data = ctx.adapter.download(ctx.a, doc)
        same = hashlib.sha256(data).hexdigest() == expected
        e = ctx.observe("A downloads P32", {"bytes": len(data), "sha256_matches_fixture": same})
        ctx.item("a_still_works", same, "A's download is byte-identical to the fixture", e,
                 seen={"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()[:16], "fixture": expected[:16]})


@case(4, "可靠性-04-1", papers=("P32",))
def cross_account_session_run_export(ctx: CaseContext) -> None:
    """B requests A's session, run detail, event stream and export, one by one; then B tries every state-changing
    operation on A's objects (stop, resume, regenerate, post a message, change the scope, upload into A's project).

    Expects: all entries refuse and leak nothing (covering every entry, not just run status), and A's re-read
    finds nothing changed. Evidence: the results of each request, who owns each object, A's saved objects before
    and after.
    """
    got = _answered_session(ctx)
    sid, run_id, fragment = got.session_id, got.run_id, got.fragment
    tries = {
        "session": lambda: ctx.adapter.session(ctx.b, sid),
        "run_detail": lambda: ctx.adapter.run(ctx.b, run_id),
        "run_events": lambda: list(ctx.adapter.events(ctx.b, run_id)),
        "export_md": lambda: ctx.adapter.export(ctx.b, sid, "md"),
        "export_json": lambda: ctx.adapter.export(ctx.b, sid, "json"),
        "citation": lambda: ctx.adapter.locate_citation(ctx.b, got.citation),
    }
    ctx.observe("owners", {"session": sid, "run": run_id, "owner": ctx.a.username, "requester": ctx.b.username,
                           "sources": [ctx.paper_of(d) for d in got.sources]})
    for name, fn in tries.items():
        if name == "citation" and not got.citation and not ctx.caps.missing("locate_citation"):
            ctx.could_not(name, "find a citation of A's answer to ask for", UNLINKED_TRIED)
            continue
        with ctx.part(name):
            result = attempt(fn)
            leaked = bool(fragment) and fragment[:20] in result.body
            e = ctx.observe(f"B {name}", {"status": result.status, "content_leaked": leaked})
            ctx.item(name, result.denied and not leaked, f"B got {result.status}", e)
    # The answer's sources are A's too: B's own listing of A's library must not show them.
    with ctx.part("sources"):
        listing = attempt(lambda: ctx.adapter.documents(ctx.b, ctx.target.setup.project_a))
        shown = [d for d in got.sources if d in listing.body]
        e = ctx.observe("B lists A's library", {"status": listing.status, "sources_shown": shown,
                                                "sources": got.sources})
        ctx.item("sources", not shown if got.sources else None, "B's listing shows none of the documents A's answer "
                 "rests on", e, seen={"status": listing.status, "a_sources_shown_to_b": [ctx.paper_of(d) for d in shown],
                                      "a_sources": [ctx.paper_of(d) for d in got.sources]})
    foreign_actions(ctx, ctx.b, "b")


@case(5, "可靠性-05-1", papers=("P32",))
def logout_revokes(ctx: CaseContext) -> None:
    """A opens a protected session, logs out, retries with the old token, then logs in again.

    Expects: after logout the old token is refused; after logging in again access is back (pixels
    already shown in a browser need not be cleared). Evidence: identity state and each request before
    and after.
    """
    ctx.require("logout", "sessions")  # the old token after a logout, on a protected session
    fresh = ctx.target.relogin("a")
    sid = _answered_session(ctx).session_id
    before = attempt(lambda: ctx.adapter.session(fresh, sid))
    ctx.adapter.logout(fresh)
    after = attempt(lambda: ctx.adapter.session(fresh, sid))
    me_after = attempt(lambda: ctx.adapter.me(fresh))
    e = ctx.observe("old token after logout", {"before": before.status, "session_after": after.status,
                                               "me_after": me_after.status})
    ctx.item("revoked_after_logout", before.status == 200 and after.denied and me_after.denied,
             f"before {before.status}, after logout {after.status}/{me_after.status}", e)
    again = ctx.target.relogin("a")
    restored = attempt(lambda: ctx.adapter.session(again, sid))
    e2 = ctx.observe("after logging in again", {"status": restored.status})
    ctx.item("relogin_restores", restored.status == 200, f"status {restored.status}", e2)
