"""A text export read back line by line: messages, their text, citations with pages, where the messages end."""

from __future__ import annotations

from rig.adapters.models import Exported
from rig.adapters.workbench import WorkbenchAdapter

MARKDOWN = """# Session ses_1

## Question (msg_q)

2.9%指什么？

## Answer (msg_a)

总福利提高2.9%。[1]
这是福利而非销量。[2]

- [1] P32, p. 1: “估计总福利提高2.9%。”
- [2] doc_9, whole file: “这是福利而非销量。”

## Answer (msg_b)

未找到依据。

## Sources

- P32 《Reputation》 (32.pdf, sha256 abc…), pages 1
"""


def test_the_workbench_markdown_reads_back_as_the_session() -> None:
    read = WorkbenchAdapter("http://127.0.0.1:9").read_export(Exported(format="md", content_type="text/markdown",
                                                                       text=MARKDOWN))
    assert read.session_id == "ses_1"
    assert [(m.message_id, m.role) for m in read.messages] == [("msg_q", "user"), ("msg_a", "assistant"),
                                                               ("msg_b", "assistant")]
    assert read.messages[1].content == "总福利提高2.9%。[1]\n这是福利而非销量。[2]"
    assert [(c.paper_id or c.doc_id, c.page, c.quote) for c in read.messages[1].citations] == [
        ("P32", 1, "估计总福利提高2.9%。"), ("doc_9", None, "这是福利而非销量。")]
    assert read.messages[2].content == "未找到依据。" and not read.messages[2].citations
