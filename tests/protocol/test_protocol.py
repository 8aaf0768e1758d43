"""The protocol codec: every message reads back to itself, and no input raises anything but
``ProtocolError``.

Positions, hand results and game results come from real games: seeded players that play
random legal moves (knocking often, sometimes declaring melds, sometimes faulting) under
randomly drawn rules, so the views cover every variant, phase and history shape the referee can
produce. Then thousands of lines built from those by token drops, swaps, duplications, garbage,
truncation and splicing are thrown at both parsers.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pytest
from helpers import thorough
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ginproto import protocol as P
from ginproto.cards import DECK, Card
from ginproto.game import Entry, Game, GameView
from ginproto.hand import Turn
from ginproto.melds import best_melds
from ginproto.moves import Move, MoveKind
from ginproto.rules import Rules, Variant
from ginproto.table import Decision, Fault, FaultKind, PlayerFault, play_game

# ------------------------------------------------------------------------------------------
# Real games as a source of views, entries and game results


@dataclass
class Recorder:
    """A random player that records everything the table shows it."""

    rng: random.Random
    fault_at: int | None = None  # fault (or play illegally) at this decision
    views: list[GameView] = field(default_factory=list)
    entries: list[P.HandOver] = field(default_factory=list)
    overs: list[P.GameOver] = field(default_factory=list)
    moves: list[Move] = field(default_factory=list)

    def decide(self, view: GameView, decision: Decision) -> Move:
        self.views.append(view)
        if self.fault_at is not None and len(self.views) > self.fault_at:
            if self.rng.random() < 0.5:
                raise PlayerFault(self.rng.choice(list(FaultKind)), "test fault")
            return Move.discard(view.hand.pile[0]) if view.hand.pile else Move.stock()
        legal = view.hand.legal_moves()
        knocks = [m for m in legal if m.kind in (MoveKind.KNOCK, MoveKind.BIG_GIN)]
        move = self.rng.choice(knocks) if knocks and self.rng.random() < 0.7 else None
        if move is None:
            draws = [m for m in legal if m.kind is MoveKind.STOCK]
            pool = draws if draws and self.rng.random() < 0.6 else legal
            move = self.rng.choice(pool)
        if move.kind is MoveKind.KNOCK and self.rng.random() < 0.5:
            assert move.card is not None
            rest = [c for c in view.hand.cards if c != move.card]
            move = Move.knock(move.card, best_melds(rest).melds or None)
        self.moves.append(move)
        return move

    def hand_over(self, player: int, entry: Entry) -> None:
        self.entries.append(P.HandOver(player, entry))

    def game_over(self, player: int, game: Game, fault: Fault | None) -> None:
        self.overs.append(P.GameOver.of(player, game, fault))


@st.composite
def rules_st(draw: st.DrawFn, short: bool = True) -> Rules:
    """Rules of any variant with random options; ``short`` keeps the games small."""
    return Rules(
        variant=draw(st.sampled_from(list(Variant))),
        target=draw(st.integers(1, 60) if short else st.integers(1, 10**6)),
        gin_bonus=draw(st.integers(0, 40)),
        undercut_bonus=draw(st.integers(0, 20)),
        knock_limit=draw(st.integers(0, 100)),
        oklahoma_ace_limit=draw(st.integers(0, 10)),
        spade_double=draw(st.booleans()),
        big_gin=draw(st.booleans()),
        big_gin_bonus=draw(st.integers(0, 50)),
        discard_taken=draw(st.booleans()),
        turn_cap=draw(st.integers(2, 60) if short else st.integers(2, 10**6)),
        hand_cap=draw(st.integers(1, 5) if short else st.integers(1, 10**6)),
        game_bonus=draw(st.integers(0, 100)),
        box_bonus=draw(st.integers(0, 25)),
        shutout_double=draw(st.booleans()),
    )


@dataclass
class Played:
    """What the players of one game saw; its repr names the game, not its contents."""

    rules: Rules
    seed: int
    fault: bool
    views: list[GameView] = field(repr=False)
    entries: list[P.HandOver] = field(repr=False)
    overs: list[P.GameOver] = field(repr=False)
    moves: list[Move] = field(repr=False)


def play(rules: Rules, seed: int, fault: bool = False) -> Played:
    rng = random.Random(seed)
    players = [
        Recorder(random.Random(seed * 7 + i), rng.randrange(200) if fault and i == 0 else None)
        for i in range(rules.players)
    ]
    play_game(rules, players, seed=seed, key=rng.randrange(10))
    return Played(
        rules,
        seed,
        fault,
        [v for p in players for v in p.views],
        [e for p in players for e in p.entries],
        [o for p in players for o in p.overs],
        [m for p in players for m in p.moves],
    )


@st.composite
def played_st(draw: st.DrawFn) -> Played:
    return play(draw(rules_st()), draw(st.integers(0, 10**9)), draw(st.booleans()))


@st.composite
def view_st(draw: st.DrawFn) -> GameView:
    views = draw(played_st()).views
    return views[draw(st.integers(0, len(views) - 1))]


# ------------------------------------------------------------------------------------------
# Strategies for the other messages

_CHARS = st.characters(blacklist_categories=("Z", "C"))
_RESERVED = {P.NAME, P.TYPE, P.DEFAULT, P.MIN, P.MAX, P.VAR, P.VALUE, P.EMPTY}
word = st.text(_CHARS, min_size=1, max_size=8).filter(lambda w: w not in _RESERVED)
words = st.lists(word, min_size=1, max_size=4).map(" ".join)
count = st.integers(0, 10**12 - 1)
maybe_count = st.none() | count
player = st.integers(0, 2)


@st.composite
def option_st(draw: st.DrawFn) -> P.OptionDecl:
    kind = draw(st.sampled_from(list(P.OptionType)))
    name = draw(words)
    if kind is P.OptionType.CHECK:
        return P.OptionDecl.check(name, draw(st.booleans()))
    if kind is P.OptionType.SPIN:
        low = draw(st.integers(-(10**6), 10**6))
        high = draw(st.integers(low, low + 10**6))
        return P.OptionDecl.spin(name, draw(st.integers(low, high)), low, high)
    if kind is P.OptionType.COMBO:
        choices = draw(st.lists(words, min_size=1, max_size=4))
        return P.OptionDecl.combo(name, draw(st.sampled_from(choices)), choices)
    return P.OptionDecl.string(name, draw(st.just("") | words))


referee_messages: st.SearchStrategy[P.RefereeMessage] = st.one_of(
    st.builds(P.Gin, st.integers(0, 10**6)),
    st.builds(P.SetOption, words, st.none() | st.just("") | words),
    st.just(P.IsReady()),
    st.just(P.Quit()),
    st.builds(P.NewMatch, maybe_count),
    st.builds(lambda r, g, p: P.NewGame(g, p % r.players, r), rules_st(False),
              st.integers(1, 10**6), player),
    st.builds(P.Go, st.sampled_from(list(Decision)), maybe_count, maybe_count, maybe_count),
    st.builds(P.MatchScore, count, count, count, count),
    st.builds(P.MatchOver, count, count, count, count),
    view_st().map(P.Position),
)

engine_messages: st.SearchStrategy[P.EngineMessage] = st.one_of(
    st.builds(P.GinOk, st.integers(0, 10**6)),
    st.builds(P.Id, word, words),
    option_st(),
    st.just(P.ReadyOk()),
    st.builds(P.Info, st.just("") | words),
)


# ------------------------------------------------------------------------------------------
# Round trips


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(played_st())
def test_every_view_entry_and_result_of_a_game_round_trips(played: Played) -> None:
    for view in played.views:
        line = P.format_position(view)
        assert "\n" not in line
        assert P.parse_position(line) == view
        assert P.parse_referee_line(line) == P.Position(view)
    info: list[P.HandOver | P.GameOver] = [*played.entries, *played.overs]
    for message in info:
        assert P.parse_referee_line(message.format()) == message
    for move in played.moves:
        reply = P.MoveReply(move)
        assert P.parse_engine_line(str(reply)) == reply
        assert P.parse_reply(str(reply)) == move


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(referee_messages)
def test_referee_messages_round_trip(message: P.RefereeMessage) -> None:
    line = message.format()
    assert "\n" not in line and line == str(message)
    assert P.parse_referee_line(line) == message
    assert P.parse_referee_line(line + "\r\n") == message


@settings(max_examples=300, deadline=None)
@given(engine_messages)
def test_engine_messages_round_trip(message: P.EngineMessage) -> None:
    line = message.format()
    assert "\n" not in line
    assert P.parse_engine_line(line) == message


@settings(max_examples=100, deadline=None)
@given(option_st())
def test_option_defaults_are_valid_values(option: P.OptionDecl) -> None:
    assert option.value_of(option.default) == option.default_value


def test_a_real_game_of_every_variant_round_trips() -> None:
    for variant in Variant:
        played = play(Rules(variant=variant, target=40), seed=11)
        assert played.views and played.entries and played.overs
        for view in played.views:
            assert P.parse_position(P.format_position(view)) == view
        if variant is Variant.THREEHANDED:
            assert any(v.advice is not None for v in played.views)
            assert any(v.roles is not None for v in played.views)


# ------------------------------------------------------------------------------------------
# Exact forms, as spec/PROTOCOL.md shows them


def test_documented_line_forms() -> None:
    assert str(P.Gin()) == "gin protocol 1"
    assert P.parse_engine_line("ginok") == P.GinOk(1)
    assert P.parse_referee_line("gin") == P.Gin(1)
    assert str(P.Go(Decision.DRAW, 60000, 100, 5000)) == "go draw time 60000 inc 100 movetime 5000"
    assert str(P.Go(Decision.ADVICE)) == "go advice"
    assert str(P.MoveReply(Move.from_str("knock 7h 5s-6s-7s"))) == "move knock 7h 5s-6s-7s"
    assert str(P.SetOption("Seed", "7")) == "setoption name Seed value 7"
    assert str(P.SetOption("Book", "")) == "setoption name Book value <empty>"
    assert (
        str(P.OptionDecl.spin("Seed", 0, 0, 9))
        == "option name Seed type spin default 0 min 0 max 9"
    )
    combo = P.parse_engine_line("option name Style type combo default Normal var Safe var Normal")
    assert combo == P.OptionDecl.combo("Style", "Normal", ["Safe", "Normal"])
    assert P.parse_engine_line("id name Deep Gin 2") == P.Id("name", "Deep Gin 2")
    assert str(P.MatchScore(3, 2, 1, 0)) == "matchscore games 3 wins 2 losses 1 draws 0"
    assert P.parse_referee_line("matchover games 3 wins 2 losses 1 draws 0") == P.MatchOver(
        3, 2, 1, 0
    )
    assert P.parse_reply("info depth 3") is None
    assert P.parse_reply("readyok") is None
    assert P.parse_reply("option name x") is None  # malformed, but not a reply: ignored
    assert P.parse_reply("move stock") == Move.stock()


def test_turn_and_move_tokens() -> None:
    knock = Move.from_str("knock 7h 5s-6s-7s")
    assert P.move_token(knock) == "knock:7h:5s-6s-7s"
    assert P.parse_move_token("knock:7h:5s-6s-7s") == knock
    assert P.turn_token(Turn(0, Move.stock(), Card.from_str("Kd"))) == "0:stock:Kd"
    assert P.turn_token(Turn(1, Move.discard(Card.from_str("7h")))) == "1:discard:7h"
    assert P.parse_turn_token("1:stock") == Turn(1, Move.stock(), None)
    assert P.parse_turn_token("0:pile:Kh").card is not None


def test_forward_compatibility_unknown_fields_and_lines_are_skipped() -> None:
    played = play(Rules(target=20), seed=3)
    view = played.views[5]
    line = P.format_position(view)
    extended = line.replace(" cards ", " future 42 cards ") + " newrule=7 mood=happy"
    assert P.parse_position(extended) == view
    assert P.parse_referee_line("go draw ponder 1 time 5") == P.Go(Decision.DRAW, time=5)
    assert P.parse_referee_line("gin protocol 1 flavour rummy") == P.Gin(1)
    assert P.parse_referee_line("isready now") == P.IsReady()
    assert P.parse_referee_line("shuffle 7") == P.Unknown("shuffle 7")
    assert P.parse_engine_line("debug hello") == P.Unknown("debug hello")
    assert P.parse_referee_line("") == P.Unknown("")


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("move", "expected a move"),
        ("move discard", "needs a card"),
        ("move discard 1x", "not a card"),
        ("move dance", "unknown move"),
        ("go", "expected 'go <offer|draw|discard|advice>"),
        ("go think", "the decision must be one of"),
        ("go draw time", "expected a value after 'time'"),
        ("go draw time -5", "whole number"),
        ("position player 0", "missing the field"),
        ("setoption Seed 3", "expected 'setoption name"),
        ("option name X type spin default y", "whole number"),
        ("option name X type dial default 1", "type must be one of"),
        ("gameover player 0 end target hands 1 scores 1,0 winners 0 fault 1", "player:kind"),
    ],
)
def test_errors_say_what_was_expected(line: str, expected: str) -> None:
    with pytest.raises(P.ProtocolError) as info:
        if line.split()[0] in (P.MOVE, P.OPTION):
            P.parse_engine_line(line)
        else:
            P.parse_referee_line(line)
    assert expected in str(info.value)
    assert info.value.keyword == line.split()[0]


def test_a_malformed_move_reply_is_an_error_a_malformed_info_is_not() -> None:
    with pytest.raises(P.ProtocolError) as info:
        P.parse_reply("move knock 7h 5s-6s-8s")
    assert info.value.keyword == P.MOVE
    assert P.parse_reply("id name") is None


# ------------------------------------------------------------------------------------------
# Robustness: mutated and random lines


def _corpus() -> list[str]:
    lines: list[str] = []
    for i, variant in enumerate(Variant):
        played = play(Rules(variant=variant, target=40, big_gin=i % 2 == 0), seed=100 + i,
                      fault=i == 3)
        lines += [P.format_position(v) for v in played.views[::7]]
        lines += [e.format() for e in played.entries] + [o.format() for o in played.overs]
        lines += [str(P.MoveReply(m)) for m in played.moves[::5]]
    lines += [
        str(P.Gin()), str(P.GinOk()), str(P.IsReady()), str(P.ReadyOk()), str(P.Quit()),
        str(P.NewMatch(10)), str(P.NewGame(1, 0, Rules(variant=Variant.OKLAHOMA))),
        str(P.Go(Decision.DISCARD, 1000, 10, 500)), str(P.MatchScore(1, 1, 0, 0)),
        str(P.MatchOver(2, 1, 1, 0)), str(P.Id("name", "Bot 1")), str(P.Info("depth 2")),
        str(P.OptionDecl.spin("Seed", 0, 0, 9)), str(P.OptionDecl.check("Fast", True)),
        str(P.OptionDecl.combo("Style", "A", ["A", "B"])), str(P.OptionDecl.string("Book")),
        str(P.SetOption("Seed", "3")), str(P.SetOption("Book", "")),
    ]  # fmt: skip
    return lines


CORPUS = _corpus()
_GARBAGE = [
    "", "-", ",", ":", "=", "/", ">", "--", ",,", "::", "0", "1", "2", "3", "-1", "99999999999999",
    "1" * 5000, "x", "Zz", "10h", "th", "true", "false", "<empty>", "\x00", "\ufffd", "\udcff",
    "é", "🂡", "\u00a0", "\u2028", "position", "move", "go", "cards", "pile", "history", "seats",
    "variant=", "=standard", "variant=nope", "target=0", "target=1_0", "knock_limit=101",
    "turn_cap=1", "0:stock:", "0:knock:7h:", "2:pass", "0:pile", "Ac-2c", "Ac-2d-3c", "Kc>9",
    "a=b=c", "-,-", "0,-,1", "1/2", "0,0/0", "discard:7h", "knock:7h:As-2s-3s",
]  # fmt: skip


def _tokens(line: str) -> list[str]:
    return line.split(" ")


Mutation = Callable[[random.Random, str], str]


def _drop(rng: random.Random, line: str) -> str:
    tokens = _tokens(line)
    for _ in range(rng.randint(1, 3)):
        if tokens:
            del tokens[rng.randrange(len(tokens))]
    return " ".join(tokens)


def _swap(rng: random.Random, line: str) -> str:
    tokens = _tokens(line)
    i, j = rng.randrange(len(tokens)), rng.randrange(len(tokens))
    tokens[i], tokens[j] = tokens[j], tokens[i]
    return " ".join(tokens)


def _duplicate(rng: random.Random, line: str) -> str:
    tokens = _tokens(line)
    i = rng.randrange(len(tokens))
    tokens.insert(rng.randrange(len(tokens) + 1), tokens[i])
    return " ".join(tokens)


def _replace_token(rng: random.Random, line: str) -> str:
    tokens = _tokens(line)
    tokens[rng.randrange(len(tokens))] = rng.choice(_GARBAGE)
    return " ".join(tokens)


def _edit_inside(rng: random.Random, line: str) -> str:
    """Change one element inside a list or turn token (a card, a separator, a number)."""
    tokens = _tokens(line)
    i = rng.randrange(len(tokens))
    parts = tokens[i].split(rng.choice([",", ":", "-", "/", "="]))
    parts[rng.randrange(len(parts))] = rng.choice(_GARBAGE)
    tokens[i] = rng.choice([",", ":", "-", "/", "="]).join(parts)
    return " ".join(tokens)


def _garbage_bytes(rng: random.Random, line: str) -> str:
    raw = bytearray(line.encode("utf-8", "surrogatepass"))  # any lone surrogate a flip made
    for _ in range(rng.randint(1, 4)):
        raw.insert(rng.randrange(len(raw) + 1), rng.randrange(256))
    return raw.decode("utf-8", rng.choice(["replace", "surrogateescape", "ignore"]))


def _flip_char(rng: random.Random, line: str) -> str:
    if not line:
        return line
    i = rng.randrange(len(line))
    return line[:i] + chr(rng.choice([rng.randrange(32, 127), rng.randrange(0x10FFFF)])) + line[
        i + 1 :
    ]


def _truncate(rng: random.Random, line: str) -> str:
    return line[: rng.randrange(len(line) + 1)]


def _splice(rng: random.Random, line: str) -> str:
    other = rng.choice(CORPUS)
    return line[: rng.randrange(len(line) + 1)] + other[rng.randrange(len(other) + 1) :]


def _retarget(rng: random.Random, line: str) -> str:
    """The same fields under another message word."""
    tokens = _tokens(line)
    tokens[0] = rng.choice(
        [P.POSITION, P.HANDOVER, P.GAMEOVER, P.GO, P.NEWGAME, P.MATCHSCORE, P.MOVE, P.OPTION,
         P.ID, P.GINOK, P.SETOPTION, P.GIN, P.NEWMATCH, P.MATCHOVER]
    )  # fmt: skip
    return " ".join(tokens)


MUTATIONS: list[Mutation] = [
    _drop, _swap, _duplicate, _replace_token, _edit_inside, _garbage_bytes, _flip_char,
    _truncate, _splice, _retarget,
]  # fmt: skip


def _check_line(line: str) -> None:
    """Both parsers either read the line or raise ProtocolError; what they read re-reads."""
    for parse in (P.parse_referee_line, P.parse_engine_line):
        try:
            message = parse(line)
        except P.ProtocolError as exc:
            assert str(exc)
            continue
        again = message.format()
        assert parse(again) == message, (line, again)
    try:
        P.parse_reply(line)
    except P.ProtocolError as exc:
        assert exc.keyword == P.MOVE


def mutate(rng: random.Random, line: str, rounds: int) -> str:
    for _ in range(rounds):
        line = rng.choice(MUTATIONS)(rng, line)
    return line


@settings(max_examples=thorough(3000, 600), deadline=None)
@given(
    st.sampled_from(CORPUS),
    st.integers(1, 4),
    # Four mutations drawn and the first ``count`` applied: the same cases as a list of one
    # to four, without the list's draws that hypothesis throws away (as many as it keeps).
    st.tuples(*[st.sampled_from(MUTATIONS)] * 4),
    st.integers(0, 2**32),
)
def test_mutated_lines_raise_only_protocol_errors(
    line: str, count: int, mutations: Sequence[Mutation], seed: int
) -> None:
    rng = random.Random(seed)
    for mutation in mutations[:count]:
        line = mutation(rng, line)
    _check_line(line)


@pytest.mark.slow
@settings(max_examples=thorough(2000, 400), deadline=None)
@given(
    st.sampled_from(["", *sorted({line.split(" ")[0] for line in CORPUS})]),
    st.lists(st.sampled_from(_GARBAGE) | st.text(max_size=12), max_size=12),
)
def test_random_token_lines_raise_only_protocol_errors(word: str, tokens: list[str]) -> None:
    _check_line(" ".join([word, *tokens]))


@settings(max_examples=thorough(1000, 200), deadline=None)
@given(st.text(max_size=200))
def test_random_text_raises_only_protocol_errors(text: str) -> None:
    _check_line(text)


def test_many_seeded_mutations_raise_only_protocol_errors() -> None:
    """A fast, seeded sweep in addition to the hypothesis tests: 20 000 mutated lines (4 000
    in a quick run)."""
    rng = random.Random(20240601)
    for i in range(thorough(20_000, 4_000)):
        _check_line(mutate(rng, CORPUS[i % len(CORPUS)], rng.randint(1, 3)))


def test_position_names_the_first_upcard() -> None:
    """The first upcard is a field of its own: an engine need not work it out from the pile
    and the history, and it stays known after the upcard was taken and buried."""
    for rules in (Rules(), Rules(variant=Variant.OKLAHOMA), Rules(variant=Variant.THREEHANDED)):
        for view in play(rules, 11).views:
            line = P.format_position(view)
            tokens = line.split()
            upcard = view.hand.upcard
            assert upcard is not None
            assert tokens[tokens.index("upcard") + 1] == str(upcard)
            assert P.parse_position(line) == view
    view = play(Rules(), 3).views[0]
    line = P.format_position(view)
    without = line.replace(f" upcard {view.hand.upcard}", "")
    assert "upcard" not in without
    assert P.parse_position(without) == view  # a line without the field still reads
    other = next(c for c in DECK if c != view.hand.upcard)
    wrong = line.replace(f"upcard {view.hand.upcard}", f"upcard {other}")
    with pytest.raises(P.ProtocolError, match="upcard"):
        P.parse_position(wrong)
