"""Foundation numbers: corpus build time, full-corpus ingest (T1 per file), search latency, first-token time.

    python bench/foundation.py [--runs 30] [--searches 200]

Everything runs against the embedded workbench on loopback; times are from the rig's monotonic clock.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from rig.adapters import WorkbenchAdapter
from rig.adapters.models import TokenEvent
from rig.catalog import load_eval_set
from rig.clock import now_ns
from rig.corpus_load import load_corpus, server_t1_ms
from rig.fixtures import build_corpus
from rig.target.embedded import EmbeddedWorkbench


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--searches", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        began = time.monotonic()
        manifest = build_corpus(Path(tmp) / "corpus")
        print(f"corpus build: {time.monotonic() - began:.2f} s for {len(manifest.files)} files")
        with EmbeddedWorkbench(Path(tmp) / "wb") as target:
            target.start()
            account = target.add_account("bench")
            adapter = WorkbenchAdapter(target.url)
            auth = adapter.login(account.username, account.password)
            project = adapter.create_project(auth, "bench")
            began = time.monotonic()
            loaded = load_corpus(adapter, auth, project, Path(tmp) / "corpus", manifest, include_variants=True)
            print(f"full-corpus ingest: {time.monotonic() - began:.2f} s for {len(loaded.files)} files "
                  "(upload of all, then until the last is final)")
            client = [f.t1_ms for f in loaded.files if f.t1_ms is not None]
            server = [t for f in loaded.files if f.document and (t := server_t1_ms(f.document)) is not None]
            print(f"T1 per file, client (accepted → final seen): median {statistics.median(client):.1f} ms, "
                  f"max {max(client):.1f} ms")
            print(f"T1 per file, server (upload stage start → index end): median {statistics.median(server):.1f} ms, "
                  f"max {max(server):.1f} ms")
            quality = load_eval_set().quality
            prompts = [q.prompt for q in quality]
            latencies = []
            for i in range(args.searches):
                sent = now_ns()
                adapter.search(auth, project, [prompts[i % len(prompts)]])
                latencies.append((now_ns() - sent) / 1e6)
            print(f"search latency (direct entry, whole library, {args.searches} queries): "
                  f"median {statistics.median(latencies):.2f} ms, p95 {pct(latencies, 0.95):.2f} ms")
            opened = adapter.open_session(auth, project, [loaded.doc("P32")])
            t4_client, t4_server = [], []
            for i in range(args.runs):
                sub = adapter.ask(auth, opened.session_id, prompts[10 + i % 10])
                first = None
                for event in adapter.events(auth, sub.run_id):
                    if first is None and isinstance(event, TokenEvent) and event.kind == "answer":
                        first = event.recv_ns
                detail = adapter.run(auth, sub.run_id)
                if first is not None:
                    t4_client.append((first - sub.submit_ns) / 1e6)
                if detail.first_token_at_ms and detail.queued_at_ms:
                    t4_server.append(detail.first_token_at_ms - detail.queued_at_ms)
            print(f"first answer token, default model ({args.runs} runs): client T4 median "
                  f"{statistics.median(t4_client):.1f} ms (p95 {pct(t4_client, 0.95):.1f}); server queued→first token "
                  f"median {statistics.median(t4_server):.1f} ms")
            adapter.close()


if __name__ == "__main__":
    main()
