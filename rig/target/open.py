"""Reaching a target: the embedded reference workbench, or an external one through `target.adapter`.

`connect()` is the one way every command gets an adapter and its accounts: it starts the embedded
workbench (seeding accounts through its own command line) or checks the external target is ready at its
`ready_path` and builds the configured adapter. `open_target()` adds what the gate and the quality
workload share: both accounts logged in, the corpus uploaded once, the manifest written; it returns the same
handle, set up (`rig.target.session`).
"""

from __future__ import annotations

import os
import secrets
import signal
from collections.abc import Callable, Sequence
from pathlib import Path

from rig.adapters import Adapter, WorkbenchAdapter, load_adapter_class
from rig.adapters.pace import RatePace
from rig.adapters.transport import Transport
from rig.config import RigConfig
from rig.evidence import EvidenceStore
from rig.fixtures import ensure_corpus
from rig.jsonvalue import JsonObject
from rig.redact import Redactor
from rig.runmanifest import RunManifest, write_manifest
from rig.target.embedded import EmbeddedWorkbench
from rig.target.model_proxy import ModelProxy
from rig.target.readiness import wait_ready
from rig.target.restart import restarter_for
from rig.target.session import Connection, TargetSession
from rig.target.setup import SetupNeeds, TargetSetup, prepare_target
from rig.target.showings import Showings
from rig.telemetry.otlp_receiver import OtlpReceiver

Progress = Callable[[str, int, int], None]
EMBEDDED_ADAPTER = "rig.adapters:WorkbenchAdapter"


def start_embedded(data_dir: Path, redactor: Redactor, *, extra_args: Sequence[str] = (),
                   defects: Sequence[str] = ()) -> EmbeddedWorkbench:
    """The embedded workbench with its data in `data_dir` (so a resume finds it again), a fresh chaos token."""
    chaos_token = secrets.token_urlsafe(16)
    redactor.add(chaos_token)
    target = EmbeddedWorkbench(data_dir, chaos_token=chaos_token, defects=list(defects), extra_args=list(extra_args))
    target.start()
    return target


def connect_external(config: RigConfig, redactor: Redactor, *, transport: Transport | None = None) -> Adapter:
    """The configured adapter for an external target, once its `ready_path` answers (fails fast when not)."""
    token = config.target.chaos_token()
    if token:
        redactor.add(token)
    wait_ready(config.target.url, config.target.ready_timeout, path=config.target.ready_path)
    adapter = load_adapter_class(config.target.adapter).connect(config.target.url, chaos_token=token,
                                                                transport=transport,
                                                                options=config.target.adapter_options())
    adapter.max_event_bytes = config.target.max_event_bytes
    adapter.pace = RatePace()  # a stock rate limit is waited out, said in the evidence (each 429 is an exchange)
    return adapter


def connect(config: RigConfig | None, data_dir: Path, redactor: Redactor, *, accounts: dict[str, str],
            extra_args: Sequence[str] = (), defects: Sequence[str] = (),
            started: list[EmbeddedWorkbench] | None = None) -> Connection:
    """Connect to the configured target, or start the embedded one with `accounts` (key → username) seeded.

    An embedded workbench is appended to `started` as soon as it runs, so the caller can stop it on any error.
    With `target.model_proxy` the rig's LLM fault proxy is started first, where the target calls its model.
    """
    if config is None:
        embedded = start_embedded(data_dir, redactor, extra_args=extra_args, defects=defects)
        if started is not None:
            started.append(embedded)
        made = embedded.add_accounts({name: None for name in accounts.values()})
        passwords = {key: made[name].password for key, name in accounts.items()}
        redactor.add(*passwords.values())
        workbench = WorkbenchAdapter(embedded.url, chaos_token=embedded.chaos_token)
        return Connection(workbench, EMBEDDED_ADAPTER, dict(accounts), passwords, embedded=embedded,
                          restarter=restarter_for(None, embedded=embedded), slots_metric=workbench.capabilities().slots_metric)
    proxy = ModelProxy(config.target.model_proxy, data_dir).start() if config.target.model_proxy else None
    try:
        adapter = connect_external(config, redactor)
    except BaseException:
        if proxy is not None:
            proxy.stop()
        raise
    passwords = {key: a.resolve_password() for key, a in config.accounts.items()}
    redactor.add(*passwords.values())
    t = config.target
    return Connection(adapter, t.adapter, {key: a.username for key, a in config.accounts.items()}, passwords,
                      restarter=restarter_for(t), models=config.models,
                      slots_metric=t.slots_metric or adapter.capabilities().slots_metric, ready_path=t.ready_path,
                      options=t.adapter_options(), model_proxy=proxy, answer_budget=t.answer_budget)


