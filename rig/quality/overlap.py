"""Sentences and overlap terms for faithfulness: the rig's own tokenisation, independent of any target.

Latin words are lower-cased (stop words dropped), numbers kept whole (`49–77%`, `2.9`), and CJK text is
cut into character bigrams, so Chinese and English answers are measured the same way.
"""

from __future__ import annotations

import re
import unicodedata

_MARKER = re.compile(r"\[(\d+)(?::[a-z_]+)?\]")
_LEADING_MARKERS = re.compile(r"^(?:\s*\[\d+(?::[a-z_]+)?\])+")
_SENTENCE_END = re.compile(r"(?<=[。！？!?；;\n])|(?<=[.])(?=\s)")
_LATIN = re.compile(r"[a-z]+|\d+(?:\.\d+)?%?")
_CJK_RUN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")
_STOP = frozenset(
    "a an the of and or to in on for with by from at as is are was were be been that this these those it its which "
    "who what how why when where we our their they can may also than then there into not no do does did has have had "
    "such".split())
MIN_TERMS = 2  # a "sentence" with fewer terms (a heading, a lone marker) is not judged


def markers(text: str) -> list[int]:
    """Citation marker numbers in a piece of answer text (`[3]`, `[3:file]`)."""
    return [int(m.group(1)) for m in _MARKER.finditer(text)]


def strip_markers(text: str) -> str:
    return _MARKER.sub("", text)


def sentences(text: str) -> list[str]:
    """Answer sentences, markers kept (they say which hits a sentence cites)."""
    out = []
    start = 0
    for m in _SENTENCE_END.finditer(text):
        out.append(text[start:m.start()])
        start = m.start()
    out.append(text[start:])
    merged: list[str] = []
    for piece in (s.strip() for s in out):
        lead = _LEADING_MARKERS.match(piece)
        if lead and merged:  # markers right after a full stop belong to the sentence before it
            merged[-1] += lead.group(0).strip()
            piece = piece[lead.end():].strip()
        if piece:
            merged.append(piece)
    return merged


def terms(text: str) -> set[str]:
    """Overlap terms of a text: Latin words and numbers, CJK character bigrams (single characters when alone)."""
    text = unicodedata.normalize("NFKC", strip_markers(text)).lower()
    out = {w for w in _LATIN.findall(text) if w not in _STOP}
    for run in _CJK_RUN.findall(text):
        if len(run) == 1:
            out.add(run)
        out.update(run[i:i + 2] for i in range(len(run) - 1))
    return out


def overlap(sentence: str, evidence: str) -> float | None:
    """Share of the sentence's terms found in the evidence; None for a sentence too short to judge."""
    own = terms(sentence)
    if len(own) < MIN_TERMS:
        return None
    return len(own & terms(evidence)) / len(own)
