"""Choosing a run's directory: a new one (`--out`, or `reports/<time>-<kind>`), or one to `--resume` — and holding
it: a run directory is locked (`.lock`, an flock) by the process that runs in it, so a second rig, or a
`--resume` beside a live run, refuses to start a target on the same data; a dead holder's lock is gone with it."""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
from pathlib import Path

from rig.errors import ConfigError

_held: dict[Path, int] = {}  # run directory → the open lock file of this process


RESUMABLE = ("gate", "quality", "demo")  # the runs `--resume` continues
STORE = ("evidence.sqlite3",)  # what makes a directory a run's: its evidence store


def new_run_name(kind: str, reports_root: Path) -> Path:
    """`reports/<YYYYmmdd-HHMMSS>-<kind>`: where a run goes when no `--out` is given."""
    return reports_root / f"{dt.datetime.now():%Y%m%d-%H%M%S}-{kind}"


def run_directory(kind: str, *, out: Path | None, reports_root: Path, resume: Path | None = None,
                  marks: tuple[str, ...] = STORE) -> Path:
    """The one way a run gets its directory: created when new (`--out`, or a timestamped one under `reports_root`)
    and locked for this process. A ConfigError when resuming a directory that holds none of `marks`, reusing one
    that holds any of them (a run is there), or when another live process holds it."""
    if resume is not None:
        if not any((resume / m).exists() for m in marks):
            raise ConfigError(f"{resume} holds no {kind} run to resume", fix=f"pass the run directory of a {kind}")
        found = written_kind(resume)
        if found != kind and (found is not None or marks == STORE):  # a demo's own directory holds only parts
            raise ConfigError(f"{resume} is " + (f"a {found} run, not a {kind}" if found else
                                                 "not a run the rig wrote (no readable manifest.json)"),
                              fix=f"--resume takes the directory of a {kind} run")
        hold(resume)
        return resume
    run_dir = out or new_run_name(kind, reports_root)
    if any((run_dir / m).exists() for m in marks):
        raise ConfigError(f"{run_dir} already holds a run",
                          fix="pass a new --out directory" + (", or --resume it" if kind in RESUMABLE else ""))
    if run_dir.is_dir() and any(_foreign(p) for p in run_dir.iterdir()):
        raise ConfigError(f"{run_dir} is not empty and holds no run: the run's files would mix with what is there",
                          fix="pass a new or empty --out directory")
    run_dir.mkdir(parents=True, exist_ok=True)
    hold(run_dir)
    return run_dir


def _foreign(path: Path) -> bool:
    """A file a new run would mix with: anything but a hidden file or a log (a wrapper's `--out X > X/run.log`, a
    host's log beside the worker it runs)."""
    return not (path.name.startswith(".") or path.suffix == ".log")


def written_kind(run_dir: Path) -> str | None:
    """The kind of run (`gate`, `load`, …) its manifest.json names; None where there is none to read."""
    try:
        kind = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8")).get("kind")
    except (OSError, ValueError, AttributeError):
        return None
    return str(kind) if kind else None


def hold(run_dir: Path) -> None:
    """Lock `run_dir` for this process (a no-op when it already holds it)."""
    key = run_dir.resolve()
    if key in _held:
        return
    fd = os.open(key / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "?"
        os.close(fd)
        raise ConfigError(f"{run_dir} is in use by another rig process (pid {holder})",
                          fix="wait for that run to end or stop it; a killed holder releases the directory by "
                              "itself, then --resume or rig report can take over") from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    _held[key] = fd


def release(run_dir: Path) -> None:
    """Give the directory up (at the end of a run; a process that dies gives it up anyway)."""
    fd = _held.pop(run_dir.resolve(), None)
    if fd is not None:
        os.close(fd)
