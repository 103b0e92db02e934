"""The mock model's answers to a graph-RAG server's own prompts: keyword extraction, entity and relation extraction,
and description summaries (the prompts LightRAG sends while it ingests and before it answers).

Such a server indexes nothing and answers "[no-context]" unless these come back in the shapes its prompts ask
for: a JSON object of high- and low-level keywords; rows of `entity<delim>name<delim>type<delim>description` and
`relation<delim>…` ending with the completion marker. Each prompt is recognised by its structure (its sections
and the delimiters it names), never by a server's name; the answers are deterministic, drawn from the text given.
"""

from __future__ import annotations

import json
import re
from typing import Any

_QUERY = re.compile(r"User Query:\s*(.+?)\s*(?:\n\s*-{3}|\Z)", re.S)
_INPUT = re.compile(r"-{3}Input Text-{3}\s*```\s*\n(.*?)\n```", re.S)
_ROW_DELIM = re.compile(r"^entity(\S+?)<entity_name>", re.M)
_COMPLETE = re.compile(r"(<\|[A-Z_]+\|>)\s*$", re.M)
_DESCRIPTIONS = re.compile(r"Description List:\s*```\s*\n(.*?)\n```", re.S)
_WORD = re.compile(r"[A-Za-z][A-Za-z-]{3,}")
_CJK = re.compile(r"[\u3400-\u9fff]{2,}")
_SPLIT = re.compile(r"[。！？；;!?]\s*|(?<=[a-z])\.\s+|\n{2,}")
_STOP = {"this", "that", "with", "from", "their", "these", "those", "which", "where", "when", "into", "than",
         "section", "figures", "tables", "original", "fixture", "copy", "only", "describes", "there", "have"}
MAX_ENTITIES = 12


def _texts(messages: list[dict[str, Any]]) -> list[str]:
    out = []
    for m in messages:
        content = m.get("content")
        out.append(content if isinstance(content, str) else " ".join(
            str(c.get("text", "")) for c in content or [] if isinstance(c, dict)))
    return out


def _terms(text: str) -> list[str]:
    """Distinct candidate names in a text, in order: longer English words and CJK runs."""
    seen: dict[str, None] = {}
    for match in re.finditer(rf"{_WORD.pattern}|{_CJK.pattern}", text):
        term = match.group(0)
        if term.lower() in _STOP:
            continue
        term = term[:6] if "\u3400" <= term[0] <= "\u9fff" else term.title()
        seen.setdefault(term, None)
    return list(seen)


def keywords(query: str) -> str:
    """A keyword-extraction answer: the query's own terms, split into high (the longer) and low (all) levels."""
    terms = _terms(query) or [query.strip()[:40]]
    high = [t for t in terms if len(t) >= 4][:3] or terms[:1]
    return json.dumps({"high_level_keywords": high, "low_level_keywords": terms[:8]}, ensure_ascii=False)


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def extraction(text: str, delimiter: str, complete: str) -> str:
    """Entity rows (one per distinctive sentence, the sentence as its description) and a relation between each
    two neighbours, then the completion marker."""
    entities: list[tuple[str, str]] = []
    names: set[str] = set()
    for sentence in (_clean(s) for s in _SPLIT.split(text)):
        if len(sentence) < 12:
            continue
        name = next((t for t in _terms(sentence) if t not in names), None)
        if name is None:
            continue
        names.add(name)
        entities.append((name, sentence.replace(delimiter, " ")[:400]))
        if len(entities) >= MAX_ENTITIES:
            break
    rows = [f"entity{delimiter}{name}{delimiter}Concept{delimiter}{desc}" for name, desc in entities]
    rows += [f"relation{delimiter}{a[0]}{delimiter}{b[0]}{delimiter}mentioned together{delimiter}{b[1]}"
             for a, b in zip(entities, entities[1:], strict=False)]
    return "\n".join([*rows, complete])


def answer_internal(messages: list[dict[str, Any]]) -> str | None:
    """The answer to one of a graph-RAG server's internal prompts, or None when the request is a user's question."""
    texts = _texts(messages)
    whole = "\n".join(texts)
    last = texts[-1] if texts else ""
    if "high_level_keywords" in whole and "low_level_keywords" in whole:
        found = _QUERY.search(last) or _QUERY.search(whole)
        if found:
            return keywords(found.group(1))
    delim = _ROW_DELIM.search(whole)
    if delim is not None:
        markers = _COMPLETE.findall(whole)
        complete = markers[-1] if markers else "<|COMPLETE|>"
        given = _INPUT.search(last)
        if given is None:  # a follow-up asking for rows missed last time: none were
            return complete
        return extraction(given.group(1), delim.group(1), complete)
    descriptions = _DESCRIPTIONS.search(last)
    if descriptions is not None:
        parts = []
        for line in descriptions.group(1).splitlines():
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                continue
            parts.append(str(value.get("description", value)) if isinstance(value, dict) else str(value))
        return " ".join(dict.fromkeys(p for p in parts if p)) or None
    return None
