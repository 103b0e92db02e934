"""Dialects: legitimate variations of the contract that real assistants speak, each learned from a real target.

Unlike a seeded defect, a dialect breaks no promise: it is another way of keeping one. The rig must decide what it
can on a target that speaks it, and turn what it cannot observe into U or BLOCKED, never into a FAIL. Each one has a
`target.http` description beside the base one (`docs/targets/dialects/<name>.rig.yaml`).
"""

from __future__ import annotations

import unicodedata

DIALECTS: dict[str, str] = {
    "no_run_ids": "saved messages carry no run id (the rig links its answers by session, order and text)",
    "no_run_records": "no run records: the answer's stream is all there is (GET /runs/{id} is not served)",
    "upload_refusal": "a file that cannot be parsed is refused in the upload request itself (HTTP 500), leaving a "
                      "failed document record behind",
    "duplicate_names": "a file name an account already uploaded is refused (409) in any of its projects",
    "no_status": "no status events: the stream starts with the first answer piece",
    "stop_disconnect": "no stop request: closing the stream is the stop, and it cancels the run",
    "saved_after_end": "the answer is saved only after the terminal event was sent: a reader that leaves at the "
                       "end loses it (it reads on until the server closes the stream)",
    "late_stream": "a run's event stream opens (its headers sent) only once retrieval is done and the answer begins",
    "rate_limit": "uploads are limited per account (8 in any 3 s): past it, 429 — every other one without "
                  "Retry-After",
    "quotes_normalised": "saved citations keep their quotes with punctuation normalised (full-width forms folded, "
                         "curly quotation marks made straight)",
}

_STRAIGHT = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'"})


def normalised_quote(quote: str) -> str:
    """A quote as a target that normalises punctuation keeps it."""
    return unicodedata.normalize("NFKC", quote).translate(_STRAIGHT)


UPLOAD_LIMIT = (8, 3.0)  # rate_limit: uploads per account in any window of this many seconds


class DialectState:
    """What a dialect remembers while the server runs: answers lost to a reader that left at their end, and each
    account's recent uploads (rate_limit)."""

    def __init__(self) -> None:
        self._lost: set[str] = set()
        self._saved: set[str] = set()
        self._uploads: dict[str, list[float]] = {}
        self._refusals = 0

    def upload_refusal(self, user_id: str, now: float) -> dict[str, str] | None:
        """None when the account may upload now, else the headers of its 429 (Retry-After every other time)."""
        count, window = UPLOAD_LIMIT
        recent = [t for t in self._uploads.get(user_id, []) if now - t < window]
        if len(recent) >= count:
            self._uploads[user_id] = recent
            self._refusals += 1
            wait = max(1, int(window - (now - recent[0])) + 1)
            return {"Retry-After": str(wait)} if self._refusals % 2 else {}
        self._uploads[user_id] = [*recent, now]
        return None

    def saved(self, run_id: str) -> None:
        self._saved.add(run_id)
        self._lost.discard(run_id)

    def lost(self, run_id: str) -> None:
        if run_id not in self._saved:
            self._lost.add(run_id)

    def is_lost(self, run_id: str | None) -> bool:
        return run_id in self._lost


class Dialects:
    """The set of dialects this server speaks."""

    def __init__(self, names: list[str]) -> None:
        unknown = [n for n in names if n not in DIALECTS]
        if unknown:
            raise ValueError(f"unknown dialect(s): {', '.join(unknown)}; see `python -m workbench dialects`")
        self.names = frozenset(names)

    def __contains__(self, name: str) -> bool:
        return name in self.names
