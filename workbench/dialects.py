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
    "quotes_normalised": "saved citations keep their quotes with punctuation normalised (full-width forms folded, "
                         "curly quotation marks made straight)",
}

_STRAIGHT = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'"})


def normalised_quote(quote: str) -> str:
    """A quote as a target that normalises punctuation keeps it."""
    return unicodedata.normalize("NFKC", quote).translate(_STRAIGHT)


class DialectState:
    """What a dialect remembers while the server runs: answers lost to a reader that left at their end."""

    def __init__(self) -> None:
        self._lost: set[str] = set()
        self._saved: set[str] = set()

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
