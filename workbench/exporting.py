"""Session export (Markdown or JSON): the current branch only, with the sources it cites."""

from __future__ import annotations

from typing import Any

from workbench.services import Services
from workbench.views import citation_view


def _sources(svc: Services, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for m in messages:
        for c in svc.db.all("SELECT c.*, d.title, d.filename, d.sha256 FROM citations c JOIN documents d ON "
                            "d.doc_id=c.doc_id WHERE c.message_id=?", m["message_id"]):
            src = out.setdefault(c["doc_id"], {"doc_id": c["doc_id"], "paper_id": c["paper_id"],
                                               "title": c["title"], "filename": c["filename"],
                                               "sha256": c["sha256"], "pages": []})
            if c["page"] is not None and c["page"] not in src["pages"]:
                src["pages"].append(c["page"])
    for src in out.values():
        src["pages"].sort()
    return list(out.values())


def export_json(svc: Services, session: dict[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any]:
    items = []
    for m in messages:
        cites = svc.db.all("SELECT * FROM citations WHERE message_id=? ORDER BY rowid", m["message_id"])
        items.append({"message_id": m["message_id"], "session_id": m["session_id"], "role": m["role"],
                      "branch_id": m["branch_id"], "content": m["content"], "created_at": m["created_at"],
                      "citations": [citation_view(c) for c in cites]})
    return {"session_id": session["session_id"], "project_id": session["project_id"], "messages": items,
            "sources": _sources(svc, messages)}


def export_markdown(svc: Services, session: dict[str, Any], messages: list[dict[str, Any]]) -> str:
    data = export_json(svc, session, messages)
    if "md_export_page_shift" in svc.defects:
        for m in data["messages"]:
            m["citations"] = [{**c, "page": c["page"] + 1 if c["page"] else c["page"]} for c in m["citations"]]
    lines = [f"# Session {data['session_id']}", ""]
    for m in data["messages"]:
        lines.append(f"## {'Question' if m['role'] == 'user' else 'Answer'} ({m['message_id']})")
        lines.append("")
        lines.append(m["content"])
        lines.append("")
        for c in m["citations"]:
            where = f"p. {c['page']}" if c["page"] is not None else "whole file"
            lines.append(f"- [{c['marker']}] {c['paper_id'] or c['doc_id']}, {where}: “{c['quote']}”")
        if m["citations"]:
            lines.append("")
    lines.append("## Sources")
    lines.append("")
    for s in data["sources"]:
        pages = ", ".join(str(p) for p in s["pages"]) or "whole file"
        lines.append(f"- {s['paper_id'] or '-'} 《{s['title']}》 ({s['filename']}, sha256 {s['sha256'][:12]}…), "
                     f"pages {pages}")
    return "\n".join(lines) + "\n"
