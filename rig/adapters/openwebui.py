"""An adapter for Open WebUI 0.12.x: knowledge bases as projects, files as documents, chats as sessions.

    target:
      url: http://127.0.0.1:8080
      adapter: rig.adapters.openwebui:OpenWebUIAdapter
      ready_path: /health
      options: {model: my-model}          # the model id chats use (default: the first one listed)
    accounts:
      a: {username: a@example.org, password_env: RIG_PASSWORD_A}   # usernames are e-mail addresses

How the protocol maps: a project is a knowledge base (shared with another account through its access
grants); an upload is a file added to it, processed in the background; a session is a saved chat whose scope
is the files attached to each turn; a turn is `POST /api/chat/completions` with the account's socket.io
session, and its progress arrives as socket.io events (`rig.adapters.socket_events`); the run record is the
chat's saved message (its state, its retrieved sources as one retrieval call, no times or trace ids);
stop is the chat's task stop; export is the chat as JSON. Citations are numbered per file, as Open WebUI
tells its model (`<source id="n">`), so they name a document but no page.

What Open WebUI does not offer is declared absent in `capabilities()`; the items needing it end BLOCKED.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Generator
from pathlib import Path

from rig.adapters.base import Adapter
from rig.adapters.capabilities import Capabilities
from rig.adapters.models import (
    Auth,
    Citation,
    Document,
    Event,
    Exported,
    Hit,
    Me,
    Message,
    ModelConfigView,
    Project,
    RunDetail,
    RunModel,
    ScopeSet,
    SearchCallResult,
    SearchResult,
    Session,
    SessionOpened,
    Submitted,
    ToolCallHit,
    ToolCallRecord,
    Uploaded,
    make_event,
)
from rig.adapters.socket_events import ChatSocket
from rig.adapters.transport import Transport, multipart
from rig.clock import now_ns
from rig.errors import CapabilityMissing, RigError, TargetHTTPError, TargetProtocolError
from rig.jsonvalue import ForeignJson
from rig.measure.citations import marker_quotes

API = "/api/v1"
_STATUS = {"pending": "processing", "processing": "processing", "completed": "ready", "failed": "failed"}


class OpenWebUIAdapter(Adapter):
    """Open WebUI 0.12.x through its HTTP API and its socket.io events."""

    def __init__(self, base_url: str, *, chaos_token: str | None = None, transport: Transport | None = None,
                 timeout_s: float = 60.0, model: str | None = None, function_calling: str = "default",
                 stream_timeout_s: float = 120.0) -> None:
        super().__init__(base_url, transport=transport, timeout_s=timeout_s)
        self.model = model
        self.function_calling = function_calling  # "default": retrieval goes into the prompt, as a RAG chat does
        self.stream_timeout_s = stream_timeout_s
        self._sockets: dict[str, ChatSocket] = {}
        self._user_ids: dict[str, str] = {}  # username → user id, learnt at login (for sharing)
        self._scopes: dict[str, list[str]] = {}  # chat id → the documents its next turn is asked over
        self._projects: dict[str, str] = {}  # chat id → knowledge base
        self._chat_of: dict[str, str] = {}  # answer message id → chat id (regenerate names only the answer)
        self._chosen: dict[str, str | None] = {}  # token → the account's default model from its settings

    # -- capabilities ----------------------------------------------------------------------------------------
    def capabilities(self) -> Capabilities:
        return Capabilities(
            stream="websocket", stop="server", resume=False, regenerate=True, export=["json"], direct_search=True,
            locate_citation=False, run_detail=True, members=True, attachments=False, scope_change=True,
            summaries=False, model_config_api=True, model_config_keys=False, chaos=False, page_text=False,
            download=True, export_sources=False, expansion=False,
            run_timings=False, run_tool_calls=True, run_model_input=False, run_usage=False, trace_ids=False,
            checkpoints=False, ingest_stages=False, page_counts=False, event_replay=False, input_budget=False,
            stream_tool_cards=False, end_reasons=False, search_stages=False,
            citation_pages=False, version=self._version())

    def _version(self) -> str | None:
        try:
            return str(self.json(None, "GET", "/api/version", op="version").get("version"))
        except Exception:  # an older build without the route: unknown, not an error
            return None

    # -- accounts --------------------------------------------------------------------------------------------
    def login(self, username: str, password: str) -> Auth:
        data = self.json(None, "POST", f"{API}/auths/signin", op="login", json={"email": username, "password": password})
        self._user_ids[username] = str(data["id"])
        return Auth(token=data["token"], user_id=str(data["id"]), username=username,
                    expires_at=str(data.get("expires_at")) if data.get("expires_at") else None)

    def logout(self, auth: Auth) -> None:
        self.request(auth, "POST", f"{API}/auths/signout", op="logout")
        socket = self._sockets.pop(auth.token, None)
        if socket is not None:
            socket.close()

    def me(self, auth: Auth | None) -> Me:
        data = self.json(auth, "GET", f"{API}/auths/", op="me")
        return Me(user_id=str(data["id"]), username=str(data.get("email") or data.get("name")))

    def me_status_with_cookies(self, cookies: dict[str, str]) -> int:
        cookie = "; ".join(f"{k}={v}" for k, v in cookies.items())
        return self.request(None, "GET", f"{API}/auths/", op="me", raise_for_status=False, headers={"cookie": cookie}).status_code

    # -- projects (knowledge bases) and documents (files) ----------------------------------------------------
    def create_project(self, auth: Auth, name: str) -> str:
        data = self.json(auth, "POST", f"{API}/knowledge/create", op="create_project",
                         json={"name": name, "description": name})
        return str(data["id"])

    def projects(self, auth: Auth) -> list[Project]:
        data = self.json(auth, "GET", f"{API}/knowledge/", op="projects")
        items = data.get("items", data) if isinstance(data, dict) else data
        return [Project(project_id=str(k["id"]), name=k.get("name", ""), owner=k.get("user_id") == auth.user_id)
                for k in items]

    def add_member(self, auth: Auth, project_id: str, username: str, *, user_id: str | None = None) -> None:
        user_id = self._user_ids.get(username)
        if user_id is None:
            raise RigError(f"cannot share with {username!r}: its user id is unknown until it has logged in",
                           fix="log the account in once before sharing with it")
        grants = [{"principal_type": "user", "principal_id": user_id, "permission": "read"}]
        self.request(auth, "POST", f"{API}/knowledge/{project_id}/access/update", op="add_member",
                     json={"access_grants": grants})

    def upload(self, auth: Auth, project_id: str, path: Path, *, paper_id: str | None = None,
               filename: str | None = None) -> Uploaded:
        name = filename or path.name
        raw = path.read_bytes()
        body, ctype = multipart({"metadata": json.dumps({"knowledge_id": project_id})},
                                {"file": (name, raw, "application/pdf")})
        data = self.json(auth, "POST", f"{API}/files/", op="upload", content=body, content_type=ctype,
                         record_body={"file": name, "knowledge_id": project_id})
        meta = data.get("meta") or {}
        return self.uploaded(raw, name, str(data["id"]), reported_sha256=meta.get("file_hash"),
                             status=_STATUS.get(str((data.get("data") or {}).get("status")), "processing"))

    def documents(self, auth: Auth, project_id: str) -> list[Document]:
        data = self.json(auth, "GET", f"{API}/knowledge/{project_id}/files", op="documents")
        items = data.get("items", data) if isinstance(data, dict) else data
        return [self._document(f) for f in items]

    def document(self, auth: Auth | None, doc_id: str) -> Document:
        return self._document(self.json(auth, "GET", f"{API}/files/{doc_id}", op="document"))

    @staticmethod
    def _document(f: ForeignJson) -> Document:
        status = str((f.get("data") or {}).get("status") or "completed")
        error = (f.get("data") or {}).get("error")
        meta = f.get("meta") or {}
        return Document(doc_id=str(f["id"]), filename=str(f.get("filename") or meta.get("name") or ""),
                        sha256=str(meta.get("file_hash") or ""), status=_STATUS.get(status, "processing"),
                        error={"code": "processing_failed", "message": str(error)} if error else None)

    def download(self, auth: Auth | None, doc_id: str) -> bytes:
        return self.request(auth, "GET", f"{API}/files/{doc_id}/content", op="download").content

    # -- retrieval -------------------------------------------------------------------------------------------
    def search(self, auth: Auth, project_id: str, queries: list[str], scope: list[str] | None = None,
               history: list[dict[str, str]] | None = None, *, traceparent: str | None = None) -> SearchResult:
        if history:
            raise CapabilityMissing("search_history", detail="Open WebUI's retrieval takes no conversation history")
        collections = [f"file-{d}" for d in scope] if scope else [project_id]
        sent = now_ns()
        results = []
        for i, q in enumerate(queries):
            data = self.json(auth, "POST", f"{API}/retrieval/query/collection", op="search",
                             json={"collection_names": collections, "query": q})
            results.append(SearchCallResult(tool_call_id=f"query-{i + 1}", query=q, ok=True, hits=_hits(data)))
        return SearchResult(tool_call_ids=[r.tool_call_id for r in results], executed_calls=len(results),
                            proposed_calls=len(queries), results=results, sent_ns=sent, received_ns=now_ns())

    # -- sessions (chats) and runs (turns) -------------------------------------------------------------------
    def open_session(self, auth: Auth, project_id: str, scope: list[str],
                     attachments: list[str] | None = None) -> SessionOpened:
        if attachments:
            raise CapabilityMissing("attachments")
        chat = {"title": "rig session", "models": [self._model(auth)], "history": {"messages": {}, "currentId": None},
                "messages": [], "files": [{"type": "file", "id": d} for d in scope], "tags": [],
                "timestamp": int(time.time() * 1000)}
        data = self.json(auth, "POST", f"{API}/chats/new", op="open_session", json={"chat": chat})
        chat_id = str(data["id"])
        readable = self._readable(auth, scope)
        self._scopes[chat_id] = readable
        self._projects[chat_id] = project_id
        return SessionOpened(session_id=chat_id, effective_scope=readable,
                             dropped=[{"doc_id": d, "reason": "not_readable"} for d in scope if d not in readable])

    def _readable(self, auth: Auth, scope: list[str]) -> list[str]:
        out = []
        for doc in scope:
            try:
                self.document(auth, doc)
                out.append(doc)
            except TargetHTTPError as exc:
                if exc.status not in (401, 403, 404):
                    raise
        return out

    def set_scope(self, auth: Auth, session_id: str, scope: list[str],
                  attachments: list[str] | None = None) -> ScopeSet:
        if attachments:
            raise CapabilityMissing("attachments")
        self._chat(auth, session_id)  # the session must be the account's own
        readable = self._readable(auth, scope)
        self._scopes[session_id] = readable
        return ScopeSet(effective_scope=readable,
                        dropped=[{"doc_id": d, "reason": "not_readable"} for d in scope if d not in readable])

    def session(self, auth: Auth | None, session_id: str) -> Session:
        chat = self._chat(auth, session_id)
        history = chat["chat"].get("history") or {}
        files = [f.get("id") for f in chat["chat"].get("files") or [] if f.get("id")]
        messages = [_message(session_id, m, history) for m in _tree(history)]
        return Session(session_id=session_id, project_id=self._projects.get(session_id, ""),
                       scope=self._scopes.get(session_id, files), messages=messages,
                       current_leaf=history.get("currentId"))

    def _chat(self, auth: Auth | None, chat_id: str) -> ForeignJson:
        return dict(self.json(auth, "GET", f"{API}/chats/{chat_id}", op="session"))

    def _socket(self, auth: Auth) -> ChatSocket:
        socket = self._sockets.get(auth.token)
        if socket is None or not socket.connected:
            socket = ChatSocket(self.base_url, auth.token).connect()
            self._sockets[auth.token] = socket
        return socket

    def _model(self, auth: Auth) -> str:
        """The model a turn of this account uses: its own default (its settings), else the configured or first one."""
        chosen = self._settings_model(auth)
        if chosen:
            return chosen
        if self.model is None:
            data = self.json(auth, "GET", "/api/models", op="models")
            models = data.get("data", []) if isinstance(data, dict) else data
            if not models:
                raise TargetProtocolError("Open WebUI lists no model: is its model endpoint reachable?")
            self.model = str(models[0]["id"])
        return self.model

    def _settings_model(self, auth: Auth) -> str | None:
        """The account's own default model (read once per login; `set_model_config` keeps it current)."""
        if auth.token not in self._chosen:
            settings = self.json(auth, "GET", f"{API}/users/user/settings", op="model_config") or {}
            models = ((settings.get("ui") or {}) if isinstance(settings, dict) else {}).get("models") or []
            self._chosen[auth.token] = str(models[0]) if models and models[0] else None
        return self._chosen[auth.token]

    # -- per-user model configuration (the account's default model, in its own settings) ---------------------
    def model_config(self, auth: Auth | None) -> ModelConfigView:
        if auth is None:
            self.request(None, "GET", f"{API}/users/user/settings", op="model_config")  # refused: shows how
            raise TargetProtocolError("Open WebUI served user settings to an anonymous caller")
        self._chosen.pop(auth.token, None)  # read the settings themselves: this is the check of what is stored
        chosen = self._settings_model(auth) or self._model(auth)
        return ModelConfigView(provider="openai", model=chosen)

    def set_model_config(self, auth: Auth, provider: str, model: str, base_url: str | None = None,
                         api_key: str | None = None) -> ModelConfigView:
        if api_key or base_url:
            raise CapabilityMissing("model_config_keys", detail="an Open WebUI account chooses among the models "
                                    "the deployment offers; it sets no key or endpoint of its own")
        data = self.json(auth, "POST", f"{API}/users/user/settings/update", op="set_model_config",
                         json={"ui": {"models": [model]}})
        models = ((data or {}).get("ui") or {}).get("models") or []
        self._chosen[auth.token] = str(models[0]) if models else model
        return ModelConfigView(provider=provider, model=self._chosen[auth.token] or model)

    def ask(self, auth: Auth, session_id: str, content: str, *, parent_id: str | None = None,
            traceparent: str | None = None) -> Submitted:
        chat = self._chat(auth, session_id)
        branch = _branch(chat["chat"].get("history") or {}, parent_id)
        parent = branch[-1]["id"] if branch else None
        model = self._model(auth)
        user_message = {"id": str(uuid.uuid4()), "parentId": parent, "role": "user", "content": content,
                        "files": self._files(session_id), "models": [model], "timestamp": int(time.time())}
        return self._turn(auth, session_id, model, user_message, branch + [user_message], op="ask")

    def regenerate(self, auth: Auth, message_id: str, *, traceparent: str | None = None) -> Submitted:
        """A new answer to the same question, as Open WebUI's regenerate does: a sibling of the answer under its
        question, which becomes the chat's current branch."""
        chat_id = self._chat_of.get(message_id)
        if chat_id is None:
            raise TargetProtocolError(f"message {message_id} is in none of the chats this adapter opened")
        messages = (self._chat(auth, chat_id)["chat"].get("history") or {}).get("messages") or {}
        question = messages.get(str(messages[message_id].get("parentId")))
        if question is None or question.get("role") != "user":
            raise TargetProtocolError(f"message {message_id} answers no question")
        model = self._model(auth)
        branch = _branch({"messages": messages}, str(question["id"]))
        user_message = {k: question[k] for k in ("id", "parentId", "role", "content", "files") if k in question}
        return self._turn(auth, chat_id, model, {**user_message, "models": [model]}, branch, op="regenerate")

    def _files(self, session_id: str) -> list[dict[str, str]]:
        return [{"type": "file", "id": d} for d in self._scopes.get(session_id, [])]

    def _turn(self, auth: Auth, session_id: str, model: str, user_message: ForeignJson,
              branch: list[ForeignJson], *, op: str) -> Submitted:
        """One turn: `user_message` (new, or the question being answered again) and a new answer under it,
        streamed to this account's socket.io session."""
        answer_id = str(uuid.uuid4())
        socket = self._socket(auth)
        socket.expect(answer_id)
        files = self._files(session_id)
        body = {"model": model, "stream": True, "chat_id": session_id, "id": answer_id,
                "parent_id": user_message.get("parentId"), "session_id": socket.sid,
                "user_message": {**user_message, "childrenIds": [answer_id]}, "files": files, "features": {},
                "params": {"function_calling": self.function_calling},
                "messages": [{"role": m["role"], "content": m.get("content", "")} for m in branch]}
        submit = now_ns()
        data = self.json(auth, "POST", "/api/chat/completions", op=op, json=body)
        if not isinstance(data, dict) or not data.get("status"):
            raise TargetProtocolError(f"the turn was not accepted: {str(data)[:200]}")
        self._chat_of[answer_id] = session_id
        return Submitted(run_id=f"{session_id}:{answer_id}", message_id=answer_id, submit_ns=submit,
                         accepted_ns=now_ns())

    def events(self, auth: Auth | None, run_id: str, *, last_event_id: int | None = None,
               timeout_s: float = 120.0) -> Generator[Event, None, None]:
        chat_id, _, message_id = run_id.partition(":")
        socket = self._sockets.get(auth.token) if auth else None
        if socket is None or last_event_id is not None or not socket.expects(message_id):
            self._chat(auth, chat_id)  # another account's run is refused here, as the target decides
            raise CapabilityMissing("event_replay", detail="Open WebUI streams a turn once, to the account that sent it")
        n, ended = 0, False
        try:
            for recv_ns, payload in socket.events(message_id, min(timeout_s, self.stream_timeout_s)):
                for event in _events(payload.get("data") or {}, recv_ns):
                    n += 1
                    event.id = n
                    ended = event.event in ("done", "error")
                    yield event
                    if ended:
                        return
        finally:
            if not ended and auth:  # the reader left mid-turn, as a closed page does: the page's socket goes with it
                self._sockets.pop(auth.token, None)
                socket.close()

    def run(self, auth: Auth | None, run_id: str) -> RunDetail:
        chat_id, _, message_id = run_id.partition(":")
        chat = self._chat(auth, chat_id)
        message = ((chat["chat"].get("history") or {}).get("messages") or {}).get(message_id)
        if message is None:
            raise TargetHTTPError("GET", f"{API}/chats/{chat_id}", 404, "not_found", f"no message {message_id}")
        return _run_detail(run_id, chat_id, message)

    def stop(self, auth: Auth, run_id: str, reason: str | None = None) -> None:
        chat_id, _, _ = run_id.partition(":")
        self.request(auth, "POST", f"/api/tasks/chat/{chat_id}/stop", op="stop")

    def export(self, auth: Auth | None, session_id: str, fmt: str = "md") -> Exported:
        if fmt != "json":
            raise CapabilityMissing(f"export={fmt}")
        reply = self.request(auth, "GET", f"{API}/chats/{session_id}", op="export")
        return Exported(format="json", content_type=reply.content_type, text=reply.text)

    def read_export(self, exported: Exported) -> Session:
        try:
            chat = json.loads(exported.text)
            branch = _branch(chat["chat"].get("history") or {})
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise TargetProtocolError(f"the chat export is not an Open WebUI chat: {exc}") from None
        history = chat["chat"].get("history") or {}
        return Session(session_id=str(chat["id"]), project_id=self._projects.get(str(chat["id"]), ""), scope=[],
                       messages=[_message(str(chat["id"]), m, history) for m in branch])

    # -- health ----------------------------------------------------------------------------------------------
    def ready(self) -> bool:
        try:
            return self.request(None, "GET", "/health", op="ready", raise_for_status=False).status_code == 200
        except Exception:
            return False

    def close(self) -> None:
        for socket in self._sockets.values():
            socket.close()
        self._sockets.clear()
        super().close()


