"""How a run ended, as its directory tells it: killed before its end (`ended_early`, the time of its last evidence),
stopped by a signal (meta `stopped`), its target gone (meta `target_down`). Every workload's one decision — live, or
rebuilt by `rig report` — reads the same reasons from here, so the two never disagree (a setup that failed is
meta `setup_failed`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from rig.errors import ConfigError
from rig.evidence import EvidenceStore
from rig.policy import Decision
from rig.rundir import hold, release
from rig.runmanifest import RunManifest, read_manifest, write_manifest


def mark_ended_early(run_dir: Path, manifest: RunManifest, store: EvidenceStore) -> str | None:
    """A run whose manifest has no end time was killed: mark it ended early at its last evidence (None: it ended)."""
    if manifest.ended_at is not None and manifest.ended_early is None:
        return None
    last = store.last_activity_ms()
    when = dt.datetime.fromtimestamp(last / 1000, dt.UTC).isoformat(timespec="seconds") if last else "unknown"
    manifest.ended_early = manifest.ended_early or when
    write_manifest(run_dir, manifest)
    return manifest.ended_early


def ended_reasons(manifest: RunManifest, store: EvidenceStore) -> list[str]:
    """Why the run is not a whole one, in the words every decision of it uses (empty for a run that ran to its end)."""
    out = []
    if manifest.ended_early:
        out.append(f"the run ended early (last evidence at {manifest.ended_early}); finished from its evidence by "
                   "rig report")
    for key in MARKERS:
        value = store.meta(key)
        if value:
            out.append(str(value))
    return out


MARKERS = ("setup_failed", "target_down", "stopped")  # the store's notes of how an attempt ended


def resuming(manifest: RunManifest, store: EvidenceStore, at: str) -> None:
    """A resumed run is one attempt more: the last attempt's end (ended early, stopped, target down, setup failed)
    moves into the store's `earlier_attempts`, so a resume that runs to its end decides as a whole run."""
    ended = ended_reasons(manifest, store)
    if ended:
        store.set_meta("earlier_attempts", [*(store.meta("earlier_attempts") or []), {"ended": ended}])
    for key in MARKERS:
        if store.meta(key) is not None:
            store.set_meta(key, None)
    manifest.ended_early = None
    manifest.resumed_at.append(at)


@dataclass
class Finished:
    """A run finished from its directory: its decision, whether it ended early, the files written."""

    run_dir: Path
    kind: str
    decision: Decision
    ended_early: str | None
    outputs: list[Path]


@contextmanager
def finishing(run_dir: Path, kind: str, *also: str) -> Iterator[tuple[RunManifest, EvidenceStore, str | None]]:
    """Open a `kind` run's directory (or one of the kinds `also` names) to finish it: its manifest, its store, and
    when it ended early (None: it ran to its end). The directory is held meanwhile, so a run that is still live is
    never rewritten."""
    if not (run_dir / "manifest.json").exists() or not (run_dir / "evidence.sqlite3").exists():
        raise ConfigError(f"{run_dir} has no manifest.json and evidence.sqlite3: not a rig run directory",
                          fix="pass the directory a rig gate, load, quality or demo run wrote")
    manifest = read_manifest(run_dir)
    if manifest.kind not in (kind, *also):
        raise ConfigError(f"{run_dir} is a {manifest.kind!r} run, not a {kind} run",
                          fix="rig report finishes gate, load, quality and demo runs")
    hold(run_dir)
    store = EvidenceStore(run_dir / "evidence.sqlite3")
    try:
        yield manifest, store, mark_ended_early(run_dir, manifest, store)
    finally:
        store.close()
        release(run_dir)
