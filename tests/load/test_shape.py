"""Load shapes: stages parsed as k6 writes them, the users each moment asks for, and a shaped run whose stages
and users lie on the run's time axis (load.json, the users series)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rig.errors import ConfigError
from rig.evidence import EvidenceStore
from rig.load.options import LoadOptions
from rig.load.session import run_load
from rig.load.stages import parse_shape


def test_stages_ramp_hold_and_ramp_down_as_k6_does() -> None:
    shape = parse_shape("10s:4, 10s:4, 5s:0")
    assert [(s.duration_s, s.target) for s in shape.stages] == [(10, 4), (10, 4), (5, 0)]
    assert shape.duration_s == 25 and shape.max_users == 4
    assert shape.users_at(0)[0] == 0 and shape.users_at(5)[0] == 2 and shape.users_at(15)[0] == 4
    assert shape.users_at(22.5)[0] == 2 and shape.users_at(30)[0] == 0
    assert [shape.stage_at(t) for t in (0, 9.9, 10, 22.5, 30)] == [1, 1, 2, 3, 3]  # rig_shape_stage
    marks = shape.marks(1000.0)
    assert [(m.from_users, m.to_users, m.start_ms, m.end_ms) for m in marks] == [
        (0, 4, 1000.0, 11000.0), (4, 4, 11000.0, 21000.0), (4, 0, 21000.0, 26000.0)]


def test_a_spike_is_a_short_stage(tmp_path: Path) -> None:
    spike = parse_shape("20s:2,1s:20,10s:20,1s:2")
    assert spike.users_at(20.5)[1] >= 18  # the spawn rate keeps up with a one-second ramp of 18 users
    file = tmp_path / "shape.yaml"
    file.write_text("stages:\n  - {duration: 30s, target: 10}\n  - {duration: 1m, target: 10}\n", encoding="utf-8")
    assert parse_shape(str(file)).duration_s == 90


@pytest.mark.parametrize("bad", ["10s", "abc:3", "0s:4", "10s:-1"])
def test_a_stage_that_is_not_one_is_refused_in_the_rigs_words(bad: str) -> None:
    with pytest.raises(ConfigError, match="stage|lasts no time"):
        parse_shape(bad)


@pytest.mark.slow
def test_a_shaped_run_follows_its_stages_and_marks_them(tmp_path: Path) -> None:
    options = LoadOptions(shape=parse_shape("6s:4,8s:4,4s:1"), think_min_s=0.2, think_max_s=0.5,
                          out=tmp_path / "run")
    result = run_load(options)
    summary = result.summary
    assert summary is not None and summary.duration_s == 18 and summary.runs > 0
    assert [(m.index, m.from_users, m.to_users) for m in summary.stages] == [(1, 0, 4), (2, 4, 4), (3, 4, 1)]
    store = EvidenceStore(result.run_dir / "evidence.sqlite3")
    try:
        users = [(r.ts_ms, r.value) for r in store.series("users")]
    finally:
        store.close()
    hold = summary.stages[1]
    during = [v for t, v in users if hold.start_ms + 2000 <= t <= hold.end_ms - 500]
    assert during and max(during) == 4 and min(during) >= 3  # the hold held its users
    assert max(v for _, v in users) == 4
