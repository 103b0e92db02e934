"""Text from targets, files and users, made inert for each format a report is written in.

Nothing a target says is markup: in Markdown, `<`, `>` and `&` are entities (renderers pass raw HTML through), a
table cell's `|` and line breaks are escaped; in XML, characters XML 1.0 cannot hold (most C0 controls) are shown
as `\\xNN`; everywhere, terminal escape sequences and other controls lose their power. HTML goes through
`html.escape` at each place it is written, with the controls shown the same way.
"""

from __future__ import annotations

import html
import re

_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def visible(text: str) -> str:
    """`text` with control characters (ESC, NUL, BEL …; not tab or line breaks) shown as `\\xNN`."""
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def xml_text(text: str) -> str:
    """`text` as XML 1.0 can hold it (ElementTree escapes `<`, `&` and quotes itself)."""
    return visible(text)


def md_text(text: str) -> str:
    """`text` in running Markdown: no raw HTML, no control characters."""
    return visible(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def md_cell(text: str, limit: int | None = None) -> str:
    """`text` in a Markdown table cell: as `md_text`, on one line, its `|` escaped; cut to `limit` characters."""
    one_line = " ".join(text.split())
    cut = one_line if limit is None or len(one_line) <= limit else one_line[: limit - 1] + "…"
    return md_text(cut).replace("|", "\\|")


def escape(text: str, quote: bool = True) -> str:
    """`text` in HTML: `html.escape`d, its control characters shown as `\\xNN`."""
    return html.escape(visible(text), quote=quote)
