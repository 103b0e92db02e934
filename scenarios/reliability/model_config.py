"""模型配置 — per-user model configuration (reliability cases 37–38)."""

from __future__ import annotations

import secrets

from rig.gate.context import CaseContext
from rig.gate.registry import case


@case(37, "可靠性-37-1", codes=("T8", "T11"))
def personal_model_config(ctx: CaseContext) -> None:
    """A asks with a configured model, switches the config and asks in a new session, then sets an invalid one.

    Expects: the model actually used matches the selected config; an invalid config errors clearly
    (or degrades by a declared rule), never silently switching to another paid config while claiming
    the original. Evidence: redacted config versions, models recorded on runs, error state.
    """
    if ctx.lacks("model_config_offered", "model_config_api"):  # per-user model configuration is what it tests
        return
    models = ctx.target.models
    original = ctx.adapter.model_config(ctx.a)
    try:
        primary = ctx.adapter.set_model_config(ctx.a, models.primary["provider"], models.primary["model"])
        run1 = ctx.chat(ctx.a, ctx.open_session(ctx.a, [ctx.doc("P32")]).session_id, "2.9%指什么？")
        e1 = ctx.observe("selected vs used", {"config": primary.model_dump(), "run_model": run1.detail.model.model_dump()
                                              if run1.detail else None})
        ctx.item("actual_matches_selected", run1.detail is not None and run1.detail.model.model == primary.model and
                 run1.detail.model.config_version == primary.config_version, "the run records the selected model", e1,
                 seen={"selected": (primary.model, primary.config_version),
                       "run_used": (run1.detail.model.model, run1.detail.model.config_version) if run1.detail else None})
        alt = ctx.adapter.set_model_config(ctx.a, models.alternative["provider"], models.alternative["model"])
        run2 = ctx.chat(ctx.a, ctx.open_session(ctx.a, [ctx.doc("P32")]).session_id, "2.9%指什么？")
        e2 = ctx.observe("after changing the config", {"config": alt.model_dump(), "run_model":
                                                       run2.detail.model.model_dump() if run2.detail else None})
        ctx.item("change_takes_effect", run2.detail is not None and run2.detail.model.model == alt.model and
                 run2.detail.model.config_version == alt.config_version, "a new session uses the new config", e2,
                 seen={"selected": (alt.model, alt.config_version),
                       "run_used": (run2.detail.model.model, run2.detail.model.config_version) if run2.detail else None})
        bad = ctx.adapter.set_model_config(ctx.a, models.invalid["provider"], models.invalid["model"])
        run3 = ctx.chat(ctx.a, ctx.open_session(ctx.a, [ctx.doc("P32")]).session_id, "2.9%指什么？")
        d = run3.detail
        e3 = ctx.observe("invalid config", {"config": bad.model_dump(), "state": d.state if d else None,
                                            "end_reason": d.end_reason if d else None,
                                            "run_model": d.model.model_dump() if d else None})
        ctx.item("invalid_fails_explicitly", d is not None and d.state == "failed" and
                 d.end_reason == "model_config_invalid", f"ended {d.state if d else None}/{d.end_reason if d else None}",
                 e3)
    finally:
        ctx.adapter.set_model_config(ctx.a, original.provider, original.model)


@case(38, "可靠性-38-1")
def cross_account_model_config(ctx: CaseContext) -> None:
    """A and B each set a distinguishable config with their own key; each reads, edits and asks.

    Expects: no response or record shows a key in plain text; a change affects only its own account;
    each account's model requests use its own config. Evidence: both accounts' requests and responses,
    redacted configs and their owners, models recorded on runs.
    """
    if ctx.lacks("model_config_offered", "model_config_api"):  # per-user model configuration is what it tests
        return
    models = ctx.target.models
    keys = {"a": f"sk-rig-a-{secrets.token_hex(12)}", "b": f"sk-rig-b-{secrets.token_hex(12)}"}
    ctx.store.redactor.add(*keys.values())
    seen: list[str] = []
    ctx.adapter.recorders.append(lambda ex: seen.append(repr(ex.response_body)))
    originals = {w: ctx.adapter.model_config(auth) for w, auth in (("a", ctx.a), ("b", ctx.b))}
    try:
        a_view = ctx.adapter.set_model_config(ctx.a, models.primary["provider"], models.primary["model"],
                                              api_key=keys["a"])
        b_view = ctx.adapter.set_model_config(ctx.b, models.alternative["provider"], models.alternative["model"],
                                              api_key=keys["b"])
        a_again = ctx.adapter.model_config(ctx.a)
        b_again = ctx.adapter.model_config(ctx.b)
        e = ctx.observe("configs per account", {"a": a_again.model_dump(), "b": b_again.model_dump()})
        ctx.item("configs_isolated", a_again.model == a_view.model and b_again.model == b_view.model and
                 a_again.model != b_again.model, "each account reads its own config, B's edit left A's alone", e,
                 seen={"a_set": a_view.model, "a_reads": a_again.model, "b_set": b_view.model, "b_reads": b_again.model})
        sid_a = ctx.open_session(ctx.a, [ctx.doc("P32")]).session_id
        run_a = ctx.chat(ctx.a, sid_a, "2.9%指什么？")
        b_project = ctx.target.setup.project_b_shared
        sid_b = ctx.adapter.open_session(ctx.b, b_project, [ctx.target.setup.b_shared_doc]).session_id
        run_b = ctx.chat(ctx.b, sid_b, "保修溢价怎么变？")
        used = {"a": run_a.detail.model.model if run_a.detail else None,
                "b": run_b.detail.model.model if run_b.detail else None}
        e2 = ctx.observe("models used per account", used)
        ctx.item("runs_use_own_config", used == {"a": a_view.model, "b": b_view.model}, f"used {used}", e2)
        for fmt in ctx.caps.export:  # an export made after a key was set is another way out for it
            seen.append(ctx.adapter.export(ctx.a, sid_a, fmt).text)
    finally:
        for who, auth in (("a", ctx.a), ("b", ctx.b)):
            ctx.adapter.set_model_config(auth, originals[who].provider, originals[who].model)
        ctx.adapter.recorders.pop()
    plain = [k for k in keys.values() if any(k in body for body in seen)]
    e3 = ctx.observe("plain-text keys in any response of this case", {"found": len(plain), "responses": len(seen)})
    ctx.item("keys_never_plain", not plain, f"{len(seen)} responses scanned, {len(plain)} key(s) found", e3)
