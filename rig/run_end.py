"""How a run ended, as its directory tells it: killed before its end (`ended_early`, the time of its last evidence),
stopped by a signal (meta `stopped`), its target gone (meta `target_down`). Every workload's one decision — live, or
rebuilt by `rig report` — reads the same reasons from here, so the two never disagree (a setup that failed is
meta `setup_failed`).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from rig.evidence import EvidenceStore
from rig.runmanifest import RunManifest, write_manifest


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
    for key in ("setup_failed", "target_down", "stopped"):
        value = store.meta(key)
        if value:
            out.append(str(value))
    return out
