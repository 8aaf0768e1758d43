"""The record codec: round trips, the strict writer, the lenient reader, atomic append, fuzzing."""

from __future__ import annotations

import errno
import io
import multiprocessing
import os
from pathlib import Path

import pytest
from helpers import thorough
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ginproto.cards import Card, shuffled_deck
from ginproto.game import GameEnd
from ginproto.hand import Outcome
from ginproto.moves import Move
from ginproto.record import (
    FORMAT_LINE,
    Comment,
    Deal,
    End,
    GameRecord,
    Header,
    Play,
    RecordError,
    RecordReader,
    RecordSyntaxError,
    RecordWriteError,
    Result,
    Totals,
    TruncatedRecordError,
    append_game,
    dumps,
    loads,
    parse_line,
    quote,
    read_games,
    unquote,
    write_game,
)
from ginproto.replay import verify_game
from ginproto.rules import Rules, Variant
from ginproto.simulate import GreedyPlayer, RandomPlayer, example_records, play_one

FIXED = {"event": "test", "site": "here", "date": "2025.01.01"}
ROOT = Path(__file__).resolve().parents[2]


def make_games() -> list[GameRecord]:
    """A few records of every variant and of some rule options, all short."""
    configs = [
        Rules(),
        Rules(variant=Variant.OKLAHOMA, spade_double=True),
        Rules(variant=Variant.HOLLYWOOD, target=40),
        Rules(variant=Variant.THREEHANDED, target=50),
        Rules(big_gin=True, discard_taken=True, turn_cap=12, target=30),
    ]
    games = []
    for i, rules in enumerate(configs):
        for key in range(3):
            players = [
                GreedyPlayer() if (p + key) % 2 else RandomPlayer(f"{i}/{key}/{p}", knocks=True)
                for p in range(rules.players)
            ]
            games.append(play_one(rules, players, "rec", key, **FIXED)[1])
    return games


@pytest.fixture(scope="module")
def games() -> list[GameRecord]:
    return make_games()


@pytest.fixture(scope="module")
def text(games: list[GameRecord]) -> str:
    return dumps(games)


# -- round trips ----------------------------------------------------------------------------


def test_read_write_gives_the_same_bytes(text: str, games: list[GameRecord]) -> None:
    again = loads(text)
    assert len(again) == len(games)
    assert all(not g.errors for g in again), [g.errors for g in again]
    assert dumps(again) == text
    for before, after in zip(games, again, strict=True):
        assert before.items == after.items


def test_every_game_ends_with_a_blank_line_and_starts_with_the_format_line(text: str) -> None:
    chunks = text.split("\n\n")
    assert chunks[-1] == ""
    assert all(chunk.startswith(FORMAT_LINE + "\n") for chunk in chunks[:-1])


def test_headers_carry_every_rule_and_the_engines(games: list[GameRecord]) -> None:
    game = games[0]
    names = [h.name for h in game.headers]
    for name in Rules().to_params():
        assert ("Variant" if name == "variant" else f"Rule.{name}") in names
    for name in ("Event", "Site", "Date", "Referee", "Seed", "Key", "Winner", "Termination"):
        assert name in names
    assert game.rules() == Rules()
    infos = game.players
    assert [i.name for i in infos] == ["random", "greedy"]
    assert ("knocks", "true") in infos[0].options
    assert infos[0].command.startswith("in-process ginproto.simulate.RandomPlayer")


def test_comments_survive_a_round_trip(games: list[GameRecord]) -> None:
    text = write_game(games[0])
    lines = text.split("\n")
    lines.insert(0, "# before the game")
    lines.insert(5, "# among the headers")
    lines.insert(40, "#a note on a move, with \"quotes\" and ünïcode")
    edited = "\n".join(lines) + "# after the game\n"
    [game] = loads(edited)
    assert not game.errors
    assert write_game(game) == edited
    assert game.preamble == [Comment(" before the game")]
    assert not verify_game(game)


def test_crlf_line_ends_are_read(games: list[GameRecord]) -> None:
    text = write_game(games[0])
    [game] = loads(text.replace("\n", "\r\n"))
    assert not game.errors
    assert write_game(game) == text


@given(st.text())
@settings(max_examples=300)
def test_quoted_strings_round_trip(value: str) -> None:
    quoted = quote(value)
    assert "\n" not in quoted and "\r" not in quoted
    assert unquote(quoted) == (value, len(quoted))
    header = Header("Event", value)
    assert parse_line(header.text()) == header


