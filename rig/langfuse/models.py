"""The parts of Langfuse's public API responses the rig reads (`GET /api/public/traces/{traceId}`).

Field names follow the API's documented JSON (camelCase); unknown fields are kept, absent ones are None,
so a self-hosted version with more or fewer fields still parses.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class _Api(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class LegacyUsage(_Api):
    input: int | None = None
    output: int | None = None
    total: int | None = None
    unit: str | None = None


class Observation(_Api):
    """One observation of a trace (`ObservationsView`): a span, a generation, an agent step, …"""

    id: str
    trace_id: str | None = Field(None, alias="traceId")
    type: str
    name: str | None = None
    model: str | None = None
    parent_observation_id: str | None = Field(None, alias="parentObservationId")
    usage_details: dict[str, int] | None = Field(None, alias="usageDetails")
    cost_details: dict[str, float] | None = Field(None, alias="costDetails")
    usage: LegacyUsage | None = None
    calculated_total_cost: float | None = Field(None, alias="calculatedTotalCost")
    metadata: Any = None

    @property
    def is_generation(self) -> bool:
        return self.type.upper() == "GENERATION"


class LangfuseTrace(_Api):
    """A trace with its observations (`TraceWithFullDetails`)."""

    id: str
    name: str | None = None
    timestamp: str | None = None
    total_cost: float | None = Field(None, alias="totalCost")
    latency: float | None = None
    html_path: str | None = Field(None, alias="htmlPath")
    metadata: Any = None
    observations: list[Observation] = Field(default_factory=list)

    @property
    def generations(self) -> list[Observation]:
        return [o for o in self.observations if o.is_generation]
