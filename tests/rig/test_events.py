"""rig.events: a listener takes the arguments it names and nothing else, mistakes show when they are made, and the
hooks fire where docs/extending.md says, with what the store keeps."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rig import events
from rig.events import Arg, EventHook
from rig.evidence import EvidenceStore
from rig.redact import Redactor
from rig.verdict import Item, Verdict

ROOT = Path(__file__).resolve().parents[2]


def _hook() -> EventHook:
    return EventHook("demo", "a demo hook", Arg("case_id", "int", ""), Arg("verdict", "Verdict", ""))


def test_a_listener_gets_only_the_arguments_it_names() -> None:
    hook = _hook()
    got: list[Any] = []
    hook.add_listener(lambda case_id: got.append(case_id))
    hook.add_listener(lambda verdict, case_id: got.append((case_id, verdict)))
    hook.add_listener(lambda **kw: got.append(sorted(kw)))
    hook.fire(case_id=3, verdict="PASS")
    assert got == [3, (3, "PASS"), ["case_id", "verdict"]]


def test_a_listener_asking_for_an_argument_the_hook_lacks_is_refused_when_added() -> None:
    hook = _hook()

    def typo(case_id: int, verdct: str) -> None:
        pass

    with pytest.raises(TypeError, match="takes 'verdct'; demo passes case_id, verdict"):
        hook.add_listener(typo)
    assert hook.listeners == []
    hook.add_listener(lambda case_id, extra=None: None)  # an argument with a default is the listener's own


def test_firing_with_other_arguments_than_declared_raises() -> None:
    hook = _hook()
    hook.add_listener(lambda case_id: None)
    with pytest.raises(TypeError, match=r"demo passes \['case_id', 'verdict'\]; fired with \['case_id'\]"):
        hook.fire(case_id=1)


def test_listening_removes_the_listener_whatever_happens() -> None:
    hook = _hook()
    got: list[int] = []

    def keep(case_id: int) -> None:
        got.append(case_id)

    with pytest.raises(RuntimeError), hook.listening(keep):
        hook.fire(case_id=1, verdict="PASS")
        raise RuntimeError("the block fails")
    hook.fire(case_id=2, verdict="PASS")
    assert got == [1] and hook.listeners == []
    with pytest.raises(ValueError, match="is not a listener of demo"):
        hook.remove_listener(keep)


def test_a_listeners_exception_reaches_the_code_that_fired() -> None:
    hook = _hook()

    def refuse(case_id: int) -> None:
        raise ValueError(f"no case {case_id}")

    hook.add_listener(refuse)
    with pytest.raises(ValueError, match="no case 7"):
        hook.fire(case_id=7, verdict="PASS")


def test_the_store_fires_case_and_item_hooks_with_what_it_keeps(tmp_path: Path) -> None:
    redactor = Redactor()
    redactor.add("s3cret-token-value")
    store = EvidenceStore(tmp_path / "evidence.sqlite3", redactor)
    seen: list[tuple[Any, ...]] = []

    def started(case_id: int, rep: int, title: str) -> None:
        seen.append(("started", case_id, rep, title))

    def item(case_id: int, item: Item) -> None:
        seen.append(("item", case_id, item.name, item.verdict, item.reason))

    def ended(case_id: int, verdict: Verdict, reason: str) -> None:
        seen.append(("ended", case_id, verdict, reason))

    with events.case_started.listening(started), events.item_recorded.listening(item), \
            events.case_ended.listening(ended):
        store.begin_case(1, 5, "可靠性-05", "login_isolation", "logout")
        store.add_item(1, 5, Item(name="token_dead", verdict=Verdict.FAIL, reason="s3cret-token-value still works"))
        store.end_case(1, 5, Verdict.FAIL, "token s3cret-token-value still works")
    store.begin_case(1, 6, "可靠性-06", "ingest", "x")  # no listener any more: nothing fires
    store.close()
    assert [s[0] for s in seen] == ["started", "item", "ended"]
    assert seen[0] == ("started", 5, 1, "可靠性-05 logout")
    assert seen[1][:4] == ("item", 5, "token_dead", Verdict.FAIL) and "s3cret" not in seen[1][4]
    assert seen[2][:3] == ("ended", 5, Verdict.FAIL) and "s3cret" not in seen[2][3]


def test_the_docs_list_every_hook_with_its_arguments() -> None:
    doc = (ROOT / "docs" / "extending.md").read_text(encoding="utf-8")
    assert events.reference() in doc
    assert {h.name for h in events.EVENTS} == {n for n, v in vars(events).items() if isinstance(v, EventHook)}
