"""The replay viewer and the match report, opened in a real headless Chromium (Playwright).

The browser is the distribution's ``chromium`` (``GINPROTO_CHROMIUM`` names another); nothing
is downloaded. Without it these tests skip, saying why, except under CI (``CI=true``), where
a missing browser is a failure. With ``GINPROTO_SCREENSHOTS=1`` the run also writes the
README's screenshots to docs/img/.

Every expectation comes from the record itself, read back through ``ginref replay --json``'s
export (``referee.views.replay.json_hands``), never from the page's own data.
"""

from __future__ import annotations

import itertools
import math
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers import chromium

from ginproto.game import Entry, Game, GameView
from ginproto.moves import Move
from ginproto.record import GameRecord, dumps, loads
from ginproto.rules import Rules, Variant
from ginproto.simulate import GreedyPlayer, RandomPlayer, run_games
from ginproto.table import Decision, Fault, FaultKind, PlayerFault
from referee.cli import cli
from referee.views.html.report import write_match_report
from referee.views.html.viewer import write_replay
from referee.views.replay import json_hands

ROOT = Path(__file__).resolve().parents[2]
VARIANTS = [v.value for v in Variant]


VIEWPORT = {"width": 1200, "height": 1000}


class Browser:
    """A real headless Chromium with one tab, which the tests use in turn: each loads its file
    afresh into it, after ``about:blank`` (a new tab for every test costs several times as
    much). `Page` registers its listeners here, so that the next test's load starts with none
    of them."""

    def __init__(self, chromium: Any) -> None:
        self.tab = chromium.new_page(viewport=VIEWPORT)
        self.listeners: list[tuple[str, Any]] = []

    def open(self) -> Any:
        """The tab, emptied (``about:blank``), at the default size, with no listener."""
        for event, handler in self.listeners:
            self.tab.remove_listener(event, handler)
        self.listeners.clear()
        self.tab.goto("about:blank")
        self.tab.set_viewport_size(VIEWPORT)
        return self.tab

    def listen(self, event: str, handler: Any) -> None:
        self.tab.on(event, handler)
        self.listeners.append((event, handler))


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as b:
        yield Browser(b)


class Page:
    """A page loaded in the browser's tab, recording console errors and every request it
    makes."""

    def __init__(self, browser: Browser, path: Path, fragment: str = "") -> None:
        self.page = browser.open()
        self.errors: list[str] = []
        self.requests: list[str] = []
        browser.listen(
            "console", lambda m: self.errors.append(m.text) if m.type == "error" else None
        )
        browser.listen("pageerror", lambda e: self.errors.append(str(e)))
        browser.listen("request", lambda r: self.requests.append(r.url))
        self.url = path.resolve().as_uri()
        self.page.goto(self.url + fragment)
        self.page.wait_for_selector("html[data-ready]", timeout=10_000)

    @property
    def position(self) -> str:
        return str(self.page.evaluate("document.documentElement.dataset.position"))

    def wait_position(self, prefix: str) -> str:
        self.page.wait_for_function(
            "p => document.documentElement.dataset.position.startsWith(p)", arg=prefix
        )
        return self.position

    def open(self, fragment: str) -> str:
        """Follow a link inside the page (a hash change), as a reader would."""
        self.page.evaluate("h => { location.hash = h; }", fragment)
        return self.wait_position(re.sub(r"m\d+$", "m", fragment.lstrip("#")))

    def hand(self, player: int) -> list[str]:
        return self.page.eval_on_selector_all(
            f'#table .cards[data-player="{player}"] [data-card]',
            "els => els.map(e => e.dataset.card)",
        )

    def pile(self) -> list[str]:
        return self.page.eval_on_selector_all(
            "#pile [data-card]", "els => els.map(e => e.dataset.card)"
        )

    def state(self, players: list[int]) -> dict[str, Any]:
        """In one look: each of ``players``' hands (by the player's number as text), the
        pile, the position and the location's hash."""
        state: dict[str, Any] = self.page.evaluate(
            """players => {
                const cards = sel => [...document.querySelectorAll(sel)].map(
                    e => e.dataset.card);
                const out = {pile: cards("#pile [data-card]"),
                             position: document.documentElement.dataset.position,
                             hash: location.hash};
                for (const p of players) {
                    out[String(p)] = cards(`#table .cards[data-player="${p}"] [data-card]`);
                }
                return out;
            }""",
            players,
        )
        return state

    def close(self) -> None:
        """Check what the page did: no error, no request beyond its own file."""
        assert self.errors == [], self.errors
        assert all(u.startswith(self.url) for u in self.requests), self.requests


