"""The fixture corpus: deterministic bytes, the layout the eval set's reference pages need."""

from __future__ import annotations

import io
import shutil
from importlib.metadata import requires
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from pypdf import PdfReader

from rig.adapters import WorkbenchAdapter
from rig.adapters.models import Auth
from rig.catalog import load_eval_set
from rig.corpus_load import upload_one
from rig.errors import FixtureError
from rig.fixtures import build_corpus, ensure_corpus, read_manifest, verify_corpus
from rig.fixtures.build import DRAWING_LIBRARIES
from tests.conftest import Corpus


def _page_text(path: Path, page: int) -> str:
    return " ".join((PdfReader(io.BytesIO(path.read_bytes())).pages[page - 1].extract_text() or "").split())


def test_a_second_build_is_byte_identical(tmp_path: Path, corpus: Corpus) -> None:
    manifest = build_corpus(tmp_path / "again", workers=2)
    assert manifest == corpus.manifest
    for f in manifest.files:
        assert (tmp_path / "again" / f.file).read_bytes() == (corpus.directory / f.file).read_bytes(), f.file
    assert verify_corpus(tmp_path / "again") == []


def test_the_digest_covers_every_library_that_draws_the_bytes() -> None:
    """A cached corpus is reused while its digest matches; a library the drawing depends on but the digest leaves out
    (fontTools subsets the font inside fpdf2, and changed its output between 4.68 and 4.69) would reuse stale bytes."""
    listed = {canonicalize_name(lib) for lib in DRAWING_LIBRARIES}
    for lib in DRAWING_LIBRARIES:
        for line in requires(lib) or []:
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                assert canonicalize_name(req.name) in listed, f"{lib} needs {req.name}, which the digest leaves out"


def test_manifest_lists_the_28_papers_and_six_variants(corpus: Corpus) -> None:
    eval_set = load_eval_set()
    manifest = read_manifest(corpus.directory)
    assert [f.paper_id for f in manifest.corpus] == [p.paper_id for p in eval_set.papers]
    assert [Path(f.file).name for f in manifest.corpus] == [p.name for p in eval_set.papers]
    variants = {f.variant_id for f in manifest.files if not f.in_corpus}
    assert variants == {"X-CORRUPT", "P44-BROKEN", "P32-INJECTED", "P32-DUPQUOTE", "P35-BLANK", "P32-CHANGED"}
    assert all(f.sha256 and f.derivation and f.purpose for f in manifest.files)


def test_scans_have_no_text_layer(corpus: Corpus) -> None:
    p15 = corpus.manifest.paper("P15")
    assert p15.text_pages == [] and p15.image_pages == list(range(1, p15.pages + 1))
    path = corpus.directory / p15.file
    assert all(_page_text(path, n) == "" for n in range(1, p15.pages + 1))
    p16 = corpus.manifest.paper("P16")
    assert p16.text_pages == [1] and _page_text(corpus.directory / p16.file, 1)
    assert all(_page_text(corpus.directory / p16.file, n) == "" for n in p16.image_pages)


def test_reference_pages_state_the_ground_truth_numbers(corpus: Corpus) -> None:
    facts = {"P32": (1, "2.9%"), "P33": (2, "49-77%"), "P20": (2, "30%"), "P19": (1, "66%"),
             "P29": (1, "15-25%"), "P13": (1, "体验品")}
    for paper_id, (page, needle) in facts.items():
        entry = corpus.manifest.paper(paper_id)
        assert needle in _page_text(corpus.directory / entry.file, page), paper_id
    for paper in load_eval_set().papers:
        entry = corpus.manifest.paper(paper.paper_id)
        assert set(paper.reference_page_numbers) <= set(entry.text_pages), paper.paper_id


def test_variants_carry_their_damage(corpus: Corpus) -> None:
    blank = corpus.manifest.variant("P35-BLANK")
    assert blank.blank_pages == [2] and blank.pages == corpus.manifest.paper("P35").pages + 1
    original_p2 = _page_text(corpus.directory / corpus.manifest.paper("P35").file, 2)
    assert _page_text(corpus.directory / blank.file, 3) == original_p2
    dup = corpus.directory / corpus.manifest.variant("P32-DUPQUOTE").file
    quote = "the badge kept a positive premium"
    assert _page_text(dup, 1).count("徽章仍有信号价值") == 2
    injected = corpus.directory / corpus.manifest.variant("P32-INJECTED").file
    assert "注入成功" in _page_text(injected, 3)
    changed = corpus.directory / corpus.manifest.variant("P32-CHANGED").file
    assert quote not in _page_text(changed, 1)
    assert corpus.manifest.variant("P44-BROKEN").broken_pages == [2]


def test_a_corrupted_cache_is_rebuilt_and_never_uploaded(tmp_path: Path, corpus: Corpus) -> None:
    """The rig's own bytes are held against their manifest before anything is sent: a corrupted cache is rebuilt by
    `ensure_corpus`, and a file whose bytes changed under a running setup stops the upload as the rig's fault."""
    copy = tmp_path / "cache"
    shutil.copytree(corpus.directory, copy)
    entry = corpus.manifest.corpus[0]
    (copy / entry.file).write_bytes(b"%PDF-1.4 not the corpus file")
    _, manifest = ensure_corpus(copy)
    assert verify_corpus(copy) == [] and manifest == corpus.manifest  # rebuilt, byte for byte
    (copy / entry.file).write_bytes(b"%PDF-1.4 changed after the check")
    adapter = WorkbenchAdapter("http://127.0.0.1:9")  # nothing listens: an upload attempt would be unreachable
    with pytest.raises(FixtureError, match="the rig's fixture cache is corrupt, nothing was uploaded"):
        upload_one(adapter, Auth(token="t", user_id="u", username="a"), "p", copy / entry.file, entry, "x.pdf")
