"""One run's lifecycle, for every workload: `open_run` claims and locks the run directory, writes (or resumes) the
manifest before any evidence, opens the evidence store with the run's redactor, and on the way out — however the run
ended — closes what the run started, last first (browser, target, tracer, span receiver), then the store and the
lock. A crash of the rig's own code inside the run is kept in the directory (`rig-error.log` and the store) and
raised as a RigError: exit 2, undecided, never the target's failure.

    with open_run("gate", options, manifest, resume=options.resume) as run:
        receiver, tracer = run.spans(listen=None, export=options.otlp_endpoint)
        session = run.open_target(config, needs=…)
        …
        run.ended()
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from rig.clock import now_iso
from rig.compare.history import record_history
from rig.config import RigConfig
from rig.errors import RigError
from rig.evidence import EvidenceStore
from rig.redact import Redactor
from rig.report.write import point_latest
from rig.run.options import OutputChoice
from rig.run_end import resuming
from rig.rundir import STORE, release, run_directory
from rig.runmanifest import RunManifest, read_manifest, write_manifest
from rig.target.embedded import EmbeddedWorkbench
from rig.target.open import connect, open_target
from rig.target.session import Connection, TargetSession
from rig.target.setup import SetupNeeds
from rig.target.spans import keep_spans, settle_target_spans
from rig.telemetry.otlp_receiver import OtlpReceiver, start_receiver
from rig.telemetry.tracing import RigTracer, configured_endpoints

Progress = Callable[[str, int, int], None]


@dataclass
class Run:
    """A run in progress: its directory, manifest, evidence store and redactor, and what it started (closed on
    the way out of `open_run`, last first)."""

    kind: str
    dir: Path
    manifest: RunManifest
    store: EvidenceStore
    redactor: Redactor
    reports_root: Path
    resumed: bool = False
    receiver: OtlpReceiver | None = None
    tracer: RigTracer | None = None
    embedded: list[EmbeddedWorkbench] = field(default_factory=list)  # the embedded target, once it runs
    _stack: ExitStack = field(default_factory=ExitStack)

    def on_close(self, close: Callable[[], object]) -> None:
        """Call `close` when the run ends, before whatever was registered earlier."""
        self._stack.callback(close)

    def save_manifest(self) -> None:
        """Write the manifest as it stands (the target's shape, the corpus digest …)."""
        write_manifest(self.dir, self.manifest)

    def spans(self, *, listen: str | None = None, export: str | None = None) -> tuple[OtlpReceiver, RigTracer]:
        """Start the run's span receiver (on `listen`, HOST:PORT, or a free loopback port) whose spans go to the
        store, and the rig's own tracer exporting to it (and to `export`)."""
        receiver = start_receiver(listen)
        self.on_close(receiver.stop)
        self.on_close(keep_spans(self.store, receiver))
        tracer = RigTracer(configured_endpoints(receiver.endpoint, export), run_name=self.dir.name, kind=self.kind)
        self.on_close(tracer.close)
        self.receiver, self.tracer = receiver, tracer
        return receiver, tracer

    def open_target(self, config: RigConfig | None, *, progress: Progress | None = None,
                    needs: SetupNeeds | None = None) -> TargetSession:
        """Connect to the target (starting the embedded one), log accounts A and B in and upload what `needs`
        asks for; the target and its fixtures are released when the run ends. Needs `spans()` first."""
        assert self.receiver is not None, "open_target needs the run's span receiver: call spans() first"
        self.on_close(self._stop_embedded)
        opened = open_target(config, self.dir, self.store, self.redactor, self.receiver, self.manifest,
                             self.manifest.defects, self.embedded, progress, needs=needs)
        self.on_close(opened.close_fixtures)
        return opened

    def connect(self, config: RigConfig | None, *, accounts: dict[str, str], extra_args: Sequence[str] = ()
                ) -> Connection:
        """Connect to the target with `accounts` (key → username; seeded on the embedded one); closed at the end."""
        self.on_close(self._stop_embedded)
        conn = connect(config, self.dir / "target", self.redactor, accounts=accounts, extra_args=extra_args,
                       started=self.embedded, defects=self.manifest.defects)
        self.on_close(conn.close)
        return conn

    def settle_spans(self) -> None:
        """The rig's spans flushed into the store, and the embedded target's, before a report reads them."""
        if self.tracer is not None:
            self.tracer.flush()
        if self.embedded and self.receiver is not None:
            settle_target_spans(self.store, self.receiver)
            self.store.set_meta("target_pid", self.embedded[0].pid)

    def ended(self) -> None:
        """The run ran to its end: its manifest says when."""
        self.manifest.ended_at = now_iso()
        self.save_manifest()

    @property
    def history_root(self) -> Path:
        """Where this run's history entry goes: the reports folder for a run inside it, else beside the run (a run
        given its own directory with `--out` never writes into the current directory's `reports/`)."""
        inside = self.dir.resolve().is_relative_to(self.reports_root.resolve())
        return self.reports_root if inside else self.dir.parent

    def publish(self, decision: str, observed: dict[str, float | None]) -> None:
        """A decided run: `reports/latest` points at it and `rig history` lists it."""
        point_latest(self.dir, self.reports_root)
        record_history(self.history_root, self.dir, self.manifest, decision, observed)

    def crashed(self, exc: BaseException) -> RigError:
        """A crash of the rig itself: its traceback to `rig-error.log` and the store; the error to report (exit 2,
        undecided — never the target's failure)."""
        return rig_crash(self.dir, self.store, exc)

    def _stop_embedded(self) -> None:
        for target in self.embedded:
            target.stop()  # its last spans are exported on shutdown, while the receiver still listens
            target.seal()  # no secret key, API key, password hash or token left in the shareable run directory


@contextmanager
def open_run(kind: str, output: OutputChoice, manifest: RunManifest, *, resume: Path | None = None,
             marks: tuple[str, ...] = STORE) -> Iterator[Run]:
    """Claim a run directory (new, or `resume`'s), write or resume its manifest, open its store; close it all on the
    way out. `manifest` describes a new run (a resumed one reads its own)."""
    run_dir = run_directory(kind, out=output.out, reports_root=output.reports_root, resume=resume, marks=marks)
    redactor = Redactor()
    try:
        if resume is not None:
            manifest = read_manifest(run_dir)
            store = EvidenceStore(run_dir / "evidence.sqlite3", redactor)
            resuming(manifest, store, now_iso())
        else:
            write_manifest(run_dir, manifest)  # first, before any evidence: a run that fails at once says what it is
            store = EvidenceStore(run_dir / "evidence.sqlite3", redactor)
    except BaseException:
        release(run_dir)
        raise
    run = Run(kind, run_dir, manifest, store, redactor, output.reports_root, resumed=resume is not None)
    try:
        with run._stack:
            try:
                yield run
            except RigError:
                raise
            except Exception as exc:  # a bug of the rig's own: undecided, its traceback kept in the run directory
                raise run.crashed(exc) from None
    finally:
        store.close()
        release(run_dir)


@contextmanager
def claim(kind: str, output: OutputChoice, *, resume: Path | None = None, marks: tuple[str, ...] = STORE
          ) -> Iterator[Path]:
    """Claim and lock a directory for a run made of other runs (the demo's parts each `open_run` inside it)."""
    run_dir = run_directory(kind, out=output.out, reports_root=output.reports_root, resume=resume, marks=marks)
    try:
        yield run_dir
    finally:
        release(run_dir)


def rig_crash(run_dir: Path, store: EvidenceStore, exc: BaseException) -> RigError:
    """A crash of the rig itself: its traceback to `rig-error.log` in the run directory and to the evidence store;
    the error to report (exit 2, undecided — never the target's failure)."""
    trace = "".join(traceback.format_exception(exc))
    log = run_dir / "rig-error.log"
    with log.open("a", encoding="utf-8") as fh:
        fh.write(f"{now_iso()}\n{trace}\n")
    try:
        store.add_evidence(None, None, "rig_error", f"{type(exc).__name__}: {exc}"[:200], {"traceback": trace})
    except Exception:  # the store itself may be what broke; the log file has it
        pass
    return RigError(f"the rig itself failed: {type(exc).__name__}: {str(exc)[:200]}",
                    fix=f"nothing was decided about the target; the traceback is in {log} — please report it")
