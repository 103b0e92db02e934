"""The gate report's coverage matrix: the target's operations × actor × object state, and what exercised each."""

from __future__ import annotations

from rig.coverage import ACTORS, STATES, CoverageMatrix
from rig.report.plain import escape


def coverage_html(matrix: CoverageMatrix) -> str:
    """One row per operation; a contract cell nothing reached reads "never", in red."""
    head = "".join(f"<th>{a}<br>{s}</th>" for a in ACTORS for s in STATES)
    rows = []
    for op, cells in sorted(matrix.cells.items()):
        tds = []
        for a in ACTORS:
            for s in STATES:
                cell = matrix.cell(op, a, s) if f"{a}/{s}" not in cells else cells[f"{a}/{s}"]
                if cell.items:
                    title = escape("; ".join(cell.items))
                    tds.append(f"<td title='{title}'>{len(cell.items)} item(s)<br><small>"
                               f"{escape(', '.join(cell.statuses))}</small></td>")
                elif cell.contract:
                    tds.append("<td style='background:#f8d7da'><b>never</b></td>")
                else:
                    tds.append("<td style='color:#999'>—</td>")
        rows.append(f"<tr><td>{escape(op)}</td>{''.join(tds)}</tr>")
    never = (f"<p><b>{len(matrix.never)} cell(s) the contract defines were never exercised:</b> "
             f"{escape(', '.join(matrix.never))}</p>" if matrix.never else
             "<p>Every cell the contract defines was exercised.</p>")
    return (f"<p>{matrix.exercised} operation calls on objects the rig made; actor relative to the object's creator, "
            "state as the rig last observed it (hover a cell for its items). — : the contract defines no answer "
            "there.</p>" + never + f"<table><tr><th>operation</th>{head}</tr>{''.join(rows)}</table>")


def coverage_markdown(matrix: CoverageMatrix) -> list[str]:
    """Markdown lines: the never-exercised contract cells, then the matrix with item counts."""
    lines = ["", "## Coverage of the target's operations", ""]
    lines.append(f"Never exercised (contract cells): {', '.join(matrix.never)}" if matrix.never
                 else "Every cell the contract defines was exercised.")
    lines += ["", "| operation | " + " | ".join(f"{a} {s}" for a in ACTORS for s in STATES) + " |",
              "|---|" + "---|" * (len(ACTORS) * len(STATES))]
    for op, cells in sorted(matrix.cells.items()):
        out = []
        for a in ACTORS:
            for s in STATES:
                cell = cells.get(f"{a}/{s}") or matrix.cell(op, a, s)
                out.append(str(len(cell.items)) if cell.items else "never" if cell.contract else "—")
        lines.append(f"| {op} | " + " | ".join(out) + " |")
    return lines
