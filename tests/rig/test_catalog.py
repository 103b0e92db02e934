import json
from pathlib import Path

import pytest

from rig.catalog import load_eval_set
from rig.catalog.models import split_codes
from rig.errors import ConfigError


def test_the_packaged_eval_set_has_its_counts() -> None:
    e = load_eval_set()
    assert (len(e.reliability), len(e.quality), len(e.papers)) == (38, 75, 28)
    assert e.case(1).record_id == "可靠性-01-1" and e.case(1).performance_codes == ["T3", "T4", "T7", "T8"]
    assert e.paper("P32").reference_page_numbers == [1, 3]
    assert e.paper("P35").reference_page_numbers == [1, 2, 3]
    assert not e.paper("P09").has_ground_truth
    assert sum(1 for q in e.quality if q.direct_tool) == 10


def test_codes_are_split_from_chinese_lists() -> None:
    assert split_codes("T3、T4、T6、T7") == ["T3", "T4", "T6", "T7"]


def test_a_malformed_eval_set_names_where_it_breaks(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    data = json.loads(load_eval_set.__wrapped__(None).model_dump_json())
    del data["reliability"][0]["case_id"]
    path.write_text(json.dumps(data))
    with pytest.raises(ConfigError) as err:
        load_eval_set(path)
    assert "reliability.0.case_id" in str(err.value)