class Faulty:
    """Plays greedily, then times out at its ``at``-th decision."""

    name = "faulty"
    version = "1"
    options: dict[str, str] = {}  # noqa: RUF012 - read-only, for the record's headers

    def __init__(self, at: int) -> None:
        self.at = at
        self.asked = 0
        self.inner = GreedyPlayer()

    def decide(self, view: GameView, decision: Decision) -> Move:
        self.asked += 1
        if self.asked >= self.at:
            raise PlayerFault(FaultKind.TIMEOUT, "no move within 10 s")
        return self.inner.decide(view, decision)

    def hand_over(self, player: int, entry: Entry) -> None:
        pass

    def game_over(self, player: int, game: Game, fault: Fault | None) -> None:
        pass


def play(variant: str, games: int, seed: int = 1) -> list[GameRecord]:
    rules = Rules(variant=Variant(variant))
    records: list[GameRecord] = []

    def players(key: int) -> list[Any]:
        others = [RandomPlayer(f"{key}-{i}", knocks=True) for i in range(rules.players - 1)]
        return [GreedyPlayer(), *others]

    run_games(
        rules, players, games, seed, on_game=lambda _, r: records.append(r) if r else None,
        site="test", date="2026.01.01",
    )
    return records


def hands_of(records: list[GameRecord]) -> list[list[dict[str, Any]]]:
    """Each game's hands as ``ginref replay --json`` exports them."""
    return [list(json_hands(r, n)) for n, r in enumerate(records, start=1)]


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, list[Any]]]:
    """For each variant: a page of three games, and the record's hands."""
    out = {}
    base = tmp_path_factory.mktemp("html")
    for variant in VARIANTS:
        records = play(variant, 3, seed=5)
        path = base / f"{variant}.html"
        write_replay(records, path, title=f"{variant} games")
        out[variant] = (path, hands_of(records))
    return out


# ---------------------------------------------------------------------------------------------
# Without a browser.


def test_page_loads_nothing_from_anywhere(pages: dict[str, tuple[Path, list[Any]]]) -> None:
    text = pages["standard"][0].read_text("utf-8")
    assert "default-src 'none'" in text  # the browser itself refuses any request
    assert not re.search(r"<(link|img|iframe)\b", text)
    assert not re.search(r"<script[^>]*\bsrc=", text)
    assert not re.search(r"""url\(\s*['"]?(https?:|//)""", text)


def test_replay_html_command(tmp_path: Path) -> None:
    record = tmp_path / "games.gin"
    record.write_text(dumps(play("standard", 2)))
    out = tmp_path / "games.html"
    result = CliRunner().invoke(cli, ["replay", str(record), "--html", str(out), "--game", "2"])
    assert result.exit_code == 0, result.output
    assert out.exists() and 'id="ginproto-game-2"' in out.read_text()
    assert 'id="ginproto-game-1"' not in out.read_text()
    both = CliRunner().invoke(cli, ["replay", str(record), "--html", str(out), "--json"])
    assert both.exit_code == 2 and "choose one of" in both.output


def test_replay_html_refuses_a_record_that_does_not_verify(tmp_path: Path) -> None:
    text = dumps(play("standard", 1))
    bad = re.sub(r"^(result knock winner \d points )(\d+)", lambda m: m[1] + "1" + m[2], text,
                 count=1, flags=re.M)
    assert bad != text
    record = tmp_path / "bad.gin"
    record.write_text(bad)
    out = tmp_path / "bad.html"
    result = CliRunner().invoke(cli, ["replay", str(record), "--html", str(out)])
    assert result.exit_code == 1
    assert "wrong result line" in result.output and not out.exists()
    assert "Traceback" not in result.output