def test_awkward_header_values_round_trip(games: list[GameRecord]) -> None:
    game = games[0]
    odd = 'name "with" quotes\\ and\ttab\nnewline \x7f ♠ \udcff'
    items = [Header("Player0", odd) if isinstance(i, Header) and i.name == "Player0" else i
             for i in game.items]
    text = write_game(GameRecord(items))
    assert "\t" not in text and text.count("\n\n") == 1
    [back] = loads(text)
    assert not back.errors
    assert back.header("Player0") == odd
    assert write_game(back) == text


# -- the strict writer ----------------------------------------------------------------------


def _deal() -> Deal:
    return Deal(shuffled_deck(1))


def test_the_writer_refuses_what_would_not_read_back() -> None:
    end = End(GameEnd.TARGET, 0, ((100, 0),))
    good = GameRecord([Header("Event", "x"), _deal(), end])
    write_game(good)
    bad = [
        GameRecord([Header("Bad Name", "x"), end]),
        GameRecord([Header("1st", "x"), end]),
        GameRecord([_deal(), Header("Late", "x"), end]),
        GameRecord([Comment("two\nlines"), end]),
        GameRecord([_deal()]),
        GameRecord([end, _deal()]),
        GameRecord([Deal(shuffled_deck(1)[:51]), end]),
        GameRecord([Play(0, Move.stock()), end]),
        GameRecord([Totals(((1, 2), (3,))), end]),
        GameRecord([End(GameEnd.TARGET, 0, ((1, 2, 3, 4),))]),
    ]
    for record in bad:
        with pytest.raises(RecordWriteError):
            write_game(record)


def test_write_errors_are_record_errors() -> None:
    assert issubclass(RecordWriteError, RecordError)
    assert issubclass(RecordError, ValueError)
    assert issubclass(TruncatedRecordError, RecordSyntaxError)


# -- the lenient reader ---------------------------------------------------------------------


def errors_of(text: str) -> list[RecordError]:
    return [e for g in loads(text, "t.rec") for e in g.errors]


def test_an_empty_file_holds_no_games() -> None:
    assert loads("") == []
    assert loads("\n\n# only a comment\n") == []


def test_a_truncated_game_is_reported_at_its_last_line(games: list[GameRecord]) -> None:
    text = write_game(games[0]) + write_game(games[1])
    lines = text.split("\n")
    end_of_first = lines.index("") + 1  # the blank line after game 1's end line
    for keep in (40, 60, end_of_first - 2):
        cut = "\n".join(lines[:keep]) + "\n"
        [game] = loads(cut, "t.rec")
        assert isinstance(game.errors[-1], TruncatedRecordError)
        assert game.errors[-1].line == keep
        assert "truncated" in str(game.errors[-1])
        assert str(game.errors[-1]).startswith(f"t.rec:{keep}: ")


