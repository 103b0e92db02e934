"""Choosing a run's directory: a new one (`--out`, or `reports/<time>-<kind>`), or one to `--resume`."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from rig.errors import ConfigError


def run_directory(kind: str, *, out: Path | None, reports_root: Path, resume: Path | None = None) -> Path:
    """The run directory, created when new; a ConfigError when resuming nothing or reusing a finished run."""
    if resume is not None:
        if not (resume / "evidence.sqlite3").exists():
            raise ConfigError(f"{resume} holds no evidence store to resume", fix=f"pass the run directory of a {kind}")
        return resume
    run_dir = out or reports_root / f"{dt.datetime.now():%Y%m%d-%H%M%S}-{kind}"
    if (run_dir / "evidence.sqlite3").exists():
        raise ConfigError(f"{run_dir} already holds a run",
                          fix="pass a new --out" + (", or --resume it" if kind != "load" else " directory"))
    run_dir.mkdir(parents=True, exist_ok=True)
    return run_dir
