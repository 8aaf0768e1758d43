"""The lines an engine sends, read into their typed messages: ``parse_engine_line(line)``.

A line whose first word is not an engine message comes back as ``Unknown`` (the referee logs and
ignores those); a malformed one raises ``ProtocolError`` saying what was expected, and never
anything else. The lines the referee sends, and ``parse_reply`` (how the referee reads an engine
line while it waits for a move), are ``ginproto.protocol.codec``'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from ginproto.moves import Move
from ginproto.protocol.grammar import (
    AUTHOR,
    DEFAULT,
    EMPTY,
    GINOK,
    ID,
    INFO,
    MAX,
    MIN,
    MOVE,
    NAME,
    OPTION,
    PROTOCOL,
    PROTOCOL_VERSION,
    READYOK,
    TYPE,
    VAR,
    VERSION,
    ProtocolError,
    _enum_value,
    _Fields,
    _opt_int,
    _signed,
)
from ginproto.protocol.messages import (
    EngineMessage,
    GinOk,
    Id,
    Info,
    MoveReply,
    OptionDecl,
    OptionType,
    ReadyOk,
    Unknown,
)

_OPTION_KEYS: Final = (NAME, TYPE, DEFAULT, MIN, MAX, VAR)


def _parse_option(tokens: Sequence[str]) -> OptionDecl:
    if not tokens or tokens[0] != NAME:
        raise ValueError(f"expected '{OPTION} {NAME} <name> {TYPE} <type> {DEFAULT} <value> ...'")
    groups: list[tuple[str, list[str]]] = []
    for token in tokens:
        if token in _OPTION_KEYS:
            groups.append((token, []))
        else:
            groups[-1][1].append(token)
    values: dict[str, str] = {}
    vars_: list[str] = []
    for key, words in groups:
        text = " ".join(words)
        if key == VAR:
            if not text:
                raise ValueError(f"{VAR} needs a value")
            vars_.append(text)
        elif key in values:
            raise ValueError(f"{key!r} is given twice")
        else:
            values[key] = text
    name = values.get(NAME, "")
    if not name:
        raise ValueError("the option name is missing")
    if TYPE not in values:
        raise ValueError(f"the option {name!r} has no {TYPE}")
    kind = _enum_value(OptionType, values[TYPE], TYPE)
    if DEFAULT not in values:
        raise ValueError(f"the option {name!r} has no {DEFAULT} (write {EMPTY} for none)")
    default = values[DEFAULT]
    default = "" if default == EMPTY else default
    bounds = [None if values.get(key) is None else _signed(values[key], key) for key in (MIN, MAX)]
    option = OptionDecl(name, kind, default, bounds[0], bounds[1], tuple(vars_))
    if kind is not OptionType.STRING:
        option._value_of(default)  # a spin, check or combo must have a valid default
    return option


def parse_engine_line(line: str) -> EngineMessage:
    """Read one line an engine sends (with or without its line break).

    Returns the message, or ``Unknown`` for a line whose first word is not an engine message
    (the referee logs and ignores those). Raises ``ProtocolError`` if a known line is
    malformed; ``exc.keyword == "move"`` marks a malformed reply to ``go``.
    """
    tokens = line.split()
    if not tokens:
        return Unknown(line.strip())
    word, rest = tokens[0], tokens[1:]
    try:
        if word == MOVE:
            if not rest:
                raise ValueError("expected a move after 'move', e.g. 'move discard 7h'")
            return MoveReply(Move.from_str(" ".join(rest)))
        if word == INFO:
            return Info(" ".join(rest))
        if word == READYOK:
            return ReadyOk()
        if word == ID:
            if len(rest) < 2:
                raise ValueError(f"expected '{ID} <{NAME}|{AUTHOR}|{VERSION}> <text>'")
            return Id(rest[0], " ".join(rest[1:]))
        if word == OPTION:
            return _parse_option(rest)
        if word == GINOK:
            fields = _Fields(GINOK, rest)
            version = _opt_int(fields, PROTOCOL)
            fields.done()
            return GinOk(PROTOCOL_VERSION if version is None else version)
    except ProtocolError:
        raise
    except (ValueError, IndexError) as exc:
        raise ProtocolError(f"malformed {word} line: {exc}", word) from None
    return Unknown(" ".join(tokens))