# ---------------------------------------------------------------------------------------------
# In the browser: every variant.


@pytest.mark.parametrize("variant", VARIANTS)
def test_first_position_shows_the_deal(
    browser: Any, pages: dict[str, tuple[Path, list[Any]]], variant: str
) -> None:
    path, games = pages[variant]
    page = Page(browser, path)
    assert page.position == "g1h1m0"
    first = games[0][0]
    assert first["hand"] == 1
    for player, cards in first["dealt"].items():
        assert sorted(page.hand(int(player))) == sorted(cards)
    assert page.pile() == [first["upcard"]]
    labels = page.page.eval_on_selector_all(
        "[data-card]", "els => els.map(e => [e.dataset.card, e.getAttribute('aria-label'),"
        " e.querySelector('title').textContent, e.textContent])"
    )
    assert labels
    suits = {"c": "clubs", "d": "diamonds", "h": "hearts", "s": "spades"}
    for code, label, title, text in labels:
        assert label == title and label.endswith(" of " + suits[code[1]])  # "ten of hearts"
        assert any(s in text for s in "♣♦♥♠")  # the suit symbol, not only its colour
    page.close()


def _expect_after(after: dict[str, Any], before: dict[str, Any], move: dict[str, Any]) -> None:
    """The pile and the mover's hand changed exactly as the record's move says (``Page.state``
    before and after it)."""
    mover = move["player"]
    kind, _, rest = move["move"].partition(" ")
    hand, pile = after[str(mover)], after["pile"]
    if kind in ("take", "pile"):
        assert move["card"] in hand and pile == before["pile"][:-1]
        assert before["pile"][-1] == move["card"]
    elif kind == "stock":
        assert move["card"] in hand and pile == before["pile"]
        assert sorted(hand) == sorted([*before[str(mover)], move["card"]])
    elif kind in ("discard", "knock"):
        card = rest.split()[0]
        assert card not in hand and pile[-1] == card and pile[:-1] == before["pile"]
    else:  # pass
        assert pile == before["pile"] and sorted(hand) == sorted(before[str(mover)])


@pytest.mark.parametrize("variant", VARIANTS)
def test_arrow_right_steps_one_move(
    browser: Any, pages: dict[str, tuple[Path, list[Any]]], variant: str
) -> None:
    path, games = pages[variant]
    page = Page(browser, path)
    hand = games[0][0]
    plays = [m for m in hand["moves"] if "move" in m]
    seated = [int(p) for p in hand["dealt"]]
    state = page.state(seated)
    for number, move in enumerate(plays[:12], start=1):
        before = state
        page.page.keyboard.press("ArrowRight")
        state = page.state(seated)
        assert state["position"] == f"g1h1m{number}"
        assert state["hash"] == f"#g1h1m{number}"
        _expect_after(state, before, move)
    page.page.keyboard.press("ArrowLeft")
    assert page.position == f"g1h1m{min(12, len(plays)) - 1}"
    page.page.keyboard.press("End")
    assert page.position == f"g1h1m{len(plays)}"
    page.page.keyboard.press("Home")
    assert page.position == "g1h1m0"
    page.close()


@pytest.mark.parametrize("variant", VARIANTS)
def test_deep_link_opens_the_position(
    browser: Any, pages: dict[str, tuple[Path, list[Any]]], variant: str
) -> None:
    path, games = pages[variant]
    game = 2 if len(games[1]) >= 2 else 1
    hand = games[game - 1][min(1, len(games[game - 1]) - 1)]
    plays = [m for m in hand["moves"] if "move" in m]
    m = min(5, len(plays))
    fragment = f"#g{game}h{hand['hand']}m{m}"
    page = Page(browser, path, fragment)
    assert page.position == fragment[1:]
    assert page.page.eval_on_selector("#game-pick", "e => e.value") == str(game)
    assert page.page.eval_on_selector("#moves li.current", "e => e.value") == m
    linked = [page.hand(p) for p in range(3)], page.pile(), page.page.inner_text("#stock-count")
    page.close()
    # The same position reached by stepping from the deal.
    page = Page(browser, path, f"#g{game}h{hand['hand']}m0")
    for _ in range(m):
        page.page.keyboard.press("ArrowRight")
    assert page.position == fragment[1:]
    assert ([page.hand(p) for p in range(3)], page.pile(),
            page.page.inner_text("#stock-count")) == linked
    page.close()


