"""The agent loop: outer rounds in which the model may call `internal_search`, then answers.

Bounded by `max_rounds` (tools withheld in the last round), guarded against no progress, with a
checkpoint after every completed tool cycle and honest end states (an empty answer is a failure).
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
from dataclasses import dataclass, field
from typing import Any

from workbench.chaos import InjectedFault
from workbench.checkpoints import save_checkpoint, signature_parts
from workbench.citations import extract_citations
from workbench.clock import iso, now_ms, stamp
from workbench.conversation import digest
from workbench.ids import new_id
from workbench.modelconfig import ModelConfig, build_provider, default_config
from workbench.models.base import SEARCH_TOOL, ModelError, ModelRequest, ModelResult, Provider
from workbench.pricing import estimate_cost
from workbench.runs import LiveRun
from workbench.search import internal_search
from workbench.services import Services
from workbench.stages import StageLog
from workbench.summaries import maybe_summarise
from workbench.text import count_tokens, estimate_tokens
from workbench.tracing import RunTrace

_FLAKY = itertools.count(1)  # the seeded defect `flaky_runs` counts every run of the process


@dataclass
class RunPlan:
    """Everything a run needs, fixed when it is created."""

    session_id: str
    user_id: str
    project_id: str
    user_message_id: str
    branch_id: str
    scope: list[str]
    messages: list[dict[str, Any]]
    included_summary_id: str | None
    included_message_ids: list[str]
    model: ModelConfig
    titles: dict[str, str]
    resume_state: dict[str, Any] | None = None
    traceparent: str | None = None


@dataclass
class LoopState:
    messages: list[dict[str, Any]]
    refs: dict[str, int] = field(default_factory=dict)  # chunk_id → ref
    hits: dict[int, dict[str, Any]] = field(default_factory=dict)  # ref → hit (+ tool_call_id)
    round: int = 0
    seen_tool_ids: list[str] = field(default_factory=list)
    result_signatures: list[str] = field(default_factory=list)

    def snapshot(self) -> dict[str, Any]:
        return {"messages": self.messages, "refs": self.refs, "hits": {str(k): v for k, v in self.hits.items()},
                "round": self.round, "seen_tool_ids": self.seen_tool_ids,
                "result_signatures": self.result_signatures}

    @classmethod
    def restore(cls, state: dict[str, Any]) -> LoopState:
        return cls(state["messages"], dict(state["refs"]), {int(k): v for k, v in state["hits"].items()},
                   state["round"], list(state["seen_tool_ids"]), list(state.get("result_signatures", [])))


def new_detail(run_id: str, plan: RunPlan, max_rounds: int, resume_from: str | None, trace_id: str) -> dict[str, Any]:
    """A run record in protocol shape, state `queued`."""
    queued, queued_ms = stamp()
    return {
        "run_id": run_id, "session_id": plan.session_id, "message_id": None,
        "user_message_id": plan.user_message_id, "branch_id": plan.branch_id, "state": "queued",
        "end_reason": None, "resume_from": resume_from, "trace_id": trace_id, "trace_complete": True,
        "queued_at": queued, "queued_at_ms": queued_ms, "started_at": None, "started_at_ms": None,
        "first_status_at": None, "first_status_at_ms": None, "first_token_at": None, "first_token_at_ms": None,
        "ended_at": None, "ended_at_ms": None, "rounds": 0, "max_rounds": max_rounds, "model_requests": 0,
        "tool_calls_proposed": 0, "tool_calls_executed": 0, "retrieval_model_requests": 0,
        "embedding_requests": 0, "retries": 0, "scope": plan.scope,
        "usage": {"input_tokens": 0, "output_tokens": 0, "estimated_input_tokens": 0,
                  "estimated_output_tokens": 0, "source": "provider"},
        "cost": {"actual_usd": None, "estimated_usd": 0.0, "unknown": []},
        "model": {"provider": plan.model.provider, "model": plan.model.model,
                  "config_version": plan.model.config_version},
        "checkpoints": [], "stages": [], "rounds_detail": [], "tool_calls": [], "model_input": [], "error": None,
    }


class AgentLoop:
    """Executes one run; every outcome ends in exactly one terminal state with its reason."""

    def __init__(self, svc: Services, run: LiveRun, plan: RunPlan) -> None:
        self.svc = svc
        self.run = run
        self.plan = plan
        self.d = run.detail
        self.trace = RunTrace(svc, self.d, plan.traceparent)
        self.stages = StageLog(svc.metrics, self.trace)
        self.d["stages"] = self.stages.records
        self.langfuse = svc.langfuse.start_run(self.d, plan) if svc.langfuse else None
        self.answer: list[str] = []
        self.actual_costs: list[float] = []

    def emit(self, event: str, data: dict[str, Any]) -> None:
        self.svc.runs.emit(self.run, event, data)

    async def __call__(self, run: LiveRun) -> None:
        with self.trace.root_span({"session.id": self.plan.session_id,
                                   "gen_ai.conversation.id": self.plan.session_id}) as root:
            try:
                await self._execute()
            except asyncio.CancelledError:
                reason = self.run.stop_reason or "server_restart"
                state = "stopped" if reason == "user_stop" else "interrupted"
                self._end(state, reason)
            except ModelError as exc:
                self._end("failed", exc.code, str(exc))
            except Exception as exc:  # the run fails, the server stays up
                self._end("failed", "internal_error", f"{type(exc).__name__}: {exc}")
            root.set_attribute("run.state", self.d["state"])
            root.set_attribute("run.end_reason", self.d["end_reason"] or "")
            if self.langfuse is not None:
                self.langfuse.end(self.d, "".join(self.answer))

    # -- the loop ------------------------------------------------------------------------------------------
    async def _execute(self) -> None:
        if "flaky_runs" in self.svc.defects and next(_FLAKY) % 20 == 0:
            raise RuntimeError("seeded defect flaky_runs: one run in twenty fails")
        async with self.stages.stage("queue"):
            await self.svc.runs.acquire_slot(self.run)
        started, started_ms = stamp()
        self.d.update(state="running", started_at=started, started_at_ms=started_ms)
        self.svc.runs.save(self.run)
        self.emit("status", {"stage": "planning", "text": "正在理解问题并规划检索"})
        if "t4_per_turn" in self.svc.defects:  # the seeded defect: the session's history re-read, slower each turn
            earlier = sum(1 for m in self.plan.messages if m.get("role") == "user") - 1
            await asyncio.sleep(0.15 * max(0, earlier))
        provider = build_provider(self.svc, self.plan.model)
        resume = self.plan.resume_state
        state = LoopState.restore(resume) if resume is not None else LoopState(list(self.plan.messages))
        max_rounds = self.d["max_rounds"]
        repeated_rounds = 0
        forced: str | None = None
        result: ModelResult | None = None
        while state.round < max_rounds:
            state.round += 1
            self.d["rounds"] = state.round
            tools_offered = state.round < max_rounds and forced is None
            with self.trace.span(f"round {state.round}", {"rig.round": state.round,
                                                          "rig.tools_offered": tools_offered}):
                result = await self._model_round(provider, state, tools_offered)
                if not (result.tool_calls and tools_offered):
                    break
                progressed = await self._tool_cycle(state, result)
            repeated_rounds = 0 if progressed else repeated_rounds + 1
            if repeated_rounds >= self.svc.settings.no_progress_threshold:
                forced = "no_progress"
        assert result is not None
        reason = forced or ("max_rounds" if not self.d["rounds_detail"][-1]["tools_offered"]
                            and state.round >= max_rounds and forced is None else "completed")
        await self._finish(result, reason, state)

    async def _model_round(self, provider: Provider, state: LoopState, tools_offered: bool) -> ModelResult:
        request_id = new_id("req")
        tool_ids = [m["tool_call_id"] for m in state.messages if m["role"] == "tool"]
        self.d["rounds_detail"].append({"round": state.round, "tools_offered": tools_offered, "tool_call_ids": [],
                                        "model_request_id": request_id})
        self.d["model_input"].append({
            "round": state.round, "messages_digest": digest(state.messages),
            "included_summary_id": self.plan.included_summary_id,
            "included_message_ids": self.plan.included_message_ids, "tool_call_ids": tool_ids,
        })
        request = ModelRequest(state.messages, [SEARCH_TOOL] if tools_offered else None, state.round, request_id)
        self.d["model_requests"] += 1
        if not tools_offered or state.round > 1:
            self.emit("status", {"stage": "answering" if not tools_offered else "reading",
                                 "text": "正在整理证据并撰写回答" if state.hits else "正在撰写回答"})
        attrs = {"gen_ai.operation.name": "chat", "gen_ai.request.model": provider.model,
                 "gen_ai.provider.name": provider.provider, "rig.round": state.round}
        generation = self.langfuse.generation(provider, request) if self.langfuse else None
        with self.trace.span(f"chat {provider.model}", attrs) as span:
            async with self.stages.stage("model", round=state.round):
                result = await self._generate(provider, request)
            self._account(result, request)
            if generation is not None:
                generation.finish(result, self.plan.model.model)
            span.set_attribute("gen_ai.usage.input_tokens", result.input_tokens or 0)
            span.set_attribute("gen_ai.usage.output_tokens", result.output_tokens or 0)
            span.set_attribute("gen_ai.response.finish_reasons", [result.finish_reason])
        return result

    async def _generate(self, provider: Provider, request: ModelRequest) -> ModelResult:
        async def on_text(text: str, kind: str) -> None:
            if kind == "answer":
                self.answer.append(text)
            self.emit("token", {"text": text, "kind": kind})

        try:
            fault = await self.svc.faults.apply("llm", request.messages[-1].get("content") or "")
        except InjectedFault as exc:
            raise ModelError("internal_error", f"model call failed: {exc}") from None
        if fault is not None and fault.spec.mode == "empty":
            return ModelResult("", [], count_tokens(dumps_messages(request.messages)), 0, None, provider.model)
        try:
            result = await provider.generate(request, on_text)
            if fault is not None and fault.spec.mode == "no_usage":  # a provider that reports no usage
                result = dataclasses.replace(result, input_tokens=None, output_tokens=None, cost_usd=None)
            return result
        except ModelError as exc:
            self.d["retries"] += exc.retries
            if exc.code == "model_config_invalid" and "model_fallback_silent" in self.svc.defects:
                return await build_provider(self.svc, default_config(self.svc)).generate(request, on_text)
            raise

    def _account(self, result: ModelResult, request: ModelRequest) -> None:
        usage = self.d["usage"]
        est_in = estimate_tokens(dumps_messages(request.messages))
        est_out = estimate_tokens(result.text + "".join(json.dumps(c.arguments) for c in result.tool_calls))
        usage["estimated_input_tokens"] += est_in
        usage["estimated_output_tokens"] += est_out
        self.d["retries"] += result.retries
        if (result.input_tokens is None or result.output_tokens is None) and \
                "estimate_shown_as_actual" not in self.svc.defects:
            usage["source"] = "estimate"
            if "provider_usage" not in self.d["cost"]["unknown"]:
                self.d["cost"]["unknown"].append("provider_usage")
        usage["input_tokens"] += result.input_tokens if result.input_tokens is not None else est_in
        usage["output_tokens"] += result.output_tokens if result.output_tokens is not None else est_out
        self.svc.metrics.model_tokens.labels("input", usage["source"]).inc(result.input_tokens or est_in)
        self.svc.metrics.model_tokens.labels("output", usage["source"]).inc(result.output_tokens or est_out)
        if result.cost_usd is not None:
            self.actual_costs.append(result.cost_usd)
        self.svc.metrics.model_requests.labels(self.plan.model.provider, "ok").inc()

    async def _tool_cycle(self, state: LoopState, result: ModelResult) -> bool:
        """Execute the round's tool calls, feed results back, checkpoint.

        Returns False when every call of the round returned exactly a result list seen before (no progress).
        """
        round_detail = self.d["rounds_detail"][-1]
        state.messages.append({"role": "assistant", "content": result.text or None, "tool_calls": [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(
                c.arguments, ensure_ascii=False)}} for c in result.tool_calls]})
        progressed = False
        for call in result.tool_calls:
            round_detail["tool_call_ids"].append(call.id)
            queries = [str(q) for q in call.arguments.get("queries") or [] if str(q).strip()] or [""]
            self.emit("tool_call", {"tool_call_id": call.id, "name": call.name, "args": call.arguments})
            self.emit("status", {"stage": "searching", "text": "正在检索所选资料"})
            executed = call.name == "internal_search"
            if executed:
                try:
                    with self.trace.span("execute_tool internal_search", {
                            "gen_ai.tool.name": "internal_search", "gen_ai.tool.call.id": call.id,
                            "gen_ai.operation.name": "execute_tool"}):
                        async with self.stages.stage("internal_search", round=state.round, tool_call_id=call.id):
                            outcome = await internal_search(
                                self.svc, user_id=self.plan.user_id, project_id=self.plan.project_id,
                                queries=queries, scope=self._retrieval_scope(),
                                tool_call_ids=[call.id] * len(queries), stages=self.stages)
                except asyncio.CancelledError:  # stopped inside the call: the record still lists it, unfinished
                    self.d["tool_calls_proposed"] += len(queries)
                    self.d["tool_calls"].append({
                        "tool_call_id": call.id, "name": call.name, "args": call.arguments, "ok": False,
                        "error": {"code": "cancelled", "message": "the run was stopped inside this call"},
                        "executed": False, "returned_to_round": None, "hits": []})
                    raise
                self.d["tool_calls_proposed"] += outcome.proposed_calls
                self.d["tool_calls_executed"] += outcome.executed_calls
                self.d["embedding_requests"] += outcome.embedding_requests
                self.d["retrieval_model_requests"] += outcome.retrieval_model_requests
                results = outcome.results
            else:
                self.d["tool_calls_proposed"] += 1
                results = [{"tool_call_id": call.id, "query": "", "ok": False,
                            "error": {"code": "unknown_tool", "message": f"no tool named {call.name}"}, "hits": []}]
            self._feed_results(state, call.id, call.arguments, results, executed)
            signature = "|".join(h["chunk_id"] for r in results for h in r["hits"]) or "no-hits"
            progressed |= signature not in state.result_signatures
            state.result_signatures.append(signature)
        checkpoint = save_checkpoint(self.svc, self.d["run_id"], state.round,
                                     signature_parts(self.svc, self.plan.scope, self.plan.model.version_tag),
                                     state.snapshot())
        self.d["checkpoints"].append(checkpoint)
        self.svc.runs.save(self.run)
        self.emit("checkpoint", {"checkpoint_id": checkpoint["checkpoint_id"], "round": state.round})
        return progressed

    def _retrieval_scope(self) -> list[str]:
        if "removed_source_returns" in self.svc.defects:
            from workbench.conversation import history_scopes

            return sorted(set(self.plan.scope) | history_scopes(self.svc, self.plan.session_id))
        return self.plan.scope

    def _feed_results(self, state: LoopState, call_id: str, args: dict[str, Any], results: list[dict[str, Any]],
                      executed: bool) -> None:
        shown: list[dict[str, Any]] = []
        errors = []
        ok = any(r["ok"] for r in results)
        for r in results:
            if not r["ok"]:
                errors.append(r.get("error"))
            for hit in r["hits"]:
                ref = state.refs.get(hit["chunk_id"])
                if ref is None:
                    ref = len(state.refs) + 1
                    state.refs[hit["chunk_id"]] = ref
                    state.hits[ref] = {**hit, "tool_call_id": r["tool_call_id"]}
                shown.append({"ref": ref, "paper_id": hit["paper_id"], "page": hit["page"], "text": hit["text"],
                              "answers_tool_call_id": r["tool_call_id"]})
        content = {"tool_call_id": call_id, "ok": ok, "error": errors[0] if errors and not ok else None,
                   "hits": shown}
        state.messages.append({"role": "tool", "tool_call_id": call_id,
                               "content": json.dumps(content, ensure_ascii=False)})
        state.seen_tool_ids.append(call_id)
        self.d["tool_calls"].append({
            "tool_call_id": call_id, "name": "internal_search", "args": args, "ok": ok,
            "error": content["error"], "executed": executed, "returned_to_round": state.round + 1,
            "hits": [{"doc_id": h["doc_id"], "page": h["page"], "chunk_id": h["chunk_id"], "text": h["text"],
                      "result_tool_call_id": r["tool_call_id"]} for r in results for h in r["hits"]],
        })
        self.svc.metrics.tool_calls.labels("internal_search", str(ok).lower()).inc()
        masked = "tool_card_masks_error" in self.svc.defects
        self.emit("tool_result", {"tool_call_id": call_id, "ok": ok or masked, "error": None if masked else content["error"],
                                  "hits": len(shown)})

    # -- ending --------------------------------------------------------------------------------------------
    async def _finish(self, result: ModelResult, reason: str, state: LoopState) -> None:
        text = result.text
        if result.finish_reason == "truncated":
            self._end("failed", "internal_error", "the model stream was cut before it finished")
            return
        if not text.strip():
            if "empty_answer_completed" not in self.svc.defects:
                self._end("failed", "empty_answer", "the model returned no answer text")
                return
        all_failed = bool(self.d["tool_calls"]) and not any(c["ok"] for c in self.d["tool_calls"])
        end_state, end_reason = ("failed", "tool_error") if all_failed else ("completed", reason)
        async with self.stages.stage("save"):
            message_id, citations = self._save_answer(text, state)
        self.d["message_id"] = message_id
        for c in citations:
            self.emit("citation", c.to_api())
        async with self.stages.stage("summarize"):
            try:
                await self.svc.faults.apply("summarize")
                summary = maybe_summarise(self.svc, self.plan.session_id, self.plan.branch_id, message_id)
            except InjectedFault as exc:
                summary = None
                self.stages.records[-1]["error"] = exc.code
        if summary is not None:
            self.emit("summary", summary)
        self._end(end_state, end_reason, message_id=message_id)

    def _save_answer(self, text: str, state: LoopState) -> tuple[str, list[Any]]:
        citations = extract_citations(self.svc, text, state.hits, self.plan.titles)
        message_id = new_id("msg")
        created, _ = stamp()
        with self.svc.db.tx() as conn:
            seq = self.svc.db.next_seq(conn, "messages")
            conn.execute("INSERT INTO messages(message_id, session_id, parent_id, branch_id, role, content, run_id, "
                         "scope, created_at, seq) VALUES(?,?,?,?,?,?,?,?,?,?)",
                         (message_id, self.plan.session_id, self.plan.user_message_id, self.plan.branch_id,
                          "assistant", text, self.d["run_id"], json.dumps(self.plan.scope), created, seq))
            conn.executemany("INSERT INTO citations(citation_id, message_id, marker, doc_id, paper_id, page, "
                             "chunk_id, quote, tool_call_id, run_id) VALUES(?,?,?,?,?,?,?,?,?,?)",
                             [(c.citation_id, message_id, c.marker, c.doc_id, c.paper_id, c.page, c.chunk_id,
                               c.quote, c.tool_call_id, self.d["run_id"]) for c in citations])
            conn.execute("UPDATE sessions SET current_leaf=? WHERE session_id=?", (message_id, self.plan.session_id))
        return message_id, citations

    def _end(self, state: str, reason: str, error: str | None = None, message_id: str | None = None) -> None:
        if self.d["state"] in ("completed", "stopped", "failed", "interrupted"):
            return  # already ended (a stop that was not propagated)
        ended = now_ms()
        for stage in self.stages.records:
            if stage["ended_at"] is None:
                stage.update(ended_at=iso(ended), ended_at_ms=ended, ok=False, cancelled=True)
        cost = self.d["cost"]
        usage = self.d["usage"]
        cost["estimated_usd"] = estimate_cost(self.plan.model.model, usage["input_tokens"], usage["output_tokens"])
        if cost["estimated_usd"] is None and "price" not in cost["unknown"]:
            cost["unknown"].append("price")
        if self.actual_costs and usage["source"] == "provider":
            cost["actual_usd"] = round(sum(self.actual_costs), 8)
        elif "actual_cost_from_estimate" in self.svc.defects and usage["source"] == "estimate":
            cost["actual_usd"] = cost["estimated_usd"]
        elif "actual_cost" not in cost["unknown"]:
            cost["unknown"].append("actual_cost")
        self.d.update(state=state, end_reason=reason, ended_at=iso(ended), ended_at_ms=ended, error=error)
        self.d["trace_complete"] = self.trace.complete or "trace_incomplete_unmarked" in self.svc.defects
        self.svc.metrics.runs.labels(state, reason).inc()
        if self.d["first_token_at_ms"] and self.d["started_at_ms"]:
            self.svc.metrics.first_token.observe((self.d["first_token_at_ms"] - self.d["started_at_ms"]) / 1000)
        data: dict[str, Any] = {"state": state, "reason": reason}
        if state == "completed":
            data["message_id"] = message_id
            self.emit("done", data)
        else:
            if error:
                data["message"] = error
            self.emit("error", data)
        self.svc.runs.save(self.run)


def dumps_messages(messages: list[dict[str, Any]]) -> str:
    return "\n".join(str(m.get("content") or "") for m in messages)
