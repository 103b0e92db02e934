"""`rig gate --target URL --config rig.yaml`: seeded secrets never reach the run directory, a target without
chaos control gets BLOCKED fault cases, and an unreachable target ends in exit 2 fast."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from rig.gate.session import GateOptions, run_gate
from rig.target.embedded import EmbeddedWorkbench
from rig.verdict import Verdict

SEED = uuid.uuid4().hex[:12]
SECRETS = {"RIG_T_PW_A": f"pw-a-{SEED}-alpha", "RIG_T_PW_B": f"pw-b-{SEED}-bravo", "RIG_T_CHAOS": f"chaos-{SEED}"}


def _config(tmp: Path, url: str, *, chaos: bool) -> Path:
    path = tmp / "rig.yaml"
    path.write_text(f"""target:
  url: {url}
{'  chaos_token_env: RIG_T_CHAOS' if chaos else ''}
accounts:
  a: {{username: ext-a, password_env: RIG_T_PW_A}}
  b: {{username: ext-b, password_env: RIG_T_PW_B}}
""")
    return path


def _target(tmp: Path, chaos: bool) -> EmbeddedWorkbench:
    target = EmbeddedWorkbench(tmp / "external-target", chaos_token=SECRETS["RIG_T_CHAOS"] if chaos else None)
    target.start()
    target.add_account("ext-a", SECRETS["RIG_T_PW_A"])
    target.add_account("ext-b", SECRETS["RIG_T_PW_B"])
    return target


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    for k, v in SECRETS.items():
        monkeypatch.setenv(k, v)


def test_seeded_secrets_never_appear_in_any_output_file(tmp_path: Path) -> None:
    with _target(tmp_path, chaos=True) as target:
        config = _config(tmp_path, target.url, chaos=True)
        result = run_gate(GateOptions(target=target.url, config=config, cases=[1, 2, 5, 14, 33, 37, 38],
                                      out=tmp_path / "run"))
    assert {c.case_id: c.verdict for c in result.data.cases} == {
        1: Verdict.PASS, 2: Verdict.PASS, 5: Verdict.PASS, 14: Verdict.PASS, 33: Verdict.PASS, 37: Verdict.PASS,
        38: Verdict.PASS}
    files = [p for p in (tmp_path / "run").rglob("*") if p.is_file()]
    assert len(files) >= 6
    for path in files:
        data = path.read_bytes()
        for secret in SECRETS.values():
            assert secret.encode() not in data, (path, secret)
        assert b"sk-rig-" not in data and b"Bearer " not in data, path


def test_without_chaos_control_the_fault_cases_are_blocked_by_name(tmp_path: Path) -> None:
    with _target(tmp_path, chaos=False) as target:
        config = _config(tmp_path, target.url, chaos=False)
        result = run_gate(GateOptions(target=target.url, config=config, cases=[14, 15, 21, 25, 26],
                                      out=tmp_path / "run"))
    verdicts = {c.case_id: c for c in result.data.cases}
    for case_id in (14, 15, 21, 25):
        assert verdicts[case_id].verdict == Verdict.BLOCKED
        assert "missing capability: chaos" in verdicts[case_id].reason
    assert verdicts[26].verdict == Verdict.BLOCKED and "restarter" in verdicts[26].reason
    assert result.decision.decision == "undecided" and result.decision.exit_code == 2


def test_an_unreachable_target_exits_2_fast_with_the_cause(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = _config(tmp_path, f"http://127.0.0.1:{port}", chaos=False)
    config.write_text(config.read_text().replace("target:\n", "target:\n  ready_timeout: 2\n", 1))
    proc = subprocess.run([sys.executable, "-m", "rig.cli", "gate", "--target", f"http://127.0.0.1:{port}",
                           "--config", str(config), "--out", str(tmp_path / "run")], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "200"}, timeout=60)
    assert proc.returncode == 2, proc.stderr
    # fast = the readiness wait is bounded (target.ready_timeout) and no case starts; the bound is in the message
    assert "unreachable" in proc.stderr and "not ready after 2 s" in proc.stderr and "fix:" in proc.stderr


def test_bad_invocations_explain_themselves(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("target:\n  url: http://x\naccounts:\n  a: {username: a}\n")
    for args, needle in ((["--target", "http://127.0.0.1:9"], "needs --config"),
                         (["--target", "http://x", "--config", str(bad)], "accounts"),
                         (["--cases", "99"], "no such case")):
        proc = subprocess.run([sys.executable, "-m", "rig.cli", "gate", *args], capture_output=True, text=True,
                              env={**os.environ, "COLUMNS": "200"}, timeout=60)
        assert proc.returncode == 2 and needle in proc.stderr, (args, proc.stderr)




def test_case_34_reads_an_external_targets_spans_where_it_was_told_to_send_them(tmp_path: Path) -> None:
    from rig.ports import free_port

    listen = f"127.0.0.1:{free_port()}"
    target = EmbeddedWorkbench(tmp_path / "told", extra_args=["--otlp-endpoint", f"http://{listen}"])
    target.start()
    target.add_account("ext-a", SECRETS["RIG_T_PW_A"])
    target.add_account("ext-b", SECRETS["RIG_T_PW_B"])
    with target:
        config = _config(tmp_path, target.url, chaos=False)
        told = run_gate(GateOptions(target=target.url, config=config, cases=[34], out=tmp_path / "told-run",
                                    otlp_listen=listen))
    items = {i.name: i for i in told.data.cases[0].items}
    assert items["run_trace_span_linked"].verdict == Verdict.PASS, items["run_trace_span_linked"].reason
    assert items["figures_say_provenance"].verdict == Verdict.PASS, items["figures_say_provenance"].reason
    # the provider cannot be made silent without a fault channel (no test-only control, no model proxy): only that
    # item is BLOCKED, naming what is missing
    not_passed = {n: i.verdict for n, i in items.items() if i.verdict != Verdict.PASS and i.required}
    assert not_passed == {"estimate_when_provider_silent": Verdict.BLOCKED}, not_passed


def test_case_34_is_not_fail_when_nobody_told_the_target_where_to_send_spans(tmp_path: Path) -> None:
    with _target(tmp_path, chaos=False) as target:
        config = _config(tmp_path, target.url, chaos=False)
        silent = run_gate(GateOptions(target=target.url, config=config, cases=[34], out=tmp_path / "run"))
    case = silent.data.cases[0]
    items = {i.name: i for i in case.items}
    linked = items["run_trace_span_linked"]
    assert linked.verdict == Verdict.U and "no span from the target reached" in linked.reason, linked
    assert "--otlp-listen" in linked.reason
    assert case.verdict != Verdict.FAIL
