"""An in-memory BM25 index over page chunks, filtered by allowed documents inside the scoring loop."""

from __future__ import annotations

import math
import threading
from collections import Counter, defaultdict
from dataclasses import dataclass

from workbench.text import search_tokens

K1 = 1.2
B = 0.75


@dataclass(frozen=True)
class Chunk:
    chunk_id: str
    doc_id: str
    page: int
    seq: int
    text: str


@dataclass(frozen=True)
class Scored:
    chunk: Chunk
    score: float
    matched: frozenset[str]


class Bm25Index:
    """Chunks of every ready document; `search` only ever scores chunks of the allowed documents."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._chunks: list[Chunk] = []
        self._lengths: list[int] = []
        self._postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        self._by_doc: dict[str, list[int]] = defaultdict(list)
        self._total_len = 0

    def add(self, chunks: list[Chunk]) -> None:
        with self._lock:
            for chunk in chunks:
                idx = len(self._chunks)
                terms = Counter(search_tokens(chunk.text))
                self._chunks.append(chunk)
                length = sum(terms.values())
                self._lengths.append(length)
                self._total_len += length
                self._by_doc[chunk.doc_id].append(idx)
                for term, tf in terms.items():
                    self._postings[term].append((idx, tf))

    def chunks_of(self, doc_id: str) -> list[Chunk]:
        with self._lock:
            return [self._chunks[i] for i in self._by_doc.get(doc_id, [])]

    def search(self, terms: list[str], allowed: set[str], k: int) -> list[Scored]:
        """Top-k chunks of `allowed` documents for the query terms."""
        if not terms or not allowed:
            return []
        with self._lock:
            n = len(self._chunks)
            if n == 0:
                return []
            avg = self._total_len / n
            scores: dict[int, float] = defaultdict(float)
            matched: dict[int, set[str]] = defaultdict(set)
            for term in set(terms):
                postings = self._postings.get(term)
                if not postings:
                    continue
                idf = math.log(1 + (n - len(postings) + 0.5) / (len(postings) + 0.5))
                for idx, tf in postings:
                    if self._chunks[idx].doc_id not in allowed:
                        continue
                    length = self._lengths[idx]
                    scores[idx] += idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / avg))
                    matched[idx].add(term)
            ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:k]
            return [Scored(self._chunks[i], s, frozenset(matched[i])) for i, s in ranked]
