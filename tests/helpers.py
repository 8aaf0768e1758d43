"""Builders shared by the tests: decks arranged to order, and simple players."""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from ginproto.cards import DECK, Card, parse_cards
from ginproto.game import Entry, Game, GameView
from ginproto.moves import Move
from ginproto.rules import Rules, Variant
from ginproto.table import Decision, Fault, play_game


def make_deck(
    non_dealer: str, dealer: str, upcard: str, stock: str = "", rest: Sequence[Card] | None = None
) -> tuple[Card, ...]:
    """A deck that deals ``non_dealer`` and ``dealer`` their 10 cards, turns ``upcard``, and
    puts ``stock`` on top of the stock (first card drawn first); the remaining cards follow
    in ``rest`` order (default: index order)."""
    nd, de = parse_cards(non_dealer), parse_cards(dealer)
    assert len(nd) == 10 and len(de) == 10, (len(nd), len(de))
    head: list[Card] = []
    for a, b in zip(nd, de, strict=True):
        head += [a, b]
    head.append(Card.from_str(upcard))
    head += parse_cards(stock)
    used = set(head)
    assert len(used) == len(head), "a card is named twice"
    tail = [c for c in (rest if rest is not None else DECK) if c not in used]
    deck = tuple(head + tail)
    assert len(deck) == 52
    return deck


def moves(text: str) -> list[Move]:
    """Moves separated by commas: ``moves("pass, pass, stock, discard 7h")``."""
    return [Move.from_str(part) for part in text.split(",") if part.strip()]


class RandomPlayer:
    """Uniform over the legal moves, from its own seeded generator."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def decide(self, view: GameView, decision: Decision) -> Move:
        return self.rng.choice(view.hand.legal_moves())

    def hand_over(self, player: int, entry: Entry) -> None:
        pass

    def game_over(self, player: int, game: Game, fault: Fault | None) -> None:
        pass


class KnockerPlayer(RandomPlayer):
    """Random, but always knocks when it can and never takes the pile without a reason."""

    def decide(self, view: GameView, decision: Decision) -> Move:
        legal = view.hand.legal_moves()
        knocks = [m for m in legal if m.kind.value in ("knock", "biggin")]
        if knocks:
            return self.rng.choice(knocks)
        if decision is Decision.DRAW and self.rng.random() < 0.8:
            return Move.stock()
        return self.rng.choice(legal)


def first_view(rules: Rules | None = None, seed: int = 1) -> GameView:
    """The first view the table shows (the upcard offer), from the one game loop."""
    rules = rules or Rules()
    views: list[GameView] = []

    class Stop(Exception):
        pass

    class Grab:
        def decide(self, view: GameView, decision: Decision) -> Move:
            views.append(view)
            raise Stop

        def hand_over(self, player: int, entry: Entry) -> None: ...

        def game_over(self, player: int, game: Game, fault: Fault | None) -> None: ...

    try:
        play_game(rules, [Grab() for _ in range(rules.players)], seed=seed)
    except Stop:
        return views[0]
    raise AssertionError("the game asked for no decision")


def sql(folder: Path, statement: str, *args: object) -> list[tuple[Any, ...]]:
    """Run one SQL statement on the tournament store in ``folder`` (to read it, or to tamper
    with it as an adversary would) and commit."""
    from referee.defaults import STORE_NAME

    db = sqlite3.connect(folder / STORE_NAME)
    try:
        rows = db.execute(statement, args).fetchall()
        db.commit()
    finally:
        db.close()
    return rows


def killed_by_a_limit(script: str, policy: Any) -> str:
    """Run the Python ``script`` in the sandbox under ``policy``: it prints ``ready``, and is
    sent ``go``, after which it must die; the reason ``EngineExited`` gives (``"disk limit 1
    MiB: ..."``). AssertionError if it lives on."""
    import sys

    from referee.seat.process import EngineExited, EngineProcess

    process = EngineProcess.start([sys.executable, "-c", script], sandbox=policy)
    try:
        assert process.read_line(30) == "ready"
        process.send("go")
        try:
            line = process.read_line(30)
        except EngineExited as exc:
            return str(exc)
        raise AssertionError(f"the engine went on after go: {line!r}")
    finally:
        process.close()


def chromium_path() -> str | None:
    """The Chromium the browser tests drive: ``GINPROTO_CHROMIUM``, else the first of
    ``chromium`` and ``chromium-browser`` on the PATH."""
    named = os.environ.get("GINPROTO_CHROMIUM")
    if named:
        return named
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium launched through Playwright, closed at the end. Without Playwright
    or Chromium the test is skipped, saying why, or fails under ``CI=true``."""
    ci = os.environ.get("CI", "").lower() in ("1", "true", "yes")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if ci:
            pytest.fail("playwright is not installed (pip install -e '.[test]')")
        pytest.skip("playwright is not installed: pip install -e '.[test]'")
    path = chromium_path()
    if path is None:
        if ci:
            pytest.fail("no chromium found; .ci/run installs it (apt-get install chromium)")
        pytest.skip("no Chromium found: apt-get install chromium (or set GINPROTO_CHROMIUM)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=path)
        try:
            yield browser
        finally:
            browser.close()


def thorough(full: int, quick: int) -> int:
    """How many inputs a fuzz or cross-check test tries: ``full`` in a thorough run (CI=true,
    or ``pytest --slow``), ``quick`` in a developer's run of the README's test command. The
    flag is set by conftest.py before the test modules load."""
    return full if os.environ.get("GINPROTO_TESTS_THOROUGH") == "1" else quick


# Every variant, and the rule options that change how a hand plays or scores: the rule sets
# the random play-out tests (test_playouts, test_search) run through.
RULE_SETS = [
    Rules(variant=Variant.STANDARD),
    Rules(variant=Variant.OKLAHOMA),
    Rules(variant=Variant.OKLAHOMA, spade_double=True, oklahoma_ace_limit=0),
    Rules(variant=Variant.HOLLYWOOD),
    Rules(variant=Variant.THREEHANDED),
    Rules(variant=Variant.STANDARD, big_gin=True, discard_taken=True, target=60),
]
