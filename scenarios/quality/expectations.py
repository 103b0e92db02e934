"""What the eval set expects of a turn beyond its rubric, stated once.

- Which questions must be refused: a question is out of the library when its allowed papers are empty,
  or when it asks for something the allowed material does not hold (the reference answer says so).
- Which preparations the target protocol cannot apply: they are recorded on the turn, never assumed.
"""

from __future__ import annotations

from rig.catalog import QualityTurn

NO_EVIDENCE = {
    "对抗-02-1": "asks to cite a paper that is not among the materials",
    "对抗-03-1": "asks for a number the abstract does not give",
}


def expected_refusal(turn: QualityTurn) -> str | None:
    """Why the answer must say there is no evidence, or None when the materials can answer it."""
    if not turn.allowed_paper_ids:
        return "no allowed paper holds the answer"
    return NO_EVIDENCE.get(turn.record_id)


NOT_APPLICABLE_PREPARATION = {
    "对抗-03-1": "the case allows only P24's abstract as evidence; the protocol scopes whole documents, so all "
                 "of P24 was in scope",
}


def unapplied_preparation(turn: QualityTurn) -> str | None:
    """Why part of the turn's preparation could not be applied through the target protocol, if it could not."""
    return NOT_APPLICABLE_PREPARATION.get(turn.record_id)
