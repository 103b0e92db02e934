"""Page-by-page PDF text extraction that tells text, blank, image-only and broken pages apart."""

from __future__ import annotations

import io
import logging
import zlib
from dataclasses import dataclass
from typing import Any, Literal

from pypdf import PdfReader
from pypdf.errors import PdfReadError

from workbench.text import normalize_page_text, sentence_spans

logging.getLogger("pypdf").setLevel(logging.CRITICAL)

PageKind = Literal["text", "blank", "image_only", "failed"]


class PdfCorrupt(Exception):
    """The file is not a readable PDF at all."""


@dataclass(frozen=True)
class ParsedPage:
    page: int
    kind: PageKind
    text: str
    error: str | None = None


def _streams(contents: Any) -> list[Any]:
    if contents is None:
        return []
    obj = contents.get_object()
    if isinstance(obj, list):
        return [item.get_object() for item in obj]
    return [obj]


def _content_error(page: Any) -> str | None:
    """Why a page's content stream cannot be decoded, or None when it decodes."""
    for stream in _streams(page.get("/Contents")):
        raw = getattr(stream, "_data", b"")
        filters = stream.get("/Filter")
        names = [str(f) for f in filters] if isinstance(filters, list) else [str(filters)] if filters else []
        if "/FlateDecode" in names:
            try:
                zlib.decompress(raw)
            except zlib.error as exc:
                return f"content stream does not decode: {exc}"
    return None


def _has_images(page: Any) -> bool:
    resources = page.get("/Resources")
    if resources is None:
        return False
    xobjects = resources.get_object().get("/XObject")
    if xobjects is None:
        return False
    return any(x.get_object().get("/Subtype") == "/Image" for x in xobjects.get_object().values())


def parse_pdf(data: bytes) -> list[ParsedPage]:
    """Extract every physical page; raises PdfCorrupt when the file cannot be read as a PDF."""
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        pages = list(reader.pages)
    except (PdfReadError, ValueError, KeyError, TypeError, OSError, AttributeError) as exc:
        raise PdfCorrupt(f"{type(exc).__name__}: {exc}") from None
    if not pages:
        raise PdfCorrupt("the file has no pages")
    parsed: list[ParsedPage] = []
    for n, page in enumerate(pages, start=1):
        error = _content_error(page)
        if error:
            parsed.append(ParsedPage(n, "failed", "", error))
            continue
        try:
            text = normalize_page_text(page.extract_text() or "")
        except Exception as exc:  # pypdf raises many types on damaged pages; the page fails, not the file
            parsed.append(ParsedPage(n, "failed", "", f"{type(exc).__name__}: {exc}"))
            continue
        if text:
            parsed.append(ParsedPage(n, "text", text))
        elif _has_images(page):
            parsed.append(ParsedPage(n, "image_only", "", "page is an image with no text layer (needs OCR)"))
        else:
            parsed.append(ParsedPage(n, "blank", ""))
    return parsed


def chunk_page(text: str, max_chars: int = 320) -> list[str]:
    """Split a page's text into chunks of whole sentences (exact substrings), each about `max_chars` at most."""
    chunks: list[str] = []
    start: int | None = None
    end = 0
    for a, b in sentence_spans(text):
        if start is not None and b - start > max_chars:
            chunks.append(text[start:end])
            start = a
        elif start is None:
            start = a
        end = b
    if start is not None:
        chunks.append(text[start:end])
    return chunks


def document_status(pages: list[ParsedPage]) -> tuple[str, int]:
    """(status, pages_with_text): `ready` only when no page failed or lacks its text layer."""
    with_text = sum(1 for p in pages if p.kind == "text")
    if with_text == 0:
        return ("no_text", 0)
    if any(p.kind in ("failed", "image_only") for p in pages):
        return ("partial", with_text)
    return ("ready", with_text)
