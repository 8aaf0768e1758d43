"""Replay verification and ``ginref replay``: clean records verify in every variant, and every
kind of corruption is caught at the right line with a clear message, never a traceback."""

from __future__ import annotations

import dataclasses
import json
import os
import random
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pexpect
import pytest
from click.testing import CliRunner
from helpers import thorough

from ginproto.cards import DECK, Card
from ginproto.game import Entry, Game, GameView
from ginproto.moves import Move, MoveKind
from ginproto.record import (
    Deal,
    EngineInfo,
    GameRecord,
    Item,
    Play,
    RecordError,
    dumps,
    loads,
    read_games,
    record_from_log,
    write_game,
)
from ginproto.replay import ReplayError, replay_game, verify_file, verify_game
from ginproto.rules import Rules, Variant
from ginproto.simulate import GreedyPlayer, RandomPlayer, example_records, play_one, run_games
from ginproto.table import Decision, Fault, FaultKind, Player, PlayerFault, play_game
from referee.cli import cli

ROOT = Path(__file__).resolve().parents[2]
FIXED = {"event": "test", "site": "here", "date": "2025.01.01"}


class Faulty:
    """Plays like ``GreedyPlayer`` until its ``after``-th decision, then faults: an illegal
    move (or illegal advice), or a timeout."""

    name = "faulty"

    def __init__(self, after: int, how: str = "illegal") -> None:
        self.after = after
        self.how = how
        self.count = 0
        self.inner = GreedyPlayer()

    def decide(self, view: GameView, decision: Decision) -> Move:
        self.count += 1
        if self.count != self.after:
            return self.inner.decide(view, decision)
        if self.how == "timeout":
            raise PlayerFault(FaultKind.TIMEOUT, "no answer within 1.0 s")
        missing = next(c for c in DECK if c not in view.hand.cards)
        return Move.discard(missing)

    def hand_over(self, player: int, entry: Entry) -> None:
        pass

    def game_over(self, player: int, game: Game, fault: Fault | None) -> None:
        pass


CONFIGS = [
    Rules(),
    Rules(variant=Variant.OKLAHOMA),
    Rules(variant=Variant.OKLAHOMA, oklahoma_ace_limit=0, spade_double=True),
    Rules(variant=Variant.HOLLYWOOD),
    Rules(variant=Variant.HOLLYWOOD, target=60, gin_bonus=20),
    Rules(variant=Variant.THREEHANDED),
    Rules(variant=Variant.THREEHANDED, target=40, undercut_bonus=14),
    Rules(big_gin=True, discard_taken=True, game_bonus=100, box_bonus=20, shutout_double=True),
    Rules(target=15, turn_cap=16),
    Rules(variant=Variant.HOLLYWOOD, target=20, hand_cap=4),
]


def players_for(rules: Rules, key: int) -> list[Player]:
    """A mix of players for game ``key``: greedy, knock-happy random, plain random (on short
    games only), and now and then one that faults."""
    out: list[Player] = []
    for p in range(rules.players):
        kind = (key + 2 * p) % 5
        if kind in (0, 3):
            out.append(GreedyPlayer())
        elif kind == 4 and rules.target <= 20:
            out.append(RandomPlayer(f"{key}/{p}"))
        else:
            out.append(RandomPlayer(f"{key}/{p}", knocks=True))
    if key % 23 == 7:
        out[key % rules.players] = Faulty(3 + key % 40, "illegal" if key % 2 else "timeout")
    return out


