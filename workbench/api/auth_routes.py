"""Login, logout (revokes server-side) and `me`."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import JSONResponse

from workbench.auth import COOKIE, User, current_user, presented_token, services
from workbench.clock import iso, now_ms
from workbench.errors import ApiError
from workbench.schemas import LoginIn
from workbench.security import new_token, token_hash, verify_password

router = APIRouter(prefix="/api/v1")


@router.post("/auth/login")
async def login(body: LoginIn, request: Request) -> JSONResponse:
    svc = services(request)
    row = svc.db.one("SELECT user_id, pw_hash FROM users WHERE username=?", body.username)
    if row is None or not verify_password(body.password, row["pw_hash"]):
        raise ApiError(401, "invalid_credentials", "unknown user or wrong password")
    token = new_token()
    created = now_ms()
    expires = created + svc.config.token_ttl_s * 1000
    with svc.db.tx() as conn:
        conn.execute("INSERT INTO tokens(token_hash, user_id, created_ms, expires_ms) VALUES(?,?,?,?)",
                     (token_hash(token), row["user_id"], created, expires))
    response = JSONResponse({"token": token, "user_id": row["user_id"], "expires_at": iso(expires)})
    response.set_cookie(COOKIE, token, httponly=True, samesite="lax", max_age=svc.config.token_ttl_s)
    return response


@router.post("/auth/logout", status_code=204)
async def logout(request: Request, user: User = Depends(current_user)) -> Response:
    svc = services(request)
    token = presented_token(request)
    if token and "logout_keeps_token" not in svc.defects:
        with svc.db.tx() as conn:
            conn.execute("UPDATE tokens SET revoked=1 WHERE token_hash=?", (token_hash(token),))
    response = Response(status_code=204)
    response.delete_cookie(COOKIE)
    return response


@router.get("/me")
async def me(user: User = Depends(current_user)) -> dict[str, str]:
    return {"user_id": user.user_id, "username": user.username}
