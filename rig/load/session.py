"""`rig load` end to end on the run lifecycle (`rig.run`): target, library, plan, Locust processes, bounded wait,
load.json and the report."""

from __future__ import annotations

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
from rig.clock import now_iso
from rig.compare.baseline import resolve_baseline
from rig.config import RigConfig, load_config
from rig.errors import ConfigError, RigError, TargetHTTPError
from rig.evidence import EvidenceStore
from rig.fixtures import CorpusManifest, ensure_corpus
from rig.interrupt import StopRequest as StopSignal
from rig.interrupt import graceful_stop
from rig.load import live
from rig.load.browser_hook import browser_hook
from rig.load.context import LoadContext
from rig.load.environment import is_local
from rig.load.finish import finish_load
from rig.load.options import LoadOptions
from rig.load.plan import DEFAULT_MIX, LoadPlan, PaperSet
from rig.load.prepare import LOAD_ACCOUNTS, paper_sets, prepare_library
from rig.load.procs import BACKSTOP_S, STOP_TIMEOUT_S, LocustProcesses, start_locust, wait_bounded
from rig.load.prompts import Prompt, read_prompts, synthetic_prompts
from rig.load.replay import TraceSource, parse_window, plan_replay, read_trace
from rig.load.soak import soak_analysis
from rig.load.stages import SHAPE_ENV, write_control
from rig.load.summary import load_summary
from rig.measure import labels
from rig.measure.events import Measure
from rig.plugins import extension_names, load_extensions
from rig.policy import Decision, Policy, load_policy
from rig.ports import free_port
from rig.redact import Redactor
from rig.results.load import LoadSummary, observed_for_policy
from rig.run import OnOptions, Run, perform
from rig.rundir import run_directory
from rig.runmanifest import DecisionInputs, ReplaySource, RunManifest
from rig.target.session import Connection

Progress = Callable[[str, float, float], None]

MAX_REPLAY_USERS = 1000  # simulated users of a replay; more sessions than that wait for a free one


@dataclass
class LoadResult:
    run_dir: Path
    summary: LoadSummary | None
    decision: Decision
    locust_exit: int | None


def _login_all(adapter: Adapter, usernames: dict[str, str], passwords: dict[str, str], store: EvidenceStore
               ) -> dict[str, Auth]:
    """Log every account in before the load; a refused one is counted (`login_failed:setup`) and left out.
    With none left the run cannot measure anything: a RigError naming each refused account."""
    logins: dict[str, Auth] = {}
    refused: dict[str, str] = {}
    own_error = False  # a 5xx: the target failed on login, whatever the password
    for key, username in usernames.items():
        try:
            logins[key] = adapter.login(username, passwords[key])
        except TargetHTTPError as exc:
            refused[key] = f"{username}: {exc.status}" + (f" {exc.code}" if exc.code else "")
            own_error |= exc.status >= 500
    if refused:
        store.add_measures([Measure(code="error", source="client", value=1.0, unit="count", scenario="setup",
                                    label=labels.login_failed(f"setup:{usernames[k]}")) for k in refused])
        store.set_meta("setup_login_failures", refused)
    if not logins:
        raise RigError(f"every login failed, nothing to measure: {'; '.join(refused.values())}"
                       + (" (the target's own error, not a refused password)" if own_error else ""),
                       fix="check the target's logs; it fails on login" if own_error else
                       "check the accounts' usernames and the password environment variables in rig.yaml")
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
    return perform(LoadRun(options, progress))


@dataclass
class Driven:
    """How Locust's part of the run ended: its exit code, how long it ran, and the stop signal, if one came."""

    code: int | None
    elapsed_s: float
    stop: StopSignal


