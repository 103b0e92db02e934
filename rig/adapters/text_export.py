"""Reading a line-oriented text export (Markdown and the like) back into the rig's `Session`.

An export in a text format makes the same promises as the JSON one — the current branch only, every message,
each citation with its page, nothing of another session — so the rig reads it back and checks them the same
way. The reader is a handful of regular expressions with named groups, one per kind of line:

    session:  '^# Session (?P<session_id>\\S+)$'
    message:  '^## (?P<role>Question|Answer) \\((?P<message_id>[^)]+)\\)$'
    citation: '^- \\[(?P<marker>\\d+)\\] (?P<paper_id>[^,]+), (?:p\\. (?P<page>\\d+)|whole file): “(?P<quote>.*)”$'
    roles: {Question: user, Answer: assistant}
    end: '^## Sources$'                      # where the messages end (a source list follows)

A message's content is its lines up to its first citation line or the next message.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator

from rig.adapters.models import Citation, Message, Session
from rig.jsonvalue import ForeignJson


class TextExportRules(BaseModel):
    """Named-group patterns for the lines of one text export format."""

    model_config = ConfigDict(extra="forbid")

    message: str  # groups: message_id, role (mapped through `roles`)
    citation: str  # groups: quote, and any of marker, paper_id, doc_id, page
    session: str | None = None  # group: session_id
    roles: dict[str, str] = Field(default_factory=lambda: {"user": "user", "assistant": "assistant"})
    end: str | None = None  # the line after which no message follows

    @field_validator("message", "citation", "session", "end")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"pattern {value!r}: {exc}") from None
        return value


def read_text_export(text: str, rules: TextExportRules) -> Session:
    """The session a text export holds, as far as its lines say (a citation's paper stands for its document)."""
    session_re = re.compile(rules.session) if rules.session else None
    message_re, citation_re = re.compile(rules.message), re.compile(rules.citation)
    end_re = re.compile(rules.end) if rules.end else None
    session_id = ""
    messages: list[ForeignJson] = []
    for line in text.splitlines():
        if end_re is not None and end_re.search(line):
            break
        if session_re is not None and not session_id and (found := session_re.search(line)):
            session_id = found.group("session_id")
            continue
        if found := message_re.search(line):
            role = rules.roles.get(found.group("role"), found.group("role"))
            messages.append({"message_id": found.group("message_id"), "role": role, "lines": [], "citations": []})
            continue
        if messages and (cited := citation_re.search(line)):
            messages[-1]["citations"].append(_citation(messages[-1]["message_id"], len(messages[-1]["citations"]),
                                                       cited.groupdict()))
            continue
        if messages and not messages[-1]["citations"]:
            messages[-1]["lines"].append(line)
    return Session(session_id=session_id, project_id="", scope=[], messages=[
        Message(message_id=m["message_id"], role="assistant" if m["role"] == "assistant" else "user",
                content="\n".join(m["lines"]).strip(), citations=m["citations"]) for m in messages])


def _citation(message_id: str, index: int, groups: dict[str, str | None]) -> Citation:
    ref = groups.get("doc_id") or groups.get("paper_id") or ""
    page = groups.get("page")
    marker = groups.get("marker")
    return Citation(citation_id=f"{message_id}#{index + 1}", marker=int(marker) if marker else None, doc_id=ref,
                    paper_id=groups.get("paper_id"), page=int(page) if page else None, quote=groups.get("quote") or "")