# -- mapping Open WebUI's shapes onto the rig's ---------------------------------------------------------------

def _chunk_id(meta: ForeignJson) -> str:
    return f"{meta.get('file_id', '')}#{meta.get('page', '')}:{meta.get('start_index', '')}"


def _page(meta: ForeignJson) -> int | None:
    page = meta.get("page")
    return int(page) + 1 if isinstance(page, int) else None  # Open WebUI counts pages from 0


def _hits(data: ForeignJson) -> list[Hit]:
    docs = (data.get("documents") or [[]])[0]
    metas = (data.get("metadatas") or [[]])[0]
    dist = (data.get("distances") or [[]])[0]
    return [Hit(doc_id=str(m.get("file_id", "")), page=_page(m), chunk_id=_chunk_id(m), text=str(t),
                score=float(dist[i]) if i < len(dist) else None)
            for i, (t, m) in enumerate(zip(docs, metas, strict=False))]


def _source_files(sources: list[ForeignJson]) -> list[tuple[str, list[tuple[str, ForeignJson]]]]:
    """The files of a turn's sources in the order Open WebUI numbered them for its model, with their chunks."""
    order: dict[str, list[tuple[str, ForeignJson]]] = {}
    for source in sources or []:
        for doc, meta in zip(source.get("document") or [], source.get("metadata") or [], strict=False):
            key = str(meta.get("source") or (source.get("source") or {}).get("id") or "N/A")
            order.setdefault(key, []).append((str(doc), meta))
    return list(order.items())


