"""`rig load`: a master with two workers merges both workers' measurements; open-loop arrivals show send lag."""

from __future__ import annotations

import contextlib
import csv
import json
import os
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import httpx
import pytest

from rig import events
from rig.evidence import EvidenceStore
from rig.load.context import LoadContext
from rig.load.options import LoadOptions
from rig.load.session import run_load
from rig.promtext import sample_value
from rig.results.load import LoadSummary
from rig.target.embedded import EmbeddedWorkbench
from rig.waiting import wait_until
from tests.schema_check import assert_valid


def _t4_total(text: str) -> float:
    from prometheus_client.parser import text_string_to_metric_families

    total = 0.0
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == "rig_t_seconds_count" and s.labels.get("code") == "T4" and s.labels.get("source") == "client":
                total += s.value
    return total


def _target_requests(ctx: LoadContext) -> float:
    """HTTP requests the target itself counted, its /metrics endpoint left out."""
    from prometheus_client.parser import text_string_to_metric_families

    total = 0.0
    for family in text_string_to_metric_families(ctx.adapter.metrics_text()):
        for s in family.samples:
            if s.name == "workbench_http_requests_total" and s.labels.get("route") != "/metrics":
                total += s.value
    return total


def test_master_and_two_workers_merge_their_measurements(tmp_path: Path) -> None:
    scraped: dict[str, str] = {}
    served: dict[str, float] = {}

    def scrape(run: LoadContext) -> None:
        url = f"http://127.0.0.1:{run.plan.metrics_port}/metrics"

        def has_t4() -> bool:
            try:
                text = httpx.get(url, timeout=2).text
            except httpx.HTTPError:
                return False
            scraped["text"] = text
            return 'rig_t_seconds_bucket{code="T4"' in text

        wait_until(has_t4, 25.0, interval_s=0.5)

    def before(run: LoadContext) -> None:
        served["before"] = _target_requests(run)

    def after(run: LoadContext, summary: LoadSummary) -> None:
        served["after"] = _target_requests(run)

    options = LoadOptions(users=6, spawn_rate=6, duration_s=15, workers=2, out=tmp_path / "run",
                          think_min_s=0.2, think_max_s=0.6)
    with events.load_running.listening(scrape), events.load_starting.listening(before), \
            events.load_finished.listening(after):
        result = run_load(options)
    run_dir = result.run_dir
    rows = {(r["Type"], r["Name"]) for r in csv.DictReader((run_dir / "locust_stats.csv").open())}
    assert {("T3", "ask"), ("T4", "ask"), ("T5", "ask")} <= rows
    assert 'rig_t_seconds_bucket{code="T4"' in scraped.get("text", ""), "the live master endpoint served T4"
    final = (run_dir / "metrics.prom").read_text()
    store = EvidenceStore(run_dir / "evidence.sqlite3")
    t4 = [m for m in store.measures("T4") if m.source == "client"]
    origins = {m.origin for m in t4}
    assert len(origins) == 2 and "master" not in origins and "local" not in origins, origins
    assert _t4_total(final) == len(t4) > 0, "the master's histogram holds every sample of both workers"
    assert sample_value(final, "rig_runs_total", {"state": "completed", "reason": "completed"})
    summary = result.summary
    assert summary is not None
    assert summary.workers == 2 and summary.t_codes["T4"].count == len(t4)
    assert summary.completed_runs > 0 and summary.error_ratio == 0.0
    # the request count is the HTTP requests the users made, as the target counted them; the users' T-code rows
    # are Locust rows too, but apart
    assert summary.requests == served["after"] - served["before"] > 0, (summary.locust, served)
    assert {r.type for r in summary.locust.tcode_rows} >= {"T3", "T4", "T5"}
    assert all(r.type in ("GET", "POST", "PUT", "PATCH", "DELETE") for r in summary.locust.rows)
    assert summary.requests_per_s == pytest.approx(summary.requests / 15)
    assert_valid("load", run_dir / "load.json")
    assert store.series("users"), "users over time were sampled"


@pytest.mark.slow  # a long integration run (~35 s): `make test-slow`
def test_open_loop_reports_send_lag_when_the_target_is_slow(tmp_path: Path) -> None:
    def slow_model(run: LoadContext) -> None:
        run.adapter.chaos("POST", "faults", {"point": "llm", "mode": "delay", "delay_ms": 2500})

    def load(name: str, hooks: list) -> LoadSummary:  # type: ignore[type-arg]
        # 8 users keep up with 3 arrivals/s at the normal pace; with each model call 2.5 s slower they cannot.
        options = LoadOptions(users=8, spawn_rate=8, duration_s=10, arrival="poisson", rate_per_s=3, seed=7,
                              out=tmp_path / name, fetch_detail=False)
        with contextlib.ExitStack() as stack:
            for hook in hooks:
                stack.enter_context(events.load_running.listening(hook))
            summary = run_load(options).summary
        assert summary is not None
        return summary

    fast = load("fast", [])
    slow = load("slow", [slow_model])
    assert fast.send_lag.count > 0 and slow.send_lag.count > 0
    assert slow.send_lag.p50 is not None and fast.send_lag.p50 is not None
    assert slow.send_lag.p50 > 300, slow.send_lag
    assert slow.send_lag.p50 > 5 * max(fast.send_lag.p50, 1.0), (fast.send_lag, slow.send_lag)
    store = EvidenceStore(tmp_path / "slow" / "evidence.sqlite3")
    lag = {m.run_id: m.value for m in store.measures("send_lag") if m.run_id}
    t5 = {m.run_id: m.value for m in store.measures("T5") if m.run_id in lag}
    assert t5, "some slow runs completed"
    late = {run: (t5[run], lag[run]) for run in t5 if t5[run] < lag[run]}
    assert not late, f"T5 counts from the scheduled send, so it includes each run's send lag: {late}"


