"""Password hashing (scrypt), random revocable tokens, and encryption of stored API keys."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from pathlib import Path

from cryptography.fernet import Fernet

_SCRYPT = {"n": 2**14, "r": 8, "p": 1}


def hash_password(password: str) -> str:
    """`scrypt$salt$hash` for a password."""
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, dklen=32, **_SCRYPT)
    return f"scrypt${salt.hex()}${digest.hex()}"


def verify_password(password: str, stored: str) -> bool:
    """Constant-time check of a password against `hash_password` output."""
    try:
        scheme, salt_hex, digest_hex = stored.split("$")
    except ValueError:
        return False
    if scheme != "scrypt":
        return False
    digest = hashlib.scrypt(password.encode(), salt=bytes.fromhex(salt_hex), dklen=32, **_SCRYPT)
    return hmac.compare_digest(digest.hex(), digest_hex)


def new_token() -> str:
    """A fresh bearer token (only its hash is stored)."""
    return secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def mask_key(key: str | None) -> str | None:
    """`sk-…abcd` style mask that never reveals more than the last four characters."""
    if not key:
        return None
    return "****" + key[-4:] if len(key) > 8 else "****"


class KeyVault:
    """Encrypts API keys at rest with a per-data-dir secret (`secret.key`, mode 0600)."""

    def __init__(self, data_dir: Path) -> None:
        path = data_dir / "secret.key"
        if not path.exists():
            path.write_bytes(Fernet.generate_key())
            path.chmod(0o600)
        self._fernet = Fernet(path.read_bytes())

    def seal(self, plain: str) -> bytes:
        return self._fernet.encrypt(plain.encode())

    def open(self, sealed: bytes | None) -> str | None:
        if not sealed:
            return None
        return self._fernet.decrypt(sealed).decode()
