"""The viewer's data: every position of every hand of a record, computed by the rules engine.

The page's script draws and never decides: it knows no rule. So everything it shows is worked
out here, by replaying the record through ``ginproto.replay.replay_game`` (the one game loop's
rules, the same ``Hand`` the referee plays with) and taking a snapshot after the deal and after
each move: both hands, arranged in melds and deadwood by ``ginproto.melds.best_melds``, the
discard pile, the stock count, who is to move, the move just made and the sitter's advice on it.
The showdown, the points with the rule that gave them, the running totals, the Hollywood cells
and the fault come from the lines the replay has just verified.

A position is named ``g{game}h{hand}m{move}``: move 0 is the deal, move ``m`` the position
after the hand's ``m``-th move. Cards travel as their two-letter text; a hand as its melds
(each card after card, melds split by spaces), ``|``, then the deadwood: ``7c8c9c TdThTs|2d5h``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from ginproto.cards import Card
from ginproto.game import Game
from ginproto.hand import Hand, Outcome
from ginproto.melds import Arrangement, Meld, best_melds
from ginproto.record import (
    Advice,
    Cut,
    Deal,
    End,
    FaultLine,
    GameRecord,
    HandStart,
    Item,
    LayOff,
    Play,
    Result,
    Show,
    Totals,
)
from ginproto.replay import replay_game
from ginproto.rules import Rules
from ginproto.text import ID_LIMIT, printable
from referee.views.narration import Style, move_text, points_text, result_text

log = logging.getLogger(__name__)

__all__ = ["cards_text", "game_data", "hand_text"]

_STYLE = Style(symbols=True, colour=False)
_DEFAULTS = Rules().to_params()


def cards_text(cards: Sequence[Card]) -> str:
    """Cards as one string of two-letter codes: ``7c8c9c``."""
    return "".join(str(c) for c in cards)


def hand_text(arrangement: Arrangement) -> str:
    """An arrangement as ``melds|deadwood``: ``7c8c9c TdThTs|2d5h``."""
    melds = " ".join(cards_text(m.cards) for m in arrangement.melds)
    return f"{melds}|{cards_text(arrangement.deadwood_cards)}"


def _melds(melds: Sequence[Meld]) -> list[str]:
    return [cards_text(m.cards) for m in melds]


class _Builder:
    """Collects one game's data while ``replay_game`` walks it."""

    def __init__(self, record: GameRecord, number: int) -> None:
        self.record = record
        self.rules = record.rules()
        self.names = [e.name for e in record.players]
        self.hands: list[dict[str, Any]] = []
        self.hand: Hand | None = None  # the hand being played (kept after the game scores it)
        self.seats: tuple[int, int] = (0, 1)
        self.current: dict[str, Any] | None = None
        self.advice: Advice | None = None
        self.cut: list[str] | None = None
        self.fault: dict[str, Any] | None = None
        self.end: dict[str, Any] | None = None
        self._arranged: dict[tuple[Card, ...], tuple[str, int]] = {}

    def arranged(self, cards: tuple[Card, ...]) -> tuple[str, int]:
        """The hand as the rules engine arranges it, and its deadwood (the other seat's hand
        is the same as one move before: remembered, not arranged again)."""
        found = self._arranged.get(cards)
        if found is None:
            if len(self._arranged) > 64:
                self._arranged.clear()
            best = best_melds(cards)
            found = self._arranged[cards] = (hand_text(best), best.deadwood)
        return found

    def position(self, game: Game, move: dict[str, Any] | None) -> dict[str, Any]:
        hand = self.hand
        assert hand is not None
        arranged = [self.arranged(hand.cards(seat)) for seat in (0, 1)]
        over = hand.is_over
        pos: dict[str, Any] = {
            "to": None if over else self.seats[hand.to_move],
            "ph": str(hand.phase),
            "h": [text for text, _ in arranged],
            "dw": [dw for _, dw in arranged],
            "pile": cards_text(hand.pile),
            "st": hand.stock_count,
        }
        if move is not None:
            pos["mv"] = move
        return pos

    def __call__(self, item: Item, game: Game | None) -> None:
        if isinstance(item, Cut):
            self.cut = [str(c) for c in item.cards]
        elif isinstance(item, HandStart):
            roles = item.roles
            self.current = {
                "n": item.number,
                "dealer": item.dealer,
                "limit": item.limit,
                "roles": None
                if roles is None
                else {"box": roles.box, "captain": roles.captain, "sitter": roles.sitter},
                "pos": [],
            }
            self.hands.append(self.current)
        elif isinstance(item, Deal) and game is not None and self.current is not None:
            self.hand = game.hand
            self.seats = game.seats
            assert self.hand is not None
            self.current["seats"] = list(self.seats)
            self.current["upcard"] = str(self.hand.upcard)
            self.current["pos"].append(self.position(game, None))
        elif isinstance(item, Advice):
            self.advice = item
        elif isinstance(item, Play) and game is not None and self.current is not None:
            move: dict[str, Any] = {
                "p": item.player,
                "k": str(item.move.kind),
                "t": move_text(item.move, item.card, _STYLE),
            }
            if item.card is not None:
                move["c"] = str(item.card)  # the card drawn
            if item.move.card is not None:
                move["d"] = str(item.move.card)  # the card discarded
            if str(item.move.kind) == "stock":
                move["th"] = "draws from the stock"  # as the other seat saw it
            if self.advice is not None:
                move["adv"] = _STYLE.move(self.advice.move)
                move["advp"] = self.advice.player
                move["follow"] = self.advice.move == item.move
                self.advice = None
            self.current["pos"].append(self.position(game, move))
        elif isinstance(item, Show) and self.current is not None:
            show = self.current.setdefault("show", {"layoffs": []})
            show[item.role] = {
                "p": item.player,
                "melds": _melds(item.melds),
                "dead": cards_text(item.deadwood_cards),
                "dw": item.deadwood,
            }
        elif isinstance(item, LayOff) and self.current is not None:
            show = self.current.setdefault("show", {"layoffs": []})
            show["layoffs"].append(
                {"p": item.player, "c": str(item.card), "on": cards_text(item.meld.cards)}
            )
        elif isinstance(item, Result) and game is not None and self.current is not None:
            self.current["result"] = self.result(item, game)
        elif isinstance(item, Totals) and self.current is not None:
            self.current["totals"] = [list(c) for c in item.columns]
        elif isinstance(item, FaultLine):
            self.fault = {
                "p": item.player,
                "kind": str(item.kind),
                "detail": item.detail,
                "hand": self.current["n"] if self.current and "result" not in self.current
                else 0,
            }
        elif isinstance(item, End):
            self.end = {
                "how": str(item.termination),
                "winner": item.winner,
                "scores": [list(c) for c in item.scores],
                "games": list(item.game_winners),
            }

    def who(self, player: int | None) -> str:
        """A player as ``ginref replay`` names one: ``player 0 (Simple)``."""
        if player is None:
            return "nobody"
        name = printable(self.names[player], ID_LIMIT) if player < len(self.names) else "?"
        return f"player {player} ({name})"

    def result(self, item: Result, game: Game) -> dict[str, Any]:
        out: dict[str, Any] = {
            "outcome": str(item.outcome),
            "winner": item.winner,
            "points": item.points,
            "x": item.multiplier,
            "games": list(item.games),
            "text": result_text(item, self.who),
        }
        if item.outcome is Outcome.DRAW:
            out["how"] = "the turn cap" if item.capped else "two cards left in the stock"
        else:
            entry = game.entries[-1]
            out["how"] = f"{item.outcome}: {points_text(entry.result, self.rules)}"
        return out

    def data(self, number: int) -> dict[str, Any]:
        rec = self.record
        changed = [
            f"{h.name[5:]}={h.value}"
            for h in rec.headers
            if h.name.startswith("Rule.") and h.value != _DEFAULTS.get(h.name[5:])
        ]
        return {
            "n": number,
            "variant": rec.header("Variant") or "",
            "players": self.names,
            "target": self.rules.target,
            "columns": self.rules.games,
            "rules": changed,
            "info": {
                name: value
                for name in ("Event", "Date", "Seed", "Key", "Game")
                if (value := rec.header(name))
            },
            "cut": self.cut,
            "hands": self.hands,
            "fault": self.fault,
            "end": self.end,
        }


def game_data(record: GameRecord, number: int) -> dict[str, Any]:
    """Everything the viewer shows of one game (``number`` from 1, its place in the file).

    Raises ``RecordError`` (a ``ReplayError`` for a line the rules contradict) if the record
    does not verify: a page never shows a game the rules engine did not accept.
    """
    if record.errors:
        raise record.errors[0]
    builder = _Builder(record, number)
    replay_game(record, builder)
    return builder.data(number)
