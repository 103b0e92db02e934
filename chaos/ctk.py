"""Chaos Toolkit actions and probes: the rig's fault channels and checks for `chaos run`.

In an experiment, a provider of type `python` names `module: chaos.ctk` and one of these functions
(see docs/ctk-experiment.json). The target is reached through the rig: `config` is the path of a
rig.yaml (target URL, adapter, chaos token variable, accounts), so an experiment works on any target the
rig has an adapter for. Every argument is plain JSON and every return value is JSON-serialisable.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from rig.adapters import Adapter, Auth, ToolResultEvent, load_adapter_class
from rig.config import RigConfig, load_config
from rig.errors import RigError, TargetUnreachable
from rig.faults import Fault, FaultControl
from rig.fixtures import ensure_corpus
from rig.target import CommandRestarter, DockerRestarter, RestartMode, wait_ready

CTK_PROJECT = "rig-ctk"
DEFAULT_QUESTION = "请概括《Reputation and Regulations- Evidence from eBay》的主要发现"


def _open(config: str) -> tuple[Adapter, RigConfig]:
    cfg = load_config(Path(config))
    t = cfg.target
    adapter = load_adapter_class(t.adapter).connect(t.url, chaos_token=t.chaos_token(), options=t.adapter_options())
    return adapter, cfg


def _chaos(config: str, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
    adapter, _ = _open(config)
    try:
        return adapter.chaos(method, path, body)
    finally:
        adapter.close()


# -- actions ---------------------------------------------------------------------------------------------------
def inject_target_fault(config: str, point: str, mode: str, times: int | None = None, delay_ms: float | None = None,
                        match: str | None = None) -> dict[str, Any]:
    """Add a fault at one of the target's own fault points (the adapter's chaos control); returns `{fault_id}`."""
    fault = Fault(via="target", point=point, mode=mode, times=times, delay_ms=delay_ms, match=match)
    return dict(_chaos(config, "POST", "faults", fault.target_spec()))


def clear_target_faults(config: str) -> dict[str, Any]:
    """Remove every fault at the target's fault points; returns `{cleared}`."""
    return dict(_chaos(config, "DELETE", "faults"))


def add_proxy_rule(proxy_url: str, mode: str, **params: Any) -> str:
    """Add a rule to an LLM or HTTP fault proxy (`mode` plus ProxyFault fields); returns the rule id."""
    return FaultControl(proxy_url).add({"mode": mode, **params})


def add_link_fault(control_url: str, mode: str, delay_ms: float | None = None,
                   direction: str = "from_target") -> str:
    """Slow, partition or reset the target's link through the network fault proxy (`rig chaos net-proxy`)."""
    fault = Fault(via="network", mode=mode, delay_ms=delay_ms, direction=direction)
    return FaultControl(control_url).add(fault.link_rule().model_dump())


def clear_proxy_rules(proxy_url: str) -> int:
    """Remove every rule of a fault proxy (LLM, HTTP or network); returns how many were active."""
    return FaultControl(proxy_url).clear()


def restart_with_command(command: str, base_url: str, timeout_s: float = 120.0) -> dict[str, Any]:
    """Run a restart command, then wait for the target's readiness; returns what was done and how long it took."""
    return CommandRestarter(command, base_url, timeout_s).restart().model_dump(mode="json", exclude_none=True)


def restart_docker_container(container: str, base_url: str, mode: RestartMode = "restart",
                             timeout_s: float = 120.0) -> dict[str, Any]:
    """kill | term | restart | stop_start a container through the docker SDK, then wait for readiness."""
    return DockerRestarter(container, base_url, timeout_s).restart(mode).model_dump(mode="json", exclude_none=True)


# -- probes ----------------------------------------------------------------------------------------------------
def target_ready(config: str) -> bool:
    """True when the target's readiness path answers 2xx."""
    cfg = load_config(Path(config))
    try:
        wait_ready(cfg.target.url, 5.0, path=cfg.target.ready_path)
    except TargetUnreachable:
        return False
    return True


def target_faults(config: str) -> list[dict[str, Any]]:
    """The target's active faults and how often each fired."""
    return list(_chaos(config, "GET", "faults"))


def proxy_requests(proxy_url: str, since: int = 0) -> list[dict[str, Any]]:
    """A fault proxy's request log from sequence number `since` (timings, usage, faults)."""
    return [r.model_dump(mode="json") for r in FaultControl(proxy_url).requests(since)]


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _library(adapter: Adapter, cfg: RigConfig, paper: str) -> tuple[Auth, str, str]:
    """Account `a` logged in, and the project and document the probes ask about: project `rig-ctk` holding the
    paper, uploaded from the rig's corpus on first use."""

    account = cfg.accounts["a"]
    auth = adapter.login(account.username, account.resolve_password())
    project = next((p.project_id for p in adapter.projects(auth) if p.name == CTK_PROJECT), None)
    if project is None:
        project = adapter.create_project(auth, CTK_PROJECT)
    docs = [d for d in adapter.documents(auth, project) if d.paper_id == paper]
    if docs:
        doc_id = docs[0].doc_id
    else:
        corpus_dir, manifest = ensure_corpus()
        doc_id = adapter.upload(auth, project, corpus_dir / manifest.paper(paper).file, paper_id=paper).doc_id
    adapter.wait_documents(auth, project, {doc_id})
    return auth, project, doc_id


