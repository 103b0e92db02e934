"""Which of the target's operations the gate exercised, by whom, on objects in which state: the coverage matrix.

Rows are the adapter's operations on objects (sessions, runs, messages, documents, projects, citations, model
configurations); columns are the actor (the object's `owner`, an `other` account, `anonymous`) × the object's state as
the rig last observed it (`running`, `ended` — at rest, for objects that do not run — and `stale`: an ended run whose
checkpoint a later scope or model-config change invalidated). Each cell lists the items that exercised it.
`CONTRACT` is the cells docs/API.md defines an answer for; on the reference workbench none may be "never".

Two more columns say how an operation's answers were held, not only whether they were asked for (docs/facets.md,
"Trust nothing, part 3"): `two_channels_agree` — an item held the answer against another account of the same fact
(the stream against the run record, the record against the rig's clock) — and `list_complete` — an item held a list
the contract defines as exhaustive to be complete, not only free of wrong members. `CHECKED` is the ones the
reference workbench must reach.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

ACTORS = ("owner", "other", "anonymous")
STATES = ("running", "ended", "stale")

_AT_REST = ("ended",)
_READ = {"session": _AT_REST, "export": _AT_REST, "document": _AT_REST, "download": _AT_REST,
         "page_text": _AT_REST, "locate_citation": _AT_REST}


def _cells(op: str, actors: tuple[str, ...], states: tuple[str, ...]) -> set[tuple[str, str, str]]:
    return {(op, a, s) for a in actors for s in states}


CONTRACT: frozenset[tuple[str, str, str]] = frozenset(set().union(
    *(_cells(op, ACTORS, states) for op, states in _READ.items()),
    _cells("run", ("owner",), ("running", "ended")), _cells("run", ("other", "anonymous"), ("ended",)),
    _cells("events", ("owner",), ("running", "ended")), _cells("events", ("other", "anonymous"), ("ended",)),
    _cells("stop", ("owner",), ("running", "ended")), _cells("stop", ("other", "anonymous"), ("running",)),
    _cells("resume", ("owner",), ("running", "ended", "stale")), _cells("resume", ("other", "anonymous"), ("ended",)),
    _cells("regenerate", ("owner",), ("running", "ended")), _cells("regenerate", ("other", "anonymous"), ("ended",)),
    _cells("ask", ACTORS, ("ended",)),
    _cells("set_scope", ACTORS, ("ended",)),
    _cells("upload", ACTORS, ("ended",)),
    _cells("model_config", ("owner", "anonymous"), ("ended",)),
    _cells("set_model_config", ("owner", "anonymous"), ("ended",)),
))
"""(operation, actor, state) cells with an answer the contract defines: the owner's own operations on objects at
rest and in flight, the edges of run control (stop an ended run, resume a running or stale one, regenerate while a
run of the session is running), and every other account's and anonymous attempt on the owner's objects (refused).
A model configuration is the caller's own: another account cannot address it."""

OPERATIONS = tuple(sorted({op for op, _, _ in CONTRACT}))

PRINCIPLES = ("two_channels_agree", "list_complete")
CHECKS: dict[str, tuple[str, tuple[str, ...]]] = {
    # item → (principle, the operations whose answers it holds)
    "accounts_agree": ("two_channels_agree", ("events", "run")),  # the stream's end, cards, usage vs the record's
    "history_complete": ("list_complete", ("run", "session")),  # the follow-up's model input: every message
    "model_input_lists_every_result": ("list_complete", ("run",)),  # each round's model input: every result
}
CHECKED: frozenset[tuple[str, str]] = frozenset({
    ("events", "two_channels_agree"), ("run", "two_channels_agree"), ("run", "list_complete"),
    ("session", "list_complete")})
"""(operation, principle) columns the reference workbench's gate must reach: it tells these facts twice and keeps
these lists, so a gate that never held them has a hole, not a pass."""


