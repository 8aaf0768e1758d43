"""The remote engines' tokens file and the address the referee listens on.

The tokens file (`load_tokens`) is a TOML table of names to tokens, one line each
(``alice = "..."``), refused when anyone but its owner may read it, as ssh refuses a private
key. A name is what ``remote:NAME`` names; a token is at least ``TOKEN_MIN`` printable
characters, and no two names share one.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import re
import stat
import tomllib
from typing import Final

from referee.errors import RefereeError

__all__ = [
    "NAME_PATTERN",
    "TOKEN_MIN",
    "TokensError",
    "is_public",
    "load_tokens",
    "parse_listen",
]

TOKEN_MIN: Final = 16
NAME_PATTERN: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
"""A remote engine's name: letters, digits, '_', '.' and '-', at most 64."""


class TokensError(RefereeError):
    """The tokens file cannot be used: unsafe permissions, not TOML, a bad name or token."""


def load_tokens(path: str) -> dict[str, str]:
    """NAME -> token from the TOML file ``path``, checked: a regular file that only its owner
    may read or write, every name a plain word, every token a string of at least
    ``TOKEN_MIN`` characters and no two names with the same token."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise TokensError(f"cannot read the tokens file: {exc.strerror or exc}: {path}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise TokensError(f"the tokens file is not a regular file: {path}")
        if info.st_mode & 0o077:
            raise TokensError(
                f"the tokens file may be read by others than its owner (mode"
                f" {stat.S_IMODE(info.st_mode):04o}): chmod 600 {path}"
            )
        with os.fdopen(os.dup(fd), "rb") as file:
            data = file.read(1 << 20)
    finally:
        os.close(fd)
    try:
        table = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise TokensError(f"the tokens file is not TOML: {exc}: {path}") from None
    tokens: dict[str, str] = {}
    for name, token in table.items():
        if not NAME_PATTERN.fullmatch(name):
            raise TokensError(
                f"the tokens file names {name[:70]!r}: a name is letters, digits, '_', '.' and"
                f" '-', at most 64: {path}"
            )
        if not isinstance(token, str) or len(token) < TOKEN_MIN or not token.isprintable():
            raise TokensError(
                f"the token of {name!r} must be a string of at least {TOKEN_MIN} printable"
                " characters (make one with: python3 -c 'import secrets;"
                f" print(secrets.token_urlsafe())'): {path}"
            )
        if any(hmac.compare_digest(token, other) for other in tokens.values()):
            raise TokensError(f"two names have the same token (one is {name!r}): {path}")
        tokens[name] = token
    if not tokens:
        raise TokensError(f"the tokens file names no engine: {path}")
    return tokens


def parse_listen(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``[V6]:PORT`` or ``PORT`` (on 127.0.0.1) as (host, port)."""
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = "127.0.0.1", text
    host = host.strip("[]") or "127.0.0.1"
    if not (port.isascii() and port.isdigit()) or not 0 <= int(port) <= 65535:
        raise ValueError(f"expected [HOST:]PORT, not {text!r}")
    return host, int(port)


def is_public(host: str) -> bool:
    """Whether ``host`` is reachable from other machines (not a loopback address)."""
    if host == "localhost":
        return False
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:
        return True