def _citations(message_id: str, content: str, sources: list[ForeignJson]) -> list[Citation]:
    """`[n]` markers as citations of file n of the answer's own retrieval (so each names that retrieval as its
    call), quoting the text before the marker on its line."""
    files = _source_files(sources)
    out: list[Citation] = []
    for i, (n, quote) in enumerate(marker_quotes(content)):
        if not 1 <= n <= len(files):
            continue
        _, chunks = files[n - 1]
        out.append(Citation(citation_id=f"{message_id}#{i + 1}", marker=n, doc_id=str(chunks[0][1].get("file_id", "")),
                            quote=quote, tool_call_id=f"{message_id}#retrieval"))
    return out


def _branch(history: ForeignJson, leaf: str | None = None) -> list[ForeignJson]:
    """The messages from the root to `leaf` (the chat's current message by default)."""
    messages = history.get("messages") or {}
    out: list[ForeignJson] = []
    current = leaf or history.get("currentId")
    while current and current in messages:
        out.append(messages[current])
        current = messages[current].get("parentId")
    return out[::-1]


def _tree(history: ForeignJson) -> list[ForeignJson]:
    """Every message of the chat, every branch (as the protocol's session lists them): depth first from the roots,
    each message's children in the order Open WebUI keeps them; `current_leaf` says which branch is current."""
    messages = history.get("messages") or {}
    out: list[ForeignJson] = []
    seen: set[str] = set()
    stack = [m for m in messages.values() if not m.get("parentId") or m.get("parentId") not in messages][::-1]
    while stack:
        m = stack.pop()
        if m.get("id") in seen:
            continue
        seen.add(str(m.get("id")))
        out.append(m)
        stack.extend(messages[c] for c in reversed(m.get("childrenIds") or []) if c in messages)
    return out