def test_a_torn_game_before_another_is_reported_and_the_next_read(
    games: list[GameRecord],
) -> None:
    first = write_game(games[0])
    torn = first[: len(first) // 2]
    text = torn + "\n" + write_game(games[1])
    got = loads(text, "t.rec")
    assert len(got) == 2
    assert any(isinstance(e, TruncatedRecordError) for e in got[0].errors)
    assert not got[1].errors
    assert not verify_game(got[1])


def test_a_last_line_cut_mid_way_is_reported(games: list[GameRecord]) -> None:
    text = write_game(games[0])
    lines = text.split("\n")
    cut = "\n".join(lines[:50]) + "\n" + lines[50][:5]
    errors = errors_of(cut)
    assert errors[0].line == 51
    assert "cut off" in errors[0].message
    assert any(isinstance(e, TruncatedRecordError) and "no end line" in e.message for e in errors)


def test_non_canonical_lines_are_errors_but_the_game_is_read(games: list[GameRecord]) -> None:
    text = write_game(games[0])
    lines = text.split("\n")
    index = next(i for i, line in enumerate(lines) if line.startswith("totals"))
    lines[index] = lines[index].replace(" ", "  ", 1)
    [game] = loads("\n".join(lines), "t.rec")
    assert [e.line for e in game.errors] == [index + 1]
    assert "canonical" in game.errors[0].message
    assert len(game.events) == len(games[0].events) - 1


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("hello world", "unknown line"),
        ("0 discard Zz", "not a card"),
        ("0 stock", "card drawn"),
        ("0 fly 7h", "unknown move"),
        ("3 discard 7h", "player number"),
        ("deal As 2s", "52 cards"),
        ("hand 0 dealer 0 limit 10", "at least 1"),
        ("hand 1 dealer 0 limit 10 box 0 captain 0 sitter 1", "roles"),
        ("knocker 0 melds As-2s-4s deadwood = 0", "not a meld"),
        ("knocker 0 melds deadwood 7h", "deadwood"),
        ("layoff 1 8s onto 5s-6s-7s", "'on'"),
        ("result knock winner 0", "'points'"),
        ("result win winner 0 points 3", "result"),
        ("result knock winner 0 points 3 x1", "multiplier"),
        ("totals 1 2 / 3", "2 or 3 players"),
        ("totals 1 2 / 3 4", "1 game, or of 3"),
        ('fault 0 tired "x"', "fault kind"),
        ('fault 0 crash "unterminated', "unterminated"),
        ('fault 0 crash "bad \\q escape"', "escape"),
        ("end target winner 0 scores 1 2 / 3 4 / 5 6 games 0", "one winner"),
        ("end over winner 0 scores 1 2", "end"),
        ("[Event unquoted]", "quoted"),
        ('[Event "x"] trailing', "']'"),
        ('[Event "\\x41"]', "canonical"),
        ("cut As", "three cards"),
    ],
)
def test_bad_lines_give_clear_errors(line: str, words: str, games: list[GameRecord]) -> None:
    lines = write_game(games[0]).split("\n")
    lines.insert(36, line)
    [game] = loads("\n".join(lines), "t.rec")
    assert [e.line for e in game.errors] == [37], game.errors
    assert words in game.errors[0].message
    assert str(game.errors[0]).startswith("t.rec:37: ")


def test_lines_outside_games_are_reported_once_per_stretch(games: list[GameRecord]) -> None:
    first, second = write_game(games[0]), write_game(games[1])
    text = "junk\nmore junk\n" + first + "stray\nstray again\n" + second
    got = loads(text, "t.rec")
    assert [e.line for e in got[0].errors] == [1, 2 + len(write_game(games[0]).split("\n"))]
    assert not got[1].errors
    assert verify_game(got[0]) == got[0].errors  # the replay itself finds nothing more


def test_binary_garbage_is_errors_not_exceptions(games: list[GameRecord]) -> None:
    data = bytes(range(256)) * 4 + b"\n\xff\xfe\n" + write_game(games[0]).encode()
    got = list(RecordReader(io.BytesIO(data), "bin"))
    assert got[0].errors and got[0].errors[0].line == 1
    assert len(got) == 1
    only = list(RecordReader(io.BytesIO(os.urandom(5000)), "bin"))
    assert len(only) == 1 and only[0].errors and not only[0].items


def test_an_unknown_format_version_is_reported(games: list[GameRecord]) -> None:
    text = write_game(games[0]).replace(FORMAT_LINE, "%ginrec 2", 1) + write_game(games[1])
    got = loads(text, "t.rec")
    assert "version '2'" in got[0].errors[0].message
    assert not got[1].errors


def test_a_very_long_line_is_one_error() -> None:
    data = FORMAT_LINE.encode() + b"\n" + b"x" * (3 << 20) + b"\nend target winner 0 scores 1 0\n"
    [game] = list(RecordReader(io.BytesIO(data), "long"))
    assert game.errors[0].line == 2
    assert "bytes" in game.errors[0].message


def test_read_games_streams_from_a_file(tmp_path: Path, text: str) -> None:
    path = tmp_path / "games.rec"
    path.write_text(text)
    reader = read_games(path)
    first = next(reader)
    assert first.path == str(path) and first.line == 1
    assert 1 + sum(1 for _ in reader) == len(loads(text))
    with pytest.raises(RecordError, match="cannot read"):
        next(read_games(tmp_path / "missing.rec"))
    with pytest.raises(RecordError, match="cannot read"):
        next(read_games(tmp_path))


# -- atomic append --------------------------------------------------------------------------


def test_append_builds_a_file_game_by_game(tmp_path: Path, games: list[GameRecord]) -> None:
    path = tmp_path / "run.rec"
    for game in games[:4]:
        append_game(path, game)
    assert path.read_text() == dumps(games[:4])


