"""The load shape on Locust's master (the locustfile imports it only when `RIG_SHAPE` is set): stages by the
clock, or what the rig last wrote to the control file. It never ends the run itself — the rig's clock
(`rig.load.locust_hooks`) does, so the workers' last reports still count — and a steered shape asks for that ending
when the rig writes `stop`."""

from __future__ import annotations

import time
from pathlib import Path

from locust import LoadTestShape

from rig.load.locust_hooks import end_run_now
from rig.load.process import RECORDER
from rig.load.stages import shape_from_env
from rig.results.shape import ShapeControl, ShapeSpec


class RigShape(LoadTestShape):
    """The run's shape on the master: stages by the clock, or what the rig last wrote to the control file."""

    def __init__(self) -> None:
        super().__init__()
        spec = shape_from_env()
        self.spec = spec or ShapeSpec()
        self.last: tuple[int, float] = (0, 1.0)
        self.ending = False
        self.noted = False

    def tick(self) -> tuple[int, float]:
        if not self.noted and RECORDER.store is not None:  # where the stages lie on the run's time axis
            RECORDER.store.set_meta("shape_started_ms", time.time() * 1000 - self.get_run_time() * 1000)
            self.noted = True
        if self.spec.control is None:
            t = self.get_run_time()
            return self._shown(self.spec.users_at(t), self.spec.stage_at(t))
        try:
            wanted = ShapeControl.model_validate_json(Path(self.spec.control).read_bytes())
        except (OSError, ValueError):  # mid-rewrite (the rig replaces it whole) or not yet there: keep the last
            return self.last
        if wanted.stop and not self.ending and self.runner is not None:
            self.ending = True
            end_run_now(self.runner.environment)
        self.last = (wanted.users, wanted.spawn_rate)
        return self._shown(self.last, wanted.step)

    @staticmethod
    def _shown(wanted: tuple[int, float], stage: int) -> tuple[int, float]:
        """What the shape asks for, on the master's metrics (`rig_shape_users`, `rig_shape_stage`) as it asks."""
        RECORDER.metrics.shape_users.set(wanted[0])
        RECORDER.metrics.shape_stage.set(stage)
        return wanted
