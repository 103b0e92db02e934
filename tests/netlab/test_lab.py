"""Hosts in network namespaces: the target, a Locust master and two workers, each started with its own command
line, talking over a bridge (`rig lab run`). What the master merged must be what the workers shipped."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rig.netlab.lab import LabResult
from rig.netlab.netns import lab_namespaces

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(os.geteuid() != 0 or shutil.which("ip") is None,
                                 reason="network namespaces need root and iproute2")]
RIG = [str(Path(sys.executable).with_name("rig"))]


def lab(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], LabResult]:
    out = tmp_path / "lab"
    done = subprocess.run([*RIG, "lab", "run", "--workers", "2", "--users", "6", "--duration", "30s",
                           "--out", str(out), *args], capture_output=True, text=True, timeout=420)
    assert (out / "lab.json").exists(), done.stdout[-3000:] + done.stderr[-3000:]
    assert lab_namespaces() == []  # the hosts and their links are gone
    return done, LabResult.model_validate_json((out / "lab.json").read_text(encoding="utf-8"))


def test_three_hosts_merge_what_the_workers_shipped_and_a_slow_link_moves_t4_inside_its_window(tmp_path: Path
                                                                                                ) -> None:
    done, r = lab(tmp_path, "--latency", "100", "--latency-at", "10s", "--latency-for", "10s")
    assert done.returncode == 0, done.stdout[-3000:]
    # the traffic crossed the bridge: the target's host saw the master and both workers by their own addresses
    for name in ("master", "worker-1", "worker-2"):
        assert r.target_peers.get(r.hosts[name], 0) >= 1, (name, r.target_peers, r.hosts)
    assert len({w.worker_id for w in r.workers}) == 2
    for w in r.workers:
        assert w.intact, w
        assert w.shipped_requests > 0 and w.shipped_rows > 0
        assert w.record is not None and not w.record.lost
    assert r.merged_requests == r.shipped_requests == sum(w.counted_requests for w in r.workers)
    assert r.merged_rows == r.shipped_rows
    load = json.loads((r.run_dir / "load.json").read_text(encoding="utf-8"))
    assert sum(load["samples_by_origin"].values()) > 0
    assert set(load["samples_by_origin"]) <= {w.worker_id for w in r.workers}
    # the window: T4 (first answer token, as the client saw it) moves by about the delay inside, not after
    (window,) = r.chaos_windows
    assert window["via"] == "network" and window["fault"] == "network link/latency" and not window["error"]
    inside = window["T4_shift_ms"]["delta"]["p50"]  # type: ignore[index]
    after = window["T4_after_ms"]["delta"]["p50"]  # type: ignore[index]
    assert 50 <= inside <= 200, window
    assert abs(after) < 50, window


def test_a_worker_host_that_dies_at_10s_is_named_and_the_other_workers_samples_stay_whole(tmp_path: Path) -> None:
    done, r = lab(tmp_path, "--kill-worker-at", "10s")
    dead, alive = r.workers
    assert dead.crashed_ms is not None and dead.record is not None
    # the master noticed the loss after the crash and says when it last heard from the worker
    assert dead.record.lost and dead.record.lost_ms is not None and dead.record.lost_ms > dead.crashed_ms
    assert dead.record.silent_since_ms is not None and dead.record.silent_since_ms <= dead.crashed_ms + 1000
    assert dead.prefix, dead  # what it counted from the dead worker is exactly what arrived before the crash
    assert dead.stored_rows == dead.counted_rows
    assert alive.intact and alive.record is not None and not alive.record.lost, alive
    # nothing lost or counted twice: the merged requests are what each worker's counted reports held
    assert r.merged_requests == dead.counted_requests + alive.counted_requests
    # the run ended on time: the master did not wait for the dead worker's last report
    log = (r.run_dir / "locust-master.log").read_text(errors="replace")
    assert "no last report from worker" not in log
    assert r.overrun_s is not None and r.overrun_s < 15
    # the loss is named in the decision, load.json and the report
    assert r.decision == "undecided" and any(dead.worker_id in reason for reason in r.reasons), r.reasons
    load = json.loads((r.run_dir / "load.json").read_text(encoding="utf-8"))
    (lost,) = [w for w in load["worker_nodes"] if w["lost_ms"]]
    assert lost["worker_id"] == dead.worker_id and lost["rows"] == dead.counted_rows
    assert dead.worker_id in (r.run_dir / "report.html").read_text(encoding="utf-8")
    assert done.returncode == 0  # the lab's own checks held (an undecided load is not a lab failure)


def test_a_worker_whose_cable_is_pulled_for_8s_comes_back_and_nothing_is_counted_twice(tmp_path: Path) -> None:
    done, r = lab(tmp_path, "--link-down-at", "8s", "--link-down-for", "8s")
    cut, other = r.workers
    assert cut.link_down is not None and cut.record is not None
    down_ms, up_ms = cut.link_down
    # lost while its cable was out, heard again once it was back
    assert cut.record.lost_ms is not None and down_ms < cut.record.lost_ms
    assert cut.record.returned_ms is not None and cut.record.returned_ms > up_ms
    assert [e.kind for e in cut.record.events][:3] == ["joined", "missing", "returned"]
    # what it queued while cut off arrived afterwards, once: every report counted, each exactly once
    assert cut.intact and other.intact, (cut, other)
    assert r.merged_requests == r.shipped_requests and r.merged_rows == r.shipped_rows
    assert r.decision == "undecided" and any("back at" in reason for reason in r.reasons), r.reasons
    assert done.returncode == 0
