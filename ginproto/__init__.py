"""ginproto: the rules core, protocol codec, game records and engine SDK for Gin Rummy bots.

The names below are the stable API, importable from ``ginproto`` itself; docs/API.md says what
each is for. They keep their meaning within a major version. Everything else (the submodules'
other names) is private and may change. The protocol codec (``ginproto.protocol``) and the
engine SDK (``ginproto.sdk``) are stable too, imported as modules.

Each name is imported from its module on first use, so ``import ginproto`` (which every engine
written with the SDK does) loads only what is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ginproto.lazy import lazy_names
from ginproto.version import __version__

if TYPE_CHECKING:
    from ginproto.cards import (
        DECK,
        Card,
        CardError,
        format_cards,
        parse_cards,
        shuffled_deck,
    )
    from ginproto.game import (
        Entry,
        Game,
        GameEnd,
        GameView,
        Roles,
    )
    from ginproto.hand import (
        Hand,
        HandResult,
        HandView,
        IllegalMoveError,
        Outcome,
        Phase,
        Turn,
    )
    from ginproto.melds import (
        Arrangement,
        Meld,
        MeldError,
        MeldKind,
        best_melds,
        deadwood,
        is_meld,
    )
    from ginproto.moves import (
        Move,
        MoveError,
        MoveKind,
    )
    from ginproto.record import (
        EngineInfo,
        GameRecord,
        RecordError,
        append_game,
        dumps,
        loads,
        read_games,
        record_from_log,
        write_game,
    )
    from ginproto.replay import (
        ReplayError,
        replay_game,
        verify_file,
        verify_game,
    )
    from ginproto.rules import (
        Rules,
        RulesError,
        Variant,
    )
    from ginproto.search import (
        Hidden,
        determinize,
        score_showdown,
    )
    from ginproto.table import (
        Decision,
        Fault,
        FaultKind,
        GameLog,
        PlayerFault,
        play_game,
    )

_WHERE = {
    "ginproto.cards": (
        "Card",
        "CardError",
        "DECK",
        "format_cards",
        "parse_cards",
        "shuffled_deck",
    ),
    "ginproto.game": (
        "Entry",
        "Game",
        "GameEnd",
        "GameView",
        "Roles",
    ),
    "ginproto.hand": (
        "Hand",
        "HandResult",
        "HandView",
        "IllegalMoveError",
        "Outcome",
        "Phase",
        "Turn",
    ),
    "ginproto.melds": (
        "Arrangement",
        "Meld",
        "MeldError",
        "MeldKind",
        "best_melds",
        "deadwood",
        "is_meld",
    ),
    "ginproto.moves": (
        "Move",
        "MoveError",
        "MoveKind",
    ),
    "ginproto.record": (
        "EngineInfo",
        "GameRecord",
        "RecordError",
        "append_game",
        "dumps",
        "loads",
        "read_games",
        "record_from_log",
        "write_game",
    ),
    "ginproto.replay": (
        "ReplayError",
        "replay_game",
        "verify_file",
        "verify_game",
    ),
    "ginproto.rules": (
        "Rules",
        "RulesError",
        "Variant",
    ),
    "ginproto.search": (
        "Hidden",
        "determinize",
        "score_showdown",
    ),
    "ginproto.table": (
        "Decision",
        "Fault",
        "FaultKind",
        "GameLog",
        "PlayerFault",
        "play_game",
    ),
}
__all__ = [
    "DECK",
    "Arrangement",
    "Card",
    "CardError",
    "Decision",
    "EngineInfo",
    "Entry",
    "Fault",
    "FaultKind",
    "Game",
    "GameEnd",
    "GameLog",
    "GameRecord",
    "GameView",
    "Hand",
    "HandResult",
    "HandView",
    "Hidden",
    "IllegalMoveError",
    "Meld",
    "MeldError",
    "MeldKind",
    "Move",
    "MoveError",
    "MoveKind",
    "Outcome",
    "Phase",
    "PlayerFault",
    "RecordError",
    "ReplayError",
    "Roles",
    "Rules",
    "RulesError",
    "Turn",
    "Variant",
    "__version__",
    "append_game",
    "best_melds",
    "deadwood",
    "determinize",
    "dumps",
    "format_cards",
    "is_meld",
    "loads",
    "parse_cards",
    "play_game",
    "read_games",
    "record_from_log",
    "replay_game",
    "score_showdown",
    "shuffled_deck",
    "verify_file",
    "verify_game",
    "write_game",
]


if not TYPE_CHECKING:  # type checkers see the imports above, and catch a misspelt name
    __getattr__, __dir__ = lazy_names("ginproto", _WHERE, globals(), __all__)
