"""An ingest user: uploads one of the plan's papers into its project and waits until it is final (T1)."""

from __future__ import annotations

import random
import time
from pathlib import Path

import gevent
from locust import between, task

from rig.clock import now_ns
from rig.corpus_load import server_t1_ms
from rig.errors import TargetError
from rig.load import AdapterUser, error_row
from rig.measure import ingest_measures


class IngestUser(AdapterUser):
    """Uploads one of the plan's files, then polls the document until its status is final."""

    wait_time = between(2, 5)
    poll_interval_s = 0.05
    timeout_s = 120.0

    def pick_account(self) -> str:
        return self.plan.usernames[0]

    @task
    def upload(self) -> None:
        if not self.plan.ingest_files:
            return
        path = Path(random.choice(self.plan.ingest_files))
        project = self.plan.project_by_user[self.username]
        try:
            up = self.adapter.upload(self.auth, project, path)
            deadline = time.monotonic() + self.timeout_s
            doc = self.adapter.document(self.auth, up.doc_id)
            while not doc.final and time.monotonic() < deadline:
                gevent.sleep(self.poll_interval_s)
                doc = self.adapter.document(self.auth, up.doc_id)
        except TargetError as exc:
            self.record([error_row("ingest", f"upload:{type(exc).__name__}")])
            return
        final_ms = (now_ns() - up.accepted_ns) / 1e6 if doc.final else None
        self.record(ingest_measures(path.name, final_ms, server_t1_ms(doc) if doc.final else None,
                                    doc.status if doc.final else "timeout", scenario="ingest"))
