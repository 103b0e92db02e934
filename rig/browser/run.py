"""`rig browser`: browser users against a target (the embedded workbench by default), one run directory.

Sets up an account and a project with P32 (and P13) on the embedded workbench, or uses account `a` of
`rig.yaml` on an external target, starts one Chromium and drives the users; writes the measures to
`evidence.sqlite3` and a summary to `browser.json`, with a screenshot-free record of every turn.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from pydantic import BaseModel

from rig.browser.host import BrowserHost
from rig.browser.selectors import load_selectors
from rig.browser.session import BrowserPlan, BrowserRunResult, drive_users
from rig.config import load_config
from rig.corpus_load import load_corpus
from rig.evidence import EvidenceStore
from rig.fixtures import ensure_corpus
from rig.redact import Redactor
from rig.target.embedded import EmbeddedWorkbench
from rig.target.open import connect
from rig.target.session import Connection

QUESTIONS = ["2.9%指什么？", "请查清买家保护与徽章关系并给依据。", "这篇论文的样本来自哪里？",
             "What did the buyer protection program change?"]


class BrowserRunOptions(BaseModel):
    users: int = 1
    turns: int = 3
    target: str | None = None
    config: Path | None = None
    selectors: Path | None = None
    out: Path
    deadline_s: float = 180.0
    token_delay_ms: float | None = None


def run_browser(options: BrowserRunOptions) -> tuple[dict[str, object], BrowserRunResult]:
    """Drive the users and write browser.json; returns the summary and the per-turn records."""
    options.out.mkdir(parents=True, exist_ok=True)
    selectors = load_selectors(options.selectors)
    redactor = Redactor()
    store = EvidenceStore(options.out / "evidence.sqlite3", redactor)
    config = load_config(options.config) if options.config else None
    if config and options.target:
        config.target.url = options.target
    extra = ["--token-delay-ms", str(options.token_delay_ms)] if options.token_delay_ms is not None else []
    conn: Connection | None = None
    started: list[EmbeddedWorkbench] = []
    try:
        conn = connect(config, options.out / "target", redactor, accounts={"a": "browser"}, extra_args=extra,
                       started=started)
        adapter, url = conn.adapter, conn.adapter.base_url
        username, password = conn.usernames["a"], conn.passwords["a"]
        auth = adapter.login(username, password)
        redactor.add(auth.token)
        corpus_dir, manifest = ensure_corpus()
        project = adapter.create_project(auth, f"rig browser {time.time_ns()}")
        loaded = load_corpus(adapter, auth, project, corpus_dir, manifest, only=["P32"])
        plan = BrowserPlan(base_url=url, adapter=conn.adapter_spec, adapter_options=conn.options,
                           username=username, project_id=project,
                           doc_ids=[loaded.doc("P32")],
                           questions=QUESTIONS, users=options.users, turns=options.turns,
                           deadline_s=options.deadline_s)
        with BrowserHost() as host:
            result = host.call(drive_users(host.browser, selectors, plan, password, adapter, auth, store,
                                           rss=host.browser_pss_mb), timeout_s=options.deadline_s + 120)
        summary = result.summary()
        summary["rss_per_context_mb"] = ((summary["rss_peak_mb"] - summary["rss_base_mb"]) / options.users
                                         if options.users else None)
        summary["records"] = [r.model_dump() | {"t4_minus_server": r.t4_minus_server} for r in result.records]
        (options.out / "browser.json").write_text(json.dumps(summary, ensure_ascii=False, indent=2), encoding="utf-8")
        return summary, result
    finally:
        store.close()
        if conn is not None:
            conn.close()
        for target in started:
            target.stop()
