"""Preparing a target for load: one shared library project, paper sets from the quality cases."""

from __future__ import annotations

from pathlib import Path

from rig.adapters.base import Adapter
from rig.adapters.models import Auth
from rig.catalog import load_eval_set
from rig.corpus_load import load_corpus
from rig.errors import ConfigError
from rig.fixtures import CorpusManifest
from rig.load.plan import PaperSet
from rig.load.prompts import Prompt
from rig.target.setup import SHARED_NAMESPACE

LOAD_ACCOUNTS = tuple(f"load-{i}" for i in range(1, 5))  # the embedded target's account pool


def paper_sets(docs: dict[str, str], prompts: list[Prompt] | None = None) -> list[PaperSet]:
    """One set per quality case (its allowed papers), with its first prompt and its follow-ups as revisions; or, with
    `prompts`, one set per prompt, scoped to its papers. With no document of the rig's on the target (it takes no
    uploads), the sets name no document: the questions are asked over what the target already holds."""
    if prompts is not None:
        unknown = sorted({p for q in prompts for p in q.papers if docs and p not in docs})
        if unknown:
            raise ConfigError(f"the prompts name papers the rig's corpus does not hold: {', '.join(unknown)}",
                              fix="name eval-set paper ids (P01 … P32), or leave `papers` out")
        return [PaperSet(doc_ids=[docs[p] for p in q.papers if p in docs], questions=[q.question]) for q in prompts]
    eval_set = load_eval_set()
    by_case: dict[str, PaperSet] = {}
    for q in eval_set.quality:
        if q.direct_tool or not q.allowed_paper_ids or (docs and any(p not in docs for p in q.allowed_paper_ids)):
            continue
        key = q.record_id.rsplit("-", 1)[0]
        if q.turn == 1:
            by_case[key] = PaperSet(doc_ids=[docs[p] for p in q.allowed_paper_ids if p in docs], questions=[q.prompt])
        elif key in by_case:
            by_case[key].revisions.append(q.prompt)
    return list(by_case.values())


def prepare_library(adapter: Adapter, owner: Auth, members: list[Auth], corpus_dir: Path,
                    manifest: CorpusManifest) -> tuple[str, dict[str, str], set[str]]:
    """A project owned by the first account holding the 28 papers, shared with the others when the target can
    share projects — on a target without projects, its one shared namespace, which every account reaches (documents
    it already holds are reused); returns the project, doc ids by paper id, and the accounts that can reach it."""
    caps = adapter.capabilities()
    project = adapter.create_project(owner, "rig load library") if caps.projects else SHARED_NAMESPACE
    docs: dict[str, str] = {}
    if not caps.missing("upload"):  # a library its operators manage: the questions go to what it holds
        loaded = load_corpus(adapter, owner, project, corpus_dir, manifest, known=None if caps.projects else {})
        docs = {f.entry.paper_id: f.doc_id for f in loaded.files if f.entry.paper_id}
    reached = {owner.username}
    if not caps.projects:
        reached |= {m.username for m in members}
    elif not caps.missing("members"):
        for member in members:
            adapter.add_member(owner, project, member.username, user_id=member.user_id)
            reached.add(member.username)
    return project, docs, reached