def test_load_thresholds_decide_like_the_gate(tmp_path: Path) -> None:
    from rig.measure.aggregate import TCodeStats
    from rig.policy import Policy, decide_gate
    from rig.results.load import LoadSummary, LocustTotals, SendLag, observed_for_policy

    t4 = TCodeStats(code="T4", source="client", count=10, p50=30.0, p90=40.0, p95=45.0, p99=60.0, max=61.0)
    summary = LoadSummary(t_codes={"T4": t4}, by_source={"T4": {"client": t4}}, throughput_rps=3.0, runs=30,
                          completed_runs=30, requests=200, requests_per_s=20.0, error_ratio=0.0, errors_by_reason={},
                          login_failures=0, end_states={"completed/completed": 30}, send_lag=SendLag(count=0),
                          workers=0, users=20, duration_s=10.0, samples_by_origin={}, locust=LocustTotals())
    observed = observed_for_policy(summary)
    ok = Policy(thresholds=["T4.p95 < 3s at 20 users", "error_rate < 1%"])  # type: ignore[list-item]
    assert decide_gate([], ok, observed).exit_code == 0
    slow = Policy(thresholds=["T4.p95 < 40ms at 20 users"])  # type: ignore[list-item]
    assert decide_gate([], slow, observed).exit_code == 1
    elsewhere = Policy(thresholds=["T4.p95 < 3s at 50 users"])  # type: ignore[list-item]
    assert decide_gate([], elsewhere, observed).exit_code == 2, "no measurement at 50 users: undecided"


def _external(tmp_path: Path, passwords: dict[str, str]) -> tuple[list[str], dict[str, str], EmbeddedWorkbench]:
    """A workbench started apart from the rig, and a `rig load --target` command line with these passwords."""
    target = EmbeddedWorkbench(tmp_path / "wb")
    target.start()
    accounts = target.add_accounts({"load-a": "right-password-a", "load-b": "right-password-b"})
    (tmp_path / "rig.yaml").write_text(
        f"target: {{url: {target.url}}}\naccounts:\n"
        + "".join(f"  {k[-1]}: {{username: {k}, password_env: RIG_TEST_PW_{k[-1].upper()}}}\n" for k in accounts),
        encoding="utf-8")
    env = {**os.environ, **{f"RIG_TEST_PW_{k[-1].upper()}": v for k, v in passwords.items()}}
    cmd = [sys.executable, "-m", "rig.cli", "load", "--target", target.url, "--config", str(tmp_path / "rig.yaml"),
           "--users", "2", "--spawn-rate", "2", "--duration", "6", "--out", str(tmp_path / "run")]
    return cmd, env, target


def test_a_wrong_password_is_never_green_and_names_the_failed_login(tmp_path: Path) -> None:
    cmd, env, target = _external(tmp_path, {"load-a": "right-password-a", "load-b": "wrong"})
    try:
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    finally:
        target.stop()
    out = done.stdout + done.stderr
    assert done.returncode == 2, out[-3000:]
    assert "login(s) failed (setup:load-b)" in " ".join(out.split()), out[-3000:]
    summary = LoadSummary.model_validate_json((tmp_path / "run" / "load.json").read_text())
    assert summary.login_failures == 1 and summary.errors_by_reason.get("login_failed:setup:load-b") == 1
    assert summary.error_ratio > 0, "a failed login counts in the error ratio"
    assert summary.completed_runs > 0, "the account that logged in still ran"


def test_a_load_run_where_every_login_fails_stops_with_the_cause(tmp_path: Path) -> None:
    cmd, env, target = _external(tmp_path, {"load-a": "wrong", "load-b": "wrong"})
    try:
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    finally:
        target.stop()
    out = " ".join((done.stdout + done.stderr).split())
    assert done.returncode == 2, out[-3000:]
    assert "every login failed" in out and "load-a: 401" in out and "load-b: 401" in out, out[-3000:]
    assert "wrong" not in out.replace("wrong password", ""), "no password in the output"


