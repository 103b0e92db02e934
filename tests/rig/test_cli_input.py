"""Bad input on the command line exits 2 before anything starts, naming the option and the cause in the rig's
own words, with no traceback; `rig --version` says what is installed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.schema_check import assert_valid

ROOT = Path(__file__).resolve().parents[2]


def _rig(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rig.cli", *args], capture_output=True, text=True, timeout=120,
                          cwd=cwd, env={"PATH": "/usr/bin:/bin", "COLUMNS": "200", "NO_COLOR": "1"})


@pytest.mark.parametrize(("args", "said"), [
    (("gate", "--cases", "abc"), "'abc' is not a case number or a range"),
    (("gate", "--cases", "3-"), "'3-' is not a case number or a range"),
    (("gate", "--cases", "5-1"), "the range 5-1 runs backwards"),
    (("gate", "--cases", " "), "no case given"),
    (("gate", "--cases", "99"), "no such case(s): [99]"),
    (("gate", "--deadline", "0s"), "--deadline '0s' is no time at all"),
    (("gate", "--repeat", "0"), "--repeat must be at least 1 (got 0)"),
    (("gate", "--config", "BROKEN_YAML"), "bad: [1, 2 ^"),  # the file's own line, the caret under the place
    (("gate", "--config", "[bold]x[/bold].yaml"), "cannot read config [bold]x[/bold].yaml: No such file"),
    (("gate", "--grace", "0"), "--grace '0' is no time at all"),
    (("demo", "--duration", "0"), "--duration '0' is no time at all"),
    (("demo", "--duration", "x"), "'x' is not a duration"),
    (("lab", "run", "--duration", "soon"), "'soon' is not a duration"),
    (("load", "--shape", "10s"), "'10s' is not a stage like 30s:10"),
    (("capacity", "--step", "5s", "--warmup", "5s"), "--warmup 5s leaves nothing of a 5s step to judge"),
    (("capacity",), "the policy states none"),
    (("capacity", "--max-users", "0"), "--max-users must be at least 1"),
    (("gate", "--grace", "soon"), "'soon' is not a duration"),
    (("load", "--duration", "-5s"), "--duration '-5s' is not a duration"),
    (("load", "--duration", "0"), "--duration must be more than 0"),
    (("load", "--users", "0"), "--users must be at least 1 (got 0)"),
    (("load", "--think", "3-1"), "--think 3-1 is not a range of seconds from low to high"),
    (("load", "--think", "soon"), "--think 'soon' is not seconds"),
    (("load", "--arrival", "bursty"), "--arrival must be one of"),
    (("load", "--mix", "chat=3"), "--mix 'chat=3' is not ACTION=WEIGHT with ACTION one of ask, revision"),
    (("load", "--mix", "ask=lots"), "is not ACTION=WEIGHT"),
    (("load", "--mix", "ask=0,revision=0,stop_resume=0,late_stop=0,regenerate=0,export=0,search=0"),
     "--mix leaves every action out"),
    (("load", "--policy", "POLICY"), "the rig measures no 'T99'"),
    (("gate", "--policy", "POLICY"), "the rig measures no 'T99'"),
], ids=lambda v: " ".join(v) if isinstance(v, tuple) else None)
def test_bad_input_exits_2_naming_the_cause(args: tuple[str, ...], said: str, tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text("thresholds:\n  - T99.p95 < 3s\n", encoding="utf-8")
    broken = tmp_path / "broken.yaml"
    broken.write_text("target:\n  url: http://127.0.0.1:9\n  bad: [1, 2\n", encoding="utf-8")
    given = {"POLICY": str(policy), "BROKEN_YAML": str(broken)}
    out = _rig(*[given.get(a, a) for a in args], cwd=tmp_path)
    text = " ".join((out.stdout + out.stderr).split())
    assert out.returncode == 2, text
    assert said in text, text
    assert "Traceback" not in text
    assert not (tmp_path / "reports").exists(), "nothing starts before the input is checked"


def test_version() -> None:
    out = _rig("--version")
    assert out.returncode == 0 and out.stdout.startswith("rig ") and "Python 3." in out.stdout, out.stdout


def test_resume_refuses_a_run_of_another_kind_or_one_the_rig_did_not_write(tmp_path: Path) -> None:
    load = tmp_path / "load"
    load.mkdir()
    (load / "manifest.json").write_text('{"kind": "load"}', encoding="utf-8")
    (load / "evidence.sqlite3").write_bytes(b"")
    out = _rig("gate", "--resume", str(load), cwd=tmp_path)
    text = " ".join((out.stdout + out.stderr).split())
    assert out.returncode == 2 and "is a load run, not a gate" in text and "Traceback" not in text, text
    stray = tmp_path / "stray"
    stray.mkdir()
    (stray / "evidence.sqlite3").write_bytes(b"")
    out = _rig("quality", "--resume", str(stray), cwd=tmp_path)
    text = " ".join((out.stdout + out.stderr).split())
    assert out.returncode == 2 and "not a run the rig wrote" in text and "Traceback" not in text, text
    assert (load / "manifest.json").read_text() == '{"kind": "load"}', "a refused resume changes nothing"


def test_a_run_that_fails_at_once_still_says_what_it_is(tmp_path: Path) -> None:
    config = tmp_path / "rig.yaml"
    config.write_text("target:\n  url: http://127.0.0.1:9\n  ready_timeout: 0.5\naccounts:\n"
                      "  a: {username: a, password_env: RIG_TEST_PW}\n  b: {username: b, password_env: RIG_TEST_PW}\n",
                      encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "rig.cli", "load", "--target", "http://127.0.0.1:9", "--config",
                          str(config), "--out", str(tmp_path / "run")], capture_output=True, text=True, timeout=120,
                         cwd=tmp_path, env={"PATH": "/usr/bin:/bin", "RIG_TEST_PW": "x", "COLUMNS": "200"})
    assert out.returncode == 2 and "Traceback" not in out.stdout + out.stderr, out.stdout + out.stderr
    assert json.loads((tmp_path / "run" / "manifest.json").read_text())["kind"] == "load"


def test_gate_json_prints_only_the_summary_and_quiet_only_the_decision(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "rig.cli", "gate", "--cases", "3", "--json", "--out",
                          str(tmp_path / "a")], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    (tmp_path / "summary.json").write_text(out.stdout, encoding="utf-8")
    assert_valid("summary", tmp_path / "summary.json")
    summary = json.loads(out.stdout)
    assert (summary["kind"], summary["decision"], summary["verdicts"]) == ("gate", "pass", {"PASS": 1})
    quiet = subprocess.run([sys.executable, "-m", "rig.cli", "gate", "--cases", "3", "--quiet", "--out",
                            str(tmp_path / "b")], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert quiet.returncode == 0 and "decision: PASS" in quiet.stdout, quiet.stdout[-2000:]
    assert "verdicts (" not in quiet.stdout and "starting" not in quiet.stdout


def test_a_gate_deadline_starts_no_case_after_it_and_resume_completes_the_run(tmp_path: Path) -> None:
    run = tmp_path / "run"
    out = subprocess.run([sys.executable, "-m", "rig.cli", "gate", "--cases", "3,4", "--deadline", "1s", "--json",
                          "--out", str(run)], capture_output=True, text=True, timeout=600, cwd=ROOT)
    summary = json.loads(out.stdout)
    assert out.returncode == 2 and summary["decision"] == "undecided", out.stdout[-2000:] + out.stderr[-2000:]
    assert any("the gate's deadline of 1 s passed" in r for r in summary["reasons"]), summary["reasons"]
    assert sum(summary["verdicts"].values()) < 2
    resumed = subprocess.run([sys.executable, "-m", "rig.cli", "gate", "--resume", str(run), "--json"],
                             capture_output=True, text=True, timeout=600, cwd=ROOT)
    done = json.loads(resumed.stdout)
    assert resumed.returncode == 0 and done["verdicts"] == {"PASS": 2}, resumed.stdout[-2000:]


def test_a_crash_of_the_rig_is_exit_2_with_its_traceback_in_a_log(monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    import rig.cli.main as cli

    def broken(**_: object) -> None:
        raise KeyError("a bug in the rig")

    monkeypatch.setattr(cli, "app", broken)
    with pytest.raises(SystemExit) as ended:
        cli.main()
    assert ended.value.code == 2
    err = capsys.readouterr().err
    assert "the rig itself failed: KeyError" in err and "Traceback" not in err
    log = Path(err.split("the traceback is in ")[1].split(" — ")[0])
    assert "KeyError: 'a bug in the rig'" in log.read_text(encoding="utf-8")
    log.unlink()
