"""Authentication: bearer token or `wb_session` cookie, checked against revocable stored tokens."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Request

from workbench.clock import now_ms
from workbench.errors import ApiError
from workbench.security import token_hash
from workbench.services import Services

COOKIE = "wb_session"


@dataclass(frozen=True)
class User:
    user_id: str
    username: str
    token: str


def presented_token(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        return header[7:].strip() or None
    return request.cookies.get(COOKIE) or None


def services(request: Request) -> Services:
    svc: Services = request.app.state.services
    return svc


def optional_user(request: Request) -> User | None:
    """The logged-in user, or None when no valid token was presented."""
    token = presented_token(request)
    if not token:
        return None
    svc = services(request)
    row = svc.db.one("SELECT t.user_id, t.expires_ms, t.revoked, u.username FROM tokens t JOIN users u ON "
                     "u.user_id=t.user_id WHERE t.token_hash=?", token_hash(token))
    if row is None or row["revoked"] or row["expires_ms"] < now_ms():
        return None
    return User(row["user_id"], row["username"], token)


def current_user(request: Request) -> User:
    """FastAPI dependency: the logged-in user, or 401."""
    user = optional_user(request)
    if user is None:
        raise ApiError(401, "unauthenticated", "log in first: the token is missing, expired or revoked")
    return user
