"""The gate report's coverage matrix: the target's operations × actor × object state, and what exercised each."""

from __future__ import annotations

from rig.coverage import ACTORS, PRINCIPLES, STATES, Cell, CoverageMatrix
from rig.report.plain import escape

HEADS = {"two_channels_agree": "two channels<br>agree", "list_complete": "list<br>complete"}


def _td(cell: Cell) -> str:
    if cell.items:
        return (f"<td title='{escape('; '.join(cell.items))}'>{len(cell.items)} item(s)<br><small>"
                f"{escape(', '.join(cell.statuses))}</small></td>")
    if cell.contract:
        return "<td style='background:#f8d7da'><b>never</b></td>"
    return "<td style='color:#999'>—</td>"


def _check(matrix: CoverageMatrix, op: str, principle: str) -> Cell:
    return matrix.checks.get(op, {}).get(principle) or Cell()


def coverage_html(matrix: CoverageMatrix) -> str:
    """One row per operation; a contract cell nothing reached reads "never", in red."""
    head = "".join(f"<th>{a}<br>{s}</th>" for a in ACTORS for s in STATES)
    head += "".join(f"<th>{HEADS.get(p, p)}</th>" for p in PRINCIPLES)
    rows = []
    for op, cells in sorted(matrix.cells.items()):
        tds = [_td(cells.get(f"{a}/{s}") or matrix.cell(op, a, s)) for a in ACTORS for s in STATES]
        tds += [_td(_check(matrix, op, p)) for p in PRINCIPLES]
        rows.append(f"<tr><td>{escape(op)}</td>{''.join(tds)}</tr>")
    never = (f"<p><b>{len(matrix.never)} cell(s) the contract defines were never exercised:</b> "
             f"{escape(', '.join(matrix.never))}</p>" if matrix.never else
             "<p>Every cell the contract defines was exercised.</p>")
    return (f"<p>{matrix.exercised} operation calls on objects the rig made; actor relative to the object's creator, "
            "state as the rig last observed it (hover a cell for its items). — : the contract defines no answer "
            "there. The last two columns: items that held the operation's answers against a second account of the "
            "same fact, and lists the contract calls exhaustive checked complete.</p>" + never
            + f"<table><tr><th>operation</th>{head}</tr>{''.join(rows)}</table>")


def coverage_markdown(matrix: CoverageMatrix) -> list[str]:
    """Markdown lines: the never-exercised contract cells, then the matrix with item counts."""
    lines = ["", "## Coverage of the target's operations", ""]
    lines.append(f"Never exercised (contract cells): {', '.join(matrix.never)}" if matrix.never
                 else "Every cell the contract defines was exercised.")
    columns = [f"{a} {s}" for a in ACTORS for s in STATES] + [p.replace("_", " ") for p in PRINCIPLES]
    lines += ["", "| operation | " + " | ".join(columns) + " |", "|---|" + "---|" * len(columns)]
    for op, cells in sorted(matrix.cells.items()):
        shown = [cells.get(f"{a}/{s}") or matrix.cell(op, a, s) for a in ACTORS for s in STATES]
        shown += [_check(matrix, op, p) for p in PRINCIPLES]
        out = [str(len(c.items)) if c.items else "never" if c.contract else "—" for c in shown]
        lines.append(f"| {op} | " + " | ".join(out) + " |")
    return lines
