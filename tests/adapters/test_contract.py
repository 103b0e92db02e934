"""The adapter contract fails loudly: the base class stamps every submit, and checks a stamp an adapter makes."""

from __future__ import annotations

import pytest

from rig.adapters.base import Adapter
from rig.adapters.capabilities import Capabilities
from rig.adapters.models import Auth, Submitted
from rig.clock import now_ns
from rig.errors import AdapterContractError
from rig.gate.registry import case

AUTH = Auth(token="t", user_id="u1", username="u")


class Forgetful(Adapter):
    """Stamps nothing, as an adapter written from the docs alone might."""

    def capabilities(self) -> Capabilities:
        return Capabilities()

    def login(self, username: str, password: str) -> Auth:
        return AUTH

    def ready(self) -> bool:
        return True

    def ask(self, auth: Auth, session_id: str, content: str, *, parent_id: str | None = None,
            traceparent: str | None = None) -> Submitted:
        return Submitted(run_id="r1")


class Stale(Forgetful):
    """Stamps submit_ns from a clock reading taken before the call (a reused stamp)."""

    stale = now_ns()

    def ask(self, auth: Auth, session_id: str, content: str, *, parent_id: str | None = None,
            traceparent: str | None = None) -> Submitted:
        return Submitted(run_id="r2", submit_ns=self.stale)

    def regenerate(self, auth: Auth, message_id: str, *, traceparent: str | None = None) -> Submitted:
        return {"run_id": "r3"}  # type: ignore[return-value]


def test_an_adapter_that_stamps_nothing_gets_the_clock_around_its_call() -> None:
    before = now_ns()
    submitted = Forgetful("http://127.0.0.1:9").ask(AUTH, "s", "q")
    assert before <= submitted.submit_ns <= submitted.accepted_ns <= now_ns()


def test_a_stamp_from_outside_the_call_or_a_wrong_answer_is_the_adapters_bug() -> None:
    with pytest.raises(AdapterContractError, match="Stale: ask stamped submit_ns/accepted_ns outside the call"):
        Stale("http://127.0.0.1:9").ask(AUTH, "s", "q")
    with pytest.raises(AdapterContractError, match="regenerate returned dict, not Submitted"):
        Stale("http://127.0.0.1:9").regenerate(AUTH, "m")


def test_a_mistyped_capability_or_t_code_fails_when_the_case_is_declared() -> None:
    with pytest.raises(ValueError, match="no capability named 'run_detial'"):
        case(99, "x-99", needs=("run_detial",))
    with pytest.raises(ValueError, match="no T-code T14"):
        case(99, "x-99", codes=("T14",))
