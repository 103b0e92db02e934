"""Record one real run of the reference workbench for `test_one_derivation.py`.

    python tests/measure/record_run.py

It starts the embedded workbench, asks one question over P32, and keeps the event stream's bytes as they
arrived, cut where they arrived, with each piece's arrival time after the submit, and the run record.
The test replays exactly these bytes and times through the gate, quality and load paths.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from rig.adapters.models import Auth
from rig.clock import now_ns
from rig.corpus_load import load_corpus
from rig.fixtures import ensure_corpus
from rig.redact import Redactor
from rig.target.open import connect

OUT = Path(__file__).resolve().parent / "data" / "recorded_run.json"
QUESTION = "请查清买家保护与徽章关系并给依据。"


def main() -> None:
    corpus_dir, manifest = ensure_corpus()
    with tempfile.TemporaryDirectory() as tmp:
        conn = connect(None, Path(tmp), Redactor(), accounts={"a": "recorder"},
                       extra_args=["--token-delay-ms", "5"])
        try:
            adapter = conn.adapter
            auth: Auth = adapter.login("recorder", conn.passwords["a"])
            project = adapter.create_project(auth, "recording")
            doc = load_corpus(adapter, auth, project, corpus_dir, manifest, only=["P32"]).doc("P32")
            session = adapter.open_session(auth, project, [doc]).session_id
            submitted = adapter.ask(auth, session, QUESTION)
            pieces: list[tuple[float, str]] = []
            headers = {**adapter.auth_headers(auth), "accept": "text/event-stream"}
            with adapter.transport.stream("GET", f"/api/v1/runs/{submitted.run_id}/events", op="events",
                                          headers=headers) as reply:
                for chunk in reply.chunks():
                    pieces.append((round((now_ns() - submitted.submit_ns) / 1e6, 3), chunk.decode("utf-8")))
            record = adapter.run(auth, submitted.run_id).model_dump(mode="json")
        finally:
            conn.close()
    OUT.write_text(json.dumps({"run_id": submitted.run_id, "question": QUESTION, "pieces": pieces, "run": record},
                              ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{len(pieces)} pieces, {sum(len(p) for _, p in pieces)} characters → {OUT}")


if __name__ == "__main__":
    main()