def stale_target(run_dir: Path, pid: int | None) -> None:
    """End a workbench this rig started for the run (found after a crash), checked by its command line."""
    if not pid:
        return
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return
    if "workbench" in cmdline and str(run_dir / "target") in cmdline:
        os.kill(pid, signal.SIGKILL)


def open_target(config: RigConfig | None, run_dir: Path, store: EvidenceStore, redactor: Redactor,
                receiver: OtlpReceiver, manifest: RunManifest, defects: list[str], started: list[EmbeddedWorkbench],
                progress: Progress | None = None, needs: SetupNeeds | None = None) -> TargetSession:
    """Connect, log accounts A and B in, upload what `needs` asks for (everything by default) once — a resume
    reuses it and uploads only what is missing; records the manifest and the target's shape."""
    if config is None:
        stale_target(run_dir, store.meta("target_pid"))
    saved = store.meta("setup")
    usernames = (saved or {}).get("usernames") or {"a": "rig-a", "b": "rig-b"}
    conn = connect(config, run_dir / "target", redactor, accounts=usernames, defects=defects, started=started,
                   extra_args=["--otlp-endpoint", receiver.endpoint])
    try:
        return _open(conn, config, run_dir, store, redactor, receiver, manifest, saved, progress, needs)
    except BaseException:
        if conn.model_proxy is not None:
            conn.model_proxy.stop()
        raise


def _open(conn: Connection, config: RigConfig | None, run_dir: Path, store: EvidenceStore, redactor: Redactor,
          receiver: OtlpReceiver, manifest: RunManifest, saved: JsonObject | None,
          progress: Progress | None, needs: SetupNeeds | None) -> TargetSession:
    if conn.embedded is not None:
        store.set_meta("target_pid", conn.embedded.pid)
    adapter = conn.adapter
    auth = {w: conn.login(w) for w in ("a", "b")}
    redactor.add(*(a.token for a in auth.values()))
    caps = adapter.capabilities()
    manifest.target_url = adapter.base_url
    manifest.target_embedded = conn.embedded is not None
    manifest.target_version = caps.version
    manifest.adapter = conn.adapter_spec
    manifest.target_shape = caps.shape()
    write_manifest(run_dir, manifest)
    store.set_meta("target_shape", manifest.target_shape)
    corpus_dir, corpus_manifest = ensure_corpus()
    manifest.corpus_digest = corpus_manifest.digest
    setup = prepare_target(adapter, auth, corpus_dir, corpus_manifest, store, embedded=conn.embedded is not None,
                           needs=needs or SetupNeeds.everything(corpus_manifest),
                           saved=TargetSetup.model_validate(saved) if saved else None, progress=progress)
    defaults = store.meta("chaos_defaults")
    if caps.chaos and defaults is None:
        defaults = adapter.chaos("GET", "settings")
        store.set_meta("chaos_defaults", defaults)
    return TargetSession.of(conn, auth=auth, setup=setup, caps=caps, receiver=receiver, corpus_dir=corpus_dir,
                            showings=Showings(store),
                            corpus=corpus_manifest, chaos_defaults=defaults)
