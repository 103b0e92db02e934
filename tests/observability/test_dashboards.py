"""Every Grafana panel query and annotation, evaluated by a real Prometheus scraping a short load run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from rig import events
from rig.gate.session import GateOptions, run_gate
from rig.load.context import LoadContext
from rig.load.options import LoadOptions
from rig.load.session import run_load
from rig.load.stages import parse_shape
from rig.ports import free_port
from rig.telemetry.local_prometheus import LocalPrometheus, LocalPushgateway
from rig.waiting import wait_until

pytestmark = pytest.mark.slow  # `make test-slow` (CI runs it after `make test`)

DASHBOARDS = Path(__file__).resolve().parents[2] / "dashboards"


ALL = {"$job": ".*", "$target": ".*", "$run": ".*"}  # what Grafana puts for a variable at "All" (allValue)


def at_all(expr: str) -> str:
    for name, value in ALL.items():
        expr = expr.replace(name, value)
    return expr


def panel_queries() -> dict[str, str]:
    """'dashboard / panel / refId' → expr with the variables at "All", for every target of every panel, plus each
    annotation."""
    out: dict[str, str] = {}
    for path in sorted(DASHBOARDS.glob("*.json")):
        board = json.loads(path.read_text())
        for panel in board["panels"]:
            for target in panel.get("targets", []):  # a row holds none
                out[f"{board['uid']} / {panel['title']} / {target['refId']}"] = at_all(target["expr"])
        for ann in board["annotations"]["list"]:
            out[f"{board['uid']} / annotation {ann['name']}"] = at_all(ann["expr"])
    return out


def test_dashboards_are_built_from_the_panel_lists() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("dashboards_build", DASHBOARDS / "build.py")
    assert spec and spec.loader
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    for uid, (title, panels) in build.DASHBOARDS.items():
        on_disk = json.loads((DASHBOARDS / f"{uid}.json").read_text())
        assert on_disk == build.dashboard(uid, title, panels), f"{uid}.json is stale: run dashboards/build.py"


def test_every_panel_query_returns_data_from_real_prometheus(tmp_path: Path) -> None:
    queries = panel_queries()
    assert len(queries) >= 20
    with LocalPushgateway(tmp_path / "pgw") as pgw:
        gate = run_gate(GateOptions(cases=[1], out=tmp_path / "gate", reports_root=tmp_path, pushgateway=pgw.url))
        assert gate.decision.decision == "pass"
        metrics_port, chaos_port = free_port(), free_port()
        schedule = tmp_path / "chaos.yaml"
        schedule.write_text("title: a long harmless window\nmethod:\n  - {name: slow-summaries, at: 1s, duration: 45s,"
                            " fault: {via: target, point: summarize, mode: delay, delay_ms: 1}}\n")
        seen: dict[str, Any] = {}

        def observe(run: LoadContext) -> None:
            target = urlparse(run.adapter.base_url).netloc
            prom = LocalPrometheus(tmp_path / "prom", {"rig": [f"127.0.0.1:{metrics_port}"], "workbench": [target],
                                                       "rig-chaos": [f"127.0.0.1:{chaos_port}"],
                                                       "pushgateway": [urlparse(pgw.url).netloc]})
            prom.start()
            try:
                # A fault counter must be scraped before and after it rises for increase() to see it, as in
                # a real chaos window: one fault, seen by Prometheus, then the rest.
                fired = "workbench_chaos_faults_fired_total"
                run.adapter.chaos("POST", "faults", {"point": "llm", "mode": "error", "times": 1})
                assert wait_until(lambda: bool(prom.query(fired)), 20.0, interval_s=0.5), "fault counter never scraped"
                run.adapter.chaos("POST", "faults", {"point": "llm", "mode": "error", "times": 3})

                def all_have_data() -> bool:
                    for name, expr in queries.items():
                        if name not in seen:
                            if prom.query(expr):
                                seen[name] = True
                    return len(seen) == len(queries)

                wait_until(all_have_data, 45.0, interval_s=1.0)
                seen["_errors"] = {n: e for n, e in queries.items() if n not in seen}
            finally:
                prom.stop()

        with events.load_running.listening(observe):
            run_load(LoadOptions(users=6, spawn_rate=6, arrival="poisson", rate_per_s=3, seed=3,
                                 shape=parse_shape("10s:6,40s:6"),  # two stages: the stage panels and annotation
                                 out=tmp_path / "load", metrics_port=metrics_port, think_min_s=0.2, think_max_s=0.5,
                                 chaos=schedule, chaos_metrics_port=chaos_port))
    assert "_errors" in seen, "the observer never finished"
    assert not seen["_errors"], f"panels without data: {json.dumps(seen['_errors'], indent=1)}"
