"""The rig's own reading of a PDF page, independent of what the target says its text is."""

from __future__ import annotations

import io
import logging
import re
import unicodedata
from functools import lru_cache
from pathlib import Path

logging.getLogger("pypdf").setLevel(logging.CRITICAL)
_WS = re.compile(r"\s+")


_QUOTES = str.maketrans({"“": '"', "”": '"', "„": '"', "「": '"', "」": '"', "『": '"', "』": '"', "‘": "'",
                         "’": "'", "‚": "'"})


def squash(text: str) -> str:
    """Text with all whitespace removed, NFKC-folded (full-width forms) and quotation marks made plain, for a
    comparison independent of layout and of how a target normalises punctuation."""
    return _WS.sub("", unicodedata.normalize("NFKC", text).translate(_QUOTES))


@lru_cache(maxsize=64)
def _pages(path: str, mtime: float) -> tuple[str, ...]:
    from pypdf import PdfReader  # heavy: only when a page is read

    reader = PdfReader(io.BytesIO(Path(path).read_bytes()))
    out = []
    for page in reader.pages:
        try:
            out.append(page.extract_text() or "")
        except Exception:  # a damaged page reads as empty: the rig does not invent its text
            out.append("")
    return tuple(out)


def page_texts(path: Path) -> tuple[str, ...]:
    """Extracted text of every physical page (1-based page n is index n-1)."""
    return _pages(str(path), path.stat().st_mtime)


def occurrences_on_page(path: Path, page: int, quote: str) -> int:
    """How many times `quote` occurs on physical `page` of the file (whitespace-insensitive)."""
    pages = page_texts(path)
    if not 1 <= page <= len(pages) or not quote.strip():
        return 0
    return squash(pages[page - 1]).count(squash(quote))


def pages_containing(path: Path, quote: str) -> list[int]:
    """Physical pages on which `quote` occurs."""
    needle = squash(quote)
    return [n for n, text in enumerate(page_texts(path), start=1) if needle and needle in squash(text)]


def span_pages(path: Path, text: str) -> list[int]:
    """The physical pages `text` covers in the file, found in its pages read one after another (so a passage may run
    over a page break); [] when it stands nowhere in the file."""
    needle = squash(text)
    if not needle:
        return []
    pages = [squash(t) for t in page_texts(path)]
    joined = "".join(pages)
    start = joined.find(needle)
    if start < 0:
        return []
    end, covered, offset = start + len(needle), [], 0
    for n, page in enumerate(pages, start=1):
        if offset < end and start < offset + len(page):
            covered.append(n)
        offset += len(page)
    return covered


def place_quote(path: Path, quote: str) -> int | None:
    """The one physical page of the file on which `quote` stands; None when it stands on none, or on several."""
    if not quote.strip():
        return None
    pages = pages_containing(path, quote)
    return pages[0] if len(pages) == 1 else None