@pytest.mark.parametrize("variant", VARIANTS)
def test_showdown_points_are_the_records(
    browser: Any, pages: dict[str, tuple[Path, list[Any]]], variant: str
) -> None:
    path, games = pages[variant]
    page = Page(browser, path)
    checked = 0
    for g, hands in enumerate(games, start=1):
        for hand in hands:
            if "result" not in hand:
                continue
            page.open(f"#g{g}h{hand['hand']}m9999")
            result = hand["result"]
            points = page.page.eval_on_selector("#showdown .points", "e => e.dataset.points")
            assert int(points) == result["points"]
            text = page.page.inner_text("#showdown")
            if result["outcome"] in ("knock", "undercut"):
                k, d = hand["knocker"], hand["defender"]
                assert f"{result['outcome']}:" in text
                assert str(k["deadwood"]) in text and str(d["deadwood"]) in text
                shown = page.page.eval_on_selector_all(
                    "#showdown .layoffs li [data-card]:first-child",
                    "els => els.map(e => e.dataset.card)",
                )
                assert shown == [lay["card"] for lay in hand.get("layoffs", [])]
            checked += 1
    assert checked >= 3
    page.close()


@pytest.mark.parametrize("variant", VARIANTS)
def test_score_sheet_is_the_records(
    browser: Any, pages: dict[str, tuple[Path, list[Any]]], variant: str
) -> None:
    """Every running total, the cells where each win was entered (Hollywood's three
    columns), and the final scores."""
    path, games = pages[variant]
    page = Page(browser, path)
    for g, hands in enumerate(games, start=1):
        page.open(f"#g{g}h1m0")
        cells = page.page.eval_on_selector_all(
            "#sheet tr[data-hand] td[data-game]",
            "els => els.map(e => [+e.closest('tr').dataset.hand, +e.dataset.game,"
            " +e.dataset.player, +e.dataset.total, e.dataset.entered || null])",
        )
        want = []
        for hand in hands:
            if "totals" not in hand:
                continue
            result = hand["result"]
            for col, totals in enumerate(hand["totals"], start=1):
                for p, total in enumerate(totals):
                    entered = (
                        result["winner"] == p
                        and (not result["games"] or col in result["games"])
                    )
                    want.append(
                        [hand["hand"], col, p, total, str(result["points"]) if entered else None]
                    )
        assert cells == want
        end = hands[-1]["end"]
        finals = page.page.eval_on_selector_all(
            "#sheet td[data-final]", "els => els.map(e => +e.textContent)"
        )
        assert finals == [v for col in end["scores"] for v in col]
    page.close()


def test_three_player_roles_and_advice(
    browser: Any, pages: dict[str, tuple[Path, list[Any]]]
) -> None:
    path, games = pages["threehanded"]
    page = Page(browser, path)
    hand = games[0][0]
    roles = hand["roles"]
    names = hand["players"]
    row = page.page.inner_text('#sheet tr[data-hand="1"]')
    for role in ("box", "captain", "sitter"):
        assert f"{role} {names[roles[role]]}" in row
    advice = [m["advice"] for m in hand["moves"] if "advice" in m]
    shown = page.page.eval_on_selector_all(
        "#moves .advice", "els => els.map(e => e.textContent)"
    )
    assert len(shown) == len(advice) > 0
    assert all(a.split()[0] in s for a, s in zip(advice, shown, strict=True))
    assert "sits out" in page.page.inner_text("#sitter")
    page.close()


