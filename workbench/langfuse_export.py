"""Runs sent to Langfuse through its Python SDK (when `LANGFUSE_PUBLIC_KEY/SECRET_KEY/HOST` are set).

Each run is a trace whose id is the run's `trace_id`; each model request a generation carrying the
usage the provider reported (`usage_details`) and the price-table cost (`cost_details`). When the
provider reported no usage, the generation carries none: estimates are never sent as usage.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from opentelemetry.sdk.trace import TracerProvider

from workbench.models.base import ModelRequest, ModelResult, Provider
from workbench.pricing import PRICES_PER_MTOK

if TYPE_CHECKING:
    from workbench.agent import RunPlan

ENV = ("LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "LANGFUSE_HOST")


class LangfuseExport:
    """A Langfuse client on its own tracer provider (the workbench's tracing stays separate)."""

    def __init__(self, public_key: str, secret_key: str, host: str) -> None:
        from langfuse import Langfuse

        self.client = Langfuse(public_key=public_key, secret_key=secret_key, host=host,
                               tracer_provider=TracerProvider(), flush_interval=1.0)

    @classmethod
    def from_env(cls) -> LangfuseExport | None:
        values = [os.environ.get(name) for name in ENV]
        if not all(values):
            return None
        public_key, secret_key, host = (v or "" for v in values)
        return cls(public_key, secret_key, host)

    def start_run(self, detail: dict[str, Any], plan: RunPlan) -> RunObservation:
        root = self.client.start_observation(
            trace_context={"trace_id": detail["trace_id"]}, name="run", as_type="agent",
            input=plan.messages[-1]["content"],
            metadata={"run_id": detail["run_id"], "session_id": plan.session_id, "user_id": plan.user_id},
        )
        return RunObservation(root)

    def shutdown(self) -> None:
        self.client.flush()
        self.client.shutdown()


class Generation:
    def __init__(self, obs: Any) -> None:
        self.obs = obs

    def finish(self, result: ModelResult, model: str) -> None:
        update: dict[str, Any] = {"output": result.text or [c.arguments for c in result.tool_calls]}
        if result.input_tokens is not None and result.output_tokens is not None:
            update["usage_details"] = {"input": result.input_tokens, "output": result.output_tokens}
            prices = PRICES_PER_MTOK.get(model)
            if prices is not None:
                cin = result.input_tokens / 1e6 * prices[0]
                cout = result.output_tokens / 1e6 * prices[1]
                update["cost_details"] = {"input": round(cin, 10), "output": round(cout, 10),
                                          "total": round(cin + cout, 10)}
        if result.cost_usd is not None:
            update["cost_details"] = {"total": result.cost_usd}
        self.obs.update(**update)
        self.obs.end()


class RunObservation:
    def __init__(self, root: Any) -> None:
        self.root = root

    def generation(self, provider: Provider, request: ModelRequest) -> Generation:
        return Generation(self.root.start_observation(
            name=f"chat {provider.model}", as_type="generation", model=provider.model,
            metadata={"round": request.round, "request_id": request.request_id},
        ))

    def end(self, detail: dict[str, Any], answer: str) -> None:
        self.root.update(output=answer, metadata={"state": detail["state"], "end_reason": detail["end_reason"]})
        self.root.end()
