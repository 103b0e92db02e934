"""`rig browser`: browser users against a target (the embedded workbench by default), one run directory.

Sets up an account and a project with P32 (and P13) on the embedded workbench, or uses account `a` of
`rig.yaml` on an external target, starts one Chromium and drives the users; writes the measures to
`evidence.sqlite3` and a summary to `browser.json`, with a screenshot-free record of every turn.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, ClassVar

from pydantic import Field

from rig.browser.host import BrowserHost
from rig.browser.selectors import load_selectors
from rig.browser.session import BrowserPlan, BrowserRunResult, BrowserSummary, drive_users
from rig.catalog import eval_set_sha256
from rig.clock import now_iso
from rig.config import RigConfig
from rig.corpus_load import load_corpus
from rig.fixtures import ensure_corpus
from rig.run import EmbeddedChoice, Flag, OnOptions, OutputChoice, Run, TargetChoice, perform
from rig.runmanifest import RunManifest

QUESTIONS = ["2.9%指什么？", "请查清买家保护与徽章关系并给依据。", "这篇论文的样本来自哪里？",
             "What did the buyer protection program change?"]


class BrowserRunOptions(TargetChoice, EmbeddedChoice, OutputChoice):
    """What `rig browser` was asked to do."""

    PANEL: ClassVar[str] = "Browser"
    RANK: ClassVar[int] = 30
    users: Annotated[int, Field(ge=1), Flag("Browser users at once, each in its own context.")] = 1
    turns: Annotated[int, Field(ge=1), Flag("Questions each user asks, one after the other.")] = 3
    selectors: Annotated[Path | None, Flag("Selector map of the target's UI (YAML; the workbench's by default).")
                         ] = None
    deadline_s: Annotated[float, Field(gt=0), Flag("Seconds after which no new turn starts.", names=("--deadline",))
                          ] = 180.0


def run_browser(options: BrowserRunOptions) -> tuple[BrowserSummary, BrowserRunResult]:
    """Drive the users and write browser.json; returns the summary and the per-turn records."""
    return perform(BrowserRun(options))


class BrowserRun(OnOptions[BrowserRunOptions]):
    """`rig browser` on the run lifecycle: one account, a project with P32, one Chromium, the users."""

    kind = "browser"

    def __init__(self, options: BrowserRunOptions) -> None:
        self.options = options
        self.config: RigConfig | None = None
        self.result: BrowserRunResult | None = None


    def prepare(self) -> RunManifest:
        """The selector map and the config, read before anything starts."""
        load_selectors(self.options.selectors)  # a bad map is a ConfigError before a browser starts
        self.config = self.options.rig_config()
        return RunManifest(kind="browser", started_at=now_iso(), eval_set_sha256=eval_set_sha256(),
                           defects=self.options.defects)

    def execute(self, run: Run) -> None:
        """Log account a in, upload P32 into a new project, drive the users in one Chromium."""
        o = self.options
        extra = ["--token-delay-ms", str(o.token_delay_ms)] if o.token_delay_ms is not None else []
        conn = run.connect(self.config, accounts={"a": "browser"}, extra_args=extra)
        adapter, username, password = conn.adapter, conn.usernames["a"], conn.passwords["a"]
        auth = adapter.login(username, password)
        run.redactor.add(auth.token)
        corpus_dir, manifest = ensure_corpus()
        project = adapter.create_project(auth, f"rig browser {time.time_ns()}")
        loaded = load_corpus(adapter, auth, project, corpus_dir, manifest, only=["P32"])
        plan = BrowserPlan(base_url=adapter.base_url, adapter=conn.adapter_spec, adapter_options=conn.options,
                           username=username, project_id=project, doc_ids=[loaded.doc("P32")], questions=QUESTIONS,
                           users=o.users, turns=o.turns, deadline_s=o.deadline_s)
        with BrowserHost() as host:
            self.result = host.call(drive_users(host.browser, load_selectors(o.selectors), plan, password, adapter,
                                                auth, run.store, rss=host.browser_pss_mb),
                                    timeout_s=o.deadline_s + 120)

    def finish(self, run: Run) -> tuple[BrowserSummary, BrowserRunResult]:
        """browser.json: the timings' summary, the browser's memory per context, every turn's record."""
        result, users = self.result, self.options.users
        assert result is not None
        run.ended()
        result.run_dir = run.dir
        summary = result.summary()
        summary.rss_per_context_mb = (summary.rss_peak_mb - summary.rss_base_mb) / users
        summary.records = list(result.records)
        (run.dir / "browser.json").write_text(summary.model_dump_json(indent=2), encoding="utf-8")
        return summary, result
