"""No engine input line ever holds a card that its seat could not know at the table.

Every line the referee sends to real engine processes in whole games of every variant is
scanned: each card named in it must be one the receiving player may know at that moment.
"""

from __future__ import annotations

import re

import pytest

from ginproto.cards import Card
from ginproto.game import Entry, Game, GameView
from ginproto.moves import Move, MoveKind
from ginproto.rules import Rules, Variant
from ginproto.table import Decision, Fault, play_game
from referee.seat.clock import TimeControl
from referee.seat.player import EnginePlayer, EngineSpec

CARD = re.compile(r"(?<![A-Za-z0-9])([A2-9TJQK][cdhs])(?![A-Za-z0-9])")


class Scanned:
    """An engine process whose every incoming line is checked against what it may know."""

    def __init__(self, spec: EngineSpec, game_ref: list[Game], player: int) -> None:
        self.game_ref = game_ref
        self.player = player
        self.allowed: set[Card] = set()
        self.lines = 0
        self.engine = EnginePlayer(
            spec, TimeControl(base=None, move=5.0), startup_timeout=10.0, on_line=self.on_line
        )

    def on_line(self, direction: str, line: str) -> None:
        if direction != "to":
            return
        self.lines += 1
        named = {Card.from_str(m) for m in CARD.findall(line)}
        leaked = named - self.allowed
        assert not leaked, f"player {self.player} was sent {sorted(map(str, leaked))}: {line}"

    def knowable(self) -> set[Card]:
        """Own cards (the captain's for the sitter), the pile and every card that went
        through it, and the seat's own stock draws."""
        game = self.game_ref[0]
        hand = game.hand
        if hand is None:
            return set()
        seat = game.seat_of(self.player)
        seat = 1 if seat is None else seat
        known = set(hand.cards(seat)) | set(hand.pile) | {hand.upcard}
        for turn in hand.history:
            if turn.move.card is not None:
                known.add(turn.move.card)
            if turn.card is not None and (
                turn.seat == seat or turn.move.kind in (MoveKind.TAKE, MoveKind.PILE)
            ):
                known.add(turn.card)
        return known

    def decide(self, view: GameView, decision: Decision) -> Move:
        self.allowed = self.knowable()
        return self.engine.decide(view, decision)

    def hand_over(self, player: int, entry: Entry) -> None:
        # At the showdown both hands are shown; the stock stays hidden.
        self.allowed |= set(entry.result.hands[0]) | set(entry.result.hands[1])
        if entry.result.knocker is not None:
            self.allowed |= {c for m in entry.result.knocker_melds for c in m.cards}
        self.engine.hand_over(player, entry)

    def game_over(self, player: int, game: Game, fault: Fault | None) -> None:
        self.engine.game_over(player, game, fault)


@pytest.mark.parametrize(
    "variant", [Variant.STANDARD, Variant.OKLAHOMA, Variant.HOLLYWOOD, Variant.THREEHANDED]
)
def test_no_line_sent_to_an_engine_names_an_unknowable_card(variant: Variant) -> None:
    rules = Rules(variant=variant)
    game_ref: list[Game] = []
    original = Game.deal

    def spy(self: Game, deck: tuple[Card, ...]) -> object:
        if not game_ref:
            game_ref.append(self)
        return original(self, deck)

    names = ["simple", "random", "simple"][: rules.players]
    players = [Scanned(EngineSpec.parse(n), game_ref, p) for p, n in enumerate(names)]
    Game.deal = spy  # type: ignore[method-assign,assignment]
    try:
        for p in players:
            p.engine.new_game(1, p.player, rules)
        log = play_game(rules, players, seed=11, key=0)
    finally:
        Game.deal = original  # type: ignore[method-assign]
        for p in players:
            p.engine.close()
    assert log.fault is None, log.fault
    assert log.game.is_over and len(log.hands) >= 1
    assert all(p.lines > 10 for p in players)
