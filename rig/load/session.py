"""`rig load` end to end: target, plan, Locust processes, bounded wait, load.json and the report."""

from __future__ import annotations

import datetime as dt
import functools
import json
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rig import events
from rig.adapters import Adapter
from rig.adapters.models import Auth
from rig.catalog import eval_set_sha256
from rig.compare.baseline import resolve_baseline
from rig.compare.history import record_history
from rig.config import load_config
from rig.errors import ConfigError, RigError, TargetHTTPError
from rig.evidence import EvidenceStore
from rig.fixtures import ensure_corpus
from rig.interrupt import graceful_stop
from rig.load import live
from rig.load.browser_hook import browser_hook
from rig.load.context import LoadContext
from rig.load.finish import finish_load
from rig.load.options import LoadOptions
from rig.load.plan import DEFAULT_MIX, LoadPlan
from rig.load.prepare import LOAD_ACCOUNTS, paper_sets, prepare_library
from rig.load.procs import BACKSTOP_S, STOP_TIMEOUT_S, LocustProcesses, start_locust, wait_bounded
from rig.load.replay import parse_window, plan_replay, read_trace
from rig.load.soak import soak_analysis
from rig.load.stages import SHAPE_ENV, write_control
from rig.load.summary import load_summary
from rig.measure import labels
from rig.measure.events import Measure
from rig.plugins import extension_names, load_extensions
from rig.policy import Decision, load_policy
from rig.ports import free_port
from rig.redact import Redactor
from rig.report.write import point_latest
from rig.results.load import LoadSummary, observed_for_policy
from rig.rundir import release, run_directory
from rig.runmanifest import DecisionInputs, RunManifest, write_manifest
from rig.target.embedded import EmbeddedWorkbench
from rig.target.open import connect
from rig.target.session import Connection

Progress = Callable[[str, float, float], None]

MAX_REPLAY_USERS = 1000  # simulated users of a replay; more sessions than that wait for a free one


@dataclass
class LoadResult:
    run_dir: Path
    summary: LoadSummary | None
    decision: Decision
    locust_exit: int | None


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def _login_all(adapter: Adapter, usernames: dict[str, str], passwords: dict[str, str], store: EvidenceStore
               ) -> dict[str, Auth]:
    """Log every account in before the load; a refused one is counted (`login_failed:setup`) and left out.
    With none left the run cannot measure anything: a RigError naming each refused account."""
    logins: dict[str, Auth] = {}
    refused: dict[str, str] = {}
    for key, username in usernames.items():
        try:
            logins[key] = adapter.login(username, passwords[key])
        except TargetHTTPError as exc:
            refused[key] = f"{username}: {exc.status}" + (f" {exc.code}" if exc.code else "")
    if refused:
        store.add_measures([Measure(code="error", source="client", value=1.0, unit="count", scenario="setup",
                                    label=labels.login_failed(f"setup:{usernames[k]}")) for k in refused])
        store.set_meta("setup_login_failures", refused)
    if not logins:
        raise RigError(f"every login failed, nothing to measure: {'; '.join(refused.values())}",
                       fix="check the accounts' usernames and the password environment variables in rig.yaml")
    return logins


