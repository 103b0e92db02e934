"""A CSV export read back by its columns, through a target described in YAML: one row per citation with the
message repeated, a row without a citation cites nothing, a missing column is a protocol error naming it."""

from __future__ import annotations

import pytest

from rig.adapters.http import HttpAdapter
from rig.adapters.models import Exported
from rig.errors import ConfigError, TargetProtocolError

CSV = """\ufeffsession,id,kind,text,paper,page,quote
ses_1,msg_q,question,2.9%指什么？,,,
ses_1,msg_a,answer,"总福利提高2.9%。[1]
这是福利而非销量。[2]",P32,1,估计总福利提高2.9%。
ses_1,msg_a,answer,"总福利提高2.9%。[1]
这是福利而非销量。[2]",P13,,"这是福利而非销量，""引号""。"
ses_1,msg_b,answer,未找到依据。,,,
"""
EXPORT = {"request": {"path": "/s/{session_id}/export.csv"},
          "csv": {"columns": {"message_id": "id", "role": "kind", "content": "text", "paper_id": "paper",
                              "page": "page", "quote": "quote"},
                  "roles": {"question": "user", "answer": "assistant"}, "session_id": "session"}}


def _adapter(export: dict[str, object]) -> HttpAdapter:
    return HttpAdapter("http://127.0.0.1:9", http={"export": {"csv": export}})


def test_the_csv_reads_back_as_the_session() -> None:
    read = _adapter(EXPORT).read_export(Exported(format="csv", content_type="text/csv", text=CSV))
    assert read.session_id == "ses_1"
    assert [(m.message_id, m.role) for m in read.messages] == [("msg_q", "user"), ("msg_a", "assistant"),
                                                               ("msg_b", "assistant")]
    assert read.messages[1].content == "总福利提高2.9%。[1]\n这是福利而非销量。[2]"
    assert [(c.paper_id, c.page, c.quote) for c in read.messages[1].citations] == [
        ("P32", 1, "估计总福利提高2.9%。"), ("P13", None, '这是福利而非销量，"引号"。')]
    assert read.messages[0].citations == [] and read.messages[2].citations == []


def test_a_missing_column_is_a_protocol_error_naming_it() -> None:
    with pytest.raises(TargetProtocolError, match="no column 'quote'"):
        _adapter(EXPORT).read_export(Exported(format="csv", content_type="text/csv",
                                              text="session,id,kind,text,paper,page\nses_1,m,answer,x,P32,1\n"))


def test_rules_must_name_the_message_columns() -> None:
    with pytest.raises(ConfigError, match="content"):
        _adapter({**EXPORT, "csv": {"columns": {"message_id": "id", "role": "kind"}}})