def test_fault_and_its_reason(browser: Any, tmp_path: Path) -> None:
    records: list[GameRecord] = []
    run_games(Rules(), [GreedyPlayer(), Faulty(30)], 1, 3,
              on_game=lambda _, r: records.append(r) if r else None)
    text = dumps(records)
    assert 'fault 1 timeout "no move within 10 s"' in text
    path = tmp_path / "fault.html"
    write_replay(loads(text), path)
    page = Page(browser, path)
    sheet = page.page.inner_text("#sheet")
    assert "forfeits the game (timeout): no move within 10 s" in sheet
    last = len(records[0].events)  # beyond the hand's last position: the page stops there
    page.open(f"#g1h{sum(1 for e in records[0].events if type(e).__name__ == 'HandStart')}"
              f"m{last}")
    assert "player 1 (faulty) forfeits the game (timeout)" in page.page.inner_text("#last-move")
    page.close()


def test_a_game_forfeited_before_its_first_deal(browser: Any, tmp_path: Path) -> None:
    text = dumps(play("standard", 1))
    head = text[: text.index("\nhand 1 ")]
    head = re.sub(r'\[Winner "\d"\]', '[Winner "1"]', head)
    head = re.sub(r'\[Termination "\w+"\]', '[Termination "forfeit"]', head)
    text = head + '\nfault 0 startup "no ginok within 10 s"\nend forfeit winner 1 scores 0 0\n\n'
    path = tmp_path / "startup.html"
    write_replay(loads(text), path)
    page = Page(browser, path)
    assert page.position == "g1h0m0"
    assert "no ginok within 10 s" in page.page.inner_text("#sheet")
    page.close()


PILE_RANKS = """() => [...document.querySelectorAll('#pile [data-card]')].map((card, i, all) => {
    const rank = card.querySelector('text.rank');
    const box = rank.getBoundingClientRect();
    const next = all[i + 1];  // the card over this one: it hides all of it but a strip
    return [card.dataset.card, rank.textContent, box.left - card.getBoundingClientRect().left,
            next ? next.getBoundingClientRect().left - box.right : null];
})"""


def test_every_card_of_the_fanned_pile_shows_its_whole_rank(
    browser: Any, pages: dict[str, tuple[Path, list[Any]]]
) -> None:
    """Under the top card, each card of the pile shows a strip: its rank must fit in it
    whole, "10" included (read as "1" when the next card covers its "0")."""
    path, games = pages["standard"]
    page = Page(browser, path)
    moves = sum(len(hand["moves"]) for hand in games[0])
    tens_under_the_top = 0
    for step in range(moves):  # the positions of game 1, until a ten was seen under the top
        if tens_under_the_top and step >= 30:
            break
        for code, rank, left, room in page.page.evaluate(PILE_RANKS):
            assert rank == {"T": "10"}.get(code[0], code[0]), code
            assert left >= 0, (page.position, code, left)
            if room is not None:
                assert room >= 0, (page.position, code, room)  # not covered by the next card
                tens_under_the_top += code[0] == "T"
        page.page.keyboard.press("ArrowRight")
    assert tens_under_the_top > 0  # the case under test was seen
    page.close()


def test_the_position_is_named_in_plain_words(
    browser: Any, pages: dict[str, tuple[Path, list[Any]]]
) -> None:
    path, games = pages["standard"]
    page = Page(browser, path)
    moves = len([m for m in games[0][0]["moves"] if "move" in m])
    assert page.page.inner_text("#where") == f"Hand 1: the deal, before its {moves} moves"
    page.page.keyboard.press("ArrowRight")
    assert page.page.inner_text("#where") == f"Hand 1: after move 1 of {moves}"
    page.page.keyboard.press("End")
    assert page.page.inner_text("#where") == f"Hand 1: after move {moves} of {moves}"
    page.close()


