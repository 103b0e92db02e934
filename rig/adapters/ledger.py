"""The rig's upload ledger: every document it put on the target, by the target's id and by the file name it gave.

A target may answer with the file name where the rig needs its document id (a citation naming `file_path`), or need
an upload's track id where the rig has only the document id (a status read by track): result rules look these up
here (`doc_of(name)`, the `{track_id}` of a document). The rig's own sha256 of every file is kept beside it; one the
target reports is only ever compared with it.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class LedgerEntry(BaseModel):
    """One document the rig uploaded: the target's id, the name it was given, the rig's sha256 of its bytes."""

    doc_id: str
    filename: str
    sha256: str
    track_id: str | None = None
    reported_sha256: str | None = None
    reused: bool = False  # the target refused it as a duplicate and the rig took the document already there
    extra: dict[str, str] = Field(default_factory=dict)


class UploadLedger:
    """Lookups over what the rig uploaded (kept by the adapter; a resumed run fills it from its setup)."""

    def __init__(self) -> None:
        self._by_id: dict[str, LedgerEntry] = {}
        self._by_name: dict[str, str] = {}

    def add(self, entry: LedgerEntry) -> None:
        self._by_id[entry.doc_id] = entry
        self._by_name[entry.filename] = entry.doc_id

    def doc_of(self, filename: str) -> str | None:
        """The rig's document id of a file it uploaded under `filename` (None when it uploaded none)."""
        return self._by_name.get(filename)

    def entry(self, doc_id: str) -> LedgerEntry | None:
        return self._by_id.get(doc_id)

    def __len__(self) -> int:
        return len(self._by_id)
