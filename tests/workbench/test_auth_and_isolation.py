"""Login, logout revocation, and that another account's objects answer 404 with no content."""

from __future__ import annotations

import httpx
import pytest

from rig.errors import TargetHTTPError
from tests.conftest import Corpus, LiveWorkbench


def test_login_rejects_wrong_password(live: LiveWorkbench) -> None:
    with pytest.raises(TargetHTTPError) as err:
        live.adapter.login(live.a.username, "not-the-password")
    assert err.value.status == 401 and err.value.code == "invalid_credentials"


def test_logout_revokes_the_token_server_side(live: LiveWorkbench) -> None:
    auth = live.adapter.login(live.a.username, live.a.password)
    assert live.adapter.me(auth).username == live.a.username
    live.adapter.logout(auth)
    with pytest.raises(TargetHTTPError) as err:
        live.adapter.me(auth)
    assert err.value.status == 401
    again = live.adapter.login(live.a.username, live.a.password)
    assert live.adapter.me(again).user_id == auth.user_id


def test_cookie_authenticates_like_the_bearer_token(live: LiveWorkbench) -> None:
    with httpx.Client(base_url=live.url) as client:
        r = client.post("/api/v1/auth/login", json={"username": live.a.username, "password": live.a.password})
        assert "wb_session" in r.cookies
        assert client.get("/api/v1/me").json()["username"] == live.a.username
        assert client.post("/api/v1/auth/logout").status_code == 204
        client.cookies.set("wb_session", r.cookies["wb_session"])
        assert client.get("/api/v1/me").status_code == 401


def _ask_and_finish(live: LiveWorkbench, paper: str, question: str) -> tuple[str, str, str]:
    opened = live.adapter.open_session(live.auth_a, live.corpus.project_id, [live.corpus.doc(paper)])
    sub = live.adapter.ask(live.auth_a, opened.session_id, question)
    events = list(live.adapter.events(live.auth_a, sub.run_id))
    assert events[-1].event == "done"
    session = live.adapter.session(live.auth_a, opened.session_id)
    citation = next(c for m in session.messages for c in m.citations)
    return opened.session_id, sub.run_id, citation.citation_id


def test_other_account_gets_404_and_no_content_everywhere(live: LiveWorkbench) -> None:
    session_id, run_id, citation_id = _ask_and_finish(live, "P32", "总福利提高2.9%是什么意思？")
    doc_id = live.corpus.doc("P32")
    project = live.corpus.project_id
    paths = [
        f"/api/v1/projects/{project}/documents", f"/api/v1/documents/{doc_id}", f"/api/v1/documents/{doc_id}/file",
        f"/api/v1/documents/{doc_id}/pages/1", f"/api/v1/sessions/{session_id}", f"/api/v1/runs/{run_id}",
        f"/api/v1/runs/{run_id}/events", f"/api/v1/sessions/{session_id}/export?format=md",
        f"/api/v1/sessions/{session_id}/export?format=json", f"/api/v1/citations/{citation_id}/locate",
    ]
    for path in paths:
        theirs = live.adapter.request(live.auth_b, "GET", path, raise_for_status=False)
        assert theirs.status_code in (403, 404), path
        assert "2.9" not in theirs.text and "Reputation" not in theirs.text, path
        anonymous = live.adapter.request(None, "GET", path, raise_for_status=False)
        assert anonymous.status_code == 401, path
        mine = live.adapter.request(live.auth_a, "GET", path.replace("/events", ""), raise_for_status=False)
        assert mine.status_code == 200, path
    assert project not in {p.project_id for p in live.adapter.projects(live.auth_b)}
    for method, path in [("POST", f"/api/v1/runs/{run_id}/stop"), ("POST", f"/api/v1/runs/{run_id}/resume"),
                         ("PATCH", f"/api/v1/sessions/{session_id}")]:
        r = live.adapter.request(live.auth_b, method, path, json={"scope": []}, raise_for_status=False)
        assert r.status_code in (403, 404), path


def test_membership_shares_documents_but_not_sessions(live: LiveWorkbench, corpus: Corpus) -> None:
    shared = live.adapter.create_project(live.auth_a, "shared with B")
    entry = corpus.manifest.paper("P21")
    doc = live.adapter.upload(live.auth_a, shared, corpus.directory / entry.file, paper_id="P21").doc_id
    live.adapter.wait_documents(live.auth_a, shared, {doc})
    with pytest.raises(TargetHTTPError) as err:
        live.adapter.open_session(live.auth_b, shared, [doc])
    assert err.value.status == 404
    live.adapter.add_member(live.auth_a, shared, live.b.username)
    assert doc in {d.doc_id for d in live.adapter.documents(live.auth_b, shared)}
    hits = live.adapter.search(live.auth_b, shared, ["warranty premium reputation"]).results[0].hits
    assert hits and {h.doc_id for h in hits} == {doc}
    # The scope rule: (scope ∪ attachments) ∩ readable — A's unshared paper is dropped for B.
    private = live.corpus.doc("P32")
    opened = live.adapter.open_session(live.auth_b, shared, [doc], attachments=[private])
    assert opened.effective_scope == [doc]
    assert [(d.doc_id, d.reason) for d in opened.dropped] == [(private, "not_found_or_not_readable")]
    with pytest.raises(TargetHTTPError) as err:
        live.adapter.session(live.auth_a, opened.session_id)
    assert err.value.status == 404