def test_one_seats_view_hides_the_other_hand(
    browser: Any, pages: dict[str, tuple[Path, list[Any]]]
) -> None:
    path, games = pages["standard"]
    page = Page(browser, path)
    page.page.select_option("#view-pick", "0")
    page.wait_position("g1h1m0")
    assert sorted(page.hand(0)) == sorted(games[0][0]["dealt"]["0"])
    assert page.hand(1) == []
    assert page.page.locator("#seat-1 svg.back").count() == 10
    # The opponent's stock draws are shown without the card, in the moves too.
    hand = games[0][0]
    drawn = [m["card"] for m in hand["moves"] if m.get("player") == 1 and
             m.get("move") == "stock"]
    assert drawn
    moves = page.page.inner_text("#moves")
    assert "player 1 (random) draws from the stock\n" in moves + "\n"
    symbol = dict(zip("cdhs", "♣♦♥♠", strict=True))
    assert all(f"stock: {c[0]}{symbol[c[1]]}" not in moves for c in drawn)
    page.page.select_option("#view-pick", "all")
    assert f"stock: {drawn[0][0]}{symbol[drawn[0][1]]}" in page.page.inner_text("#moves")
    page.close()


def test_keyboard_alone(browser: Any, pages: dict[str, tuple[Path, list[Any]]]) -> None:
    path, _ = pages["oklahoma"]
    page = Page(browser, path)
    for _ in range(40):  # tab to the "next move" button, and press it
        page.page.keyboard.press("Tab")
        if page.page.evaluate("document.activeElement.id") == "next":
            break
    assert page.page.evaluate("document.activeElement.id") == "next"
    page.page.keyboard.press("Enter")
    assert page.position == "g1h1m1"
    page.page.keyboard.press("PageDown")
    assert page.position == "g1h2m0"
    page.close()


# ---------------------------------------------------------------------------------------------
# Many games, and the match report.


@pytest.mark.slow
def test_two_hundred_games(browser: Any, tmp_path: Path) -> None:
    """Under 5 MB, and it opens (its load time is measured by bench/html.py)."""
    records = play("standard", 200, seed=9)
    path = tmp_path / "many.html"
    assert write_replay(records, path) == 200
    assert path.stat().st_size < 5_000_000
    page = Page(browser, path)
    assert page.page.locator("#game-pick option").count() == 200
    assert page.open("#g200h1m3") == "g200h1m3"
    page.close()


def test_match_report(browser: Any, tmp_path: Path) -> None:
    out = tmp_path / "match.html"
    result = CliRunner().invoke(
        cli,
        ["match", "simple", "random", "--games", "4", "--seed", "2", "--tc", "inf", "-q",
         "--sprt", "0", "50", "0.05", "0.05", "--html", str(out)],
    )
    assert result.exit_code == 0, result.output
    page = Page(browser, out)
    block = page.page.inner_text("#result-block")
    printed = [line.rstrip() for line in result.output.splitlines() if line.strip()]
    assert [line.rstrip() for line in block.splitlines() if line.strip()] == printed
    for chart in ("chart-sprt", "chart-points"):
        assert page.page.locator(f"#{chart} svg path, #{chart} svg line.ct-bar").count() > 0
    links = page.page.locator("#games a[data-game]")
    assert links.count() == 4
    links.nth(2).click()
    assert page.wait_position("g3h1m0") == "g3h1m0"
    page.close()


def test_a_one_sided_match_says_the_elo_is_unbounded_and_draws_no_empty_chart(
    browser: Any, tmp_path: Path
) -> None:
    """When one engine won every game, the Elo difference is infinite after every game: the
    report says so in words, where an empty grid would otherwise stand."""
    out = tmp_path / "match.html"
    result = CliRunner().invoke(
        cli, ["match", "simple", "random", "--games", "4", "--seed", "2", "--tc", "inf", "-q",
              "--html", str(out)],
    )
    assert result.exit_code == 0, result.output
    assert "Score of Simple vs Random: 4 - 0 - 0" in result.output  # the case under test
    page = Page(browser, out)
    words = page.page.inner_text("#report")
    assert "Simple won every game (4 of 4)" in words
    assert "Elo difference of Simple vs Random is unbounded (+inf)" in words
    assert page.page.locator("#chart-elo").count() == 0
    for chart in page.page.locator("#report .ct-chart").all():  # every chart drawn has lines
        assert chart.locator("svg .ct-series .ct-line, svg .ct-series .ct-bar").count() > 0
    page.close()