class LoadRun(OnOptions[LoadOptions]):
    """`rig load` on the run lifecycle: the library set up, Locust driven for a bounded time, load.json decided."""

    def __init__(self, options: LoadOptions, progress: Progress | None = None) -> None:
        self.options = options
        self.progress = progress
        self.config: RigConfig | None = None
        self.policy = Policy()
        self.source: TraceSource | None = None
        self.ctx: LoadContext | None = None
        self.driven: Driven | None = None
        self.prompts: list[Prompt] | None = None  # None: the eval set's questions


    @property
    def kind(self) -> str:
        """`load`, or `capacity` for the search `rig capacity` steers (its own directory, title and history)."""
        return self.options.kind

    def prepare(self) -> RunManifest:
        """Plug-ins, config, policy, the trace to replay and the baseline: a bad one stops here, before any load."""
        o = self.options
        load_extensions()
        if o.chaos and "chaos" not in extension_names():
            raise ConfigError("--chaos needs the chaos plug-in, which is not installed",
                              fix="install the rig with its chaos package (pip install -e .)")
        events.load_init.fire(options=o)
        if o.slots is not None and o.target:
            raise ConfigError("--slots sets the embedded workbench's run slots; an external target has its own",
                              fix="drop --slots, or run without --target")
        self.config = o.rig_config()
        self.policy = load_policy(o.policy)
        self.source = read_trace(o.replay) if o.replay else None
        self.prompts = (read_prompts(o.prompts) if o.prompts else  # a bad file stops here, before any load
                        synthetic_prompts(o.synthetic_prompts, seed=o.seed) if o.synthetic_prompts else None)
        if self.source is not None:
            parse_window(o.window)
        baseline = (resolve_baseline(o.baseline, o.kind, self.config.target.url if self.config else "embedded",
                                     o.reports_root) if o.baseline else None)
        return RunManifest(kind=o.kind, started_at=now_iso(), eval_set_sha256=eval_set_sha256(), policy=self.policy,
                           seeds={"arrival": o.seed}, defects=list(o.defects),
                           decision_inputs=DecisionInputs(baseline=str(baseline) if baseline else None),
                           chaos_schedule={"file": str(o.chaos)} if o.chaos else None)

    def execute(self, run: Run) -> None:
        """Connect, log every account in, set the library up, plan, then drive Locust to its end."""
        o = self.options
        if o.shape is not None and o.shape.stages:  # the stages decide how long the run lasts
            self.options = o = o.model_copy(update={"duration_s": o.shape.duration_s, "users": max(o.shape.max_users, 1)})
        conn = run.connect(self.config, accounts={n: n for n in LOAD_ACCOUNTS}, extra_args=_embedded_args(o))
        library = set_up_library(conn, run.store, run.redactor, say=self._say, prompts=self.prompts)
        if o.ingest_users and not library.ingest_files:
            raise ConfigError("--ingest-users upload papers, and the target takes no uploads (capability upload)",
                              fix="drop --ingest-users for this target")
        run.manifest.corpus_digest = library.corpus.digest
        plan = self._plan(run, conn, library)
        run.manifest.target_url = conn.adapter.base_url
        run.manifest.target_embedded = conn.embedded is not None
        run.manifest.target_version = conn.adapter.capabilities().version
        run.manifest.adapter = conn.adapter_spec
        run.save_manifest()
        self.ctx = ctx = LoadContext(self.options, run.dir, run.store, conn, plan, library.passwords)
        run.on_close(functools.partial(_closed, ctx))
        self.driven = drive_locust(run, ctx, self._say)

    def finish(self, run: Run) -> LoadResult:
        """The summary (soak slopes too), the `load_finished` listeners, the decision and the reports."""
        o, ctx, driven = self.options, self.ctx, self.driven
        assert ctx is not None and driven is not None
        run.ended()
        stopped = bool(driven.stop)
        # what ran: the planned length, or less when the run ended early (stopped, or a capacity search done)
        summary = load_summary(run.store, run.dir, min(o.duration_s, driven.elapsed_s), o.workers, o.users)
        if o.soak:  # the hold: from every user running to the end of the load
            hold_from = float(run.store.meta("load_spawned_ms") or ctx.started_at)
            summary.soak = soak_analysis(run.store, hold_from, ctx.started_at + driven.elapsed_s * 1000,
                                         self.policy.thresholds, target_local=is_local(run.manifest.target_url or ""))
        events.load_finished.fire(run=ctx, summary=summary)
        if stopped:  # `rig report` keeps saying so
            run.store.set_meta("stopped", f"{driven.stop.reason} ({driven.elapsed_s:.0f} of {o.duration_s:.0f} s); "
                               f"{summary.runs} run(s) counted")
        if driven.code not in (0, 1) and not stopped:
            (run.dir / "load.json").write_text(summary.model_dump_json(indent=2) + "\n", encoding="utf-8")
            tail = (run.dir / "locust-master.log").read_text(errors="replace")[-1500:]
            raise RigError(f"locust exited with {driven.code}; see {run.dir}/locust-master.log:\n{tail}",
                           fix="check the target is reachable and the plan is valid")
        decision = finish_load(run.dir, run.store, run.manifest, summary)
        run.publish(decision.decision, observed_for_policy(summary))
        return LoadResult(run.dir, summary, decision, driven.code)

    def _say(self, text: str, done: float = 0.0) -> None:
        if self.progress:
            self.progress(text, done, self.options.duration_s)

    def _plan(self, run: Run, conn: Connection, library: Library) -> LoadPlan:
        """What every Locust process runs: the researchers' mix (or the replay), the library, the metrics ports."""
        o = self.options
        replay = None
        if self.source is not None:
            replay = plan_replay(self.source, questions=[q for ps in library.sets for q in ps.questions],
                                 paper_sets=len(library.sets), speed=o.speed, window=parse_window(o.window),
                                 max_sessions=o.max_sessions, anonymise=o.anonymise)
            simulated = min(len(replay.sessions), MAX_REPLAY_USERS)  # one user a session (they queue past the cap)
            self.options = o = o.model_copy(update={"duration_s": replay.duration_s(), "users": simulated,
                                                    "spawn_rate": max(o.spawn_rate, float(simulated))})
            run.manifest.replay = ReplaySource(file=str(o.replay), sha256=self.source.sha256,
                                               format=self.source.format, speed=replay.speed, window_s=replay.window_s,
                                               sessions=len(replay.sessions), turns=replay.turns,
                                               anonymised=replay.anonymised)
        plan = LoadPlan(
            target_url=conn.adapter.base_url, adapter=conn.adapter_spec, adapter_options=conn.options,
            project_by_user={n: library.project for n in library.passwords}, paper_sets=library.sets,
            usernames=list(library.passwords), replay=replay, ingest_files=library.ingest_files,
            arrival=o.arrival, rate_per_s=o.rate_per_s, seed=o.seed, duration_s=o.duration_s,
            think_min_s=o.think_min_s, think_max_s=o.think_max_s, fetch_detail=o.fetch_detail,
            metrics_port=o.metrics_port or free_port(), metrics_host=o.metrics_host, pushgateway=o.pushgateway,
            store_path=str(run.dir / "evidence.sqlite3"), slots_metric=conn.slots_metric,
            weights={**DEFAULT_MIX, **o.mix}, otlp_endpoint=o.otlp_endpoint,
            answer_events=conn.answer_budget.events, answer_seconds=conn.answer_budget.seconds)
        run.store.set_meta("plan", json.loads(plan.dumps()))
        return plan