def test_every_threshold_is_listed_with_its_observed_value_in_load_json_junit_and_the_console(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text("thresholds:\n  - T4.p95 < 60s\n  - T4.p50 < 0.001ms\n  - error_rate < 50%\n"
                      "  - T4.p95 < 3s at 99 users\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "rig.cli", "load", "--users", "2", "--spawn-rate", "2", "--duration",
                           "6", "--think", "0.2-0.5", "--policy", str(policy), "--out", str(tmp_path / "run")],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "200"})
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-2000:]
    checks = {c["text"]: c for c in json.loads((tmp_path / "run" / "load.json").read_text())["thresholds"]}
    assert [checks[t]["holds"] for t in ("T4.p95 < 60s", "T4.p50 < 0.001ms", "error_rate < 50%",
                                         "T4.p95 < 3s at 99 users")] == [True, False, True, None]
    assert checks["T4.p50 < 0.001ms"]["unit"] == "ms" and checks["T4.p50 < 0.001ms"]["observed"] > 0
    suite = ElementTree.parse(tmp_path / "run" / "junit.xml").getroot()
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped"), suite.get("errors")) == ("5", "1", "1", "0")
    table = done.stdout[done.stdout.index("thresholds"):]
    assert all(t in table for t in checks) and "✓" in table and "✗" in table and " ms" in table


@pytest.mark.slow  # a long integration run (~35 s): `make test-slow`
def test_a_ci_log_sees_progress_while_the_load_runs_and_json_prints_the_summary(tmp_path: Path) -> None:
    """No terminal: plain lines from the start and a live one every few seconds, read while Locust still runs
    (load.json is not written yet); with --json, stdout holds only the summary, valid against its schema."""
    cmd = [sys.executable, "-m", "rig.cli", "load", "--users", "2", "--spawn-rate", "2", "--duration", "12",
           "--think", "0.2-0.5", "--out", str(tmp_path / "run")]
    rig = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           env={**os.environ, "COLUMNS": "200"})
    lines: list[tuple[str, bool]] = []  # each line, and whether the run was still going when it arrived
    try:
        assert rig.stdout is not None
        for line in rig.stdout:
            lines.append((line.strip(), not (tmp_path / "run" / "load.json").exists()))
        rig.wait(timeout=300)
    finally:
        if rig.poll() is None:
            rig.kill()
    assert rig.returncode == 0, "\n".join(t for t, _ in lines)[-3000:]
    assert lines[0][0].startswith("load") and "starting" in lines[0][0]
    live_lines = [t for t, running in lines if "load running:" in t and running]
    assert len(live_lines) >= 1 and all(" runs (" in t and "tasks" in t for t in live_lines), lines
    assert all(t.startswith("load ") and "━" not in t for t in live_lines), "plain lines, no bar drawn into a log"
    page = (tmp_path / "run" / "report.html").read_text(encoding="utf-8")
    assert "Load decision: RECORDED" in page and "Gate decision" not in page
    assert "<h2>Cases" not in page and "Verdicts by module" not in page and "Runs and traces" not in page
    tcodes = page[page.index("<h2>T-codes"):page.index("<h2>T8 end states")]
    assert "committed" not in tcodes and "load-1|" not in tcodes and tcodes.count("<tr>") < 40

    out = subprocess.run([*cmd[:-1], str(tmp_path / "json"), "--json", "--duration", "4"], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    (tmp_path / "summary.json").write_text(out.stdout, encoding="utf-8")
    assert_valid("summary", tmp_path / "summary.json")
    summary = json.loads(out.stdout)
    assert summary["kind"] == "load" and summary["decision"] == "recorded" and summary["runs"] > 0


def test_a_rate_chart_draws_quiet_seconds_as_zero() -> None:
    from rig.report.charts import windows

    bursts = [(0.2, 1.0), (0.7, 1.0), (5.5, 1.0)]
    assert windows(bursts, 1, "rate") == [(0.5, 2.0), (5.5, 1.0)]  # without a span: only where something happened
    filled = windows(bursts, 1, "rate", (0.0, 6.0))
    assert [v for _, v in filled] == [2.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0]


@pytest.mark.slow
def test_runs_still_streaming_when_the_load_ends_are_counted_as_cut_not_lost(tmp_path: Path) -> None:
    """Answers far longer than the run: Locust stops the users after its stop timeout, and each run it cuts is a
    run the load counted (`cut/load_ended`), not a failure of the target and not 'no run was measured' — and a load
    in which no answer arrived whole is never green: undecided, saying how its runs ended."""
    options = LoadOptions(users=2, spawn_rate=2, duration_s=4, think_min_s=0.1, think_max_s=0.2, token_delay_ms=3000,
                          fetch_detail=False, out=tmp_path / "run")
    result = run_load(options)
    s = result.summary
    assert s is not None and s.end_states.get("cut/load_ended", 0) >= 1, s.end_states if s else None
    assert s.runs >= 1 and s.error_ratio == 0.0 and result.decision.decision == "undecided", result.decision.reasons
    assert "was delivered whole" in result.decision.reasons[0] and "cut/load_ended" in result.decision.reasons[0]