def _lab(css: str) -> tuple[float, float, float]:
    """CIELAB (D65) of a computed CSS colour ``rgb(r, g, b)``."""
    rgb = [int(v) / 255 for v in re.findall(r"\d+", css)[:3]]
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb)
    xyz = (
        (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047,
        0.2126 * r + 0.7152 * g + 0.0722 * b,
        (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883,
    )
    fx, fy, fz = (t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116 for t in xyz)
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)


def _contrast_on_white(css: str) -> float:
    """The WCAG contrast ratio of a colour against white."""
    rgb = [int(v) / 255 for v in re.findall(r"\d+", css)[:3]]
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb)
    return 1.05 / (0.2126 * r + 0.7152 * g + 0.0722 * b + 0.05)


SERIES_STYLE = """el => [...el.querySelectorAll('svg .ct-series')].map(g => {
    const mark = g.querySelector('.ct-line, .ct-bar');
    const style = getComputedStyle(mark);
    return [g.getAttribute('class'), style.stroke, style.strokeDasharray];
})"""
LEGEND_STYLE = """el => [...el.querySelectorAll('span')].map(s => {
    const style = getComputedStyle(s.querySelector('.ct-line'));
    return [s.getAttribute('class'), style.stroke, style.strokeDasharray];
})"""


def _check_colours(chart: Any, legend: Any) -> None:
    """Each line or bar of a chart: a colour of its own, clearly apart from every other
    series' (a CIELAB distance of 35 at least; Chartist's two first reds are 28 apart), at
    least 3:1 against the white ground (WCAG's non-text contrast), the interval's and the
    bounds' lines dashed as well as grey, and the legend drawn in the lines' colours."""
    series = chart.evaluate(SERIES_STYLE)
    assert len(series) >= 2
    assert legend.evaluate(LEGEND_STYLE) == [
        [cls.replace("ct-series ", ""), stroke, dash] for cls, stroke, dash in series
    ]
    colours = {cls: stroke for cls, stroke, _ in series}
    for cls, stroke in colours.items():
        assert _contrast_on_white(stroke) >= 3.0, (cls, stroke)
    for (a, one), (b, other) in itertools.combinations(colours.items(), 2):
        assert math.dist(_lab(one), _lab(other)) >= 35, (a, one, b, other)
    for cls, _, dash in series:
        assert (dash != "none") == ("ct-interval" in cls), (cls, dash)


def test_chart_colours_are_distinct_and_accessible(
    browser: Any, tmp_path: Path, pages: dict[str, tuple[Path, list[Any]]]
) -> None:
    records: list[GameRecord] = []
    run_games(Rules(), lambda _: [GreedyPlayer(), GreedyPlayer()], 4, 1,
              on_game=lambda _, r: records.append(r) if r else None)
    winners = {h.value for r in records for h in r.headers if h.name == "Winner"}
    assert winners == {"0", "1"}  # both sides won: the Elo chart has its lines
    out = tmp_path / "match.html"
    write_match_report(records, out, sprt=(0, 50, 0.05, 0.05))
    page = Page(browser, out)
    for chart, legend in (("chart-elo", "chart-elo-legend"), ("chart-sprt", "chart-sprt-legend"),
                          ("chart-points", "chart-points-legend"), ("score-chart", "score-legend")):
        _check_colours(page.page.locator(f"#{chart}"), page.page.locator(f"#{legend}"))
    page.close()
    page = Page(browser, pages["hollywood"][0])  # six lines: three games of two players
    _check_colours(page.page.locator("#score-chart"), page.page.locator("#score-legend"))
    page.close()