def play_corpus(
    path: Path, games: int, seed: str, target: int = 100, only: int | None = None
) -> None:
    """``games`` games spread over ``CONFIGS``, with targets cut to ``target`` (for speed);
    with ``only``, just the share of ``CONFIGS[only]``, the same games as in the whole."""
    per = -(-games // len(CONFIGS))
    for i, full in enumerate(CONFIGS):
        if only is not None and i != only:
            continue
        rules = dataclasses.replace(full, target=min(full.target, target))
        run_games(
            rules,
            lambda key, rules=rules: players_for(rules, key),  # type: ignore[misc]
            per,
            f"{seed}/{i}",
            record=path,
            first_key=i * 1000,
            event="corpus",
            site="here",
            date="2025.01.01",
        )


def check_corpus(path: Path, games: int, variants: set[Variant] | None = None) -> None:
    """The corpus verifies clean, reads back to the same bytes, holds games of ``variants``
    (by default every variant) and faults."""
    report = verify_file(str(path))
    assert not report.errors, report.errors[:5]
    assert report.games >= games
    text = path.read_text()
    assert dumps(read_games(path)) == text  # read -> write gives the same bytes
    played = {g.header("Variant") for g in read_games(path)}
    assert played == {str(v) for v in (Variant if variants is None else variants)}
    assert "\nfault " in text  # faults were recorded and verified too


@pytest.mark.slow
def test_records_verify_clean_in_every_variant(tmp_path: Path) -> None:
    path = tmp_path / "corpus.rec"
    games = thorough(200, 80)
    play_corpus(path, games, "clean", target=50)
    check_corpus(path, games)


@pytest.mark.slow
@pytest.mark.parametrize("part", range(len(CONFIGS)))
def test_a_thousand_records_verify_clean(tmp_path: Path, part: int) -> None:
    """A thousand games, in one part per rule set so that the parts run side by side."""
    path = tmp_path / "corpus.rec"
    play_corpus(path, 1000, "soak", only=part)
    check_corpus(path, 1000 // len(CONFIGS), {CONFIGS[part].variant})


def test_the_example_verifies_and_replays() -> None:
    games = loads(example_records(), "ex.rec")
    seen: list[Item] = []
    final = replay_game(games[1], lambda item, game: seen.append(item))
    assert final.is_over and final.roles is not None
    assert len(seen) == len(games[1].items)
    assert all(not verify_game(g) for g in games)


# -- corruptions ----------------------------------------------------------------------------


def corpus_games() -> list[str]:
    """Short games with every kind of line: layoffs, undercuts, Hollywood, three players,
    advice, faults."""
    out = []
    specs: list[tuple[Rules, int, bool]] = [
        (Rules(target=60), 0, False),
        (Rules(variant=Variant.HOLLYWOOD, target=30), 1, False),
        (Rules(variant=Variant.THREEHANDED, target=40), 2, False),
        (Rules(variant=Variant.OKLAHOMA, target=50), 3, False),
        (Rules(target=60), 5, True),
        (Rules(variant=Variant.HOLLYWOOD, target=60), 0, True),
        (Rules(variant=Variant.THREEHANDED, target=40), 0, True),
    ]
    for rules, key, greedy in specs:
        players = (
            [GreedyPlayer() for _ in range(rules.players)] if greedy else players_for(rules, key)
        )
        out.append(write_game(play_one(rules, players, "corrupt", key, **FIXED)[1]))
    faulty = Rules(variant=Variant.THREEHANDED, target=40)
    players = [GreedyPlayer(), GreedyPlayer(), GreedyPlayer()]
    players[1] = Faulty(12, "illegal")
    out.append(write_game(play_one(faulty, players, "corrupt", 9, **FIXED)[1]))
    return out


@pytest.fixture(scope="module")
def corpus() -> list[str]:
    games = corpus_games()
    text = "".join(games)
    assert "\nlayoff " in text and "\nresult undercut" in text and "\nfault " in text
    assert "advise" in text and "games 1 2" in text
    return games


@dataclass
class Corruption:
    text: str
    line: int | None  # the line the error must name; None: at or after ``lines[0]``
    words: str  # a regular expression the message must match
    within: tuple[int, int] | None = None


def first_error(text: str) -> RecordError | None:
    errors = [e for g in loads(text, "bad.rec") for e in verify_game(g)]
    return min(errors, key=lambda e: e.line) if errors else None


def numbered(text: str) -> list[str]:
    return text.split("\n")


def join(lines: list[str]) -> str:
    return "\n".join(lines)


def pick(lines: list[str], pattern: str, rng: random.Random) -> int:
    """The index of a random line matching ``pattern``."""
    found = [i for i, line in enumerate(lines) if re.match(pattern, line)]
    if not found:
        raise LookupError(pattern)
    return rng.choice(found)


def other_card(card: str, rng: random.Random, avoid: set[str] = frozenset()) -> str:  # type: ignore[assignment]
    return rng.choice([str(c) for c in DECK if str(c) != card and str(c) not in avoid])


def swap_move_card(text: str, rng: random.Random) -> Corruption:
    """A discarded card replaced by one the player does not hold."""
    [record] = loads(text)
    held: dict[int, set[str]] = {}

    def on_event(item: Item, game: Game | None) -> None:
        if not isinstance(item, Play) or item.move.kind is not MoveKind.DISCARD:
            return
        if game is not None and game.hand is not None and item.move.card is not None:
            seat = game.seat_of(item.player)
            assert seat is not None
            held[item.line] = {str(c) for c in game.hand.cards(seat)} | {str(item.move.card)}

    replay_game(record, on_event)
    lines = numbered(text)
    line = rng.choice(sorted(held))
    player, word, card = lines[line - 1].split()
    lines[line - 1] = f"{player} {word} {other_card(card, rng, held[line])}"
    return Corruption(join(lines), line, r"illegal move discard .*: .* is not in the player's hand")


def change_drawn_card(text: str, rng: random.Random) -> Corruption:
    lines = numbered(text)
    i = pick(lines, r"\d (stock|pile|take) ", rng)
    player, word, card = lines[i].split()
    lines[i] = f"{player} {word} {other_card(card, rng)}"
    return Corruption(join(lines), i + 1, r"(stock's top|pile's top|upcard) is \w\w, not \w\w")


def remove_move(text: str, rng: random.Random) -> Corruption:
    lines = numbered(text)
    i = pick(lines, r"\d (?!advise)", rng)
    del lines[i]
    reason = r"out of turn|not allowed now|unexpected|advice|illegal|stops before|not over"
    return Corruption(join(lines), i + 1, reason)


def remove_advice(text: str, rng: random.Random) -> Corruption:
    lines = numbered(text)
    i = pick(lines, r"\d advise ", rng)
    del lines[i]
    return Corruption(join(lines), i + 1, "without the advice|not over|stops before")


def alter_totals(text: str, rng: random.Random) -> Corruption:
    lines = numbered(text)
    i = pick(lines, "totals ", rng)
    words = lines[i].split()
    which = rng.choice([j for j, w in enumerate(words) if w.isdigit()])
    words[which] = str(int(words[which]) + 5)
    lines[i] = " ".join(words)
    return Corruption(join(lines), i + 1, "wrong totals line: the record says .* the rules give")


def alter_points(text: str, rng: random.Random) -> Corruption:
    lines = numbered(text)
    i = pick(lines, r"result (knock|gin|undercut)", rng)
    lines[i] = re.sub(r"points (\d+)", lambda m: f"points {int(m.group(1)) + 1}", lines[i])
    return Corruption(join(lines), i + 1, "wrong result line")


def alter_outcome(text: str, rng: random.Random) -> Corruption:
    lines = numbered(text)
    i = pick(lines, r"result (knock|undercut)", rng)
    lines[i] = lines[i].replace("knock", "X").replace("undercut", "knock").replace("X", "undercut")
    return Corruption(join(lines), i + 1, "wrong result line")


def alter_deadwood(text: str, rng: random.Random) -> Corruption:
    lines = numbered(text)
    i = pick(lines, "(knocker|defender) .* = ", rng)
    lines[i] = re.sub(r"= (\d+)$", lambda m: f"= {int(m.group(1)) + 2}", lines[i])
    return Corruption(join(lines), i + 1, "wrong showdown line")


def remove_layoff(text: str, rng: random.Random) -> Corruption:
    lines = numbered(text)
    i = pick(lines, "layoff ", rng)
    del lines[i]
    return Corruption(join(lines), i + 1, "(expected the|wrong) layoff line")


def alter_end(text: str, rng: random.Random) -> Corruption:
    lines = numbered(text)
    i = pick(lines, "end ", rng)
    lines[i] = re.sub(r"scores (\d+)", lambda m: f"scores {int(m.group(1)) + 1}", lines[i])
    return Corruption(join(lines), i + 1, "wrong end line")


def alter_winner_header(text: str, rng: random.Random) -> Corruption:
    lines = numbered(text)
    i = pick(lines, r"\[Winner ", rng)
    lines[i] = '[Winner "2"]' if lines[i] != '[Winner "2"]' else '[Winner "0"]'
    return Corruption(join(lines), i + 1, r"header \[Winner\] says")


def alter_roles(text: str, rng: random.Random) -> Corruption:
    lines = numbered(text)
    i = pick(lines, "hand .* box ", rng)
    m = re.search(r"captain (\d) sitter (\d)", lines[i])
    assert m
    lines[i] = lines[i][: m.start()] + f"captain {m.group(2)} sitter {m.group(1)}"
    return Corruption(join(lines), i + 1, "the roles are box")


def alter_dealer(text: str, rng: random.Random) -> Corruption:
    lines = numbered(text)
    i = pick(lines, r"hand (?!1 )\d+ dealer", rng)
    lines[i] = re.sub(r"dealer (\d)", lambda m: f"dealer {(int(m.group(1)) + 1) % 2}", lines[i])
    return Corruption(join(lines), i + 1, "deals this hand|the roles are")


def duplicate_deal_card(text: str, rng: random.Random) -> Corruption:
    lines = numbered(text)
    i = pick(lines, "deal ", rng)
    cards = lines[i].split()[1:]
    a, b = rng.sample(range(52), 2)
    cards[a] = cards[b]
    lines[i] = "deal " + " ".join(cards)
    return Corruption(join(lines), i + 1, "not a valid deck: .* repeated")


def swap_deal_cards(text: str, rng: random.Random) -> Corruption:
    """Two dealt cards of different players swapped: still a deck, but the moves or the
    showdown of that hand no longer follow (hands that end in a knock show every card)."""
    lines = numbered(text)
    hands = [
        i for i, line in enumerate(lines) if line.startswith("deal ")
        and any(x.startswith("knocker ") for x in lines[i:_next_hand(lines, i)])
    ]
    i = rng.choice(hands)
    cards = lines[i].split()[1:]
    a = 2 * rng.randrange(10)
    b = 2 * rng.randrange(10) + 1
    cards[a], cards[b] = cards[b], cards[a]
    lines[i] = "deal " + " ".join(cards)
    return Corruption(join(lines), None, ".", within=(i + 1, _next_hand(lines, i)))


def _next_hand(lines: list[str], i: int) -> int:
    return next(
        (j for j in range(i + 1, len(lines)) if lines[j].startswith(("hand ", "end "))), len(lines)
    ) + 1


def cut_line(text: str, rng: random.Random) -> Corruption:
    lines = numbered(text)
    i = pick(lines, r"[^%]", rng)
    lines[i] = lines[i][: rng.randrange(1, len(lines[i]))]
    return Corruption(join(lines), i + 1, ".")


def insert_garbage(text: str, rng: random.Random) -> Corruption:
    lines = numbered(text)
    i = rng.randrange(2, pick(lines, "end ", rng))
    junk = "".join(rng.choice("abcxyz0123 -=[]\"'\\/~é♠\x01") for _ in range(rng.randrange(1, 30)))
    junk = "Z" + junk
    lines.insert(i, junk)
    return Corruption(join(lines), i + 1, "unknown line|expected|unreadable")


def insert_copy(text: str, rng: random.Random) -> Corruption:
    """A valid line of the game repeated where it does not belong."""
    lines = numbered(text)
    i = pick(lines, r"\d (stock|pile|discard|take|pass)|totals|result", rng)
    lines.insert(i + 1, lines[i])
    return Corruption(join(lines), i + 2, ".")


def insert_binary(text: str, rng: random.Random) -> Corruption:
    lines = numbered(text)
    i = rng.randrange(2, pick(lines, "end ", rng))
    data = join(lines[:i]).encode() + b"\n\xff\xfe\x00garbage\xc3\n" + join(lines[i:]).encode()
    return Corruption(data.decode("utf-8", "surrogateescape"), i + 1, "not UTF-8 text")


def truncate_file(text: str, rng: random.Random) -> Corruption:
    end = text.index("\nend ")
    cut = rng.randrange(len(text.split("\n", 1)[0]) + 2, end)
    truncated = text[:cut]
    line = truncated.count("\n") + (0 if truncated.endswith("\n") else 1)
    return Corruption(truncated, line, "truncated|cut off")


CORRUPTIONS: list[Callable[[str, random.Random], Corruption]] = [
    swap_move_card,
    change_drawn_card,
    remove_move,
    remove_advice,
    alter_totals,
    alter_points,
    alter_outcome,
    alter_deadwood,
    remove_layoff,
    alter_end,
    alter_winner_header,
    alter_roles,
    alter_dealer,
    duplicate_deal_card,
    swap_deal_cards,
    cut_line,
    insert_garbage,
    insert_copy,
    insert_binary,
    truncate_file,
]


def corruptions(games: list[str], kind: Callable[[str, random.Random], Corruption]) -> Iterator[
    tuple[str, Corruption]
]:
    rng = random.Random(kind.__name__)
    made = 0
    for index, game in enumerate(games):
        for _ in range(4):
            try:
                yield f"game {index}", kind(game, rng)
                made += 1
            except LookupError:
                break
    assert made >= 4, f"{kind.__name__}: too few games to corrupt"


@pytest.mark.parametrize("kind", CORRUPTIONS, ids=lambda k: k.__name__)
def test_every_corruption_is_caught_at_its_line(
    kind: Callable[[str, random.Random], Corruption], corpus: list[str]
) -> None:
    for where, bad in corruptions(corpus, kind):
        error = first_error(bad.text)
        assert error is not None, f"{kind.__name__} on {where} went unnoticed"
        assert isinstance(error, RecordError)
        if bad.line is not None:
            assert error.line == bad.line, f"{kind.__name__} on {where}: {error}"
        if bad.within is not None:
            assert bad.within[0] <= error.line <= bad.within[1], f"{where}: {error}"
        assert re.search(bad.words, error.message), f"{kind.__name__} on {where}: {error}"
        assert str(error).startswith(f"bad.rec:{error.line}: ")
        assert "Traceback" not in str(error)


def test_the_cli_names_the_first_wrong_line(tmp_path: Path, corpus: list[str]) -> None:
    rng = random.Random(5)
    games = list(corpus)
    bad = alter_totals(games[2], rng)
    games[2] = bad.text
    path = tmp_path / "bad.rec"
    text = "".join(games[:2]) + bad.text + "".join(games[3:])
    path.write_text(text)
    offset = sum(g.count("\n") for g in games[:2])
    result = CliRunner().invoke(cli, ["replay", "--verify", str(path)])
    assert result.exit_code == 1
    first = f"{path}:{offset + bad.line}: wrong totals line"
    assert result.output.startswith(first)
    assert result.output.count(first) == 1  # each error is printed once
    assert result.output.rstrip().splitlines()[-1] == (
        f"Error: {path}: 1 of {len(games)} games does not verify"
    )
    assert "Traceback" not in result.output


def test_verify_of_a_file_without_games_counts_no_games(tmp_path: Path) -> None:
    path = tmp_path / "junk.rec"
    path.write_text("hello\nworld\n")
    code, out = invoke("--verify", str(path))
    assert code == 1
    assert out.count(f"{path}:1: unexpected line 'hello'") == 1
    assert "of 0 games" not in out
    assert out.rstrip().splitlines()[-1] == f"Error: {path}: no game can be read from this file"


def test_verify_of_endless_input_stops_with_a_clear_error() -> None:
    """``replay --verify /dev/zero`` used to read for ever."""
    code, out = invoke("--verify", "/dev/zero")
    assert code == 1
    assert "/dev/zero:1: a line longer than 67108864 bytes" in out
    assert "Traceback" not in out


def test_a_record_with_control_characters_and_a_lone_surrogate_is_shown_escaped(
    tmp_path: Path, corpus: list[str]
) -> None:
    """A spec-legal escape (``\\ud800``) and terminal controls in a header: ``--verify``
    accepts the record, and the display shows them escaped instead of crashing or sending them
    to the terminal."""
    text = corpus[0]
    name = re.search(r'\[Player0 "(.*)"\]', text)
    assert name is not None
    hostile = r"Ev\ud800il\x1b]0;pwned\x07\x1b[2J\x0dX"
    text = text.replace(name.group(0), f'[Player0 "{hostile}"]', 1)
    text = text.replace('[Event "', '[Event "\\x1b[31m', 1)
    path = tmp_path / "hostile.rec"
    path.write_text(text)
    code, out = invoke("--verify", str(path))
    assert code == 0, out
    code, out = invoke(str(path))
    assert code == 0, out
    assert "\x1b" not in out and "\x07" not in out and "\r" not in out
    assert r"Ev\ud800il\x1b]0;pwned\x07\x1b[2J\x0dX" in out
    code, out = invoke("--json", str(path))
    assert code == 0 and "\x1b" not in out


# -- the command line -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def record_file(tmp_path_factory: pytest.TempPathFactory, corpus: list[str]) -> Path:
    path = tmp_path_factory.mktemp("rec") / "games.rec"
    path.write_text("".join(corpus))
    return path


def invoke(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["replay", *args], env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exc_info
    return result.exit_code, result.output


def test_verify_says_all_verified(record_file: Path) -> None:
    code, out = invoke("--verify", str(record_file))
    assert code == 0
    assert re.search(r": 8 games, \d+ hands, \d+ moves: all verified", out)


@pytest.mark.parametrize(
    ("content", "code", "words"),
    [
        (None, 2, "does not exist"),
        ("DIR", 2, "is a directory"),
        (b"", 1, "no games"),
        (b"\x00\xff\xfe binary \x89PNG\r\n\x1a\n" * 50, 1, "line 1|:1:"),
        (b"%ginrec 1\n[Event \"x\"]\n", 1, "truncated"),
        (b"hello\n", 1, ":1: unexpected line 'hello'"),
    ],
)
def test_bad_files_give_messages_not_tracebacks(
    tmp_path: Path, content: bytes | str | None, code: int, words: str
) -> None:
    path = tmp_path / "x.rec"
    if content == "DIR":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    for mode in (["--verify"], ["--json"], []):
        got, out = invoke(*mode, str(path))
        assert got == code, out
        assert re.search(words, out, re.IGNORECASE), out
        assert "Traceback" not in out


def test_json_lines_one_object_per_hand(record_file: Path) -> None:
    code, out = invoke("--json", str(record_file))
    assert code == 0
    objects = [json.loads(line) for line in out.splitlines()]
    hands = sum(1 for line in record_file.read_text().splitlines() if line.startswith("hand "))
    assert len(objects) == hands
    first = objects[0]
    assert first["game"] == 1 and first["hand"] == 1 and len(first["deck"]) == 52
    assert sorted(len(v) for v in first["dealt"].values()) == [10, 10]
    assert {"moves", "result", "totals", "dealer", "limit", "players"} <= set(first)
    assert all("end" in o for o in objects if o is objects[-1])
    three = [o for o in objects if o["variant"] == "threehanded"]
    assert three and three[0]["roles"] is not None
    assert any("advice" in m for o in three for m in o["moves"])
    code, out = invoke("--json", "--game", "2", "--hand", "1", str(record_file))
    assert code == 0 and len(out.splitlines()) == 1
    assert json.loads(out)["game"] == 2


def test_show_is_plain_when_piped_and_coloured_on_request(record_file: Path) -> None:
    code, out = invoke("--game", "1", str(record_file))
    assert code == 0
    assert "\x1b[" not in out
    assert "Hand 1" in out and "knock limit" in out and "totals:" in out
    assert re.search(r"draws from the stock: [2-9TJQKA][cdhs]", out)
    assert "Game over" in out
    code, coloured = invoke("--game", "1", "--color", str(record_file))
    assert "\x1b[" in coloured and ("♠" in coloured or "♣" in coloured)
    code, plain = invoke("--game", "1", str(record_file), env={"NO_COLOR": "1"})
    assert "\x1b[" not in plain


def test_show_one_hand(record_file: Path) -> None:
    code, out = invoke("--game", "5", "--hand", "2", str(record_file))
    assert code == 0
    assert "Hand 2" in out and "Hand 1 " not in out and "Hand 3" not in out
    assert "knocker" in out or "drawn hand" in out


def test_usage_errors_exit_2(record_file: Path) -> None:
    assert invoke("--verify", "--json", str(record_file))[0] == 2
    assert invoke("--game", "0", str(record_file))[0] == 2
    code, out = invoke("--game", "99", str(record_file))
    assert code == 2 and "there is no game 99" in out
    code, out = invoke("--game", "1", "--hand", "50", str(record_file))
    assert code == 2 and "there is no hand 50 in game 1" in out


def test_a_corrupt_record_is_shown_up_to_the_wrong_line(tmp_path: Path, corpus: list[str]) -> None:
    bad = alter_points(corpus[0], random.Random(1))
    path = tmp_path / "bad.rec"
    path.write_text(bad.text)
    code, out = invoke(str(path))
    assert code == 1
    assert f"{path}:{bad.line}: wrong result line" in out
    assert "Hand 1" in out


def test_step_walks_a_hand_at_the_keyboard(record_file: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1", COLUMNS="120")
    child = pexpect.spawn(
        sys.executable,
        ["-c", "from referee.cli import main; main()", "replay", "--step", "--game", "1",
         "--hand", "1", str(record_file)],
        cwd=str(ROOT), env=env, encoding="utf-8", timeout=20,
    )
    try:
        child.expect("Hand 1")
        child.expect("upcard")
        child.expect("Enter: next move, q: quit")
        child.sendline("")
        child.expect(r"1\. player \d")
        child.expect("pile top")
        child.expect("Enter: next move")
        child.sendline("")
        child.expect(r"2\. player \d")
        child.expect("Enter: next move")
        child.sendline("q")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
    assert "3. player" not in (child.before or "")


def test_step_to_the_end_of_a_hand(record_file: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1")
    child = pexpect.spawn(
        sys.executable,
        ["-c", "from referee.cli import main; main()", "replay", "--step", "--game", "1",
         "--hand", "1", str(record_file)],
        cwd=str(ROOT), env=env, encoding="utf-8", timeout=20,
    )
    try:
        while True:
            index = child.expect(["Enter: next move", "Game over", pexpect.EOF])
            if index:
                break
            child.sendline("")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0


def test_replay_errors_are_record_errors() -> None:
    assert issubclass(ReplayError, RecordError)
    games = loads(example_records())
    record = games[0]
    items = [i for i in record.items if not isinstance(i, Deal)]
    error = verify_game(GameRecord(items, path="x.rec"))[0]
    assert isinstance(error, ReplayError)
    assert "deal" in error.message


def test_card_type_is_shared() -> None:
    assert Card.from_str("Th") in DECK


class _FaultsAsCaptain:
    """Plays legal moves, advises legally, and breaks the rules at its first captain move."""

    def __init__(self, melds_in_advice: bool = False) -> None:
        self.melds_in_advice = melds_in_advice

    def decide(self, view: GameView, decision: Decision) -> Move:
        legal = view.hand.legal_moves()
        if decision is Decision.ADVICE:
            return legal[0]
        if view.roles is not None and view.player == view.roles.captain:
            return Move.discard(next(c for c in DECK if c not in view.hand.cards))
        return legal[0]

    def hand_over(self, player: int, entry: Entry) -> None:
        pass

    def game_over(self, player: int, game: Game, fault: Fault | None) -> None:
        pass


def test_advice_before_a_captains_fault_is_recorded_and_verifies() -> None:
    rules = Rules(variant=Variant.THREEHANDED)
    log = play_game(rules, [_FaultsAsCaptain() for _ in range(3)], seed=3, key=0)
    assert log.fault is not None and log.fault.kind is FaultKind.ILLEGAL
    text = write_game(record_from_log(log, [EngineInfo(f"p{i}") for i in range(3)]))
    lines = text.splitlines()
    fault_at = next(i for i, line in enumerate(lines) if line.startswith("fault "))
    assert " advise " in lines[fault_at - 1], lines[fault_at - 3 : fault_at + 1]
    assert verify_game(loads(text)[0]) == []
