"""Reading a CSV export back into the rig's `Session`.

A CSV export makes the same promises as the JSON one (the current branch only, every message, each citation with
its page, nothing of another session), so the rig reads it back and checks them the same way. Its rules name the
column of each field; a message with several citations is written as one row per citation, the message's columns
repeated (the common way to flatten it), and a row with no citation column filled cites nothing:

    columns: {message_id: id, role: role, content: text, paper_id: paper, page: page, quote: quote}
    roles: {question: user, answer: assistant}
    session_id: session                       # optional: the column naming the session

Columns the rules name must be in the header; a file without them is a protocol error naming the missing ones.
"""

from __future__ import annotations

import csv
import io

from pydantic import BaseModel, ConfigDict, Field, field_validator

from rig.adapters.models import Citation, Message, Session
from rig.jsonvalue import ForeignJson

MESSAGE_FIELDS = ("message_id", "role", "content")
CITATION_FIELDS = ("citation_id", "marker", "doc_id", "paper_id", "page", "quote")


class CsvExportRules(BaseModel):
    """Which column holds each message and citation field of a CSV export."""

    model_config = ConfigDict(extra="forbid")

    columns: dict[str, str]  # field → column: message_id, role and content required; any of CITATION_FIELDS
    roles: dict[str, str] = Field(default_factory=lambda: {"user": "user", "assistant": "assistant"})
    session_id: str | None = None  # the column naming the session, where the export has one
    delimiter: str = ","

    @field_validator("columns")
    @classmethod
    def _fields_known(cls, value: dict[str, str]) -> dict[str, str]:
        missing = [f for f in MESSAGE_FIELDS if f not in value]
        unknown = sorted(set(value) - set(MESSAGE_FIELDS) - set(CITATION_FIELDS))
        if missing or unknown:
            raise ValueError(("columns must name " + ", ".join(missing) if missing else "") +
                             ("; " if missing and unknown else "") +
                             (f"unknown fields {unknown} (known: {', '.join(MESSAGE_FIELDS + CITATION_FIELDS)})"
                              if unknown else ""))
        return value


class CsvExportError(ValueError):
    """The CSV does not have the columns its rules name."""


def read_csv_export(text: str, rules: CsvExportRules) -> Session:
    """The session a CSV export holds: its messages in row order, each row's citation (if any) on its message."""
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")), delimiter=rules.delimiter)
    header = set(reader.fieldnames or [])
    wanted = set(rules.columns.values()) | ({rules.session_id} if rules.session_id else set())
    absent = sorted(wanted - header)
    if absent:
        raise CsvExportError(f"the CSV export has no column {', '.join(map(repr, absent))} (its header: "
                             f"{', '.join(reader.fieldnames or []) or 'none'})")
    col = rules.columns
    session_id = ""
    messages: dict[str, ForeignJson] = {}
    for row in reader:
        if rules.session_id and not session_id:
            session_id = row.get(rules.session_id) or ""
        mid = (row.get(col["message_id"]) or "").strip()
        if not mid:
            continue
        role = (row.get(col["role"]) or "").strip()
        message = messages.setdefault(mid, {"role": rules.roles.get(role, role),
                                            "content": row.get(col["content"]) or "", "citations": []})
        cited = {f: (row.get(col[f]) or "").strip() for f in CITATION_FIELDS if f in col}
        if any(cited.values()):
            message["citations"].append(_citation(mid, len(message["citations"]), cited))
    return Session(session_id=session_id, project_id="", scope=[], messages=[
        Message(message_id=mid, role="assistant" if m["role"] == "assistant" else "user", content=m["content"].strip(),
                citations=m["citations"]) for mid, m in messages.items()])


def _citation(message_id: str, index: int, cited: dict[str, str]) -> Citation:
    page, marker = cited.get("page"), cited.get("marker")
    return Citation(citation_id=cited.get("citation_id") or f"{message_id}#{index + 1}",
                    marker=int(marker) if marker and marker.isdigit() else None,
                    doc_id=cited.get("doc_id") or cited.get("paper_id") or "", paper_id=cited.get("paper_id") or None,
                    page=int(page) if page and page.isdigit() else None, quote=cited.get("quote") or "")