class Exercise(BaseModel):
    """One call of an operation as the rig made it: who, on what state, what came back, and the item it fed."""

    op: str
    actor: str
    state: str
    status: str  # "2xx", "409", "401"…, or "error"
    item: str  # `case N <item>`, or `case N` when the case recorded no item after it


class Cell(BaseModel):
    items: list[str] = Field(default_factory=list)
    statuses: list[str] = Field(default_factory=list)
    contract: bool = False


class CoverageMatrix(BaseModel):
    """coverage.json: every operation × actor × state cell, what exercised it, and the contract's cells never tried."""

    actors: list[str] = Field(default_factory=lambda: list(ACTORS))
    states: list[str] = Field(default_factory=lambda: list(STATES))
    cells: dict[str, dict[str, Cell]] = Field(default_factory=dict)  # op → "actor/state" → cell
    never: list[str] = Field(default_factory=list)  # "op actor/state" the contract defines and nothing exercised
    exercised: int = 0  # calls counted
    principles: list[str] = Field(default_factory=lambda: list(PRINCIPLES))
    checks: dict[str, dict[str, Cell]] = Field(default_factory=dict)  # op → principle → the items that held it so

    def cell(self, op: str, actor: str, state: str) -> Cell:
        return self.cells.get(op, {}).get(f"{actor}/{state}") or Cell(contract=(op, actor, state) in CONTRACT)


class CheckedItem(BaseModel):
    """An item a case recorded, as the principle columns read it."""

    case_id: int
    name: str
    verdict: str


def build_matrix(exercises: list[Exercise], items: list[CheckedItem] | None = None) -> CoverageMatrix:
    """The matrix of the calls recorded and of the items that held answers to a principle (`CHECKS`); `never`
    lists the contract's cells no call reached and the `CHECKED` columns no item held."""
    ops = sorted({*OPERATIONS, *(e.op for e in exercises)})
    matrix = CoverageMatrix(exercised=len(exercises))
    for op in ops:
        matrix.cells[op] = {f"{a}/{s}": Cell(contract=(op, a, s) in CONTRACT) for a in ACTORS for s in STATES}
    for e in exercises:
        cell = matrix.cells[e.op].setdefault(f"{e.actor}/{e.state}", Cell())
        if e.item not in cell.items:
            cell.items.append(e.item)
        if e.status not in cell.statuses:
            cell.statuses.append(e.status)
    matrix.never = [f"{op} {key}" for op in ops for key, cell in matrix.cells[op].items()
                    if cell.contract and not cell.items]
    for op in ops:
        matrix.checks[op] = {p: Cell(contract=(op, p) in CHECKED) for p in PRINCIPLES}
    for item in items or []:
        if item.name not in CHECKS:
            continue
        principle, held = CHECKS[item.name]
        for op in held:
            cell = matrix.checks.setdefault(op, {}).setdefault(principle, Cell())
            label = f"case {item.case_id} {item.name}"
            if label not in cell.items:
                cell.items.append(label)
            if item.verdict not in cell.statuses:
                cell.statuses.append(item.verdict)
    matrix.never += [f"{op} {p}" for op in ops for p, cell in matrix.checks[op].items() if cell.contract and not cell.items]
    return matrix


def contract_table() -> str:
    """The contract's cells and the principle columns the reference workbench must reach, as a Markdown table
    (docs/facets.md holds it; a test keeps the two equal)."""
    columns = [f"{a} {s}" for a in ACTORS for s in STATES] + [p.replace("_", " ") for p in PRINCIPLES]
    lines = ["| operation | " + " | ".join(columns) + " |", "|---|" + "---|" * len(columns)]
    for op in OPERATIONS:
        marks = ["✓" if (op, a, s) in CONTRACT else "" for a in ACTORS for s in STATES]
        marks += ["✓" if (op, p) in CHECKED else "" for p in PRINCIPLES]
        lines.append(f"| {op} | " + " | ".join(marks) + " |")
    return "\n".join(lines) + "\n"
