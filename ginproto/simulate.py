"""The in-process runner: whole games between Python engine objects, with records.

Any object that satisfies ``ginproto.table.Player`` can play: an SDK engine, a test double, a
bot being tuned. Games go through ``ginproto.table.play_game``, the same loop the referee
uses, and their records are written with ``ginproto.record`` exactly as the referee writes
them, so they verify with ``ginref replay --verify``. There are no processes and no pipes.

Two small players are built in, for tests, benchmarks and examples:

- ``RandomPlayer(seed)`` plays a uniformly random legal move (``knocks=True`` makes it knock
  whenever it can, which keeps games short);
- ``GreedyPlayer()`` takes a card only when it lowers its deadwood, throws the card that leaves
  the least deadwood, and knocks as soon as it may.

Both answer the three-player sitter's advice request the way they would play the captain's hand.

``python -m ginproto.simulate --example`` prints the example records shown in spec/RECORD.md.
"""

from __future__ import annotations

import datetime
import logging
import platform
import random
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

from ginproto.game import Entry, Game, GameView
from ginproto.hand import Phase
from ginproto.melds import deadwood, discard_deadwoods
from ginproto.moves import Move, MoveKind
from ginproto.record import EngineInfo, GameRecord, append_game, record_from_log, write_game
from ginproto.rules import Rules, Variant
from ginproto.table import Decision, Fault, GameLog, Player, play_game
from ginproto.version import __version__

log = logging.getLogger(__name__)

__all__ = [
    "GreedyPlayer",
    "RandomPlayer",
    "RunResult",
    "engine_info",
    "example_records",
    "play_one",
    "run_games",
]


# ---------------------------------------------------------------------------------------------
# Built-in players.


class _Quiet:
    """The notifications a simple player ignores."""

    def hand_over(self, player: int, entry: Entry) -> None:
        pass

    def game_over(self, player: int, game: Game, fault: Fault | None) -> None:
        pass


class RandomPlayer(_Quiet):
    """A uniformly random legal move from a seeded generator (``knocks``: knock when able)."""

    name = "random"
    version = __version__

    def __init__(self, seed: int | str = 0, knocks: bool = False) -> None:
        self._rng = random.Random(str(seed))
        self.knocks = knocks
        self.options = {"seed": str(seed), "knocks": "true" if knocks else "false"}

    def decide(self, view: GameView, decision: Decision) -> Move:
        moves = view.hand.legal_moves()
        if self.knocks:
            knocks = [m for m in moves if m.kind in (MoveKind.KNOCK, MoveKind.BIG_GIN)]
            if knocks:
                return self._rng.choice(knocks)
        return self._rng.choice(moves)


class GreedyPlayer(_Quiet):
    """Lowers its deadwood one card at a time, and knocks at the first chance (gin first)."""

    name = "greedy"
    version = __version__
    options: dict[str, str] = {}  # noqa: RUF012 - read-only, for the record's headers

    def decide(self, view: GameView, decision: Decision) -> Move:
        hand = view.hand
        cards = list(hand.cards)
        if hand.phase in (Phase.OFFER, Phase.DRAW):
            top = hand.pile[-1] if hand.pile else None
            stock = Move.stock() if hand.phase is Phase.DRAW else Move.pass_()
            if top is None or hand.stock_only:
                return stock
            after = min(discard_deadwoods([*cards, top]).get(c, 999) for c in cards)
            take = Move.take() if hand.phase is Phase.OFFER else Move.pile()
            return take if after < deadwood(cards) else stock
        moves = hand.legal_moves()
        if any(m.kind is MoveKind.BIG_GIN for m in moves):
            return Move.big_gin()
        left = discard_deadwoods(cards)
        knocks = [m for m in moves if m.kind is MoveKind.KNOCK]
        if knocks:
            return min(knocks, key=lambda m: (left[m.card], -m.card.value) if m.card else (0, 0))
        discards = [m for m in moves if m.kind is MoveKind.DISCARD and m.card is not None]
        return min(discards, key=lambda m: (left[m.card], -m.card.value) if m.card else (0, 0))


# ---------------------------------------------------------------------------------------------
# Running games.


def engine_info(player: object) -> EngineInfo:
    """What a record says about an in-process player: its ``name``, ``version`` and
    ``options`` attributes when it has them, and its class as the command line."""
    kind = type(player)
    module = kind.__module__
    if module == "__main__":  # run as a script: name the module it would be imported as
        spec = getattr(sys.modules["__main__"], "__spec__", None)
        module = spec.name if spec is not None else module
    name = getattr(player, "name", None)
    version = getattr(player, "version", None)
    return EngineInfo(
        name=name if isinstance(name, str) and name else kind.__name__,
        version="" if version is None else str(version),
        command=f"in-process {module}.{kind.__qualname__}",
        options=_options(player),
    )


