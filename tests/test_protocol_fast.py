"""The codec's memory between position lines: the last history read and the fields that repeat.

An engine reads one position line per decision, and each repeats most of the previous one: the
rules, the scores, the hand's history a few turns longer. The codec keeps what it read last and
reads only what is new. These tests check that this never changes an answer: every line of
real games, read in order (and with two players' lines interleaved), gives the same view as
the same line read with nothing remembered, and a malformed line fails with the same message.
"""

from __future__ import annotations

import pytest

from ginproto.game import GameView
from ginproto.moves import Move
from ginproto.protocol import ProtocolError, codec, format_position, grammar, parse_position
from ginproto.rules import Rules, Variant
from ginproto.simulate import RandomPlayer
from ginproto.table import Decision, play_game


def forget() -> None:
    """Clear everything the codec remembers between lines."""
    grammar._last_history = None
    codec._SAME.clear()


class Taper(RandomPlayer):
    """A random player that keeps the position line of every decision it is asked."""

    def __init__(self, seed: int, lines: list[str]) -> None:
        super().__init__(seed, knocks=True)
        self.lines = lines

    def decide(self, view: GameView, decision: Decision) -> Move:
        self.lines.append(format_position(view))
        return super().decide(view, decision)


def game_lines(rules: Rules, seed: str) -> tuple[list[str], list[list[str]]]:
    """All position lines of one game in the order sent, and each player's own."""
    every: list[str] = []
    tapers = [Taper(p, []) for p in range(rules.players)]
    for taper in tapers:
        taper.lines = every
    play_game(rules, tapers, seed)
    own = [[line for line in every if line.split()[2] == str(p)] for p in range(rules.players)]
    return every, own


def fresh(line: str) -> GameView:
    forget()
    return parse_position(line)


@pytest.mark.parametrize(
    "rules", [Rules(target=60), Rules(variant=Variant.THREEHANDED, target=40)], ids=["two", "three"]
)
def test_lines_read_in_order_equal_lines_read_afresh(rules: Rules) -> None:
    every, own = game_lines(rules, "fast")
    for order in [own[0], every]:  # one engine's lines; then two engines' interleaved
        forget()
        in_order = [parse_position(line) for line in order]
        assert in_order == [fresh(line) for line in order]
        assert [v.hand.history for v in in_order] == [fresh(x).hand.history for x in order]


def test_a_bad_history_after_a_good_one_fails_as_when_read_afresh() -> None:
    _, own = game_lines(Rules(target=30), "bad")
    line = next(x for x in own[0] if x.count(",") > 6 and " history " in x)
    words = line.split()
    at = words.index("history") + 1
    good = words[at]

    def with_history(text: str) -> str:
        return " ".join([*words[:at], text, *words[at + 1 :]])

    for bad in [good + ",", good + ",-", good + ",0:fly", good + ",,0:stock", good + ",1:discard"]:
        forget()
        with pytest.raises(ProtocolError) as afresh:
            parse_position(with_history(bad))
        forget()
        parse_position(line)  # remembered: the good history
        with pytest.raises(ProtocolError) as after:
            parse_position(with_history(bad))
        assert str(after.value) == str(afresh.value)
    forget()
    parse_position(with_history("-"))  # an empty history is remembered as nothing
    with pytest.raises(ProtocolError):
        parse_position(with_history("-," + good))
