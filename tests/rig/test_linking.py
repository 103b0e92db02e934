"""Saved answers linked to the rig's runs without the target's run ids: by the answer text the rig streamed (after
normalising whitespace and punctuation), else by the question each answers, in order; never over a link the target
made itself."""

from __future__ import annotations

from rig.adapters.models import Message, Session, TokenEvent
from rig.measure.transcript import RunTranscript
from rig.target.linking import RunLinks, normalised


def _run(run_id: str, question: str, answer: str) -> RunTranscript:
    run = RunTranscript(run_id=run_id, session_id="s1", question=question, submit_ns=0)
    run.events.append(TokenEvent(event="token", recv_ns=1, text=answer, kind="answer"))
    return run


def _session(*messages: tuple[str, str, str, str | None]) -> Session:
    return Session(session_id="s1", project_id="p", scope=[], messages=[
        Message(message_id=mid, role=role, content=content, run_id=run_id)  # type: ignore[arg-type]
        for mid, role, content, run_id in messages])


def test_normalising_drops_whitespace_punctuation_and_width() -> None:
    assert normalised("Buyer  protection, “2.9%”。") == normalised("buyer protection 2.9%") == "buyerprotection29"
    assert normalised("总福利提高２．９％。") == normalised("总福利提高 2.9%")
    assert normalised("a claim") != normalised("another claim")


def test_answers_without_run_ids_are_linked_by_text_then_by_question_in_order() -> None:
    links = RunLinks()
    for run in (_run("r1", "What is 2.9%?", "The welfare gain, 2.9%."), _run("r2", "And again?", "Same answer."),
                _run("r3", "And again?", "Same answer.")):
        links.add(run)
    session = _session(("u1", "user", "What is 2.9%?", None), ("a1", "assistant", "The  welfare gain 2.9%", None),
                       ("u2", "user", "And again?", None), ("a2", "assistant", "Same answer.", None),
                       ("u3", "user", "And again?", None), ("a3", "assistant", "Same answer!", None))
    linked, notes = links.link(session)
    by_id = {m.message_id: (m.run_id, m.run_link) for m in linked.messages}
    assert by_id["a1"] == ("r1", "text") and by_id["a2"] == ("r2", "text") and by_id["a3"] == ("r3", "text")
    assert by_id["u1"] == (None, None)  # questions are not answers
    assert sorted(n["run_id"] for n in notes) == ["r1", "r2", "r3"]


def test_a_saved_answer_that_differs_from_the_stream_is_linked_by_its_question() -> None:
    links = RunLinks()
    links.add(_run("r1", "Summarise P32.", "A partial answer the stream was cut at"))
    linked, notes = links.link(_session(("u1", "user", "Summarise P32.", None),
                                        ("a1", "assistant", "A different saved text.", None)))
    assert [(m.run_id, m.run_link) for m in linked.messages if m.role == "assistant"] == [("r1", "question")]
    assert notes == [{"run_id": "r1", "message_id": "a1", "how": "question"}]


def test_links_the_target_made_are_kept_and_nothing_is_guessed_past_them() -> None:
    links = RunLinks()
    links.add(_run("r1", "Q", "Answer one."))
    links.add(_run("r2", "Q2", "Answer two."))
    session = _session(("u1", "user", "Q", None), ("a1", "assistant", "Answer one.", "r1"),
                       ("u2", "user", "Other question", None), ("a2", "assistant", "Unrelated.", None))
    linked, notes = links.link(session)
    assert [(m.message_id, m.run_id) for m in linked.messages if m.role == "assistant"] == [("a1", "r1"), ("a2", None)]
    assert notes == []  # r2's answer is not there: it stays unlinked, and the case says it could not find it
