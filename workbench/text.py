"""Text handling shared by ingest, retrieval and the local model: normalisation, sentences, tokens."""

from __future__ import annotations

import math
import re
import unicodedata

_CJK = r"\u2e80-\u9fff\u3000-\u303f\uf900-\ufaff\uff00-\uffef"
_SPACE_BETWEEN_CJK = re.compile(rf"(?<=[{_CJK}])\s+(?=[{_CJK}])")
_WS = re.compile(r"\s+")
_SENTENCE_END = re.compile(r"(?<=[。！？!?；])|(?<=[.;])(?=\s)")
_LATIN = re.compile(r"[a-z0-9]+(?:\.[0-9]+)?%?")
_CJK_RUN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")
_STOP = frozenset(
    "a an the of and or to in on for with by from at as is are was were be been that this these those it its "
    "which who whom what how why when where we our their they he she his her can may also than then there into "
    "not no do does did has have had after before both more most such".split()
)


def is_cjk_char(ch: str) -> bool:
    return "\u3400" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff"


def normalize_page_text(raw: str) -> str:
    """One line of text per page: whitespace collapsed, line-wrap spaces between CJK characters removed."""
    text = unicodedata.normalize("NFC", raw)
    text = _SPACE_BETWEEN_CJK.sub("", text)
    return _WS.sub(" ", text).strip()


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence in `text`, without surrounding spaces."""
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _SENTENCE_END.finditer(text):
        spans.append((start, m.start()))
        start = m.start()
    spans.append((start, len(text)))
    out = []
    for a, b in spans:
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if b > a:
            out.append((a, b))
    return out


def split_sentences(text: str) -> list[str]:
    """Sentences of a normalised text (decimal points such as `2.9%` do not end a sentence)."""
    return [text[a:b] for a, b in sentence_spans(text)]


def _stem(word: str) -> str:
    for suffix in ("ing", "ies", "es", "ed", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


def search_tokens(text: str) -> list[str]:
    """Index/query terms: lower-cased stemmed Latin words and numbers (`2.9%` also as `2.9`), CJK bigrams."""
    text = unicodedata.normalize("NFKC", text).lower()
    terms: list[str] = []
    for word in _LATIN.findall(text):
        if word in _STOP:
            continue
        if word.endswith("%"):
            terms.append(word)
            word = word[:-1]
        terms.append(_stem(word) if word.isalpha() else word)
    for run in _CJK_RUN.findall(text):
        if len(run) == 1:
            terms.append(run)
        terms.extend(run[i : i + 2] for i in range(len(run) - 1))
    return terms


def count_tokens(text: str) -> int:
    """Token count as the local model counts: one per CJK character, ~4 characters per Latin piece."""
    cjk = sum(1 for ch in text if is_cjk_char(ch))
    rest = _CJK_RUN.sub(" ", text)
    latin = sum(max(1, math.ceil(len(w) / 4)) for w in rest.split())
    return cjk + latin


def estimate_tokens(text: str) -> int:
    """The workbench's own estimate, independent of any provider: bytes-based, rounded up."""
    return math.ceil(len(text.encode("utf-8")) / 3.2)
