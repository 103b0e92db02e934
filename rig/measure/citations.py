"""Citations read off an answer's own `[n]` markers: each marker cites source n, quoting the text before it.

Targets that list their sources apart from the text (a references list, a sources array) mark where the answer
uses source n with `[n]`; the claim a marker supports is the text before it on its line, back to the previous
marker. Open WebUI's saved messages and a stream's references (LightRAG) are both read this way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from rig.measure.events import Citation

MARKER = re.compile(r"\[(\d+)\]")


def claim_before(content: str, offset: int) -> str:
    """The claim a marker at `offset` supports: the text before it on its line, back to the previous marker."""
    offset = max(0, min(offset, len(content)))
    start = max(content.rfind("\n", 0, offset), content.rfind("]", 0, offset)) + 1
    return content[start:offset].strip()


def marker_quotes(content: str) -> list[tuple[int, str]]:
    """Each `[n]` in the answer with the text it follows (its line, back to the previous marker), in order."""
    return [(int(match.group(1)), claim_before(content, match.start())) for match in MARKER.finditer(content)]


def cite_sources(content: str, sources: Iterable[Citation], *, id_prefix: str = "") -> list[Citation]:
    """The answer's citations of its `sources` (each a citation with a `marker` and no quote yet): one per `[n]`
    marking source n, quoting the claim before it; a source the text never marks stays one citation without a
    quote (the target names it as a source of the answer, not of a sentence); a marker no source answers is a
    citation of nothing (`doc_id` empty), so no check can take it for a traced one."""
    by_marker = {s.marker: s for s in sources if s.marker is not None}
    out: list[Citation] = []
    used: set[int] = set()
    for i, (n, quote) in enumerate(marker_quotes(content)):
        source = by_marker.get(n)
        if source is None:
            if by_marker:  # an answer that names no sources at all uses no markers for them either
                out.append(Citation(citation_id=f"{id_prefix}[{n}]#{i + 1}", marker=n, doc_id="", quote=quote))
            continue
        used.add(n)
        out.append(source.model_copy(update={"citation_id": f"{id_prefix}{source.citation_id}#{i + 1}",
                                             "quote": source.quote or quote}))
    out += [s for s in sources if s.marker is None or s.marker not in used]
    return out