def _closed(ctx: LoadContext) -> None:
    """However the run ended: what `load_starting` took is released."""
    ctx.stopped.set()
    events.load_closed.fire(run=ctx)


def _embedded_args(options: LoadOptions) -> list[str]:
    """The embedded workbench's command-line knobs this load asks for (an external target ignores them)."""
    extra = ["--token-delay-ms", str(options.token_delay_ms)] if options.token_delay_ms is not None else []
    if options.slots is not None:
        extra += ["--slots", str(options.slots)]
    if options.otlp_endpoint:
        extra += ["--otlp-endpoint", options.otlp_endpoint]
    return extra


@dataclass
class Library:
    """The load's library on the target: its project, the accounts that reach it, the papers' question sets."""

    project: str
    passwords: dict[str, str]  # by username, only the accounts that reach the project
    sets: list[PaperSet]
    ingest_files: list[str]
    corpus: CorpusManifest


def set_up_library(conn: Connection, store: EvidenceStore, redactor: Redactor,
                   say: Callable[[str], None], prompts: list[Prompt] | None = None) -> Library:
    """Log every account in (up front), upload the corpus as the first, share the project with the others; the
    accounts that cannot reach it are said and left out (every user then runs as those that can)."""
    logins = _login_all(conn.adapter, conn.usernames, conn.passwords, store)
    redactor.add(*(a.token for a in logins.values()))
    keys = [k for k in conn.usernames if k in logins]
    corpus_dir, corpus = ensure_corpus()
    uploads = not conn.adapter.capabilities().missing("upload")
    say("uploading the corpus" if uploads else "the target takes no uploads: the eval set's questions go to the "
        "documents it already holds")
    project, docs, reached = prepare_library(conn.adapter, logins[keys[0]], [logins[k] for k in keys[1:]],
                                             corpus_dir, corpus)
    passwords = {conn.usernames[k]: conn.passwords[k] for k in keys if conn.usernames[k] in reached}
    left_out = [conn.usernames[k] for k in keys if conn.usernames[k] not in reached]
    if left_out:  # said, never silent
        said = (f"only {', '.join(sorted(reached))} of the accounts can reach the load's library: the target "
                f"offers no way to give {', '.join(left_out)} the project (members); every user runs as "
                f"{', '.join(sorted(reached))}")
        store.add_evidence(None, None, "setup", "accounts the load uses", {"used": sorted(reached),
                                                                           "left_out": left_out, "why": said})
        say(said)
    if not uploads:
        store.add_evidence(None, None, "setup", "the target takes no uploads: no paper of the rig's is on it", {
            "why": "the target's description configures no upload operation (capability upload); each question is "
                   "asked in a session that names no document"})
    return Library(project, passwords, paper_sets(docs, prompts),
                   [str(corpus_dir / f.file) for f in corpus.corpus if f.text_pages] if uploads else [], corpus)


