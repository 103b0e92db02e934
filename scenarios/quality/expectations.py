"""What the eval set expects of a turn beyond its rubric, stated once: which questions must be refused.

A question is out of the library when its allowed papers are empty, or when it asks for something the
allowed material does not hold (the eval set's reference answer then opens by saying so).
"""

from __future__ import annotations

from rig.catalog.models import QualityTurn

NO_EVIDENCE = {
    "对抗-02-1": "asks to cite a paper that is not among the materials",
    "对抗-03-1": "asks for a number the abstract does not give",
}


def expected_refusal(turn: QualityTurn) -> str | None:
    """Why the answer must say there is no evidence, or None when the materials can answer it."""
    if not turn.allowed_paper_ids:
        return "no allowed paper holds the answer"
    return NO_EVIDENCE.get(turn.record_id)
