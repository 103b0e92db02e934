"""`rig load --browsers M`: browser users in a process of their own, beside the Locust users, same run."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from rig.browser.session import BrowserPlan
from rig.lifeline import spawn
from rig.load.context import LoadContext


def browser_hook(ctx: LoadContext) -> None:
    """Start the browser worker for the load run's duration; its log and summary go to the run directory."""
    name = ctx.plan.usernames[0]
    papers = ctx.plan.paper_sets[0]
    plan = BrowserPlan(base_url=ctx.plan.target_url, adapter=ctx.plan.adapter, username=name,
                       project_id=ctx.plan.project_by_user[name],
                       doc_ids=papers.doc_ids, questions=[q for s in ctx.plan.paper_sets for q in s.questions][:20],
                       users=ctx.options.browsers, turns=10**6, deadline_s=float(ctx.options.duration_s),
                       think_s=ctx.options.think_min_s, scenario="browser")
    env = {**os.environ, "RIG_BROWSER_PLAN": plan.model_dump_json(), "RIG_BROWSER_PASSWORD": ctx.passwords[name]}
    log = ctx.run_dir / "browser-worker.log"
    with log.open("w", encoding="utf-8") as fh:
        proc = spawn([sys.executable, "-m", "rig.browser.worker", str(ctx.store.path)], env=env,
                      stdout=subprocess.PIPE, stderr=fh, text=True)
        try:
            out, _ = proc.communicate(timeout=ctx.options.duration_s + 180)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
    lines = [line for line in (out or "").splitlines() if line.startswith("{")]
    summary = json.loads(lines[-1]) if lines else {"error": f"browser worker exited {proc.returncode}; see {log.name}"}
    (ctx.run_dir / "browser.json").write_text(json.dumps(summary, ensure_ascii=False, indent=2), encoding="utf-8")
