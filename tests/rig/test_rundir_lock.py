"""A run directory belongs to the live process running in it: another rig refuses it, naming the holder, and
takes it over once the holder is gone (however it ended)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from rig.errors import ConfigError
from rig.rundir import release, run_directory


def test_a_live_holder_keeps_a_second_rig_out_until_it_is_gone(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "evidence.sqlite3").write_bytes(b"")
    (run_dir / "manifest.json").write_text('{"kind": "gate"}', encoding="utf-8")
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time\nfrom pathlib import Path\nfrom rig.rundir import hold\n"
        f"hold(Path({str(run_dir)!r}))\nprint('held', flush=True)\ntime.sleep(300)\n")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(ConfigError, match=f"in use by another rig process \\(pid {holder.pid}\\)"):
            run_directory("gate", out=None, reports_root=tmp_path, resume=run_dir)
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=10)
        assert run_directory("gate", out=None, reports_root=tmp_path, resume=run_dir) == run_dir
    finally:
        release(run_dir)
        if holder.poll() is None:
            holder.kill()


def test_every_kind_of_run_gets_its_directory_one_way(tmp_path: Path) -> None:
    """New directories are named `<time>-<kind>` and locked; a demo is marked by its parts, not by a store."""
    worker = run_directory("worker", out=None, reports_root=tmp_path, marks=())
    try:
        assert worker.name.endswith("-worker") and (worker / ".lock").read_text().strip().isdigit()
    finally:
        release(worker)
    demo = tmp_path / "demo"
    with pytest.raises(ConfigError, match="holds no demo run to resume"):
        run_directory("demo", out=None, reports_root=tmp_path, resume=demo.parent / "nothing", marks=("load",))
    (demo / "load").mkdir(parents=True)
    with pytest.raises(ConfigError, match="already holds a run"):
        run_directory("demo", out=demo, reports_root=tmp_path, marks=("report.html", "load"))
    assert run_directory("demo", out=None, reports_root=tmp_path, resume=demo, marks=("load",)) == demo
    release(demo)


def test_a_directory_with_other_files_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(ConfigError, match="is not empty and holds no run"):
        run_directory("gate", out=tmp_path, reports_root=tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
    (tmp_path / "notes.txt").unlink()
    (tmp_path / "run.log").write_text("a wrapper's log, written before the run began", encoding="utf-8")
    assert run_directory("gate", out=tmp_path, reports_root=tmp_path) == tmp_path  # a log is not another run's file
    release(tmp_path)
