"""``PositionWriter`` gives ``format_position``'s line, byte for byte, whatever views it gets.

The referee sends a ``position`` line before every decision. ``PositionWriter`` builds it from
what it wrote for the previous decision (the history so far); these tests hold it to the
codec's one definition of the line over whole games of every variant, and over views that do
not follow one another (another game, another hand, another seat).
"""

from __future__ import annotations

import random

import pytest

from engines.random_engine import RandomEngine
from engines.simple_engine import SimpleEngine
from ginproto import protocol as proto
from ginproto.game import Entry, Game, GameView
from ginproto.moves import Move
from ginproto.rules import Rules, Variant
from ginproto.table import Decision, Fault, play_game


class _Witness:
    """A player that checks each view's line from its writer against ``format_position``."""

    def __init__(self, inner: RandomEngine | SimpleEngine, writer: proto.PositionWriter) -> None:
        self.inner = inner
        self.writer = writer
        self.lines = 0

    def decide(self, view: GameView, decision: Decision) -> Move:
        assert self.writer.format(view) == proto.format_position(view)
        self.lines += 1
        return self.inner.decide(view, decision)

    def hand_over(self, player: int, entry: Entry) -> None:
        self.inner.hand_over(player, entry)

    def game_over(self, player: int, game: Game, fault: Fault | None) -> None:
        self.inner.game_over(player, game, fault)


@pytest.mark.parametrize("variant", list(Variant), ids=str)
def test_every_line_of_whole_games_is_the_codecs(variant: Variant) -> None:
    rules = Rules(variant=variant, spade_double=variant is Variant.OKLAHOMA)
    writers = [proto.PositionWriter() for _ in range(rules.players)]
    players = [
        _Witness((SimpleEngine if p % 2 == 0 else RandomEngine)(), writers[p])
        for p in range(rules.players)
    ]
    for key in range(2):  # the same writers go on into a second game
        play_game(rules, players, "writer", key)
    assert all(p.lines > 50 for p in players)


def test_views_that_do_not_follow_one_another_are_written_afresh() -> None:
    """One writer, views picked at random from two games in progress and from both seats:
    a history that is not the continuation of the last one must not be appended to."""
    views: list[GameView] = []

    class Collect:
        def __init__(self) -> None:
            self.inner = RandomEngine()

        def decide(self, view: GameView, decision: Decision) -> Move:
            views.append(view)
            return self.inner.decide(view, decision)

        def hand_over(self, player: int, entry: Entry) -> None:
            pass

        def game_over(self, player: int, game: Game, fault: Fault | None) -> None:
            pass

    for key in range(2):
        play_game(Rules(target=30), [Collect(), Collect()], "mixed", key)
    writer = proto.PositionWriter()
    order = random.Random(5).sample(range(len(views)), len(views))
    for i in order + sorted(order):
        assert writer.format(views[i]) == proto.format_position(views[i])
