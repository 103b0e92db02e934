"""`me_status_with_cookies`: a browser's session checked from outside the browser, through the adapter."""

from __future__ import annotations

import httpx
import pytest

from rig.adapters import WorkbenchAdapter
from rig.adapters.base import Adapter
from rig.errors import CapabilityMissing
from tests.conftest import LiveWorkbench


def test_the_workbench_answers_a_live_cookie_and_refuses_it_after_logout(live: LiveWorkbench) -> None:
    with httpx.Client(base_url=live.url) as browser:  # logs in the way the web page does: a session cookie
        reply = browser.post("/api/v1/auth/login", json={"username": live.a.username, "password": live.a.password})
        assert reply.status_code == 200
        cookies = dict(browser.cookies)
        assert cookies
        adapter = WorkbenchAdapter(live.url)
        try:
            assert adapter.me_status_with_cookies(cookies) == 200
            assert browser.post("/api/v1/auth/logout").status_code in (200, 204)
            assert adapter.me_status_with_cookies(cookies) == 401
            assert adapter.me_status_with_cookies({}) == 401
        finally:
            adapter.close()


def test_an_adapter_without_it_says_which_capability_is_missing() -> None:
    with pytest.raises(CapabilityMissing) as raised:
        Adapter.me_status_with_cookies(object(), {"a": "b"})  # type: ignore[arg-type]
    assert raised.value.capability == "cookie_session"
