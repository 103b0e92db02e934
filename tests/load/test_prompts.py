"""A load asks the user's questions (a JSONL prompts file) or synthetic prompts of a given length; a bad prompts file
stops the run before any load, naming the line."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from rig.errors import ConfigError
from rig.load.options import LoadOptions
from rig.load.prompts import read_prompts, synthetic_prompts
from rig.load.session import run_load


def test_a_prompts_file_is_read_and_a_bad_line_named(tmp_path: Path) -> None:
    good = tmp_path / "good.jsonl"
    good.write_text('{"question": "2.9%指什么？", "papers": ["P32"]}\n\n{"question": "徽章的价值？"}\n', encoding="utf-8")
    assert [(p.question, p.papers) for p in read_prompts(good)] == [("2.9%指什么？", ["P32"]), ("徽章的价值？", [])]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "ok"}\n{"question": ""}\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad.jsonl:2 is not a prompt"):
        read_prompts(bad)


def test_synthetic_prompts_have_the_asked_length_and_repeat_for_a_seed() -> None:
    prompts = synthetic_prompts(64, count=5, seed=7)
    assert len(prompts) == 5 and len({p.question for p in prompts}) == 5
    assert all(60 <= len(p.question.split()) <= 66 for p in prompts)
    assert [p.question for p in synthetic_prompts(64, count=5, seed=7)] == [p.question for p in prompts]


def test_a_bad_prompts_file_stops_the_load_before_it_starts(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "rig.cli", "load", "--prompts", str(bad), "--duration", "5s",
                          "--out", str(tmp_path / "run")], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "bad.jsonl:1 is not a prompt" in out.stderr, out.stderr[-2000:]
    assert not (tmp_path / "run" / "evidence.sqlite3").exists()


@pytest.mark.slow
def test_a_load_asks_the_prompts_files_questions(tmp_path: Path) -> None:
    mine = ["请用一句话说明买家保护政策。", "徽章在买家保护之后还剩多少价值？"]
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text("".join(json.dumps({"question": q, "papers": ["P32"]}, ensure_ascii=False) + "\n"
                               for q in mine), encoding="utf-8")
    result = run_load(LoadOptions(users=2, spawn_rate=2, duration_s=8, out=tmp_path / "run", prompts=prompts,
                                  think_min_s=0.1, think_max_s=0.3,
                                  mix={"revision": 0, "stop_resume": 0, "late_stop": 0, "regenerate": 0, "export": 0,
                                       "search": 0}))
    assert result.summary is not None and result.summary.completed_runs > 0
    conn = sqlite3.connect(result.run_dir / "target" / "workbench.sqlite3")  # what the target was asked
    try:
        asked = {r[0] for r in conn.execute("SELECT content FROM messages WHERE role='user'")}
    finally:
        conn.close()
    assert asked and asked <= set(mine), asked
