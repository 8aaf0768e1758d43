"""``ginref replay``: show a recorded game, walk it move by move, verify it, export it as JSON.

A thin layer: reading is ``ginproto.record``, every rule and check is ``ginproto.replay``; this
module only draws (the command itself is ``referee.cli.replay``). Cards get suit symbols and
colour on a terminal, and their plain two-letter form when the output is piped, with
``NO_COLOR`` set (symbols, no colour) or ``--no-color``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from typing import IO, Any

from ginproto.game import Game
from ginproto.record import (
    Advice,
    Comment,
    Cut,
    Deal,
    End,
    FaultLine,
    GameRecord,
    HandStart,
    Header,
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
from referee.views.narration import Style, move_text, result_text

MAX_SHOWN_ERRORS = 20


class Quit(Exception):
    """The person stepping through a hand asked to stop."""


class Renderer:
    """Draws one game, line by line, from the record and the replayed game."""

    def __init__(
        self,
        record: GameRecord,
        number: int,
        style: Style,
        out: IO[str],
        hand: int | None = None,
        step: bool = False,
        keys: IO[str] | None = None,
    ) -> None:
        self.record = record
        self.number = number
        self.style = style
        self.out = out
        self.only_hand = hand
        self.step = step
        self.keys = keys or sys.stdin
        # A record's text is anyone's: shown escaped (control characters, lone surrogates).
        self.names = [printable(e.name, ID_LIMIT) for e in record.players]
        self.current: int | None = None  # the hand being shown
        self.moves = 0
        self.shown_hand = False  # whether the one hand asked for was found

    # -- output ---------------------------------------------------------------------------
    def echo(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def who(self, player: int | None) -> str:
        if player is None:
            return "nobody"
        name = self.names[player] if player < len(self.names) else "?"
        return f"player {player} ({name})"

    @property
    def showing(self) -> bool:
        return self.only_hand is None or self.current == self.only_hand

    # -- the game -------------------------------------------------------------------------
    def header(self) -> None:
        rec = self.record
        s = self.style
        variant = printable(rec.header("Variant") or "?", ID_LIMIT)
        target = printable(rec.header("Rule.target") or "?", ID_LIMIT)
        players = " vs ".join(
            f"{self.who(p)}" + (f" {printable(e.version, ID_LIMIT)}" if e.version else "")
            for p, e in enumerate(rec.players)
        )
        self.echo(s.em(f"Game {self.number}: {variant} to {target}") + f"  {players}")
        facts = [
            f"{name}: {printable(value, ID_LIMIT)}"
            for name in ("Event", "Site", "Date", "Seed", "Key", "Referee")
            if (value := rec.header(name))
        ]
        if facts:
            self.echo("  " + self.style.sep.join(facts))
        changed = [
            f"{h.name[5:]}={printable(h.value, ID_LIMIT)}"
            for h in rec.headers
            if h.name.startswith("Rule.") and h.value != _DEFAULT_RULES.get(h.name[5:])
        ]
        if changed:
            self.echo("  rules changed: " + " ".join(changed))

    def __call__(self, item: Item, game: Game | None) -> None:
        """Called by ``replay_game`` after each line is applied."""
        if isinstance(item, Header):
            return
        if isinstance(item, HandStart):
            self.current = item.number
            self.moves = 0
            self.shown_hand = self.shown_hand or item.number == self.only_hand
        elif isinstance(item, End | FaultLine):
            self.current = None
        if isinstance(item, Comment):
            if self.showing:
                self.echo(f"  # {printable(item.body.strip())}")
            return
        if isinstance(item, End | FaultLine) or self.showing:
            self.event(item, game)

    def event(self, item: Item, game: Game | None) -> None:
        s = self.style
        if isinstance(item, Cut):
            self.echo(f"Cut for roles: {s.cards(item.cards)}")
        elif isinstance(item, HandStart):
            self.echo()
            roles = ""
            if item.roles is not None:
                r = item.roles
                roles = (
                    f"{s.sep}box {self.who(r.box)}, captain {self.who(r.captain)},"
                    f" sits out {self.who(r.sitter)}"
                )
            self.echo(
                s.em(f"Hand {item.number}")
                + f"{s.sep}dealer {self.who(item.dealer)}{s.sep}knock limit {item.limit}{roles}"
            )
        elif isinstance(item, Deal) and game is not None and game.hand is not None:
            hand = game.hand
            for seat, player in enumerate(game.seats):
                self.echo(f"  {self.who(player):<24} {s.cards(hand.cards(seat))}")
            self.echo(f"  upcard {s.card(hand.upcard)}{s.sep}stock {hand.stock_count} cards")
            self.pause(game)
        elif isinstance(item, Advice):
            self.echo(f"      {self.who(item.player)} advises: {s.move(item.move)}")
        elif isinstance(item, Play):
            self.moves += 1
            self.echo(f"  {self.moves:>3}. {self.who(item.player)} {self.describe(item)}")
            self.pause(game)
        elif isinstance(item, Show):
            self.echo(
                f"  {item.role:<8} {self.who(item.player)}: melds {s.melds(item.melds)}"
                f"  deadwood {s.cards(item.deadwood_cards)} = {item.deadwood}"
            )
        elif isinstance(item, LayOff):
            self.echo(
                f"  {'':<8} {self.who(item.player)} lays off {s.card(item.card)}"
                f" on {s.meld(item.meld)}"
            )
        elif isinstance(item, Result):
            self.echo("  " + s.em(self.result(item)))
        elif isinstance(item, Totals):
            self.echo("  totals: " + self.scores(item.columns))
        elif isinstance(item, FaultLine):
            who = self.who(item.player)
            detail = printable(item.detail)
            self.echo(s.bad(f"Fault: {who} forfeits ({item.kind}): {detail}"))
        elif isinstance(item, End):
            self.echo()
            winner = "a tie" if item.winner is None else f"won by {self.who(item.winner)}"
            self.echo(s.em(f"Game over ({item.termination}): {winner}"))
            self.echo("  final scores: " + self.scores(item.scores))
            if item.game_winners:
                wins = ", ".join(
                    f"game {g + 1}: {self.who(w)}" for g, w in enumerate(item.game_winners)
                )
                self.echo(f"  Hollywood games: {wins}")

    def describe(self, play: Play) -> str:
        return move_text(play.move, play.card, self.style)

    def result(self, item: Result) -> str:
        return result_text(item, self.who)

    def scores(self, columns: Sequence[Sequence[int]]) -> str:
        def one(col: Sequence[int]) -> str:
            return ", ".join(f"{self.who(p)} {v}" for p, v in enumerate(col))

        if len(columns) == 1:
            return one(columns[0])
        return " | ".join(f"game {g + 1}: {one(c)}" for g, c in enumerate(columns))

    # -- stepping -------------------------------------------------------------------------
    def pause(self, game: Game | None) -> None:
        if not self.step or game is None:
            return
        if game.hand is not None and not game.hand.is_over:
            s = self.style
            hand = game.hand
            for seat, player in enumerate(game.seats):
                marker = "*" if seat == hand.to_move else " "
                self.echo(f"     {marker} {self.who(player):<24} {s.cards(hand.cards(seat))}")
            top = s.card(hand.pile[-1]) if hand.pile else "-"
            self.echo(f"       pile top {top} ({len(hand.pile)}){s.sep}stock {hand.stock_count}")
        self.out.write("-- Enter: next move, q: quit -- ")
        self.out.flush()
        answer = self.keys.readline()
        if not answer or answer.strip().lower().startswith("q"):
            self.echo()
            raise Quit


_DEFAULT_RULES = Rules().to_params()


# ---------------------------------------------------------------------------------------------
# JSON lines.


def json_hands(record: GameRecord, number: int) -> Iterator[dict[str, Any]]:
    """One object per hand of a verified game (the game's fault and end on its last hand)."""
    objects: list[dict[str, Any]] = []
    base = {
        "game": number,
        "variant": record.header("Variant"),
        "players": [e.name for e in record.players],
        "seed": record.header("Seed"),
        "key": record.header("Key"),
    }
    current: dict[str, Any] = {}

    def on_event(item: Item, game: Game | None) -> None:
        nonlocal current
        if isinstance(item, HandStart):
            current = {
                **base,
                "hand": item.number,
                "dealer": item.dealer,
                "limit": item.limit,
                "roles": None
                if item.roles is None
                else {"box": item.roles.box, "captain": item.roles.captain,
                      "sitter": item.roles.sitter},
                "moves": [],
            }
            objects.append(current)
        elif isinstance(item, Deal) and game is not None and game.hand is not None:
            current["deck"] = [str(c) for c in item.deck]
            current["dealt"] = {
                str(p): [str(c) for c in game.hand.cards(seat)] for seat, p in enumerate(game.seats)
            }
            current["upcard"] = str(game.hand.upcard)
        elif isinstance(item, Play):
            move: dict[str, Any] = {"player": item.player, "move": str(item.move)}
            if item.card is not None:
                move["card"] = str(item.card)
            current["moves"].append(move)
        elif isinstance(item, Advice):
            current["moves"].append({"player": item.player, "advice": str(item.move)})
        elif isinstance(item, Show):
            current[item.role] = {
                "player": item.player,
                "melds": [str(m) for m in item.melds],
                "deadwood_cards": [str(c) for c in item.deadwood_cards],
                "deadwood": item.deadwood,
            }
        elif isinstance(item, LayOff):
            current.setdefault("layoffs", []).append(
                {"player": item.player, "card": str(item.card), "meld": str(item.meld)}
            )
        elif isinstance(item, Result):
            current["result"] = {
                "outcome": str(item.outcome),
                "winner": item.winner,
                "points": item.points,
                "multiplier": item.multiplier,
                "capped": item.capped,
                "games": list(item.games),
            }
        elif isinstance(item, Totals):
            current["totals"] = [list(c) for c in item.columns]
        elif isinstance(item, FaultLine | End):
            if not objects:
                current = {**base, "hand": None, "moves": []}
                objects.append(current)
            if isinstance(item, FaultLine):
                current["fault"] = {
                    "player": item.player, "kind": str(item.kind), "detail": item.detail
                }
            else:
                current["end"] = {
                    "termination": str(item.termination),
                    "winner": item.winner,
                    "scores": [list(c) for c in item.scores],
                    "game_winners": list(item.game_winners),
                }

    replay_game(record, on_event)
    yield from objects
