"""Run-control numbers: stop request → slot released (median of N stops), and restart → ready.

    python bench/run_control.py [--stops 20] [--restarts 5]

A stop is sent while the answer streams; the time is taken on the rig's clock from just before the
stop request is written until the target's `/metrics` first shows `workbench_run_slots_in_use` back at 0
(polled as fast as the endpoint answers). Restarts are SIGKILL followed by start until `/readyz` is 200.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from rig.adapters import WorkbenchAdapter
from rig.adapters.models import TokenEvent
from rig.clock import now_ns
from rig.corpus_load import load_corpus
from rig.fixtures import ensure_corpus
from rig.promtext import sample_value
from rig.target.embedded import EmbeddedWorkbench


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--stops", type=int, default=20)
    parser.add_argument("--restarts", type=int, default=5)
    args = parser.parse_args()
    corpus_dir, manifest = ensure_corpus()
    with tempfile.TemporaryDirectory() as tmp, EmbeddedWorkbench(Path(tmp), chaos_token="bench") as target:
        target.start()
        account = target.add_account("bench")
        adapter = WorkbenchAdapter(target.url, chaos_token="bench")
        auth = adapter.login(account.username, account.password)
        project = adapter.create_project(auth, "bench")
        loaded = load_corpus(adapter, auth, project, corpus_dir, manifest, only=["P32"])
        adapter.chaos("PUT", "settings", {"token_delay_ms": 20})
        session = adapter.open_session(auth, project, [loaded.doc("P32")]).session_id
        release_ms, server_ms = [], []
        for _ in range(args.stops):
            sub = adapter.ask(auth, session, "请查清买家保护与徽章关系并给依据。")
            stream = adapter.events(auth, sub.run_id)
            next(e for e in stream if isinstance(e, TokenEvent))
            sent = now_ns()
            adapter.stop(auth, sub.run_id)
            while (sample_value(adapter.metrics_text(), "workbench_run_slots_in_use") or 0) > 0:
                pass
            release_ms.append((now_ns() - sent) / 1e6)
            list(stream)
            detail = adapter.run(auth, sub.run_id)
            cancelled = next(s for s in detail.stages if s.cancelled)
            if cancelled.ended_at_ms and detail.ended_at_ms:
                server_ms.append(detail.ended_at_ms - cancelled.ended_at_ms)
        print(f"stop → slot released ({args.stops} stops): median {statistics.median(release_ms):.2f} ms, "
              f"max {max(release_ms):.2f} ms (client clock, includes the /metrics poll)")
        print(f"server: cancelled stage end → run end: median {statistics.median(server_ms):.2f} ms")
        ready_s = [target.restart(hard=True) for _ in range(args.restarts)]
        print(f"restart (SIGKILL → /readyz 200, {args.restarts} restarts): median {statistics.median(ready_s):.2f} s, "
              f"max {max(ready_s):.2f} s")
        adapter.close()


if __name__ == "__main__":
    main()
