"""Dialects: legitimate variations of the contract that real assistants speak, each learned from a real target.

Unlike a seeded defect, a dialect breaks no promise: it is another way of keeping one. The rig must decide what it
can on a target that speaks it, and turn what it cannot observe into U or BLOCKED, never into a FAIL. Each one has a
`target.http` description beside the base one (`docs/targets/dialects/<name>.rig.yaml`).
"""

from __future__ import annotations

DIALECTS: dict[str, str] = {
    "no_run_ids": "saved messages carry no run id (the rig links its answers by session, order and text)",
    "no_run_records": "no run records: the answer's stream is all there is (GET /runs/{id} is not served)",
    "upload_refusal": "a file that cannot be parsed is refused in the upload request itself (HTTP 500), leaving a "
                      "failed document record behind",
    "duplicate_names": "a file name an account already uploaded is refused (409) in any of its projects",
    "no_status": "no status events: the stream starts with the first answer piece",
    "stop_disconnect": "no stop request: closing the stream is the stop, and it cancels the run",
}


class Dialects:
    """The set of dialects this server speaks."""

    def __init__(self, names: list[str]) -> None:
        unknown = [n for n in names if n not in DIALECTS]
        if unknown:
            raise ValueError(f"unknown dialect(s): {', '.join(unknown)}; see `python -m workbench dialects`")
        self.names = frozenset(names)

    def __contains__(self, name: str) -> bool:
        return name in self.names