def _options(player: object) -> tuple[tuple[str, str], ...]:
    """A player's options as text: a mapping ``options``, or (an SDK engine) declarations
    with a ``name`` read through ``player.option(name)``."""
    declared = getattr(player, "options", None) or {}
    values: list[tuple[str, object]] = []
    if isinstance(declared, Mapping):
        values = [(str(k), v) for k, v in declared.items()]
    else:
        read = getattr(player, "option", None)
        for decl in declared:
            key = getattr(decl, "name", None)
            if isinstance(key, str) and callable(read):
                values.append((key, read(key)))
    return tuple((k, str(v).lower() if isinstance(v, bool) else str(v)) for k, v in values)


def today() -> str:
    """Today's date in the record's ``YYYY.MM.DD`` form."""
    return datetime.date.today().strftime("%Y.%m.%d")


def play_one(
    rules: Rules,
    players: Sequence[Player],
    seed: int | str,
    key: int = 0,
    *,
    event: str = "in-process",
    site: str | None = None,
    date: str | None = None,
    engines: Sequence[EngineInfo] | None = None,
) -> tuple[GameLog, GameRecord]:
    """Play one game and make its record. ``site`` and ``date`` default to this machine's name
    and today; ``engines`` to ``engine_info`` of each player."""
    game_log = play_game(rules, players, seed, key)
    record = record_from_log(
        game_log,
        engines if engines is not None else [engine_info(p) for p in players],
        event=event,
        site=platform.node() if site is None else site,
        date=today() if date is None else date,
    )
    return game_log, record


@dataclass
class RunResult:
    """What a run of games came to."""

    games: int = 0
    hands: int = 0
    wins: list[int] = field(default_factory=lambda: [0, 0, 0])
    ties: int = 0
    faults: int = 0


PlayersFor = Callable[[int], Sequence[Player]]


def run_games(
    rules: Rules,
    players: Sequence[Player] | PlayersFor,
    games: int,
    seed: int | str,
    *,
    record: str | Path | None = None,
    first_key: int = 0,
    event: str = "in-process",
    site: str | None = None,
    date: str | None = None,
    on_game: Callable[[GameLog, GameRecord | None], None] | None = None,
) -> RunResult:
    """Play ``games`` games (keys ``first_key`` on) and append each record to ``record``.

    ``players`` is either the players themselves, kept for the whole run as engines are in a
    match, or a function of the game key that gives fresh ones. Records are made only when
    ``record`` or ``on_game`` wants them.
    """
    result = RunResult()
    site = platform.node() if site is None else site
    date = today() if date is None else date
    for key in range(first_key, first_key + games):
        seats = players(key) if callable(players) else players
        game_log = play_game(rules, seats, seed, key)
        game_record: GameRecord | None = None
        if record is not None or on_game is not None:
            engines = [engine_info(p) for p in seats]
            game_record = record_from_log(game_log, engines, event=event, site=site, date=date)
            if record is not None:
                append_game(record, game_record)
        result.games += 1
        result.hands += len(game_log.hands)
        winner = game_log.game.winner
        if winner is None:
            result.ties += 1
        else:
            result.wins[winner] += 1
        result.faults += game_log.fault is not None
        if on_game is not None:
            on_game(game_log, game_record)
        log.debug("game %s: winner %s, %d hands", key, winner, len(game_log.hands))
    return result


# ---------------------------------------------------------------------------------------------
# The example in spec/RECORD.md.


class _Fixed(TypedDict):
    event: str
    site: str
    date: str


_FIXED: _Fixed = {"event": "spec example", "site": "example", "date": "2025.01.01"}


def example_records() -> str:
    """Two short games between greedy players, as spec/RECORD.md shows them: a standard game
    to 40 (with a layoff), and a three-player game to 40 (the cut for roles, the sitter's
    advice, and the captain and sitter trading places after the box wins a hand)."""
    two = Rules(target=40)
    _, first = play_one(two, [GreedyPlayer(), GreedyPlayer()], "spec", 7, **_FIXED)
    three = Rules(variant=Variant.THREEHANDED, target=40)
    _, second = play_one(three, [GreedyPlayer() for _ in range(3)], "spec", 7, **_FIXED)
    return write_game(first) + write_game(second)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--example"]:
        sys.stdout.write(example_records())
        return 0
    sys.stderr.write("usage: python -m ginproto.simulate --example\n")
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
