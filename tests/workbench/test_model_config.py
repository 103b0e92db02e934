"""Per-user model configuration: the key is masked and sealed, invalid configs fail without fallback."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import LiveWorkbench
from tests.workbench.helpers import ask

SECRET = "sk-test-unique-7f3a9c1e5b2d4680"


def test_key_is_masked_sealed_and_never_written_in_plain_text(live: LiveWorkbench) -> None:
    current = live.adapter.model_config(live.auth_a)
    view = live.adapter.set_model_config(live.auth_a, "local", "local-extractive", api_key=SECRET)
    try:
        assert view.api_key_masked == "****4680" and SECRET not in view.model_dump_json()
        got = live.adapter.model_config(live.auth_a)
        assert got.api_key_masked == "****4680" and got.config_version == view.config_version
        asked = ask(live, ["P32"], "2.9%指什么？")
        exported = live.adapter.export(live.auth_a, asked.session_id, "json").text
        run = live.adapter.run(live.auth_a, asked.run_id).model_dump_json()
        assert SECRET not in exported and SECRET not in run
        for path in Path(live.target.data_dir).rglob("*"):
            if path.is_file():
                assert SECRET.encode() not in path.read_bytes(), path
    finally:
        live.adapter.set_model_config(live.auth_a, current.provider, current.model)


def test_invalid_config_fails_the_run_without_fallback(live: LiveWorkbench) -> None:
    current = live.adapter.model_config(live.auth_a)
    live.adapter.set_model_config(live.auth_a, "local", "no-such-model")
    try:
        asked = ask(live, ["P32"], "2.9%指什么？")
        assert (asked.detail.state, asked.detail.end_reason) == ("failed", "model_config_invalid")
        assert asked.detail.model.model == "no-such-model"
        assert not [m for m in live.adapter.session(live.auth_a, asked.session_id).messages if m.role == "assistant"]
    finally:
        live.adapter.set_model_config(live.auth_a, current.provider, current.model)
    after = ask(live, ["P32"], "2.9%指什么？")
    assert after.detail.state == "completed", "the next run with a valid config works"


def test_config_is_per_account_and_the_run_records_the_model_used(live: LiveWorkbench) -> None:
    a_before = live.adapter.model_config(live.auth_a)
    b_before = live.adapter.model_config(live.auth_b)
    live.adapter.set_model_config(live.auth_a, "local", "local-extractive-mini", api_key="sk-a-000011112222")
    try:
        assert live.adapter.model_config(live.auth_b) == b_before
        asked = ask(live, ["P32"], "2.9%指什么？")
        assert asked.detail.model.model == "local-extractive-mini"
        assert asked.detail.model.config_version == live.adapter.model_config(live.auth_a).config_version
    finally:
        live.adapter.set_model_config(live.auth_a, a_before.provider, a_before.model)
