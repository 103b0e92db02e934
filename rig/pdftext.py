"""The rig's own reading of a PDF page, independent of what the target says its text is."""

from __future__ import annotations

import io
import logging
import re
from functools import lru_cache
from pathlib import Path

from pypdf import PdfReader

logging.getLogger("pypdf").setLevel(logging.CRITICAL)
_WS = re.compile(r"\s+")


def squash(text: str) -> str:
    """Text with all whitespace removed, for layout-independent comparison."""
    return _WS.sub("", text)


@lru_cache(maxsize=64)
def _pages(path: str, mtime: float) -> tuple[str, ...]:
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