def run_load(options: LoadOptions, progress: Progress | None = None) -> LoadResult:
    """Run one bounded load test, firing the `rig.events` load hooks on the way.

    `load_init` before anything starts (a listener's ConfigError stops the run there); `load_starting` once the
    target is up and before Locust starts; `load_running` in a thread per listener beside Locust (the browser
    users of `--browsers` run the same way); `load_finished` after Locust ended, while the target is still up,
    where a listener may add to the summary before it is decided.
    """
    if options.worker_only:
        return _run_workers_only(options)
    load_extensions()
    if options.chaos and "chaos" not in extension_names():
        raise ConfigError("--chaos needs the chaos plug-in, which is not installed",
                          fix="install the rig with its chaos package (pip install -e .)")
    events.load_init.fire(options=options)
    if options.target and not options.config:
        raise ConfigError("--target needs --config rig.yaml (accounts)", fix="see docs/rig.example.yaml")
    if options.slots is not None and options.target:
        raise ConfigError("--slots sets the embedded workbench's run slots; an external target has its own",
                          fix="drop --slots, or run without --target")
    config = load_config(options.config) if options.config else None
    if config and options.target:
        config.target.url = options.target
    policy = load_policy(options.policy)
    source = read_trace(options.replay) if options.replay else None  # a bad trace stops here, before any load
    window = parse_window(options.window) if source else None
    baseline = None
    if options.baseline:  # resolved before anything starts: a bad baseline is a ConfigError, not a wasted run

        baseline = resolve_baseline(options.baseline, "load", config.target.url if config else "embedded",
                                    options.reports_root)
    run_dir = run_directory("load", out=options.out, reports_root=options.reports_root)
    redactor = Redactor()
    manifest = RunManifest(kind="load", started_at=_now(), eval_set_sha256=eval_set_sha256(),
                           policy=policy, seeds={"arrival": options.seed},
                           decision_inputs=DecisionInputs(baseline=str(baseline) if baseline else None),
                           chaos_schedule={"file": str(options.chaos)} if options.chaos else None,
                           defects=list(options.defects))
    write_manifest(run_dir, manifest)  # first: a run that fails at once still says what it is
    store = EvidenceStore(run_dir / "evidence.sqlite3", redactor)
    conn: Connection | None = None
    started: list[EmbeddedWorkbench] = []
    procs: LocustProcesses | None = None
    threads: list[threading.Thread] = []
    ctx: LoadContext | None = None
    try:
        corpus_dir, corpus_manifest = ensure_corpus()
        manifest.corpus_digest = corpus_manifest.digest
        extra = ["--token-delay-ms", str(options.token_delay_ms)] if options.token_delay_ms is not None else []
        if options.slots is not None:
            extra += ["--slots", str(options.slots)]
        if options.shape is not None and options.shape.stages:  # the stages decide how long the run lasts
            options = options.model_copy(update={"duration_s": options.shape.duration_s,
                                                 "users": max(options.shape.max_users, 1)})
        if options.otlp_endpoint:
            extra += ["--otlp-endpoint", options.otlp_endpoint]
        conn = connect(config, run_dir / "target", redactor, accounts={n: n for n in LOAD_ACCOUNTS},
                       extra_args=extra, started=started, defects=options.defects)
        adapter = conn.adapter
        keys = list(conn.usernames)
        logins = _login_all(adapter, conn.usernames, conn.passwords, store)  # every account, up front
        redactor.add(*(a.token for a in logins.values()))
        keys = [k for k in keys if k in logins]
        owner = logins[keys[0]]
        if progress:
            progress("uploading the corpus", 0, options.duration_s)
        members = [logins[k] for k in keys[1:]]
        project, docs, reached = prepare_library(adapter, owner, members, corpus_dir, corpus_manifest)
        passwords = {conn.usernames[k]: conn.passwords[k] for k in keys if conn.usernames[k] in reached}
        left_out = [conn.usernames[k] for k in keys if conn.usernames[k] not in reached]
        if left_out:  # said, never silent: every user then runs as the accounts that reach the library
            said = (f"only {', '.join(sorted(reached))} of the accounts can reach the load's library: the target "
                    f"offers no way to give {', '.join(left_out)} the project (members); every user runs as "
                    f"{', '.join(sorted(reached))}")
            store.add_evidence(None, None, "setup", "accounts the load uses", {"used": sorted(reached),
                                                                               "left_out": left_out, "why": said})
            if progress:
                progress(said, 0, options.duration_s)
        sets = paper_sets(docs)
        replay = None
        if source is not None:
            replay = plan_replay(source, questions=[q for ps in sets for q in ps.questions], paper_sets=len(sets),
                                 speed=options.speed, window=window, max_sessions=options.max_sessions,
                                 anonymise=options.anonymise)
            simulated = min(len(replay.sessions), MAX_REPLAY_USERS)  # one user a session (they queue past the cap)
            options = options.model_copy(update={"duration_s": replay.duration_s(), "users": simulated,
                                                 "spawn_rate": max(options.spawn_rate, float(simulated))})
            manifest.replay = {"file": str(options.replay), "sha256": source.sha256, "format": source.format,
                               "speed": replay.speed, "window_s": replay.window_s, "sessions": len(replay.sessions),
                               "turns": replay.turns, "anonymised": replay.anonymised}
        plan = LoadPlan(
            target_url=adapter.base_url, adapter=conn.adapter_spec, adapter_options=conn.options,
            project_by_user={n: project for n in passwords},
            paper_sets=sets, usernames=list(passwords), replay=replay,
            ingest_files=[str(corpus_dir / f.file) for f in corpus_manifest.corpus if f.text_pages],
            arrival=options.arrival, rate_per_s=options.rate_per_s, seed=options.seed, duration_s=options.duration_s,
            think_min_s=options.think_min_s, think_max_s=options.think_max_s, fetch_detail=options.fetch_detail,
            metrics_port=options.metrics_port or free_port(), metrics_host=options.metrics_host,
            pushgateway=options.pushgateway, store_path=str(run_dir / "evidence.sqlite3"),
            slots_metric=conn.slots_metric, weights={**DEFAULT_MIX, **options.mix},
            otlp_endpoint=options.otlp_endpoint)
        store.set_meta("plan", json.loads(plan.dumps()))
        manifest.target_url = adapter.base_url
        manifest.target_embedded = conn.embedded is not None
        manifest.target_version = adapter.capabilities().version
        manifest.adapter = conn.adapter_spec
        write_manifest(run_dir, manifest)
        users = ["ReplayUser"] if replay else ["OpenLoopResearcher" if options.arrival != "closed" else "ResearcherUser"]
        if options.ingest_users:
            users.append("IngestUser")
        ctx = LoadContext(options, run_dir, store, conn, plan, passwords)
        shape_env: dict[str, str] = {}
        if options.shape is not None:
            shape = options.shape
            if shape.control is not None:  # a steered shape: its control file lives in the run directory
                control = run_dir / shape.control
                write_control(control, 0, 1.0)
                shape = shape.model_copy(update={"control": str(control)})
            store.set_meta("shape", shape.model_dump(mode="json"))
            shape_env[SHAPE_ENV] = shape.model_dump_json()
        events.load_starting.fire(run=ctx)
        procs = start_locust(run_dir, plan.dumps(), users, host=adapter.base_url,
                             total_users=options.users + options.ingest_users,
                             spawn_rate=options.spawn_rate, duration_s=options.duration_s, workers=options.workers,
                             expect_workers=options.expect_workers, secrets_json=json.dumps(passwords),
                             master_host=options.master_host, master_port=options.master_port,
                             master_bind=options.master_bind, env_extra=shape_env)
        ctx.started_at = time.time() * 1000
        store.set_meta("load_started_ms", ctx.started_at)
        beside = events.load_running.calls(run=ctx)
        if options.browsers:
            beside.append(functools.partial(browser_hook, ctx))
        for call in beside:
            t = threading.Thread(target=call, name=f"load-{getattr(call, '__name__', 'browsers')}", daemon=True)
            t.start()
            threads.append(t)
        began = time.monotonic()
        main = procs.master
        said, said_at = "load running", began
        with graceful_stop() as stop:  # a first Ctrl-C/SIGTERM: users finish their task, then the reports
            while main is not None and main.poll() is None and \
                    time.monotonic() - began < options.duration_s + BACKSTOP_S + 30:
                if progress:
                    if time.monotonic() - said_at >= live.EVERY_S:
                        said, said_at = f"load running: {live.so_far(store, time.monotonic() - began)}", time.monotonic()
                    progress(said, min(time.monotonic() - began, options.duration_s), options.duration_s)
                if stop.event.wait(0.5):
                    if progress:
                        progress("stopping: users finish their task", time.monotonic() - began, options.duration_s)
                    main.send_signal(signal.SIGTERM)  # Locust stops its users within --stop-timeout, then quits
                    code = wait_bounded(procs, STOP_TIMEOUT_S + 30)
                    break
            else:
                code = wait_bounded(procs, 1.0)
        elapsed = time.monotonic() - began
        ctx.stopped.set()
        for t in threads:
            t.join(timeout=options.duration_s + 60)
        manifest.ended_at = _now()
        write_manifest(run_dir, manifest)
        summary = load_summary(store, run_dir, min(options.duration_s, elapsed) if stop else options.duration_s,
                               options.workers, options.users)
        if options.soak:  # the hold: from every user running to the end of the load
            hold_from = float(store.meta("load_spawned_ms") or ctx.started_at)
            summary.soak = soak_analysis(store, hold_from, ctx.started_at + elapsed * 1000, policy.thresholds)
        events.load_finished.fire(run=ctx, summary=summary)
        if stop:  # `rig report` keeps saying so
            store.set_meta("stopped", f"{stop.reason} ({elapsed:.0f} of {options.duration_s:.0f} s); {summary.runs} "
                           "run(s) counted")
        if code not in (0, 1) and not stop:
            (run_dir / "load.json").write_text(summary.model_dump_json(indent=2) + "\n", encoding="utf-8")
            tail = (run_dir / "locust-master.log").read_text(errors="replace")[-1500:]
            raise RigError(f"locust exited with {code}; see {run_dir}/locust-master.log:\n{tail}",
                           fix="check the target is reachable and the plan is valid")
        decision = finish_load(run_dir, store, manifest, summary)
        point_latest(run_dir, options.reports_root)
        record_history(options.reports_root, run_dir, manifest, decision.decision, observed_for_policy(summary))
        return LoadResult(run_dir, summary, decision, code)
    finally:
        if ctx is not None:
            ctx.stopped.set()
            events.load_closed.fire(run=ctx)  # however the run ended: what load_starting took is released
        if procs is not None:
            procs.stop()
        if conn is not None:
            conn.close()
        for target in started:
            target.stop()
        store.close()
        release(run_dir)