def _sources(message: ForeignJson) -> list[ForeignJson]:
    sources = message.get("sources") or []
    return sources if isinstance(sources, list) else []


def _branch_id(history: ForeignJson, m: ForeignJson) -> str:
    """Open WebUI keeps a tree of messages, not named branches: a branch is named by the message that forked it
    (the nearest message, this one or above, that is not its parent's first child); the first line is `main`."""
    messages = history.get("messages") or {}
    current: ForeignJson | None = m
    while current is not None:
        parent = messages.get(str(current.get("parentId"))) if current.get("parentId") else None
        if parent is not None and (parent.get("childrenIds") or [current["id"]])[0] != current["id"]:
            return str(current["id"])
        current = parent
    return "main"


def _message(chat_id: str, m: ForeignJson, history: ForeignJson) -> Message:
    assistant = m.get("role") == "assistant"
    content = str(m.get("content") or "")
    return Message(message_id=str(m["id"]), parent_id=m.get("parentId"), branch_id=_branch_id(history, m),
                   role="assistant" if assistant else "user",
                   content=content, citations=_citations(str(m["id"]), content, _sources(m)) if assistant else [],
                   run_id=f"{chat_id}:{m['id']}" if assistant else None,
                   scope=[f["id"] for f in m.get("files") or [] if isinstance(f, dict) and f.get("id")] or None,
                   created_at=str(m.get("timestamp")) if m.get("timestamp") else None)


