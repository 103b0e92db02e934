"""Stream readers against a hostile stream: one long line fed in small chunks, the rig's readers vs a naive one.

    python bench/stream_reader.py [--mib 8] [--chunk 4096] [--repeat 3]

A target that sends one huge event (or bytes without a newline) in small chunks makes a reader that re-joins its
buffer on every chunk quadratic. For each reader the bench feeds the same line in `--chunk` pieces and
prints the time per MiB at 1/16 … 1 of `--mib`: flat for a linear reader, doubling with the size for a quadratic one.
The baseline, in the same invocation, is the naive reader (`(buffer + chunk).split(b"\\n")` per chunk), skipped at
the larger sizes once one feed of it passes 2 s.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from rig.measure.sse import LineSplitter, SseParser


def naive_feed(chunks: list[bytes]) -> int:
    """The reader the rig replaced: the whole buffer joined and split again on every chunk."""
    buffer, lines = b"", 0
    for chunk in chunks:
        *done, buffer = (buffer + chunk).split(b"\n")
        lines += len(done)
    return lines


def splitter_feed(chunks: list[bytes]) -> int:
    splitter = LineSplitter(max_bytes=1 << 31)
    return sum(len(splitter.feed(c)) for c in chunks)


def sse_feed(chunks: list[bytes]) -> int:
    parser = SseParser(max_event_bytes=1 << 31, max_line_bytes=1 << 31)
    return sum(len(parser.feed(c)) for c in chunks)


def timed(reader: Callable[[list[bytes]], int], data: bytes, chunk: int, repeat: int) -> float:
    """Median seconds to feed `data` in `chunk`-byte pieces (the pieces are cut before the clock starts)."""
    pieces = [data[i:i + chunk] for i in range(0, len(data), chunk)] + [b"\n\n"]
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        assert reader(pieces) >= 1
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mib", type=float, default=8.0)
    ap.add_argument("--chunk", type=int, default=4096)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    size = int(a.mib * (1 << 20))
    line = b"data: " + b"y" * size
    print(f"one line fed in {a.chunk} B chunks, median of {a.repeat}; ms per MiB stays flat for a linear reader")
    print(f"{'MiB':>6}{'LineSplitter ms/MiB':>22}{'SseParser ms/MiB':>19}{'naive ms/MiB':>15}{'naive ÷ LineSplitter':>22}")
    naive_on = True
    for part in (16, 8, 4, 2, 1):
        mib = a.mib / part
        line = b"data: " + b"y" * int(mib * (1 << 20))
        split = timed(splitter_feed, line, a.chunk, a.repeat) * 1000 / mib
        sse = timed(sse_feed, line, a.chunk, a.repeat) * 1000 / mib
        naive = timed(naive_feed, line, a.chunk, 1) * 1000 / mib if naive_on else None
        naive_on = naive_on and (naive or 0) * mib < 2000  # the naive reader stops once one feed passes 2 s
        shown = f"{naive:>15.2f}{naive / split:>22.1f}" if naive is not None else f"{'(skipped)':>15}{'':>22}"
        print(f"{mib:>6g}{split:>22.2f}{sse:>19.2f}{shown}")

if __name__ == "__main__":
    main()
