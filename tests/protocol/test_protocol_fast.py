"""The codec's memory between position lines: the last history read and the fields that repeat.

An engine reads one position line per decision, and each repeats most of the previous one: the
rules, the scores, the hand's history a few turns longer. The codec keeps what it read last and
reads only what is new. These tests check that this never changes an answer: every line of
real games, read in order (and with two players' lines interleaved), gives the same view as
the same line read with nothing remembered, and a malformed line fails with the same message.

Position lines in the formatter's own layout are read by a fast reader that knows where each
field is; on any doubt it gives way to the general reader. Every line of real games of every
variant must take the fast way and give what the general reader gives, and any mutated line
must either give the same or be left to the general reader (so errors stay the same).
"""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ginproto.game import GameView
from ginproto.moves import Move
from ginproto.protocol import ProtocolError, codec, format_position, grammar, parse_position
from ginproto.rules import Rules, Variant
from ginproto.simulate import RandomPlayer
from ginproto.table import Decision, play_game


def forget() -> None:
    """Clear everything the codec remembers between lines."""
    grammar._last_history = None
    grammar._previous_history = None
    codec._SAME.clear()
    codec._last_tail = None


def general(line: str) -> object:
    """What the general reader makes of ``line``: its message, or its error's text."""
    fast, plain_go = codec._fast_position, dict(codec._PLAIN_GO)
    codec._fast_position = lambda line: None  # type: ignore[assignment]
    codec._PLAIN_GO.clear()
    try:
        return codec.parse_referee_line(line)
    except ProtocolError as exc:
        return f"ProtocolError: {exc}"
    finally:
        codec._fast_position = fast
        codec._PLAIN_GO.update(plain_go)


def read(line: str) -> object:
    """What the codec makes of ``line`` (the fast reader first): its message, or its error."""
    try:
        return codec.parse_referee_line(line)
    except ProtocolError as exc:
        return f"ProtocolError: {exc}"


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


VARIANTS = [
    Rules(target=60),
    Rules(variant=Variant.OKLAHOMA, target=60),
    Rules(variant=Variant.HOLLYWOOD, target=40),
    Rules(variant=Variant.THREEHANDED, target=40),
    Rules(target=60, big_gin=True, spade_double=True, discard_taken=True),
]


@pytest.mark.parametrize("rules", VARIANTS, ids=lambda r: str(r.variant))
def test_every_real_line_takes_the_fast_way_and_equals_the_general_reader(rules: Rules) -> None:
    every, own = game_lines(rules, "fast way")
    assert any(" upcard " in line for line in every)
    assert any(":take" in line for line in every)  # the upcard taken: checked by its turn
    assert any(":take" not in line and " upcard " in line for line in every)
    for order in [own[0], every]:
        forget()
        for line in order:
            for text in [line, line + "\n"]:
                fast = codec._fast_position(text)
                assert fast is not None, text
                assert fast == general(text)
                assert codec.parse_referee_line(text) == fast
                assert fast.view.hand.history == general_view(text).hand.history


def general_view(line: str) -> GameView:
    message = general(line)
    assert isinstance(message, codec.Position)
    return message.view


def test_lines_of_another_layout_are_left_to_the_general_reader() -> None:
    _, own = game_lines(Rules(target=30), "layout")
    line = own[0][-1]
    words = line.split(" ")
    at = words.index("history")
    variants = [
        line.replace(" ", "  ", 1),  # two spaces
        line.replace(" ", "\t", 3),  # a tab
        "  " + line,  # leading blanks
        line + " extra 1",  # a field the fast reader does not know
        " ".join([*words[:at], "x", "1", *words[at:]]),  # an unknown field in the head
        " ".join([words[0], *words[3:5], *words[1:3], *words[5:]]),  # another order
        line.replace(" history ", " history x=1 ", 1),  # a parameter inside
        line + " seats 0,1",  # a field twice
        line + " player 1",  # a head field again in the tail
    ]
    for text in variants:
        forget()
        assert codec._fast_position(text) is None, text
        assert read(text) == general(text)