def test_a_failed_write_leaves_the_file_as_it_was(
    tmp_path: Path, games: list[GameRecord], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "run.rec"
    append_game(path, games[0])
    before = path.read_bytes()
    real_write = os.write

    calls = 0

    def disk_fills(fd: int, data: bytes) -> int:
        """A third of the game fits; then the disk is full, as a real one reports it."""
        nonlocal calls
        calls += 1
        if calls > 1:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data[: len(data) // 3])

    monkeypatch.setattr(os, "write", disk_fills)
    with pytest.raises(OSError, match="No space left on device"):
        append_game(path, games[1])
    monkeypatch.setattr(os, "write", real_write)
    assert path.read_bytes() == before
    assert calls == 2  # the rest was written after the short write, and failed
    append_game(path, games[1])
    assert path.read_text() == dumps(games[:2])


@pytest.mark.parametrize("cut", [1, 9, 10, 700, -30, -2])
def test_an_append_after_a_torn_game_cuts_it_off(
    tmp_path: Path, games: list[GameRecord], cut: int
) -> None:
    path = tmp_path / "run.rec"
    append_game(path, games[0])
    torn = write_game(games[1])[:cut]
    with open(path, "a") as handle:
        handle.write(torn)  # as a kill or a crash mid-write would leave it
    got = list(read_games(path))
    assert len(got) == 2 and not got[0].errors
    assert any(isinstance(e, TruncatedRecordError) for e in got[1].errors)
    append_game(path, games[2])
    assert path.read_text() == dumps([games[0], games[2]])


def test_an_append_keeps_a_whole_last_game_and_a_foreign_last_line(
    tmp_path: Path, games: list[GameRecord]
) -> None:
    path = tmp_path / "run.rec"
    whole = write_game(games[0]).rstrip("\n") + "\n"  # no blank line after its end line
    path.write_text(whole + "# a note without a line break")
    append_game(path, games[1])
    got = list(read_games(path))
    assert len(got) == 2 and not got[1].errors
    assert path.read_text().startswith(whole + "# a note without a line break\n")


def _append_many(args: tuple[str, str, int]) -> None:
    path, text, times = args
    for _ in range(times):
        append_game(path, text)


def test_concurrent_appends_never_interleave(tmp_path: Path, games: list[GameRecord]) -> None:
    path = str(tmp_path / "shared.rec")
    texts = [write_game(g) for g in games[:4]]
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(4) as pool:
        pool.map(_append_many, [(path, t, 15) for t in texts])
    got = list(read_games(path))
    assert len(got) == 60
    assert all(not g.errors for g in got)
    assert sorted(write_game(g) for g in got) == sorted(texts * 15)


# -- fuzzing the reader: 10 000 inputs, never an exception -----------------------------------

VALID = example_records()
VALID_LINES = VALID.split("\n")


def _read_all(data: bytes) -> list[GameRecord]:
    games = list(RecordReader(io.BytesIO(data), "fuzz"))
    lines = data.count(b"\n") + (not data.endswith(b"\n"))  # the last line may lack its LF
    for game in games:
        for error in game.errors:
            assert isinstance(error, RecordError)
            assert 1 <= error.line <= lines  # a line of the input, never 0 or past the end
            assert str(error).startswith(f"fuzz:{error.line}: ")
        write_game_if_clean(game)
    return games


def write_game_if_clean(game: GameRecord) -> None:
    if game.errors:
        return
    text = write_game(game)
    [again] = loads(text)
    assert write_game(again) == text


def fuzz(examples: int) -> settings:
    """The four fuzz tests below try 10 000 inputs in all (2 000 in a quick run)."""
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
        database=None,
    )


@fuzz(thorough(3000, 600))
@given(st.binary(max_size=400))
def test_fuzz_bytes(data: bytes) -> None:
    _read_all(data)
    _read_all(FORMAT_LINE.encode() + b"\n" + data)


@fuzz(thorough(2000, 400))
@given(st.lists(st.text(max_size=60), max_size=12))
def test_fuzz_lines(lines: list[str]) -> None:
    _read_all(("\n".join([FORMAT_LINE, *lines])).encode("utf-8", "surrogateescape"))


_TOKENS = [
    "\n", "hand", "deal", "cut", "0", "1", "2", "3", "take", "pass", "stock", "pile", "discard",
    "knock", "biggin", "advise", "knocker", "defender", "melds", "deadwood", "=", "layoff", "on",
    "result", "knock", "gin", "undercut", "draw", "cap", "winner", "points", "x2", "games",
    "totals", "/", "fault", "crash", '"x"', "end", "target", "handcap", "forfeit", "none",
    "scores", "As", "7h", "Td", "Kc", "5s-6s-7s", "9c-9d-9h", "As-2s", "[Event", '"v"]', "%ginrec",
    "#", "dealer", "limit", "box", "captain", "sitter", "10", "-1", "", "\n", "\n", "\n",
]


@fuzz(thorough(2500, 500))
@given(st.lists(st.integers(0, len(_TOKENS) - 1), max_size=100))
def test_fuzz_token_soup(picks: list[int]) -> None:
    text = " ".join(_TOKENS[i] for i in picks).replace(" \n ", "\n")
    _read_all(f"{FORMAT_LINE}\n{text}\n".encode())


GAMES_TEXT = [write_game(g) for g in loads(VALID)]


@pytest.mark.slow
@fuzz(thorough(2500, 500))
@given(st.integers(0, 1), st.lists(st.integers(0, 1 << 20), min_size=1, max_size=8))
def test_fuzz_mutated_records(which: int, edits: list[int]) -> None:
    """A real record, a few lines dropped, repeated, cut, swapped or with a byte inserted."""
    lines = GAMES_TEXT[which].split("\n")
    for n in edits:
        if not lines:
            break
        index = (n >> 3) % len(lines)
        line = lines[index]
        how = n & 7
        if how == 0:
            del lines[index]
        elif how == 1:
            lines.insert(index, line)
        elif how in (2, 3):
            lines[index] = line[: (n >> 9) % (len(line) + 1)]
        elif how == 4:
            other = (n >> 9) % len(lines)
            lines[index], lines[other] = lines[other], line
        else:
            pos = (n >> 9) % (len(line) + 1)
            lines[index] = line[:pos] + chr((n >> 5) % 0x250) + line[pos:]
    data = "\n".join(lines).encode("utf-8", "surrogateescape")
    for game in _read_all(data):
        for error in verify_game(game):
            assert isinstance(error, RecordError)
            assert str(error).startswith("fuzz:")


def test_result_lines_parse_back() -> None:
    for result in (
        Result(Outcome.DRAW),
        Result(Outcome.DRAW, capped=True),
        Result(Outcome.GIN, 1, 50, 2, games=(1, 2, 3)),
        Result(Outcome.UNDERCUT, 0, 12),
    ):
        assert parse_line(result.text()) == result


def test_cards_in_records_use_one_spelling() -> None:
    line = "0 discard 10h"
    with pytest.raises(RecordSyntaxError, match="canonical"):
        parse_line(line)
    assert parse_line("0 discard Th") == Play(0, Move.discard(Card.from_str("10h")))


@pytest.mark.parametrize("chunk", [5, 64, 1 << 16])
def test_torn_tail_finds_where_a_cut_game_starts(
    tmp_path: Path, games: list[GameRecord], chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ginproto.record.writer as writer

    monkeypatch.setattr(writer, "_CHUNK", chunk)
    first, second = write_game(games[0]).encode(), write_game(games[3]).encode()
    path = tmp_path / "run.rec"
    for cut in [*range(0, 40), *range(len(second) - 40, len(second) + 1), len(second) // 2]:
        path.write_bytes(first + second[:cut])
        with open(path, "rb") as f:
            end = writer.torn_tail(f.fileno(), len(first) + cut)
        whole = cut >= len(second) - 1  # only the blank line after the end line is missing
        assert end == len(first) + (cut if whole else 0), cut


# -- bounds on what the reader takes in, and headers that contradict each other ------------


def test_a_stream_without_line_feeds_ends_with_an_error() -> None:
    """/dev/zero (no line feed, ever) stops at a bound instead of being read for ever."""
    from ginproto.record import MAX_SKIP

    with open("/dev/zero", "rb") as zero:
        [game] = list(RecordReader(zero, "/dev/zero"))
    assert not game.items
    [error] = game.errors
    assert error.line == 1 and error.path == "/dev/zero"
    assert f"longer than {MAX_SKIP} bytes" in error.message
    assert "reading stopped" in error.message


def test_an_endless_stretch_of_lines_outside_games_ends_with_an_error() -> None:
    from ginproto.record import MAX_IDLE

    class Endless(io.RawIOBase):
        """Yields 'y\\n' for ever, like ``yes``."""

        def readable(self) -> bool:
            return True

        def readinto(self, buffer: bytearray) -> int:  # type: ignore[override]
            n = len(buffer) - len(buffer) % 2
            buffer[:n] = b"y\n" * (n // 2)
            return n

    games = list(RecordReader(io.BufferedReader(Endless()), "<stdin>"))
    assert len(games) == 1
    last = games[0].errors[-1]
    assert last.line == MAX_IDLE + 1
    assert "belong to no game" in last.message and "reading stopped" in last.message


def test_blank_lines_between_games_do_not_stop_the_reader(games: list[GameRecord]) -> None:
    text = write_game(games[0]) + "\n" * 1000 + write_game(games[1])
    got = loads(text)
    assert len(got) == 2 and not got[0].errors and not got[1].errors


def test_a_header_repeated_with_another_value_is_an_error_at_its_line(
    games: list[GameRecord],
) -> None:
    lines = write_game(games[0]).splitlines()
    seed = next(i for i, line in enumerate(lines) if line.startswith("[Seed "))
    lines.insert(seed + 1, '[Seed "999"]')
    [game] = loads("\n".join(lines) + "\n", "dup.rec")
    [error] = game.errors
    assert error.line == seed + 2  # 1-based: the repeated header's own line
    assert "[Seed]" in error.message and "999" in error.message
    assert f"line {seed + 1}" in error.message
    assert verify_game(game)[0].line == seed + 2
    with pytest.raises(RecordWriteError, match=r"\[Seed\]"):
        write_game(game)


def test_a_header_repeated_with_the_same_value_and_repeated_options_are_accepted(
    games: list[GameRecord],
) -> None:
    lines = write_game(games[0]).splitlines()
    seed = next(i for i, line in enumerate(lines) if line.startswith("[Seed "))
    lines[seed + 1 : seed + 1] = [lines[seed], '[Player0.Option "a=1"]', '[Player0.Option "a=2"]']
    [game] = loads("\n".join(lines) + "\n")
    assert not game.errors and not verify_game(game)
    assert game.players[0].options[:2] == (("a", "1"), ("a", "2"))


@pytest.mark.parametrize("at", [2, 5, 30])
def test_a_bad_line_is_reported_at_its_exact_line(games: list[GameRecord], at: int) -> None:
    lines = write_game(games[0]).splitlines()
    lines.insert(at - 1, "1  pass")  # two spaces: not the canonical form
    [game] = loads("\n".join(lines) + "\n", "exact.rec")
    [error] = game.errors
    assert error.line == at
    assert str(error).startswith(f"exact.rec:{at}: ")


def test_three_player_show_and_layoff_lines_name_players_not_hand_seats() -> None:
    """In the three-player game the hand's seat 0 is the box and seat 1 the captain, whoever
    they are; the show and layoff lines must name the players."""
    from ginproto.moves import MoveKind
    from ginproto.record import HandStart, LayOff, Show

    rules = Rules(variant=Variant.THREEHANDED, target=60)
    told_apart = layoffs = 0
    for key in range(12):
        players = [GreedyPlayer(), RandomPlayer(f"3p/{key}", knocks=True), GreedyPlayer()]
        _, record = play_one(rules, players, "seats", key, **FIXED)
        roles = None
        knocker = None
        for item in record.events:
            if isinstance(item, HandStart):
                roles, knocker = item.roles, None
            elif isinstance(item, Play) and item.move.kind in (MoveKind.KNOCK, MoveKind.BIG_GIN):
                knocker = item.player
            elif isinstance(item, Show):
                assert roles is not None and knocker is not None
                playing = {roles.box, roles.captain}
                defender = (playing - {knocker}).pop()
                assert item.player == (knocker if item.role == "knocker" else defender)
                told_apart += (roles.box, roles.captain) != (0, 1)
            elif isinstance(item, LayOff):
                assert roles is not None and knocker is not None
                assert item.player == ({roles.box, roles.captain} - {knocker}).pop()
                layoffs += 1
    assert told_apart > 10 and layoffs > 0  # the check was not vacuous
