"""Two capacity searches compared: the shift of what each release holds, with the range both brackets allow."""

from __future__ import annotations

import pytest

from rig.compare.capacity import capacity_shift
from rig.results.capacity import CapacityResult


def _search(holds: int | None, breaks: int | None, verdict: str = "found") -> CapacityResult:
    return CapacityResult(holds=holds, breaks=breaks, verdict=verdict,  # type: ignore[arg-type]
                          answer=f"holds {holds} researchers")


def test_a_release_that_breaks_where_the_base_held_holds_fewer() -> None:
    got = capacity_shift(_search(11, 12), _search(9, 10))
    assert got.call == "fewer"
    assert got.shift == pytest.approx(9 / 11 - 1)  # −18 %
    assert got.low == pytest.approx(9 / 11 - 1) and got.high == pytest.approx(9 / 11 - 1)  # both one-step brackets
    assert "18% fewer" in got.why and "broke at 10" in got.why


def test_a_shift_inside_the_searches_resolution_is_the_same() -> None:
    got = capacity_shift(_search(8, 12), _search(9, 16))  # coarse brackets overlap: 8..11 against 9..15
    assert got.call == "same"
    assert got.low is not None and got.high is not None and got.low < 0 < got.high


def test_more_only_when_the_new_release_holds_past_where_the_base_broke() -> None:
    assert capacity_shift(_search(4, 5), _search(6, 7)).call == "more"
    above = capacity_shift(_search(4, 5), _search(8, None, "above_max"))  # the new search never broke
    assert above.call == "more" and above.high is None


def test_an_undecided_search_is_not_comparable() -> None:
    got = capacity_shift(_search(4, 5), _search(None, None, "undecided"))
    assert got.call == "not comparable" and got.shift is None and "new" in got.why
