"""docs/extending.md's examples, as written: a case that uses nothing but `import rig`'s public face replaces
shipped case 1 and runs in a real gate against the embedded workbench; the load user's knobs are what it says."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rig.gate.registry import case

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "extending.md"


def _example(first_line: str) -> str:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    return next(b for b in blocks if b.startswith(first_line))


def test_the_example_case_uses_the_public_face_alone() -> None:
    code = _example("# acme_cases.py")
    imports = [line for line in code.splitlines() if line.startswith(("import ", "from "))]
    assert imports and all(line.startswith("from rig import ") for line in imports)
    import rig

    names = {n.strip() for line in imports for n in line.removeprefix("from rig import ").split(",")}
    assert names <= set(rig.__all__)


def test_the_example_case_replaces_case_1_in_a_real_gate(tmp_path: Path) -> None:
    (tmp_path / "acme_cases.py").write_text(_example("# acme_cases.py"), encoding="utf-8")
    script = (f"import sys; sys.path.insert(0, {str(tmp_path)!r})\n"
              "from pathlib import Path\n"
              "from rig.plugins import load_scenario_packs\n"
              "load_scenario_packs()\n"
              "import acme_cases\n"
              "from rig import GateOptions, run_gate\n"
              f"result = run_gate(GateOptions(cases=[1], out=Path({str(tmp_path / 'gate')!r})))\n"
              "print(result.decision.decision)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    results = json.loads((tmp_path / "gate" / "results.json").read_text(encoding="utf-8"))
    [one] = results["cases"]  # the team's items, not the shipped case's (identity, project, ...)
    assert one["case_id"] == 1 and one["verdict"] == "PASS", one
    assert {i["name"]: i["verdict"] for i in one["items"]} == {"cites_p32": "PASS", "pages_named": "PASS",
                                                               "accounts_agree": "PASS"}  # the runner's, per run read


def test_a_second_registration_of_a_case_must_say_it_replaces() -> None:
    def again(ctx: object) -> None:
        pass

    from rig.gate.registry import all_cases

    shipped = all_cases()[2]
    with pytest.raises(ValueError, match="case 2 is registered twice"):
        case(2, shipped.record_id)(again)
    assert all_cases()[2].fn is shipped.fn


def test_the_load_users_knobs_are_the_documented_class_attributes() -> None:
    code = _example("# acme_locustfile.py")
    check = code + ("\nfor name in ('questions_per_session', 'new_session_chance', 'stop_question', 'reconcile_s'):\n"
                    "    assert getattr(PatientResearcher, name) != getattr(ResearcherUser, name), name\n")
    out = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]


def test_the_example_hook_uses_the_public_face_alone() -> None:
    code = _example("# acme_hooks.py")
    imports = [line for line in code.splitlines() if line.startswith("from rig")]
    import rig

    names = {n.strip() for line in imports for n in line.removeprefix("from rig import ").split(",")}
    assert imports and names <= set(rig.__all__)


def test_the_example_hook_sees_what_the_gate_decides(tmp_path: Path) -> None:
    """With a seeded defect case 3 fails; the hook's lines hold the same FAIL items and verdict as results.json."""
    (tmp_path / "acme_hooks.py").write_text(_example("# acme_hooks.py"), encoding="utf-8")
    script = (f"import sys; sys.path.insert(0, {str(tmp_path)!r})\n"
              "from pathlib import Path\n"
              "import acme_hooks\n"
              "from rig import GateOptions, run_gate\n"
              f"run_gate(GateOptions(cases=[3], defects=['cross_user_file'], out=Path({str(tmp_path / 'gate')!r})))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = [json.loads(line) for line in (tmp_path / "acme-hooks.jsonl").read_text(encoding="utf-8").splitlines()]
    results = json.loads((tmp_path / "gate" / "results.json").read_text(encoding="utf-8"))
    [three] = results["cases"]
    fails = sorted(i["name"] for i in three["items"] if i["verdict"] == "FAIL")
    assert three["verdict"] == "FAIL" and fails, three
    assert sorted(line["fail"] for line in lines if "fail" in line) == fails
    [end] = [line for line in lines if "verdict" in line]
    assert end["case"] == 3 and end["verdict"] == "FAIL"
    assert end["slowest"] and end["slowest"].split()[0] in ("GET", "POST", "PUT", "PATCH", "DELETE")