def answer_grounded(config: str, question: str = DEFAULT_QUESTION, paper: str = "P32",
                    timeout_s: float = 120.0) -> dict[str, Any]:
    """Ask one question scoped to one paper as account `a`, and check what came back against the paper itself.

    Returns the evidence: the run's state, each citation with whether it cites the paper asked about and whether
    its quote is on the page it names (`on_page` null for a citation of the whole paper, which names none), and
    the retrieval results the stream reported. `grounded` holds when the run ended and every citation is in
    scope and on its page (no citation at all is grounded: nothing was claimed). `is_grounded` is its tolerance.
    """
    adapter, cfg = _open(config)
    try:
        auth, project, doc_id = _library(adapter, cfg, paper)
        session = adapter.open_session(auth, project, [doc_id])
        began = time.monotonic()
        submitted = adapter.ask(auth, session.session_id, question)
        tools = []
        for event in adapter.events(auth, submitted.run_id):
            if isinstance(event, ToolResultEvent):
                tools.append({"tool_call_id": event.tool_call_id, "ok": event.ok, "hits": event.hits})
            if time.monotonic() - began > timeout_s:
                break
        run = adapter.run(auth, submitted.run_id)
        answer = next((m for m in reversed(adapter.session(auth, session.session_id).messages)
                       if m.run_id == submitted.run_id), None)
        citations = []
        for c in answer.citations if answer else []:
            entry: dict[str, Any] = {"citation_id": c.citation_id, "doc_id": c.doc_id, "page": c.page, "quote": c.quote,
                                     "in_scope": c.doc_id == doc_id}
            if c.page:  # a page-level claim: its quote must be on that page
                text = adapter.page_text(auth, c.doc_id, c.page).text
                entry["on_page"] = bool(c.quote) and _squash(c.quote) in _squash(text)
            else:  # the paper as a whole: no page claimed, only the paper
                entry["on_page"] = None
            citations.append(entry)
        ended = run.state in ("completed", "failed", "stopped")
        grounded = ended and all(c["in_scope"] and c["on_page"] is not False for c in citations)
        return {"run_id": run.run_id, "state": run.state, "end_reason": run.end_reason, "tool_results": tools,
                "citations": citations, "grounded": grounded}
    except RigError as exc:
        return {"grounded": False, "error": f"{type(exc).__name__}: {exc}"}
    finally:
        adapter.close()


def search_truthful(config: str, query: str = "eBay 卖家声誉徽章", paper: str = "P32") -> dict[str, Any]:
    """Search one paper through the target's retrieval tool (direct search) and check each hit against the paper.

    A search that failed must say so; a search reported ok must return hits whose text is on the page each
    names. Returns the evidence (each result, each hit with `on_page`) and `truthful`; `is_truthful` is its
    tolerance. A target without direct search answers `truthful: false` with the missing capability named.
    """
    adapter, cfg = _open(config)
    try:
        auth, project, doc_id = _library(adapter, cfg, paper)
        found = adapter.search(auth, project, [query], [doc_id])
        results: list[dict[str, Any]] = []
        pages: dict[tuple[str, int | None], str] = {}
        for r in found.results:
            hits: list[dict[str, Any]] = []
            for h in r.hits:
                if h.page and (h.doc_id, h.page) not in pages:
                    pages[(h.doc_id, h.page)] = _squash(adapter.page_text(auth, h.doc_id, h.page).text)
                text = _squash(h.text)
                on_page = bool(h.page) and bool(text) and text[:60] in pages.get((h.doc_id, h.page), "")
                hits.append({"doc_id": h.doc_id, "page": h.page, "chunk_id": h.chunk_id, "on_page": on_page})
            results.append({"tool_call_id": r.tool_call_id, "ok": r.ok, "error": r.error, "hits": hits})
        truthful = bool(results) and all(h["on_page"] for r in results if r["ok"] for h in r["hits"])
        return {"results": results, "truthful": truthful}
    except RigError as exc:
        return {"truthful": False, "error": f"{type(exc).__name__}: {exc}"}
    finally:
        adapter.close()


def is_truthful(value: dict[str, Any] | None = None) -> bool:
    """Tolerance of `search_truthful`: every hit of a search reported ok is on the page it names."""
    return bool(value and value.get("truthful"))


def is_grounded(value: dict[str, Any] | None = None) -> bool:
    """Tolerance of `answer_grounded` (Chaos Toolkit passes the probe's output as `value`): the run ended and
    every citation is on its page."""
    return bool(value and value.get("grounded"))
