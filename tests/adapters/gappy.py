"""A small in-process target described in rig.yaml alone, shaped unlike the workbench: no projects (one store
keyed by file name: a name it holds is refused with 409), no sessions, no run records, an NDJSON answer with no
terminal line. Its answers can be bent out of shape one at a time (`faults`) for the protocol-gap tests.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml

PASSWORD = f"pw-{uuid.uuid4().hex[:10]}"

ERROR_BODIES: dict[str, tuple[bytes, str, str]] = {  # shape → (body, content type, the message the rig must read)
    "protocol_v1": (b'{"error": {"code": "bad_login", "message": "no such account here"}}', "application/json",
                    "no such account here"),
    "error_string": (b'{"error": "no such account here"}', "application/json", "no such account here"),
    "fastapi": (b'{"detail": "no such account here"}', "application/json", "no such account here"),
    "fastapi_validation": (b'{"detail": [{"loc": ["body", "username"], "msg": "field required"}]}',
                           "application/json", "body.username: field required"),
    "problem_json": (b'{"type": "https://example.org/probs/login", "title": "Login refused", '
                     b'"detail": "no such account here"}', "application/problem+json", "Login refused: no such account"),
    "message": (b'{"message": "no such account here", "code": 17}', "application/json", "no such account here"),
    "plain_text": (b"no such account here", "text/plain", "no such account here"),
}


class Gappy(ThreadingHTTPServer):
    """A document-and-answer service whose answers can be bent out of shape one at a time (`faults`)."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.faults: dict[str, Any] = {}
        self.docs: dict[str, dict[str, Any]] = {}
        self.uploads: list[str] = []  # file names, in the order they were accepted
        self.daemon_threads = True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: Gappy

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, body: bytes, ctype: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, data: Any) -> None:
        self._send(status, json.dumps(data).encode())

    def _authed(self) -> bool:
        return self.headers.get("authorization", "").startswith("Bearer t-")

    def do_GET(self) -> None:  # noqa: N802
        if self.path == "/health":
            return self._json(200, {"ok": True})
        if not self._authed():
            return self._json(401, {"detail": "login first"})
        faults = self.server.faults
        if self.path == "/docs":
            state = faults.get("status_word", "done")
            return self._json(200, {"items": [{**d, "state": state} for d in self.server.docs.values()]})
        if self.path.startswith("/docs/"):
            doc = self.server.docs.get(self.path.rsplit("/", 1)[1])
            if doc is None:
                return self._json(404, {"detail": "no such document"})
            return self._json(200, faults.get("document_shape") or {**doc, "state": "done"})
        return self._json(404, {"detail": "no such route"})

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length)
        faults = self.server.faults
        if self.path == "/login":
            if "login_error" in faults:
                data, ctype, _ = ERROR_BODIES[faults["login_error"]]
                return self._send(401, data, ctype)
            user = re.search(rb"username=([^&]+)", body)
            return self._json(200, {"access_token": f"t-{user.group(1).decode() if user else 'x'}"})
        if not self._authed():
            return self._json(401, {"detail": "login first"})
        if self.path == "/upload":  # one store keyed by file name: a name it holds is refused (409)
            found = re.search(rb'filename="([^"]+)"', body)
            name = found.group(1).decode() if found else "?"
            if any(d["name"] == name for d in self.server.docs.values()):
                return self._json(409, {"detail": f"Document storage already contains '{name}'"})
            doc_id = f"d-{len(self.server.docs) + 1}"
            self.server.docs[doc_id] = {"id": doc_id, "name": name}
            self.server.uploads.append(name)
            return self._json(200, faults.get("upload_answer") or {"id": doc_id})
        if self.path == "/ask":
            self.send_response(200)
            self.send_header("content-type", "application/x-ndjson")
            self.end_headers()
            for piece in ("总福利", "提高2.9%", "。"):
                self.wfile.write(json.dumps({"text": piece}, ensure_ascii=False).encode() + b"\n")
                self.wfile.flush()
            return None
        return self._json(404, {"detail": "no such route"})


SPEC = {
    "login": {"request": {"method": "POST", "path": "/login", "form": {"username": "{username}",
                                                                        "password": "{password}"}},
              "result": {"token": "access_token"}},
    "upload": {"request": {"method": "POST", "path": "/upload", "multipart": {"file": "{file}"}},
               "result": {"doc_id": "id"}},
    "documents": {"request": {"path": "/docs"}, "items": "items",
                  "result": {"doc_id": "id", "filename": "name", "status": "state"},
                  "values": {"status": {"done": "ready", "working": "processing"}}},
    "document": {"request": {"path": "/docs/{doc_id}"}, "result": {"doc_id": "id", "filename": "name", "status": "state"},
                 "values": {"status": {"done": "ready", "working": "processing"}}},
    "ask": {"request": {"method": "POST", "path": "/ask", "json": {"q": "{content}"}},
            "stream": {"format": "ndjson", "end": "close",
                       "events": [{"when": "data.text", "type": "token", "data": {"text": "data.text"}}]}},
    "capabilities": {"document_hashes": False, "page_counts": False, "ingest_stages": False},
}


def run_gate_on(server: Gappy, tmp: Path, cases: str = "2", *, resume: bool = False
                ) -> tuple[subprocess.CompletedProcess[str], Path]:
    """`rig gate` against the server as a subprocess (its console and exit code as a user sees them)."""
    tmp.mkdir(parents=True, exist_ok=True)
    config = tmp / "rig.yaml"
    config.write_text(yaml.safe_dump({"target": {"url": server.url, "ready_path": "/health", "http": SPEC},
                                      "accounts": {"a": {"username": "ann", "password_env": "RIG_GAP_PW"},
                                                   "b": {"username": "ben", "password_env": "RIG_GAP_PW"}}}))
    out = tmp / "run"
    where = ["--resume", str(out)] if resume else ["--out", str(out)]
    done = subprocess.run([sys.executable, "-m", "rig.cli", "gate", "--target", server.url, "--config", str(config),
                           "--cases", cases, *where], capture_output=True, text=True, timeout=240,
                          env={**os.environ, "RIG_GAP_PW": PASSWORD, "COLUMNS": "200"})
    return done, out
