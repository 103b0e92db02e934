"""An ingest user: uploads papers into its project and waits until each reaches a final status (T1)."""

from __future__ import annotations

import os
import random
import time

import gevent
from locust import between, task
from locust.contrib.fasthttp import FastHttpUser

from rig.load.plan import load_secrets
from scenarios.load.recorder import RECORDER, Sample
from scenarios.load.researcher import API, fire, plan_of

FINAL = {"ready", "partial", "no_text", "failed"}


class IngestUser(FastHttpUser):
    """Uploads one of the plan's files, then polls the document until it is final."""

    wait_time = between(2, 5)
    poll_interval_s = 0.05
    timeout_s = 120.0

    def on_start(self) -> None:
        self.plan = plan_of(self.environment)
        self.username = self.plan.usernames[0]
        resp = self.client.post(f"{API}/auth/login", json={"username": self.username,
                                                            "password": load_secrets()[self.username]},
                                name="POST /auth/login")
        self.headers = {"authorization": f"Bearer {resp.json()['token']}"}

    @task
    def upload(self) -> None:
        if not self.plan.ingest_files:
            return
        path = random.choice(self.plan.ingest_files)
        project = self.plan.project_by_user[self.username]
        with open(path, "rb") as fh:
            data = fh.read()
        began = time.perf_counter_ns()
        resp = self.client.request("POST", f"{API}/projects/{project}/documents", headers=self.headers,
                                   files={"file": (os.path.basename(path), data, "application/pdf")},
                                   name="POST /projects/{id}/documents")
        if resp.status_code != 200:
            return
        doc_id = resp.json()["doc_id"]
        deadline = time.monotonic() + self.timeout_s
        status = None
        while time.monotonic() < deadline:
            status = self.client.get(f"{API}/documents/{doc_id}", headers=self.headers,
                                     name="GET /documents/{id}").json().get("status")
            if status in FINAL:
                break
            gevent.sleep(self.poll_interval_s)
        ms = (time.perf_counter_ns() - began) / 1e6
        fire("T1", "ingest", ms)
        RECORDER.record([Sample("T1", "ingest", "client", ms, label=f"status={status}", ts_ms=time.time() * 1000)])
