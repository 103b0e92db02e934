"""The browser process of `rig load --browsers M`: M browser users until the load run's deadline.

    RIG_BROWSER_PLAN='<BrowserPlan JSON>' RIG_BROWSER_PASSWORD=… python -m rig.browser.worker STORE [SELECTORS]

It writes `source="browser"` measures into the load run's evidence store (SQLite in WAL mode takes
writers from several processes) and prints one JSON summary line at the end.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from rig.adapters import load_adapter_class
from rig.browser.host import BrowserHost
from rig.browser.selectors import load_selectors
from rig.browser.session import BrowserPlan, drive_users
from rig.evidence import EvidenceStore
from rig.redact import Redactor


def main(argv: list[str]) -> int:
    plan = BrowserPlan.model_validate_json(os.environ["RIG_BROWSER_PLAN"])
    password = os.environ.pop("RIG_BROWSER_PASSWORD")
    selectors = load_selectors(Path(argv[1]) if len(argv) > 1 else None)
    redactor = Redactor()
    redactor.add(password)
    store = EvidenceStore(Path(argv[0]), redactor)
    adapter = load_adapter_class(plan.adapter).connect(plan.base_url, options=plan.adapter_options)
    try:
        auth = adapter.login(plan.username, password)
        redactor.add(auth.token)
        with BrowserHost() as host:
            result = host.call(drive_users(host.browser, selectors, plan, password, adapter, auth, store,
                                           rss=host.browser_pss_mb), timeout_s=plan.deadline_s + 120)
        print(result.summary().model_dump_json(), flush=True)
        return 0 if not result.errors else 1
    finally:
        store.close()
        adapter.close()


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
