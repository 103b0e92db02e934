"""Wall-clock stamps as the protocol wants them: RFC 3339 with milliseconds and a `*_ms` float."""

from __future__ import annotations

import datetime as dt
import time


def now_ms() -> float:
    """Milliseconds since the epoch (`time.time()*1000`), comparable with the rig's anchored clock."""
    return time.time() * 1000.0


def iso(ms: float | None) -> str | None:
    """RFC 3339 UTC with milliseconds for an epoch-ms value."""
    if ms is None:
        return None
    return dt.datetime.fromtimestamp(ms / 1000.0, tz=dt.UTC).isoformat(timespec="milliseconds").replace(
        "+00:00", "Z"
    )


def stamp() -> tuple[str, float]:
    """(RFC 3339 string, epoch ms) for now."""
    ms = now_ms()
    return iso(ms) or "", ms
