"""The T-codes: what each one measures in the rig, its unit, and the row a threshold on it reads.

The names and measurement rules come from the eval set's metric list (`TCode.T4.metric`); the rig's
operational definition of each code is `TCode.T4.definition`. Every workload (gate, quality, load,
browser) records T-codes only through `rig.measure.derive`, so one code means one thing everywhere.
"""

from __future__ import annotations

from enum import StrEnum

from rig.catalog import Metric, load_eval_set


class TCode(StrEnum):
    T1 = "T1"
    T2 = "T2"
    T3 = "T3"
    T4 = "T4"
    T5 = "T5"
    T6 = "T6"
    T7 = "T7"
    T8 = "T8"
    T9 = "T9"
    T10 = "T10"
    T11 = "T11"
    T12 = "T12"
    T13 = "T13"

    @property
    def definition(self) -> str:
        """What the rig measures for this code (client side unless said)."""
        return _DEFINITIONS[self]

    @property
    def timed(self) -> bool:
        """True for codes whose values are durations in milliseconds."""
        return self in TIME_CODES

    @property
    def primary_label(self) -> str | None:
        """The label of the row a threshold such as `T7.p95` reads (None: the rows without a label)."""
        return _PRIMARY_LABEL.get(self)

    @property
    def metric(self) -> Metric:
        """The eval set's own entry for this code (name, measurement rule, evidence)."""
        return next(m for m in load_eval_set().metrics if m.code == self.value)


_DEFINITIONS: dict[TCode, str] = {
    TCode.T1: "per file: upload accepted → final status (client); first stage start → last stage end (server); "
              "label: the file",
    TCode.T2: "per tool call: tool_call → tool_result (server stages, label tool_call); internal stages apart "
              "(label stage:<name>); the direct tool entry's HTTP round trip (client, label direct_search)",
    TCode.T3: "submit (request written) → first status event (client) or first status element visible (browser)",
    TCode.T4: "submit → first token of kind answer (client) or first answer text visible (browser); the kind of the "
              "first text of any kind is the label first_text_kind=<kind>",
    TCode.T5: "submit → terminal event with the full body (client) or full body visible (browser); an end without "
              "a body is labelled no_body:<state>/<reason> and kept out of the percentiles",
    TCode.T6: "T5 of a revision turn",
    TCode.T7: "queued → started (label queue), started → ended (label execution), retries (count)",
    TCode.T8: "terminal state and end reason, counted by <state>/<reason>",
    TCode.T9: "resume or recovery: request → terminal event of the linked run; restart → ready, restart → first "
              "good run",
    TCode.T10: "under load: latency percentiles, throughput, error ratio, target CPU and memory",
    TCode.T11: "outer model rounds, model requests, retrieval-model and embedding requests, tool calls proposed and "
               "executed (counts)",
    TCode.T12: "input and output tokens: the target's reported usage (source as the target names it, else server) "
               "and the estimate (source estimate), both kept",
    TCode.T13: "cost in USD: actual (provider-reported) and estimate (price table), never mixed",
}

TIME_CODES: frozenset[TCode] = frozenset({TCode.T1, TCode.T2, TCode.T3, TCode.T4, TCode.T5, TCode.T6, TCode.T7,
                                          TCode.T9})

_PRIMARY_LABEL: dict[TCode, str] = {TCode.T2: "tool_call", TCode.T7: "execution"}

# The answer's pace, measured beside the T-codes (model-level measures, as LLM load tools name them): ITL, the mean
# gap between an answer's pieces after the first; TPOT, the same per output token; tokens_out, a run's output tokens.
PACE_ITL, PACE_TPOT, TOKENS_OUT = "ITL", "TPOT", "tokens_out"
PACE_CODES: tuple[str, ...] = (PACE_ITL, PACE_TPOT)
IN_FLIGHT = "in_flight"  # a run that never showed its end: submit → its break, in ms (where it lies in time)

# Sources, in the order a headline value prefers them: what a person waits for first.
SOURCE_PREFERENCE: tuple[str, ...] = ("client", "browser", "server")


def is_tcode(code: str) -> bool:
    """True for `T1` … `T13` (not for the rig's other measures such as `send_lag` or `error`)."""
    return code in TCode.__members__