def test_lines_the_checks_refuse_fail_with_the_general_readers_message() -> None:
    _, two = game_lines(Rules(target=30), "checks")
    _, three = game_lines(Rules(variant=Variant.THREEHANDED, target=30), "checks")
    line = next(x for x in two[0] if " upcard " in x and " pile -" not in x)
    words = line.split(" ")
    cards, pile = words[words.index("cards") + 1], words[words.index("pile") + 1]
    other = next(c for c in ["Ac", "2c", "3c"] if c not in words[words.index("upcard") + 1])
    bad = [
        line + " roles 2,0,1",  # roles in a two-player game
        re.sub(r" roles \S+", "", next(x for x in three[0] if " roles " in x)),  # none in three
        line.replace(f" pile {pile}", f" pile {pile},{cards.split(',')[0]}"),  # a card twice
        line.replace(" player 0 ", " player 2 "),  # no such player
        re.sub(r" upcard \S+", f" upcard {other}", line),  # not the first upcard
        line.replace(" scores ", " scores 0,0/"),  # scores of a game too many
    ]
    for text in bad:
        assert text != line
        forget()
        expected = general(text)
        assert isinstance(expected, str), text
        forget()
        assert codec._fast_position(text) is None, text
        forget()
        codec.parse_referee_line(line)  # remembered: the good line's tail and history
        assert read(text) == expected


def mutations() -> st.SearchStrategy[tuple[int, int, int, str]]:
    return st.tuples(
        st.integers(0, 10**6),
        st.integers(0, 10**6),
        st.integers(0, 6),
        st.sampled_from(["0", "1", "2", "-", "x", "=", ",", ":", "Ac", "99", "draw", "history"]),
    )


_LINES: dict[str, list[str]] = {}


def sample_lines() -> list[str]:
    if not _LINES:
        for rules in VARIANTS:
            every, _ = game_lines(rules, "mutate")
            _LINES[str(rules)] = every[:: max(1, len(every) // 40)]
    return [line for lines in _LINES.values() for line in lines]


@settings(max_examples=400, deadline=None)
@given(mutation=mutations(), warm=st.booleans())
def test_a_mutated_line_is_read_as_the_general_reader_reads_it(
    mutation: tuple[int, int, int, str], warm: bool
) -> None:
    lines = sample_lines()
    pick, where, kind, text = mutation
    line = lines[pick % len(lines)]
    words = line.split(" ")
    i = where % len(words)
    if kind == 0:
        words[i] = text  # a value or a name replaced
    elif kind == 1:
        del words[i]
    elif kind == 2:
        words.insert(i, text)
    elif kind == 3:
        words[i], words[-1 - i] = words[-1 - i], words[i]
    elif kind == 4:
        words[i] = words[i] + text  # a token lengthened
    elif kind == 5:
        words[i] = words[i][: len(words[i]) // 2]  # a token cut
    else:
        chars = list(line)
        chars[where % len(chars)] = text[0]
        words = "".join(chars).split(" ")
    mutated = " ".join(words)
    forget()
    if warm:  # the memos hold the unmutated line's history and tail
        codec.parse_referee_line(line)
    fast = codec._fast_position(mutated)
    expected = general(mutated)
    if fast is not None:
        assert fast == expected
    if warm:
        forget()
        codec.parse_referee_line(line)
    assert read(mutated) == expected


def test_random_token_swaps_never_make_the_fast_reader_disagree() -> None:
    rng = random.Random(5)
    lines = sample_lines()
    for _ in range(300):
        words = rng.choice(lines).split(" ")
        a, b = rng.randrange(len(words)), rng.randrange(len(words))
        words[a], words[b] = words[b], words[a]
        mutated = " ".join(words)
        forget()
        fast = codec._fast_position(mutated)
        if fast is not None:
            assert fast == general(mutated)
        assert read(mutated) == general(mutated)


def test_plain_go_lines_are_read_as_by_the_general_reader() -> None:
    for decision in Decision:
        for text in [f"go {decision.value}", f"go {decision.value}\n"]:
            assert codec.parse_referee_line(text) == general(text)
