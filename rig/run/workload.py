"""Every run command is a workload: prepare (read and check everything it was given, before a directory exists),
execute (drive the target on the run's lifecycle), finish (decide and write the reports). `perform` runs the three
on one `open_run`, so a workload never sets up a run directory, store, tracer or target connection of its own."""

from __future__ import annotations

from pathlib import Path
from typing import Generic, Protocol, TypeVar

from rig.run.lifecycle import Run, open_run
from rig.run.options import OutputChoice
from rig.runmanifest import RunManifest

R_co = TypeVar("R_co", covariant=True)


class Workload(Protocol[R_co]):
    """A run command's job (gate, quality, load, browser …) in three steps."""

    @property
    def kind(self) -> str:
        """The run's kind: its directory's suffix and its manifest's `kind`."""
        ...

    @property
    def output(self) -> OutputChoice:
        """Where the run directory goes."""
        ...

    @property
    def resume(self) -> Path | None:
        """The run directory this run continues (None: a new run)."""
        ...

    def prepare(self) -> RunManifest:
        """Read and check the options (a ConfigError stops here, before any directory); the new run's manifest."""
        ...

    def execute(self, run: Run) -> None:
        """Drive the target; every piece of evidence goes to `run.store` as it is taken."""
        ...

    def finish(self, run: Run) -> R_co:
        """Decide, write the reports, return the result."""
        ...


OptionsT = TypeVar("OptionsT", bound=OutputChoice)


class OnOptions(Generic[OptionsT]):
    """A workload whose options model says where its run goes (`out`, and `resume` where it can continue one)."""

    options: OptionsT

    @property
    def output(self) -> OutputChoice:
        return self.options

    @property
    def resume(self) -> Path | None:
        return getattr(self.options, "resume", None)


def perform(workload: Workload[R_co]) -> R_co:
    """Prepare, then execute and finish on one run lifecycle (closed however the run ends)."""
    manifest = workload.prepare()
    with open_run(workload.kind, workload.output, manifest, resume=workload.resume) as run:
        workload.execute(run)
        return workload.finish(run)