def test_report_of_record_files_with_faults(browser: Any, tmp_path: Path) -> None:
    """``write_match_report`` on record files (as ``ginref stats --html`` would call it): the
    faults of each engine with their reasons, and every game in the table."""
    records: list[GameRecord] = []
    for key, at in enumerate((25, 10_000, 40)):
        players: list[Any] = [GreedyPlayer(), Faulty(at)]
        if key % 2:
            players.reverse()
        run_games(Rules(), players, 1, 3, first_key=key,
                  on_game=lambda _, r: records.append(r) if r else None)
    record = tmp_path / "games.gin"
    record.write_text(dumps(records))
    out = tmp_path / "report.html"
    assert write_match_report([record], out, title="faults") == 3
    page = Page(browser, out)
    rows = page.page.eval_on_selector_all(
        'table[aria-label="faults per engine"] tbody tr',
        "rows => rows.map(r => [...r.cells].map(c => c.textContent))",
    )
    assert rows == [["greedy", "0", "none"], ["faulty", "2", "timeout 2"]]
    reasons = page.page.inner_text('table[aria-label="every fault"]')
    assert reasons.count("no move within 10 s") == 2
    assert page.page.locator("#games a[data-game]").count() == 3
    assert "Score of greedy vs faulty: " in page.page.inner_text("#result-block")
    page.close()


def test_tournament_report(browser: Any, tmp_path: Path) -> None:
    config = tmp_path / "cup.toml"
    config.write_text(
        'event = "Cup"\nformat = "round-robin"\ngames = 2\nseed = 4\ntc = "inf"\n'
        'concurrency = 1\noutput = "cup"\n'
        '[[engines]]\nname = "Simple"\ncommand = "simple"\n'
        '[[engines]]\nname = "Random"\ncommand = "random"\n'
        '[[engines]]\nname = "Simple B"\ncommand = "simple"\n'
    )
    out = tmp_path / "cup.html"
    result = CliRunner().invoke(cli, ["tournament", str(config), "-q", "--html", str(out)])
    assert result.exit_code == 0, result.output
    printed = [line.rstrip() for line in result.output.splitlines()[1:] if line.strip()]
    page = Page(browser, out)
    block = page.page.inner_text("#result-block")
    assert [line.rstrip() for line in block.splitlines() if line.strip()] == printed
    assert page.page.locator("#games a[data-game]").count() == 6
    assert page.page.locator("#chart-elo svg path").count() > 0
    page.close()


def test_report_of_three_players(tmp_path: Path) -> None:
    record = tmp_path / "three.gin"
    record.write_text(dumps(play("threehanded", 3)))
    out = tmp_path / "report.html"
    assert write_match_report([record], out) == 3
    text = out.read_text("utf-8")
    assert 'id="result-block"' in text and 'id="ginproto-game-3"' in text
    assert "maximum-likelihood Elo" in text


def test_screenshots(browser: Any, tmp_path: Path) -> None:
    """The README's pictures: a match report, and the end of a hand in the replay viewer,
    made with the command the README shows; written to docs/img/ with GINPROTO_SCREENSHOTS=1
    (else to a temporary folder)."""
    out = tmp_path / "report.html"
    result = CliRunner().invoke(
        cli,
        ["match", "simple", "simple", "--name", "2=Simple B", "--games", "12", "--seed", "7",
         "--tc", "inf", "-q", "--sprt", "0", "50", "0.05", "0.05", "--html", str(out)],
    )
    assert result.exit_code == 0, result.output
    img = ROOT / "docs" / "img" if os.environ.get("GINPROTO_SCREENSHOTS") == "1" else tmp_path
    img.mkdir(parents=True, exist_ok=True)
    page = Page(browser, out)
    page.page.set_viewport_size({"width": 1000, "height": 1100})
    page.page.screenshot(path=str(img / "match-report.png"))
    page.open("#g2h1m9999")
    page.page.evaluate("document.getElementById('viewer').scrollIntoView()")
    box = page.page.locator("#viewer").bounding_box()
    page.page.screenshot(
        path=str(img / "replay-hand.png"),
        clip={"x": box["x"], "y": box["y"], "width": box["width"], "height": 1000},
    )
    page.close()
    for name in ("match-report.png", "replay-hand.png"):
        assert (img / name).read_bytes().startswith(b"\x89PNG")
