"""The one run lifecycle (`rig.run`): the manifest before any evidence, what a run started closed last first
however it ends, the directory's lock given up, and a crash of the rig's own kept in the run — never raised raw."""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

import pytest

from rig.errors import ConfigError, RigError
from rig.run import OutputChoice, open_run
from rig.runmanifest import RunManifest


def _manifest() -> RunManifest:
    return RunManifest(kind="gate", started_at="2026-12-05T00:00:00+00:00", eval_set_sha256="x")


def _unlocked(run_dir: Path) -> bool:
    fd = os.open(run_dir / ".lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


def test_a_run_writes_its_manifest_first_and_closes_what_it_started_last_first(tmp_path: Path) -> None:
    closed: list[str] = []
    with open_run("gate", OutputChoice(out=tmp_path / "run"), _manifest()) as run:
        assert json.loads((run.dir / "manifest.json").read_text())["kind"] == "gate"
        assert not _unlocked(run.dir)  # held while it runs
        run.on_close(lambda: closed.append("target"))
        run.on_close(lambda: closed.append("browser"))
        run.store.set_meta("k", 1)
        run.ended()
    assert closed == ["browser", "target"]
    assert _unlocked(tmp_path / "run")
    assert json.loads((tmp_path / "run" / "manifest.json").read_text())["ended_at"] is not None


def test_a_crash_of_the_rigs_own_is_kept_in_the_run_and_said_as_undecided(tmp_path: Path) -> None:
    closed: list[str] = []
    with pytest.raises(RigError) as caught, open_run("gate", OutputChoice(out=tmp_path / "run"), _manifest()) as run:
        run.on_close(lambda: closed.append("target"))
        raise KeyError("a bug")
    assert "the rig itself failed: KeyError" in caught.value.message
    assert "rig-error.log" in (caught.value.fix or "")
    assert "KeyError: 'a bug'" in (tmp_path / "run" / "rig-error.log").read_text()
    assert closed == ["target"]
    assert _unlocked(tmp_path / "run")


def test_a_rig_error_passes_through_as_it_is(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="bad selector map"), \
            open_run("gate", OutputChoice(out=tmp_path / "run"), _manifest()):
        raise ConfigError("bad selector map")
    assert not (tmp_path / "run" / "rig-error.log").exists()


def test_a_resumed_run_reads_its_own_manifest_and_counts_the_attempt(tmp_path: Path) -> None:
    with open_run("gate", OutputChoice(out=tmp_path / "run"), _manifest()) as run:
        run.store.set_meta("stopped", "stopped by SIGTERM")
    other = RunManifest(kind="gate", started_at="later", eval_set_sha256="y")
    with open_run("gate", OutputChoice(), other, resume=tmp_path / "run") as run:
        assert run.resumed and run.manifest.eval_set_sha256 == "x" and run.manifest.resumed_at
        assert run.store.meta("stopped") is None
        assert run.store.meta("earlier_attempts") == [{"ended": ["stopped by SIGTERM"]}]


def test_a_directory_that_holds_a_run_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    with open_run("gate", OutputChoice(out=tmp_path / "run"), _manifest()):
        pass
    with pytest.raises(ConfigError, match="already holds a run"), \
            open_run("gate", OutputChoice(out=tmp_path / "run"), _manifest()):
        pass


def test_a_run_given_its_own_directory_keeps_its_history_beside_it(tmp_path: Path) -> None:
    """`--out DIR` never writes into the current directory's reports/: the history goes beside the run; a run inside
    the reports folder records there, with `latest` pointing at it."""
    reports = tmp_path / "reports"
    with open_run("gate", OutputChoice(out=tmp_path / "elsewhere" / "run", reports_root=reports), _manifest()) as run:
        run.publish("pass", {"T4.p95": 1.0})
    assert (tmp_path / "elsewhere" / "history.sqlite3").exists() and not reports.exists()
    with open_run("gate", OutputChoice(reports_root=reports), _manifest()) as run:
        run.publish("pass", {})
    assert (reports / "history.sqlite3").exists() and (reports / "latest").resolve() == run.dir.resolve()
