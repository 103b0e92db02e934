"""Citations: taken from an answer's `[n]` markers, and located on the physical page they cite."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from workbench.db import dumps, loads
from workbench.ids import new_id
from workbench.services import Services
from workbench.text import search_tokens, split_sentences

_MARKER = re.compile(r"\[(\d+)(:file)?\]")


@dataclass(frozen=True)
class Citation:
    citation_id: str
    marker: int
    doc_id: str
    paper_id: str | None
    page: int | None
    chunk_id: str | None
    quote: str
    tool_call_id: str | None

    def to_api(self) -> dict[str, Any]:
        return {"citation_id": self.citation_id, "marker": self.marker, "doc_id": self.doc_id,
                "paper_id": self.paper_id, "page": self.page, "chunk_id": self.chunk_id, "quote": self.quote,
                "tool_call_id": self.tool_call_id}


def _best_quote(claim: str, hit_text: str) -> str:
    """The hit sentence that supports the claim: the claim itself when it is verbatim, else the best overlap."""
    if claim and claim in hit_text:
        return claim
    claim_terms = set(search_tokens(claim))
    sentences = split_sentences(hit_text) or [hit_text]
    return max(sentences, key=lambda s: (len(claim_terms & set(search_tokens(s))), -len(s)))


def extract_citations(svc: Services, answer: str, hits: dict[int, dict[str, Any]],
                      titles: dict[str, str]) -> list[Citation]:
    """One citation per distinct marker use; `[n:file]` cites the document as a whole (no page)."""
    out: list[Citation] = []
    seen: set[tuple[int, bool, str]] = set()
    claim = ""
    for line in answer.splitlines():
        start = 0
        for m in _MARKER.finditer(line):
            # The claim a marker supports is the last sentence of the text before it.
            before = _MARKER.sub("", line[start:m.start()]).strip()
            if before:
                claim = (split_sentences(before) or [before])[-1].strip()
            start = m.end()
            ref, whole_file = int(m.group(1)), bool(m.group(2))
            hit = hits.get(ref)
            if hit is None:
                continue
            quote = titles.get(hit["doc_id"], "") if whole_file else _best_quote(claim, hit["text"])
            key = (ref, whole_file, quote)
            if key in seen:
                continue
            seen.add(key)
            page = None if whole_file else hit["page"]
            if page is not None and "citation_page_shift" in svc.defects:
                page += 1
            out.append(Citation(new_id("cit"), ref, hit["doc_id"], hit.get("paper_id"), page,
                                None if whole_file else hit["chunk_id"], quote, hit.get("tool_call_id")))
    return out


def locate(svc: Services, citation: dict[str, Any]) -> dict[str, Any]:
    """Where a citation's quote is: unique/multiple/none on its page, page_only, or file_only."""
    doc = svc.db.one("SELECT doc_id, paper_id, sha256 FROM documents WHERE doc_id=?", citation["doc_id"])
    assert doc is not None
    base = {"doc_id": doc["doc_id"], "paper_id": doc["paper_id"], "page": citation["page"],
            "quote": citation["quote"], "content_sha256": doc["sha256"]}
    if citation["page"] is None:
        return {**base, "match": "file_only", "highlights": [], "cache": "miss"}
    if "stale_highlight_cache" in svc.defects:
        key_src = f"{doc['paper_id']}|{citation['quote']}"
    else:
        key_src = f"{doc['sha256']}|{citation['page']}|{citation['quote']}"
    key = hashlib.sha256(key_src.encode()).hexdigest()
    cached = svc.db.one("SELECT result FROM locate_cache WHERE cache_key=?", key)
    if cached is not None:
        result = loads(cached["result"])
        return {**base, "match": result["match"], "highlights": result["highlights"], "cache": "hit"}
    page = svc.db.one("SELECT text FROM pages WHERE doc_id=? AND page=?", doc["doc_id"], citation["page"])
    text = page["text"] if page else ""
    quote = citation["quote"]
    starts = [m.start() for m in re.finditer(re.escape(quote), text)] if quote and text else []
    if not text:
        match, highlights = "none", []
    elif len(starts) == 1 or (starts and "duplicate_quote_highlighted" in svc.defects):
        match = "unique"
        highlights = [{"page": citation["page"], "start": starts[0], "end": starts[0] + len(quote)}]
    elif len(starts) > 1:
        match, highlights = "multiple", []
    else:
        match, highlights = "page_only", []
    with svc.db.tx() as conn:
        conn.execute("INSERT OR REPLACE INTO locate_cache(cache_key, result) VALUES(?,?)",
                     (key, dumps({"match": match, "highlights": highlights})))
    return {**base, "match": match, "highlights": highlights, "cache": "miss"}
