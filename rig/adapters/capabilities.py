"""What a target offers, per operation and per variant. Cases needing something absent end BLOCKED."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from rig.errors import CapabilityMissing

_ALL_EXPORTS: tuple[Literal["md", "json", "csv"], ...] = ("md", "json")


class Capabilities(BaseModel):
    """Declared by an adapter; `missing()` names what a step needs but the target lacks.

    The defaults describe target protocol v1 in full; an adapter for another target sets to False (or to
    its variant) whatever its target does not offer. An item that needs a capability declared absent ends
    BLOCKED naming it; a field declared present that the target then omits is the target's FAIL.
    See docs/adapters.md for what each one means and which cases need it.
    """

    # the target's shape: what it keeps for the rig (each False is a target unlike the reference workbench)
    identity: bool = True  # the target says who is logged in (`me`); without it the rig uses what login returned
    logout: bool = True  # a session can be ended (its token revoked)
    projects: bool = True  # documents live in projects; without them the target is one shared namespace
    sessions: bool = True  # the target keeps conversations; without them each question is its own, kept by the rig
    scope: bool = True  # a question can be restricted to chosen documents
    upload: bool = True  # documents can be uploaded
    documents: bool = True  # a project's (or the namespace's) documents can be listed
    document: bool = True  # one document can be read by its id
    document_hashes: bool = True  # the target reports each document's sha256 (the rig computes its own either way)
    ask: bool = True  # a question can be asked
    stream: Literal["sse", "ndjson", "json", "websocket", "none"] = "sse"
    stop: Literal["server", "disconnect", "none"] = "server"
    resume: bool = True
    regenerate: bool = True
    export: list[Literal["md", "json", "csv"]] = Field(default_factory=lambda: list(_ALL_EXPORTS))
    direct_search: bool = True
    locate_citation: bool = True
    run_detail: bool = True
    members: bool = True
    attachments: bool = True
    scope_change: bool = True
    summaries: bool = True
    model_config_api: bool = True
    model_config_keys: bool = True  # a per-user model config carries its own API key (and endpoint)
    chaos: bool = False
    scope_rule: str | None = None  # the target's declared rule for combining scope and attachments
    page_text: bool = True
    version: str | None = None  # the target's own version, when it says
    download: bool = True
    # what a run record holds
    end_reasons: bool = True  # why a run ended, in the protocol's words (user_stop, empty_answer, tool_error …)
    run_timings: bool = True  # queued / started / first status / first token / ended stamps
    run_tool_calls: bool = True  # each tool call with its arguments and hits
    run_model_input: bool = True  # what went into each model request (messages, summary used)
    run_usage: bool = True  # token usage (provider or estimate) and cost
    trace_ids: bool = True  # a trace id per run, joined to the rig's traceparent
    checkpoints: bool = True  # checkpoints listed on the run record
    # what ingestion reports
    ingest_stages: bool = True  # per-stage start and end times of an upload
    page_counts: bool = True  # pages_total / pages_with_text of a document
    # run control and limits
    event_replay: bool = True  # a stream can be re-read from an event id (Last-Event-ID)
    stream_tool_cards: bool = True  # the stream announces each tool call and its result
    search_stages: bool = True  # a direct search reports its internal stages (encode, query, expand) with times
    search_calls: bool = True  # a direct search reports its calls: ids, and proposed vs executed counts
    hit_pages: bool = True  # a search hit names the physical page it comes from
    expansion: bool = True  # search hits may be widened to their neighbouring context (`Hit.expanded`)
    export_reading: bool = True  # the adapter can read its target's JSON export back (Adapter.read_export)
    export_sources: bool = True  # a JSON export lists each cited paper once, with its cited pages
    input_budget: bool = True  # over-budget input is refused explicitly
    citation_pages: bool = True  # a citation names the physical page (and chunk) it rests on
    slots_metric: str | None = None  # the gauge of run slots in use on the target's /metrics, when it has one

    @classmethod
    def check_names(cls, *names: str) -> None:
        """Raise ValueError for a name (`field` or `field=variant`) that is no capability: a mistyped name would
        otherwise block items silently. Cases check theirs when they are declared."""
        for name in names:
            field = name.partition("=")[0]
            if field not in cls.model_fields:
                raise ValueError(f"no capability named {field!r} (see rig.adapters.capabilities.Capabilities)")

    def missing(self, *names: str) -> list[str]:
        """Names (as `field` or `field=variant`) that are not offered; a name that is no capability raises."""
        type(self).check_names(*names)
        out = []
        for name in names:
            field, _, variant = name.partition("=")
            value = getattr(self, field)
            if variant:
                ok = variant in value if isinstance(value, list) else value == variant
            else:
                ok = bool(value) and value != "none"
            if not ok:
                out.append(name)
        return out

    def require(self, *names: str) -> None:
        missing = self.missing(*names)
        if missing:
            raise CapabilityMissing(", ".join(missing))

    def shape(self) -> dict[str, bool | str]:
        """The target's shape as the rig found it: what it keeps itself and what the rig keeps in its place."""
        return {"identity": self.identity, "projects": self.projects, "sessions": self.sessions, "scope": self.scope,
                "run_records": self.run_detail, "stream": self.stream, "stop": self.stop,
                "document_hashes": self.document_hashes}
