"""The ingest worker: a background thread that parses, chunks and indexes uploaded documents."""

from __future__ import annotations

import logging
import queue
import threading
from pathlib import Path

from workbench.clock import now_ms
from workbench.db import Database
from workbench.defects import Defects
from workbench.index import Bm25Index, Chunk
from workbench.metrics import Metrics
from workbench.pdfparse import PdfCorrupt, chunk_page, document_status, parse_pdf

log = logging.getLogger("workbench.ingest")


class IngestWorker:
    """Processes queued documents one at a time; a failure affects only the document that failed."""

    def __init__(self, db: Database, files_dir: Path, index: Bm25Index, metrics: Metrics, defects: Defects) -> None:
        self.db = db
        self.files_dir = files_dir
        self.index = index
        self.metrics = metrics
        self.defects = defects
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._thread = threading.Thread(target=self._loop, name="ingest", daemon=True)

    def start(self) -> None:
        for row in self.db.all("SELECT doc_id FROM documents WHERE status IN ('queued','processing') "
                               "ORDER BY created_ms"):
            self._queue.put(row["doc_id"])
        self._thread.start()

    def stop(self) -> None:
        self._queue.put(None)
        self._thread.join(timeout=5)

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def submit(self, doc_id: str) -> None:
        self._queue.put(doc_id)

    def process_now(self, doc_id: str) -> None:
        """Process one document in the caller's thread (a server that ingests inside the upload request)."""
        try:
            self._process(doc_id)
        except Exception:
            log.exception("ingest of %s failed", doc_id)
            self._finish(doc_id, "failed", None, None, "internal_error", "ingest crashed; see server log")

    def load_index(self) -> None:
        """Rebuild the in-memory index from committed chunks (at start-up)."""
        rows = self.db.all("SELECT c.chunk_id, c.doc_id, c.page, c.seq, c.text FROM chunks c JOIN documents d "
                           "ON d.doc_id=c.doc_id WHERE d.status IN ('ready','partial') ORDER BY c.doc_id, c.seq")
        self.index.add([Chunk(r["chunk_id"], r["doc_id"], r["page"], r["seq"], r["text"]) for r in rows])

    def _loop(self) -> None:
        while True:
            doc_id = self._queue.get()
            if doc_id is None:
                return
            try:
                self._process(doc_id)
            except Exception:  # keep the worker alive; the document records the failure
                log.exception("ingest of %s failed", doc_id)
                self._finish(doc_id, "failed", None, None, "internal_error", "ingest crashed; see server log")

    def _stage(self, doc_id: str, name: str, seq: int, started: float, ok: bool, error: str | None = None) -> None:
        ended = now_ms()
        with self.db.tx() as conn:
            conn.execute("INSERT OR REPLACE INTO doc_stages(doc_id, name, seq, started_ms, ended_ms, ok, error) "
                         "VALUES(?,?,?,?,?,?,?)", (doc_id, name, seq, started, ended, int(ok), error))
        self.metrics.stage_duration.labels(f"ingest_{name}").observe((ended - started) / 1000)

    def _finish(self, doc_id: str, status: str, pages_total: int | None, with_text: int | None,
                code: str | None, message: str | None) -> None:
        with self.db.tx() as conn:
            conn.execute("UPDATE documents SET status=?, pages_total=?, pages_with_text=?, error_code=?, "
                         "error_message=? WHERE doc_id=?", (status, pages_total, with_text, code, message, doc_id))
        self.metrics.ingest_documents.labels(status).inc()

    def _process(self, doc_id: str) -> None:
        row = self.db.one("SELECT sha256 FROM documents WHERE doc_id=?", doc_id)
        if row is None:
            return
        with self.db.tx() as conn:
            conn.execute("UPDATE documents SET status='processing' WHERE doc_id=?", (doc_id,))
        started = now_ms()
        data = (self.files_dir / row["sha256"]).read_bytes()
        try:
            pages = parse_pdf(data)
        except PdfCorrupt as exc:
            self._stage(doc_id, "parse", 2, started, False, str(exc))
            self._finish(doc_id, "failed", None, None, "pdf_corrupt", f"the file is not a readable PDF ({exc})")
            return
        self._stage(doc_id, "parse", 2, started, True)
        started = now_ms()
        chunks: list[Chunk] = []
        for page in pages:
            if page.kind != "text":
                continue
            for text in chunk_page(page.text):
                chunks.append(Chunk(f"{doc_id}:{len(chunks)}", doc_id, page.page, len(chunks), text))
        with self.db.tx() as conn:
            conn.execute("DELETE FROM pages WHERE doc_id=?", (doc_id,))
            conn.executemany("INSERT INTO pages(doc_id, page, kind, text) VALUES(?,?,?,?)",
                             [(doc_id, p.page, p.kind, p.text) for p in pages])
            conn.execute("DELETE FROM chunks WHERE doc_id=?", (doc_id,))
            conn.executemany("INSERT INTO chunks(chunk_id, doc_id, page, seq, text) VALUES(?,?,?,?,?)",
                             [(c.chunk_id, c.doc_id, c.page, c.seq, c.text) for c in chunks])
        self._stage(doc_id, "chunk", 3, started, True)
        started = now_ms()
        status, with_text = document_status(pages)
        if status in ("ready", "partial"):
            self.index.add(chunks)
        self._stage(doc_id, "index", 4, started, status != "no_text",
                    None if status != "no_text" else "no page has a text layer")
        failed = [p for p in pages if p.kind in ("failed", "image_only")]
        code = message = None
        if status == "no_text":
            code, message = "no_text_layer", f"none of the {len(pages)} pages has a text layer; OCR is not available"
        elif status == "partial":
            code = "pages_without_text"
            message = "pages without extractable text: " + ", ".join(f"{p.page} ({p.kind})" for p in failed)
        if "silent_parse_failure" in self.defects and status in ("no_text", "partial"):
            status, with_text, code, message = "ready", len(pages), None, None
        self._finish(doc_id, status, len(pages), with_text, code, message)
