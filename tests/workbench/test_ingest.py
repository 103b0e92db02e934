"""Ingest of the whole corpus and the variants: the right status per file, original bytes kept."""

from __future__ import annotations

import hashlib

from tests.conftest import Corpus, LiveWorkbench


def test_every_file_reaches_its_expected_status(live: LiveWorkbench) -> None:
    statuses = {}
    for f in live.corpus.files:
        assert f.document is not None, f"{f.entry.file} never reached a final status"
        statuses[f.entry.file] = f.document.status
        assert f.document.status in f.entry.expected_statuses, (f.entry.file, f.document.status)
        if f.entry.pages:
            assert f.document.pages_total == f.entry.pages, f.entry.file
    ready = [f for f in live.corpus.files if f.entry.in_corpus and f.document and f.document.status == "ready"]
    assert len(ready) == 26


def test_scans_are_never_claimed_searchable(live: LiveWorkbench) -> None:
    p15 = live.corpus.by_doc(live.corpus.doc("P15"))
    assert p15.document and p15.document.status == "no_text" and p15.document.pages_with_text == 0
    p16 = live.corpus.by_doc(live.corpus.doc("P16"))
    assert p16.document and p16.document.status in ("partial", "no_text")
    assert p16.document.pages_with_text == len(p16.entry.text_pages) == 1
    assert p16.document.error and "image" in (p16.document.error.message or "")


def test_corrupt_and_broken_files_fail_visibly_and_alone(live: LiveWorkbench) -> None:
    corrupt = live.corpus.by_doc(live.corpus.variant("X-CORRUPT")).document
    assert corrupt and corrupt.status == "failed" and corrupt.error and corrupt.error.code == "pdf_corrupt"
    broken = live.corpus.by_doc(live.corpus.variant("P44-BROKEN")).document
    assert broken and broken.status == "partial" and broken.pages_with_text == 3
    page2 = live.adapter.request(live.auth_a, "GET", f"/api/v1/documents/{broken.doc_id}/pages/2").json()
    assert page2["kind"] == "failed" and page2["text"] == ""
    assert live.corpus.by_doc(live.corpus.doc("P44")).document.status == "ready"  # type: ignore[union-attr]


def test_stages_carry_timestamps_in_order(live: LiveWorkbench) -> None:
    doc = live.corpus.by_doc(live.corpus.doc("P32")).document
    assert doc is not None
    assert [s.name for s in doc.stages] == ["upload", "parse", "chunk", "index"]
    previous = 0.0
    for stage in doc.stages:
        assert stage.started_at_ms and stage.ended_at_ms and stage.ok
        assert previous <= stage.started_at_ms <= stage.ended_at_ms
        previous = stage.started_at_ms


def test_downloads_are_byte_identical_to_the_fixture(live: LiveWorkbench, corpus: Corpus) -> None:
    for f in live.corpus.files:
        data = live.adapter.download(live.auth_a, f.doc_id)
        assert hashlib.sha256(data).hexdigest() == f.entry.sha256, f.entry.file
        assert (corpus.directory / f.entry.file).read_bytes() == data
