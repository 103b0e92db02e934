"""Seeded defects for self-validation: each breaks exactly one promise of the eval set.

They are for tests only and are refused unless a chaos token is configured.
"""

from __future__ import annotations

DEFECTS: dict[str, str] = {
    "logout_keeps_token": "logout answers 204 but the token keeps working",
    "unauth_run_detail": "run details are served without authentication",
    "cross_user_file": "a document's original file is served to any logged-in user",
    "cross_user_export": "a session export is served to any logged-in user",
    "silent_parse_failure": "scanned or image-only files are reported ready",
    "scope_leak": "the retrieval tool ignores the scope and searches every readable document",
    "tool_result_misrouted": "with several tool calls, results are attached to the wrong tool_call_id",
    "fake_tool_success": "a failing search is reported ok with made-up hits",
    "empty_answer_completed": "an empty model answer ends completed instead of failed/empty_answer",
    "stop_not_propagated": "stop marks the run stopped but the work continues and the slot stays held",
    "disconnect_cancels": "closing the event stream cancels the run",
    "stale_checkpoint_resumes": "resume ignores a changed checkpoint signature",
    "restart_marks_user_stop": "runs cut by a restart are marked stopped/user_stop",
    "summary_drops_originals": "making a summary deletes the messages it covers",
    "branch_mixing": "a follow-up on a branch sees the other branch's history",
    "citation_page_shift": "citations report the page after the true page",
    "duplicate_quote_highlighted": "a quote found several times is highlighted at its first place as unique",
    "stale_highlight_cache": "citation locate results are cached by paper and quote, ignoring file content",
    "removed_source_returns": "papers removed from the scope still come back in new answers",
    "export_other_session": "export includes messages from the user's other sessions",
    "truncate_long_input": "over-budget messages are silently truncated and the run completes",
    "model_fallback_silent": "an invalid model config silently falls back to the default model",
    "api_key_leak": "the model config endpoint returns the API key in plain text",
    "trace_incomplete_unmarked": "a trace cut by the span budget still says trace_complete=true",
    "unauth_run_events": "a run's event stream is served without authentication",
    "tool_card_masks_error": "the stream's tool card shows a failed search as ok; the run record keeps the error",
    "export_all_branches": "a session export holds every branch's messages, not just the current branch",
    "export_leaks_api_key": "a session export carries the account's model config with its API key in plain text",
    "run_record_null_state": "a finished run's record answers state null, which the protocol does not allow",
    "search_down_after_corrupt": "the search tool answers 503 in a project that holds a document that failed to parse",
    "hit_page_shift": "search hits name the page after the one their text is on",
    "attachment_unreadable_kept": "an attachment the user may not read stays in the effective scope",
    "expand_error_hidden": "a failed expansion stage is recorded as ok",
    "resume_searches_again": "resuming from a valid checkpoint drops its evidence and searches again",
    "resume_without_checkpoint_restarts": "resuming a run without a checkpoint silently starts it over",
    "trace_id_unlinked": "run records carry a trace id that no span of the run belongs to",
    "relogin_drops_citations": "after a new login, earlier answers of a session are listed without their citations",
    "stop_waits_for_stage": "a stop during a retrieval stage waits for the stage to run to its end",
    "merged_results_swapped": "with several queries in one call, the second query's result carries the first's hits",
    "tool_count_inflated": "the run record counts one more proposed and executed tool call than the run made",
    "md_export_page_shift": "the Markdown export names the page after each citation's page (the JSON export is right)",
    "replay_repeats_last": "a stream resumed with Last-Event-ID starts again at that event instead of after it",
    "foreign_stop": "a run can be stopped by any logged-in account, not only by its owner",
    "stop_drops_citations": "stopping a run deletes the citations of the session's earlier answers",
    "late_stop_rewrites": "a stop of a run that has already ended is accepted and rewrites its record to "
                          "stopped/user_stop",
    "direct_calls_misreported": "the direct search entry reports every proposed call as executed, even when it "
                                "merged them (its spans show the executions it ran)",
    "memory_per_stream": "every run leaves 2 MiB behind for good (a soak defect: caught by soak.rss_mb_per_h)",
    "fd_per_turn": "every run leaves a file open for good (a soak defect: caught by soak.fds_per_h)",
    "stop_race_slot": "a stop that lands as a run ends (its end sent, its record still being written) is answered 409 "
                      "but drops the run's slot without returning it: one slot lost per race (a soak defect: caught "
                      "by soak.slots_per_h)",
    "t4_per_turn": "each earlier question of the session delays the first answer token by 150 ms (the history is "
                   "re-read; a soak defect: caught by soak.T4_ms_per_turn)",
    "answer_never_ends": "after its first answer piece a run's stream sends answer pieces without end and never its "
                         "end (a load-path defect: the load must stop it and count it, never come out green)",
    "giant_event": "after its first answer piece a run's stream sends one event of 50 MiB (a load-path defect: the "
                   "reader stops at its cap, drains boundedly and counts the run broken)",
    "no_line_end": "after its first answer piece a run's stream sends 50 MiB without a line end (a load-path defect)",
    # two accounts of one fact that disagree (each account alone looks fine)
    "stream_end_contradicts": "a stopped run's stream ends with done completed/completed; its record says "
                              "stopped/user_stop",
    "first_token_backdated": "the run record's first_token_at is stamped 1.5 s before the run was queued",
    "trace_ignores_caller": "a run starts a trace of its own instead of joining the caller's traceparent (record and "
                            "spans agree with each other, not with the caller)",
    # lists that must name everything of a kind, naming less
    "model_input_drops_history": "a run record's model input lists only the last message it sent, not the history",
    "model_input_unlisted_results": "a run record's model input lists no tool results, though the model saw them",
    # a capability shown elsewhere, absent here
    "direct_call_unspanned": "the retrieval tool's direct entry sends no spans (runs still do)",
    "foreign_project_hits_unpaged": "search hits from a document outside the session's own project name no page "
                                    "(the other hits do)",
    # a figure's provenance
    "estimate_shown_as_actual": "when the provider reports no usage, the run record still says its usage came from "
                                "the provider (the numbers are the workbench's estimates)",
    "actual_cost_from_estimate": "when the usage is an estimate, the run record gives the price-table estimate as "
                                 "its actual cost",
    "flaky_runs": "one run in twenty fails with internal_error, whatever fault is or is not injected (a load-run "
                  "defect: caught by error_rate.steady, not by a gate case)",
}


class Defects:
    """The set of defects this server was started with."""

    def __init__(self, names: list[str]) -> None:
        unknown = [n for n in names if n not in DEFECTS]
        if unknown:
            raise ValueError(f"unknown defect(s): {', '.join(unknown)}; see `python -m workbench defects`")
        self.names = frozenset(names)

    def __contains__(self, name: str) -> bool:
        return name in self.names