def drive_locust(run: Run, ctx: LoadContext, say: Callable[[str, float], None]) -> Driven:
    """Start Locust (and the `load_running` listeners beside it), wait for its end — a first Ctrl-C/SIGTERM lets
    the users finish their task — and join the listeners."""
    o, plan = ctx.options, ctx.plan
    users = ["ReplayUser"] if plan.replay else ["OpenLoopResearcher" if o.arrival != "closed" else "ResearcherUser"]
    if o.ingest_users:
        users.append("IngestUser")
    events.load_starting.fire(run=ctx)
    procs = start_locust(run.dir, plan.dumps(), users, host=plan.target_url, total_users=o.users + o.ingest_users,
                         spawn_rate=o.spawn_rate, duration_s=o.duration_s, workers=o.workers,
                         expect_workers=o.expect_workers, secrets_json=json.dumps(ctx.passwords),
                         master_host=o.master_host, master_port=o.master_port, master_bind=o.master_bind,
                         env_extra=_shape_env(run, o))
    run.on_close(procs.stop)
    ctx.started_at = time.time() * 1000
    run.store.set_meta("load_started_ms", ctx.started_at)
    threads = _beside(ctx)
    began = time.monotonic()
    with graceful_stop() as stop:
        code = _wait(procs, o.duration_s, stop, lambda text, t: say(text, min(t, o.duration_s)), run.store)
    elapsed = time.monotonic() - began
    ctx.stopped.set()
    for t in threads:
        t.join(timeout=o.duration_s + 60)
    return Driven(code, elapsed, stop)


def _shape_env(run: Run, options: LoadOptions) -> dict[str, str]:
    """The stages' environment for Locust's shape class; a steered shape's control file lives in the run directory."""
    if options.shape is None:
        return {}
    shape = options.shape
    if shape.control is not None:
        control = run.dir / shape.control
        write_control(control, 0, 1.0)
        shape = shape.model_copy(update={"control": str(control)})
    run.store.set_meta("shape", shape.model_dump(mode="json"))
    return {SHAPE_ENV: shape.model_dump_json()}


def _beside(ctx: LoadContext) -> list[threading.Thread]:
    """The `load_running` listeners (and the browser users) started, each in its own thread."""
    beside = events.load_running.calls(run=ctx)
    if ctx.options.browsers:
        beside.append(functools.partial(browser_hook, ctx))
    threads = []
    for call in beside:
        t = threading.Thread(target=call, name=f"load-{getattr(call, '__name__', 'browsers')}", daemon=True)
        t.start()
        threads.append(t)
    return threads


def _wait(procs: LocustProcesses, duration_s: float, stop: StopSignal, say: Callable[[str, float], None],
          store: EvidenceStore) -> int | None:
    """Locust's master until it exits by its own clock (bounded past it); a stop signal stops it gracefully."""
    began = time.monotonic()
    main = procs.master
    said, said_at = "load running", began
    while main is not None and main.poll() is None and time.monotonic() - began < duration_s + BACKSTOP_S + 30:
        if time.monotonic() - said_at >= live.EVERY_S:
            said, said_at = f"load running: {live.so_far(store, time.monotonic() - began)}", time.monotonic()
        say(said, time.monotonic() - began)
        if stop.event.wait(0.5):
            say("stopping: users finish their task", time.monotonic() - began)
            main.send_signal(signal.SIGTERM)  # Locust stops its users within --stop-timeout, then quits
            return wait_bounded(procs, STOP_TIMEOUT_S + 30)
    return wait_bounded(procs, 1.0)


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