def _run_detail(run_id: str, chat_id: str, m: ForeignJson) -> RunDetail:
    error = m.get("error")
    if error:
        state, reason = "failed", "model_error"
    elif m.get("done"):
        state, reason = "completed", "completed"  # as Open WebUI records it, even for an empty answer
    else:
        state, reason = "running", None
    hits = [ToolCallHit(doc_id=str(meta.get("file_id", "")), page=_page(meta), chunk_id=_chunk_id(meta), text=doc)
            for _, chunks in _source_files(_sources(m)) for doc, meta in chunks]
    calls = [ToolCallRecord(tool_call_id=f"{m['id']}#retrieval", name="retrieval", ok=True, hits=hits)] if hits else []
    return RunDetail(run_id=run_id, session_id=chat_id, message_id=str(m["id"]), user_message_id=m.get("parentId"),
                     state=state, end_reason=reason, tool_calls=calls, model=RunModel(model=m.get("model")),
                     tool_calls_executed=len(calls) if m.get("done") else None)


def _events(data: ForeignJson, recv_ns: int) -> list[Event]:
    """One socket.io payload as the rig's stream events (most carry nothing a run's measure needs)."""
    kind = data.get("type")
    raw = data.get("data")
    body: ForeignJson = raw if isinstance(raw, dict) else {}
    if kind == "status":
        return [make_event("status", None, {"stage": str(body.get("action") or ""),
                                            "text": str(body.get("description") or body.get("action") or "")}, recv_ns)]
    if kind == "response:completion":
        delta_type = body.get("type")
        if delta_type == "response.output_text.delta" and body.get("delta"):
            return [make_event("token", None, {"text": str(body["delta"]), "kind": "answer"}, recv_ns)]
        if delta_type == "response.reasoning_text.delta" and body.get("delta"):
            return [make_event("token", None, {"text": str(body["delta"]), "kind": "reasoning"}, recv_ns)]
        return []
    if kind == "chat:completion" and body.get("done"):
        if body.get("error"):
            return [make_event("error", None, {"state": "failed", "reason": "model_error"}, recv_ns)]
        return [make_event("done", None, {"state": "completed", "reason": "completed"}, recv_ns)]
    if kind == "chat:message:error":
        return [make_event("error", None, {"state": "failed", "reason": "model_error"}, recv_ns)]
    if kind == "chat:tasks:cancel":
        return [make_event("done", None, {"state": "stopped", "reason": "user_stop"}, recv_ns)]
    return []