WORKER_ONLY_LIMIT_S = 24 * 3600 + 2 * BACKSTOP_S


def _run_workers_only(options: LoadOptions) -> LoadResult:
    """Join a master on another machine with `--workers K --master-host HOST` (it sends the plan)."""
    if not options.master_host or not options.config:
        raise ConfigError("worker-only mode needs --master-host and --config (the accounts' passwords)",
                          fix="rig load --worker-only --workers 4 --master-host 10.0.0.5 --config rig.yaml")
    config = load_config(options.config)
    passwords = {a.username: a.resolve_password() for a in config.accounts.values()}
    run_dir = run_directory("worker", out=options.out, reports_root=options.reports_root, marks=())
    procs = start_locust(run_dir, "", [], total_users=0, spawn_rate=1, duration_s=options.duration_s,
                         workers=max(options.workers, 1), expect_workers=None, secrets_json=json.dumps(passwords),
                         master_host=options.master_host, master_port=options.master_port, worker_only=True)
    # the run's length is the master's to decide: a worker quits when its master does, or a minute after it
    # last heard from it (Locust's heartbeat timeout); the longest run a master can be asked for bounds the wait
    code = wait_bounded(procs, WORKER_ONLY_LIMIT_S)
    return LoadResult(run_dir, None, Decision(decision="recorded", reasons=["workers finished; the master decides"]),
                      code)
