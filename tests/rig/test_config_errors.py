"""rig.yaml, policies and selector maps: a mistyped key is refused by its name, and every command exits 2 on it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rig.config import load_config
from rig.errors import ConfigError
from rig.policy import load_policy

GOOD = """target:
  url: http://127.0.0.1:9
  model_proxy: {control: http://127.0.0.1:10, embeddings: true}
accounts:
  a: {username: a, password_env: RIG_TEST_A}
  b: {username: b, password_env: RIG_TEST_B}
"""


def _write(tmp_path: Path, text: str, name: str = "rig.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_good_config_loads(tmp_path: Path) -> None:
    config = load_config(_write(tmp_path, GOOD))
    assert config.target.model_proxy is not None and config.target.model_proxy.url == "http://127.0.0.1:10"


@pytest.mark.parametrize(("typo", "named", "hint"), [
    ("  adaptr: rig.adapters:WorkbenchAdapter\n", "target.adaptr", "target.adapter"),
    ("  ready_pth: /health\n", "target.ready_pth", "target.ready_path"),
])
def test_an_unknown_key_under_target_is_named_with_the_nearest_known_one(tmp_path: Path, typo: str, named: str,
                                                                         hint: str) -> None:
    text = GOOD.replace("accounts:", typo + "accounts:")
    with pytest.raises(ConfigError) as err:
        load_config(_write(tmp_path, text))
    assert str(err.value).split(": ", 1)[1].startswith(f"unknown key {named} (did you mean {hint}?)")


def test_a_misspelt_top_level_key_is_named_before_what_it_left_missing(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(_write(tmp_path, GOOD.replace("target:", "targt:")))
    message = str(err.value)
    assert "unknown key targt (did you mean target?)" in message
    assert message.index("unknown key targt") < message.index("target: Field required")


def test_keys_inside_mappings_of_models_are_checked_too(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"unknown key accounts\.a\.pasword_env \(did you mean accounts\.a\.password_env\?\)"):
        load_config(_write(tmp_path, GOOD.replace("{username: a, password_env", "{username: a, pasword_env")))


def test_a_model_proxy_is_started_or_attached_not_both(tmp_path: Path) -> None:
    text = GOOD.replace("{control: http://127.0.0.1:10, embeddings: true}",
                        "{control: http://127.0.0.1:10, listen: 127.0.0.1:11, upstream: mock}")
    with pytest.raises(ConfigError, match="either control"):
        load_config(_write(tmp_path, text))


def test_a_policy_typo_cannot_loosen_the_gate(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown key requird"):
        load_policy(_write(tmp_path, "requird: [1, 2]\n", "policy.yaml"))


def test_the_commands_exit_2_naming_the_key(tmp_path: Path) -> None:
    path = _write(tmp_path, GOOD.replace("accounts:", "  adaptr: x\naccounts:"))
    for command in (["gate"], ["load", "--duration", "1s"], ["quality"]):
        done = subprocess.run([sys.executable, "-m", "rig.cli", *command, "--target", "http://127.0.0.1:9",
                               "--config", str(path), "--out", str(tmp_path / command[0])],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 2, (command, done.stdout, done.stderr)
        assert "unknown key target.adaptr (did you mean target.adapter?)" in " ".join((done.stdout + done.stderr).split())


def test_a_password_written_in_the_file_is_accepted_with_a_warning(tmp_path: Path,
                                                                    caplog: pytest.LogCaptureFixture) -> None:
    literal = GOOD.replace("{username: a, password_env: RIG_TEST_A}", "{username: a, password: hunter2}")
    with caplog.at_level("WARNING", logger="rig.config"):
        config = load_config(_write(tmp_path, literal))
    assert config.accounts["a"].resolve_password() == "hunter2"
    [warned] = [r.getMessage() for r in caplog.records]
    assert "accounts.a.password is written in the file; prefer password_env" in warned and "hunter2" not in warned
