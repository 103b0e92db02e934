"""模型配置 — per-user model configuration (reliability cases 37–38)."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import cast

from rig import events
from rig.adapters import Auth, Exchange, ModelConfigView
from rig.errors import TargetHTTPError
from rig.gate import CaseContext, case, kept, snapshot
from rig.measure import RunTranscript
from scenarios.reliability.foreign import must_refuse

QUESTION = "2.9%指什么？"


@dataclass
class Asked:
    """One question under a model config: the run (or the target's refusal of it), and which models the target
    actually called, as the rig's LLM proxy saw it (None without a proxy)."""

    run: RunTranscript | None
    refused: TargetHTTPError | None
    called: list[str] | None

    @property
    def recorded(self) -> str | None:
        return self.run.detail.model.model if self.run and self.run.detail else None

    def used(self, view: ModelConfigView) -> bool | None:
        """The run records the selected model (and version), and the target called that model and no other; None
        when neither a run record nor the rig's proxy tells which model answered."""
        d = self.run.detail if self.run else None
        if d is None and self.called is None:
            return None if self.run is not None else False  # (no run at all: the target refused it)
        recorded = d is None or (d.model.model == view.model and d.model.config_version == view.config_version)
        return recorded and (self.called is None or set(self.called) == {view.model})

    def ended(self) -> tuple[str | None, str | None]:
        """How the run ended: its record where the target keeps one, else its stream's end."""
        if self.run is None:
            return None, None
        if self.run.detail is not None:
            return self.run.detail.state, self.run.detail.end_reason
        end = self.run.terminal
        return (end.state, end.reason) if end is not None else (None, None)


def _ask(ctx: CaseContext, auth: Auth, session_id: str) -> Asked:
    proxy = ctx.target.model_proxy
    since = proxy.last_seq() if proxy else 0
    try:
        run, refused = ctx.chat(auth, session_id, QUESTION), None
    except TargetHTTPError as exc:  # a config the target refuses at once is an explicit error, not the rig's
        run, refused = None, exc
    called = [str(r.model) for r in proxy.requests(since) if r.endpoint == "chat"] if proxy else None
    return Asked(run, refused, called)


@case(37, "可靠性-37-1", codes=("T8", "T11"), papers=("P32",))
def personal_model_config(ctx: CaseContext) -> None:
    """A asks with a configured model, switches the config and asks in a new session, then sets an invalid one.

    Expects: the model actually used matches the selected config; an invalid config errors clearly
    (or degrades by a declared rule), never silently switching to another paid config while claiming
    the original. Evidence: redacted config versions, models recorded on runs, error state, and — where the
    target calls its model through the rig's LLM proxy — the models it actually called.
    """
    if ctx.lacks("model_config_offered", "model_config_api"):  # per-user model configuration is what it tests
        return
    models = ctx.target.models
    original = ctx.adapter.model_config(ctx.a)

    def fresh() -> str:
        return ctx.open_session(ctx.a, [ctx.doc("P32")]).session_id

    try:
        primary = ctx.adapter.set_model_config(ctx.a, models.primary["provider"], models.primary["model"])
        first = _ask(ctx, ctx.a, fresh())
        e1 = ctx.observe("selected vs used", {"config": primary.model_dump(), "run_model": first.recorded,
                                              "models_called": first.called})
        ctx.item("actual_matches_selected", first.used(primary), "the run records the selected model, and the target "
                 "called that model", e1, seen={"selected": (primary.model, primary.config_version),
                                                "run_records": first.recorded, "called": first.called})
        first_session = first.run.session_id if first.run else None
        saved = snapshot(ctx, [first_session] if first_session else [], [first.run.run_id] if first.run else [])
        alt = ctx.adapter.set_model_config(ctx.a, models.alternative["provider"], models.alternative["model"])
        kept(ctx, saved, "model-config change")  # a config change decides later runs, never rewrites earlier ones
        second = _ask(ctx, ctx.a, fresh())
        e2 = ctx.observe("after changing the config", {"config": alt.model_dump(), "run_model": second.recorded,
                                                       "models_called": second.called})
        ctx.item("change_takes_effect", second.used(alt), "a new session uses the new config", e2,
                 seen={"selected": (alt.model, alt.config_version), "run_records": second.recorded,
                       "called": second.called})
        bad = ctx.adapter.set_model_config(ctx.a, models.invalid["provider"], models.invalid["model"])
        third = _ask(ctx, ctx.a, fresh())
        d = third.run.detail if third.run else None
        state, reason = third.ended()
        failed = (third.refused is not None and 400 <= third.refused.status < 500) or (
            state == "failed" and (reason == "model_config_invalid" or not ctx.caps.end_reasons))
        switched = sorted({m for m in third.called or [] if m != bad.model})
        e3 = ctx.observe("invalid config", {"config": bad.model_dump(), "refused": str(third.refused) if third.refused
                                            else None, "state": state, "end_reason": reason,
                                            "run_model": third.recorded, "record": d is not None,
                                            "models_called": third.called})
        ctx.item("invalid_fails_explicitly", failed and not switched, "the invalid config fails explicitly (refused, or "
                 "the run failed model_config_invalid) and no other model was called in its place", e3,
                 seen={"refused": f"{third.refused.status} {third.refused.message[:80]}" if third.refused else None,
                       "ended": f"{state}/{reason}" if state else None, "other_models_called": switched})
    finally:
        ctx.adapter.set_model_config(ctx.a, original.provider, original.model)


@case(38, "可靠性-38-1", papers=("P32", "B"))
def cross_account_model_config(ctx: CaseContext) -> None:
    """A and B each set a distinguishable config with their own key; each reads, edits and asks.

    Expects: no response or record shows a key in plain text; a change affects only its own account, and a
    caller without credentials can neither read nor change one;
    each account's model requests use its own config. Evidence: both accounts' requests and responses,
    redacted configs and their owners, models recorded on runs (and called, through the rig's LLM proxy).
    A target whose per-user config carries no key of its own leaves the key item BLOCKED.
    """
    if ctx.lacks("model_config_offered", "model_config_api"):  # per-user model configuration is what it tests
        return
    models = ctx.target.models
    with_keys = not ctx.caps.missing("model_config_keys")
    keys = {"a": f"sk-rig-a-{secrets.token_hex(12)}", "b": f"sk-rig-b-{secrets.token_hex(12)}"} if with_keys else {}
    ctx.store.redactor.add(*keys.values())
    seen: list[str] = []

    def keep(exchange: Exchange) -> None:
        seen.append(repr(exchange.response_body))

    events.exchange.add_listener(keep)
    originals = {w: ctx.adapter.model_config(auth) for w, auth in (("a", ctx.a), ("b", ctx.b))}
    try:
        a_view = ctx.adapter.set_model_config(ctx.a, models.primary["provider"], models.primary["model"],
                                              api_key=keys.get("a"))
        b_view = ctx.adapter.set_model_config(ctx.b, models.alternative["provider"], models.alternative["model"],
                                              api_key=keys.get("b"))
        a_again = ctx.adapter.model_config(ctx.a)
        b_again = ctx.adapter.model_config(ctx.b)
        e = ctx.observe("configs per account", {"a": a_again.model_dump(), "b": b_again.model_dump()})
        ctx.item("configs_isolated", a_again.model == a_view.model and b_again.model == b_view.model and
                 a_again.model != b_again.model, "each account reads its own config, B's edit left A's alone", e,
                 seen={"a_set": a_view.model, "a_reads": a_again.model, "b_set": b_view.model, "b_reads": b_again.model})
        anonymous = cast(Auth, None)  # no credentials at all
        must_refuse(ctx, "anon_model_config", "a caller without credentials", lambda: ctx.adapter.model_config(None))
        tried = must_refuse(ctx, "anon_set_model_config", "a caller without credentials",
                            lambda: ctx.adapter.set_model_config(anonymous, models.alternative["provider"],
                                                                 models.alternative["model"]))
        if tried is not None:
            after = {w: ctx.adapter.model_config(auth).model for w, auth in (("a", ctx.a), ("b", ctx.b))}
            e_after = ctx.observe("model configs after the anonymous attempt", {"after": after})
            ctx.item("anon_left_configs_alone", after == {"a": a_view.model, "b": b_view.model},
                     "after the anonymous attempt each account still reads the config it set", e_after,
                     seen={"after": after, "set": {"a": a_view.model, "b": b_view.model}})
        sid_a = ctx.open_session(ctx.a, [ctx.doc("P32")]).session_id
        asked_a = _ask(ctx, ctx.a, sid_a)
        b_project = ctx.target.setup.project_b_shared
        sid_b = ctx.adapter.open_session(ctx.b, b_project, [ctx.target.setup.b_shared_doc]).session_id
        asked_b = _ask(ctx, ctx.b, sid_b)
        used = {"a": asked_a.recorded, "b": asked_b.recorded}
        called = {"a": asked_a.called, "b": asked_b.called}
        e2 = ctx.observe("models used per account", {"recorded": used, "called": called})
        ctx.item("runs_use_own_config", asked_a.used(a_view) and asked_b.used(b_view),
                 "each account's runs record and call its own config's model", e2,
                 seen={"recorded": used, "called": called, "configs": {"a": a_view.model, "b": b_view.model}})
        for fmt in ctx.caps.export:  # an export made after a key was set is another way out for it
            seen.append(ctx.adapter.export(ctx.a, sid_a, fmt).text)
    finally:
        for who, auth in (("a", ctx.a), ("b", ctx.b)):
            ctx.adapter.set_model_config(auth, originals[who].provider, originals[who].model)
        events.exchange.remove_listener(keep)
    if ctx.lacks("keys_never_plain", "model_config_keys"):
        return
    plain = [k for k in keys.values() if any(k in body for body in seen)]
    e3 = ctx.observe("plain-text keys in any response of this case", {"found": len(plain), "responses": len(seen)})
    ctx.item("keys_never_plain", not plain, f"{len(seen)} responses scanned, {len(plain)} key(s) found", e3)
