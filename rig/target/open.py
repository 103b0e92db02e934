"""Opening a run's target: the embedded workbench or an external one, both accounts, the corpus uploaded.

Shared by `rig gate` and `rig quality`. What the setup created is stored in the evidence store (meta
`setup`), so a resumed run reuses it instead of uploading again.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rig.adapters import WorkbenchAdapter
from rig.config import ModelChoices, RigConfig
from rig.embedded import EmbeddedWorkbench
from rig.evidence import EvidenceStore
from rig.fixtures import CorpusManifest, ensure_corpus
from rig.gate.setup import GateSetup, TargetSession, connect_external, prepare_target, start_embedded
from rig.redact import Redactor
from rig.restart import CommandRestarter, LocalProcessRestarter, Restarter
from rig.runmanifest import RunManifest, write_manifest
from rig.telemetry.otlp_receiver import OtlpReceiver, ReceivedSpan

Progress = Callable[[str, int, int], None]


@dataclass
class OpenedTarget:
    """A connected target with its corpus, and the target's default runtime settings (to restore after faults)."""

    target: TargetSession
    corpus_dir: Path
    corpus: CorpusManifest
    chaos_defaults: dict[str, Any] | None


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
                progress: Progress | None = None) -> OpenedTarget:
    """Start (or connect to) the target, log both accounts in, upload the corpus once; records the manifest.

    An embedded workbench is appended to `started` as soon as it runs, so the caller can stop it on any error.
    """
    embedded: EmbeddedWorkbench | None = None
    if config is None:
        stale_target(run_dir, store.meta("target_pid"))
        embedded, _ = start_embedded(run_dir, redactor, receiver, defects)
        started.append(embedded)
        store.set_meta("target_pid", embedded.pid)
        adapter = WorkbenchAdapter(embedded.url, chaos_token=embedded.chaos_token)
        usernames = store.meta("setup", {}).get("usernames") or {"a": "rig-a", "b": "rig-b"}
        passwords = {w: embedded.add_account(u).password for w, u in usernames.items()}
        restarter: Restarter | None = LocalProcessRestarter(embedded)
        models = ModelChoices()
    else:
        adapter = connect_external(config, redactor)  # type: ignore[assignment]
        usernames = {w: a.username for w, a in config.accounts.items()}
        passwords = {w: config.accounts[w].resolve_password() for w in ("a", "b")}
        restarter = CommandRestarter(config.target.restart_cmd, config.target.url) if config.target.restart_cmd \
            else None
        models = config.models
    redactor.add(*passwords.values())
    auth = {w: adapter.login(usernames[w], passwords[w]) for w in ("a", "b")}
    redactor.add(*(a.token for a in auth.values()))
    caps = adapter.capabilities()
    manifest.target_url = adapter.base_url
    manifest.target_embedded = config is None
    manifest.target_version = caps.version
    manifest.adapter = config.target.adapter if config else "rig.adapters:WorkbenchAdapter"
    write_manifest(run_dir, manifest)
    corpus_dir, corpus_manifest = ensure_corpus()
    manifest.corpus_digest = corpus_manifest.digest
    saved = store.meta("setup")
    if saved:
        setup = GateSetup.model_validate(saved)
    else:
        if progress:
            progress("uploading the corpus", 0, 1)
        setup = prepare_target(adapter, auth, corpus_dir, corpus_manifest, store, embedded=config is None)
    target = TargetSession(adapter=adapter, auth=auth, passwords=passwords, setup=setup, caps=caps,
                           embedded=embedded, receiver=receiver, restarter=restarter, models=models)
    if config:
        target.slots_metric = config.target.slots_metric
    defaults = store.meta("chaos_defaults")
    if caps.chaos and defaults is None:
        defaults = adapter.chaos("GET", "settings")
        store.set_meta("chaos_defaults", defaults)
    return OpenedTarget(target, corpus_dir, corpus_manifest, defaults)


def settle_target_spans(store: EvidenceStore, receiver: OtlpReceiver, timeout_s: float = 5.0) -> bool:
    """Wait (bounded) until the root span of every recorded run has arrived, so the report's trace trees are whole."""
    wanted = {r["run_id"] for r in store.runs() if r["trace_id"]}

    def arrived(spans: list[ReceivedSpan]) -> bool:
        return wanted <= {str(s.attributes.get("run.id")) for s in spans if s.name == "run"}

    return receiver.wait_for(arrived, timeout_s)


def store_span(store: EvidenceStore, span: ReceivedSpan) -> None:
    store.add_span(span.trace_id, span.span_id, span.parent_span_id, span.name, span.service, span.scope,
                   span.start_ns, span.end_ns, span.attributes)
