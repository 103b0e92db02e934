"""The dashboards import into any Grafana: no datasource uid of ours inside, a `$datasource` variable and
`__inputs`; every query scoped by `$job` (and `$target`, `$run` where those labels exist), so totals never mix
runs; one unit a panel; the gate's decision a stat with its values named. (That each query returns data from a
real Prometheus, variables at "All", is test_dashboards.py.)"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

BOARDS = sorted((Path(__file__).resolve().parents[2] / "dashboards").glob("*.json"))
SELECTOR = re.compile(r"\b((?:rig|workbench)_[a-z0-9_]+)(\{[^}]*\})?")


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", BOARDS, ids=lambda p: p.stem)
def test_a_dashboard_names_no_datasource_of_ours(path: Path) -> None:
    board = _load(path)
    text = path.read_text(encoding="utf-8")
    assert "rig-prometheus" not in text and "DS_PROMETHEUS" not in text and "__inputs" not in board  # nothing unused
    [ds] = [v for v in board["templating"]["list"] if v["name"] == "datasource"]
    assert ds["type"] == "datasource" and ds["query"] == "prometheus"
    panels = [p for p in board["panels"] if p["type"] != "row"]
    refs = [p["datasource"] for p in panels] + [t["datasource"] for p in panels for t in p["targets"]]
    refs += [a["datasource"] for a in board["annotations"]["list"]]
    assert {r["uid"] for r in refs} == {"${datasource}"}


@pytest.mark.parametrize("path", BOARDS, ids=lambda p: p.stem)
def test_every_selector_is_scoped_by_the_dashboards_variables(path: Path) -> None:
    board = _load(path)
    names = {v["name"] for v in board["templating"]["list"]}
    exprs = [t["expr"] for p in board["panels"] for t in p.get("targets", [])]
    exprs += [a["expr"] for a in board["annotations"]["list"]]
    for expr in exprs:
        for metric, matchers in SELECTOR.findall(expr):
            assert 'job=~"$job"' in matchers, f"{metric} in {expr!r} is not scoped by $job"
            if metric.startswith("workbench_"):
                assert 'instance=~"$target"' in matchers, expr
    assert {"job", "target"} <= names
    if board["uid"] == "rig-gate":
        assert "run" in names and all('run=~"$run"' in e for e in exprs if "rig_gate_decision" in e)


def test_one_unit_a_panel_and_the_decision_as_a_named_stat() -> None:
    panels = {p["title"]: p for path in BOARDS for p in _load(path)["panels"]}
    assert panels["Target CPU (cores busy)"]["fieldConfig"]["defaults"]["unit"] == "short"
    assert panels["Target memory"]["fieldConfig"]["defaults"]["unit"] == "bytes"
    decision = panels["Gate decision"]
    assert decision["type"] == "stat"
    mapped = decision["fieldConfig"]["defaults"]["mappings"][0]["options"]
    assert {k: v["text"] for k, v in mapped.items()} == {"0": "PASS", "1": "FAIL", "2": "UNDECIDED"}


@pytest.mark.parametrize("path", BOARDS, ids=lambda p: p.stem)
def test_the_reference_workbenchs_panels_stand_in_a_row_of_their_own(path: Path) -> None:
    """On any target the panels above the row have data; those below it read `workbench_*` and say so."""
    panels = _load(path)["panels"]
    rows = [i for i, p in enumerate(panels) if p["type"] == "row"]
    above = panels[:rows[0]] if rows else panels
    below = panels[rows[0] + 1:] if rows else []
    assert not [p["title"] for p in above if "workbench_" in json.dumps(p["targets"])]
    assert all("workbench_" in json.dumps(p["targets"]) for p in below)
    if rows:
        assert "Reference workbench only" in panels[rows[0]]["title"] and len(rows) == 1
