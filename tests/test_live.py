"""``--serve``: the live page of a tournament or a match, in a real headless Chromium and over
plain HTTP.

The browser is the distribution's ``chromium`` (``GINPROTO_CHROMIUM`` names another), as in
tests/test_html.py: without it the browser tests skip, saying why, except under CI
(``CI=true``), where a missing browser is a failure. With ``GINPROTO_SCREENSHOTS=1`` the run
also writes the README's screenshot, docs/live.png.

What a spectator may see is checked against the records the run stored, read back through
``ginref replay --json``'s export (``referee.views.replay.json_hands``): every card a page or an
event shows of a game in progress was shown at the table by then (the upcard, a card taken
from the pile, a discard), and the pile and stock count are the record's at that move.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers import chromium

from ginproto.record import read_games
from referee.cli import cli
from referee.views.replay import json_hands

ROOT = Path(__file__).resolve().parent.parent
GINREF = [sys.executable, "-c", "import sys; from referee.__main__ import main; sys.exit(main())"]
FAST = ["--tc", "inf", "--no-sandbox"]
CARD = re.compile(r"\b[A2-9TJQK][cdhs]\b")
URL_LINE = re.compile(r"Live page: (http://\S+)")
CLIENTS = 50


# ------------------------------------------------------------------------------------------
# A served run


def _child_setup() -> None:
    """Ctrl-C as a terminal gives it, and death with the test run."""
    import ctypes

    signal.signal(signal.SIGINT, signal.SIG_DFL)
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


@dataclass
class Served:
    """A ``ginref ... --serve`` process, its URL, and its standard output and error files."""

    process: subprocess.Popen[bytes]
    folder: Path
    url: str = ""
    out: Path = field(default_factory=Path)
    err: Path = field(default_factory=Path)

    def stderr(self) -> str:
        return self.err.read_text()

    def get(self, path: str, method: str = "GET") -> tuple[int, str]:
        host, port = self.url[len("http://"):].rstrip("/").rsplit(":", 1)
        conn = http.client.HTTPConnection(host, int(port), timeout=10)
        try:
            conn.request(method, path)
            r = conn.getresponse()
            return r.status, r.read().decode("utf-8", "replace")
        finally:
            conn.close()

    def state(self) -> dict[str, Any]:
        status, body = self.get("/state")
        assert status == 200, body
        data: dict[str, Any] = json.loads(body)
        return data

    def wait_over(self, timeout: float = 60) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            state = self.state()
            if state["over"]:
                return state
            assert time.monotonic() < deadline, "the run did not end"
            assert self.process.poll() is None, self.stderr()
            time.sleep(0.1)

    def interrupt(self) -> int:
        """Ctrl-C; the exit code."""
        self.process.send_signal(signal.SIGINT)
        return self.process.wait(timeout=20)


@pytest.fixture(scope="module")
def serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., Served]]:
    """Start ``ginref ARGS --serve 127.0.0.1:0`` (in its own process group, dying with the
    test run) and wait for its URL; every one started is killed, with its group, at the end."""
    started: list[Served] = []

    def start(*args: str, wait: bool = True) -> Served:
        folder = tmp_path_factory.mktemp("live")
        out, err = folder / "stdout", folder / "stderr"
        with out.open("wb") as o, err.open("wb") as e:
            process = subprocess.Popen(
                [*GINREF, *args, "--serve", "127.0.0.1:0"],
                stdin=subprocess.DEVNULL, stdout=o, stderr=e, cwd=folder,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
                start_new_session=True, preexec_fn=_child_setup,
            )
        served = Served(process, folder, out=out, err=err)
        started.append(served)
        if wait:
            deadline = time.monotonic() + 30
            while not (m := URL_LINE.search(served.stderr())):
                assert process.poll() is None, served.stderr()
                assert time.monotonic() < deadline, served.stderr()
                time.sleep(0.01)
            served.url = m.group(1)
        return served

    try:
        yield start
    finally:
        for s in started:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(s.process.pid, signal.SIGKILL)
            s.process.wait()


def _tournament_toml(folder: Path, games: int, engines: list[tuple[str, str]]) -> Path:
    lines = [
        'event = "Live cup"', f"games = {games}", "seed = 11", "concurrency = 2",
        'tc = "inf"', 'sandbox = "off"', 'output = "cup"',
    ]
    for name, command in engines:
        lines += ["[[engines]]", f'name = "{name}"', f'command = "{command}"']
    path = folder / "cup.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


ENGINES = [("Random", "random"), ("Simple", "simple"), ("Simple B", "simple")]


class Events:
    """A plain HTTP client of ``/events`` in a thread: every event it is sent, in order."""

    def __init__(self, url: str, leave_after: int | None = None) -> None:
        self.url = url
        self.leave_after = leave_after
        self.events: list[dict[str, Any]] = []
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        host, port = self.url[len("http://"):].rstrip("/").rsplit(":", 1)
        try:
            sock = socket.create_connection((host, int(port)), timeout=30)
            with contextlib.closing(sock):
                sock.sendall(f"GET /events HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
                stream = sock.makefile("rb")
                head = stream.readline()
                assert b" 200 " in head, head
                for raw in stream:
                    line = raw.decode().rstrip("\r\n")
                    if line.startswith("data: "):
                        event = json.loads(line[6:])
                        self.events.append(event)
                        if event["over"] or (
                            self.leave_after is not None and len(self.events) >= self.leave_after
                        ):
                            return  # hang up mid-stream
        except BaseException as exc:
            self.error = exc

    def join(self) -> list[dict[str, Any]]:
        self.thread.join(timeout=60)
        assert not self.thread.is_alive(), "the event stream did not end"
        assert self.error is None, self.error
        return self.events


# ------------------------------------------------------------------------------------------
# What a spectator may see, from the records


def _record_hands(records: list[Any]) -> dict[tuple[int, int], dict[str, Any]]:
    """(game, hand) -> the hand as ``ginref replay --json`` exports it, with the cards shown
    at the table after each move (``public[m]``) and the pile after each move."""
    hands: dict[tuple[int, int], dict[str, Any]] = {}
    for record in records:
        number = int(record.header("Game"))
        for hand in json_hands(record, number):
            if hand["hand"] is None:
                continue
            deck = hand["deck"]
            shown = {hand["upcard"]}
            pile = [hand["upcard"]]
            stock = 31  # two hands of 10 and the upcard dealt, in every variant
            public = [set(shown)]
            piles = ["".join(pile)]
            stocks = [stock]
            for move in hand["moves"]:
                if "advice" in move:
                    continue
                words = move["move"].split()
                kind = words[0]
                if kind in ("take", "pile"):
                    shown.add(move["card"])
                    pile.pop()
                elif kind == "stock":
                    stock -= 1
                if kind in ("discard", "knock"):
                    shown.add(words[1])
                    pile.append(words[1])
                public.append(set(shown))
                piles.append("".join(pile))
                stocks.append(stock)
            hands[(number, hand["hand"])] = {
                "public": public, "pile": piles, "stock": stocks, "deck": deck,
            }
    return hands


def check_spectator(snapshot: dict[str, Any], hands: dict[tuple[int, int], dict[str, Any]]) -> None:
    """A snapshot of a game in progress shows only the cards shown at the table by then, and
    the record's pile and stock count."""
    hand = hands[(snapshot["g"], snapshot["hand"])]
    m = snapshot["move"]
    cards = set(CARD.findall(json.dumps(snapshot)))
    hidden = cards - hand["public"][m]
    assert not hidden, f"game {snapshot['g']} hand {snapshot['hand']} move {m} shows {hidden}"
    assert snapshot["pile"] == hand["pile"][m]
    assert snapshot["stock"] == hand["stock"][m]
    assert len(snapshot["moves"]) == m


def check_page_games(games: list[dict[str, Any]], hands: dict[tuple[int, int], Any]) -> None:
    """The games in progress as the page drew them: ``{g, hand, move, cards}``."""
    for g in games:
        hand = hands[(int(g["g"]), int(g["hand"]))]
        hidden = set(g["cards"]) - hand["public"][int(g["move"])]
        assert not hidden, f"the page showed {hidden} of game {g['g']} in progress"


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _clean(stderr: str) -> None:
    for word in ("Traceback", "ERROR", "Exception", "Error handling"):
        assert word not in stderr, stderr


def _standings_json(folder: Path) -> list[dict[str, Any]]:
    done = subprocess.run(
        [*GINREF, "tournament", "--resume", str(folder), "--json", "-q"],
        capture_output=True, text=True, cwd=folder.parent, timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr
    engines: list[dict[str, Any]] = json.loads(done.stdout)["engines"]
    return engines


# ------------------------------------------------------------------------------------------
# The browser

# Recorded in the page from its first script on: every value of the games count, and every
# game in progress as drawn (its number, hand, move and the cards it shows).
WATCH_SCRIPT = """
window.__seen = { played: [], games: [] };
new MutationObserver(function () {
  var p = document.getElementById('progress');
  if (p) {
    var n = +p.getAttribute('data-games-played');
    var seen = window.__seen.played;
    if (document.documentElement.hasAttribute('data-ready') &&
        (!seen.length || seen[seen.length - 1] !== n)) seen.push(n);
  }
  document.querySelectorAll('[data-live-game]').forEach(function (a) {
    window.__seen.games.push({ g: a.getAttribute('data-live-game'),
      hand: a.getAttribute('data-hand'), move: a.getAttribute('data-move'),
      cards: Array.from(a.querySelectorAll('[data-card]')).map(function (c) {
        return c.getAttribute('data-card'); }) });
  });
}).observe(document, { subtree: true, childList: true, attributes: true });
"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as b:
        yield b


class Page:
    """A tab on the live page, recording console errors and every request it makes."""

    def __init__(self, browser: Any, url: str) -> None:
        self.page = browser.new_page(viewport={"width": 1200, "height": 1000})
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.add_init_script(WATCH_SCRIPT)
        self.url = url
        self.page.goto(url)
        self.page.wait_for_selector("html[data-ready]", timeout=15_000)

    def played(self) -> int:
        return int(self.page.get_attribute("#progress", "data-games-played"))

    def rows(self) -> list[dict[str, str]]:
        rows: list[dict[str, str]] = self.page.eval_on_selector_all(
            "table[data-standings] tbody tr",
            "rows => rows.map(r => Object.assign({}, r.dataset))",
        )
        return rows

    def outside(self) -> list[str]:
        return [u for u in self.requests if not u.startswith(self.url)]


def _same_standings(rows: list[dict[str, str]], engines: list[dict[str, Any]]) -> None:
    assert [r["engine"] for r in rows] == [e["name"] for e in engines]
    for r, e in zip(rows, engines, strict=True):
        for key in ("games", "wins", "losses", "draws"):
            assert int(r[key]) == e[key], (key, r, e)
        assert float(r["score"]) == pytest.approx(e["score"])
        if e["elo"] is None or e["elo"]["elo"] is None:
            assert "elo" not in r
        else:
            assert float(r["elo"]) == pytest.approx(e["elo"]["elo"], abs=1e-6)


# ------------------------------------------------------------------------------------------
# Tournaments


def test_tournament_page_live(
    browser: Any, serve: Callable[..., Served], tmp_path: Path
) -> None:
    """A page opened at the start sees the games count rise to 12 without a reload, the games
    in progress as a spectator sees them and nothing more, the standings of
    ``ginref tournament --resume DIR --json``, and makes no request outside its server."""
    toml = _tournament_toml(tmp_path, 4, ENGINES)
    run = serve("tournament", str(toml))
    events = Events(run.url)
    page = Page(browser, run.url)
    shots = os.environ.get("GINPROTO_SCREENSHOTS") == "1"
    if shots:  # the README's picture: a few games in, with games in progress
        page.page.wait_for_function(
            "() => +document.getElementById('progress').dataset.gamesPlayed >= 3 &&"
            " document.querySelector('[data-live-game]') !== null",
            timeout=30_000,
        )
        page.page.screenshot(path=str(ROOT / "docs" / "live.png"), full_page=True)
    page.page.wait_for_function(
        "() => document.getElementById('progress').dataset.gamesPlayed === '12' &&"
        " document.getElementById('status').textContent === 'finished'",
        timeout=60_000,
    )
    seen = page.page.evaluate("window.__seen")
    assert seen["played"][0] < 12, "the page was opened after the run"
    assert seen["played"] == sorted(seen["played"]) and seen["played"][-1] == 12
    html = page.page.content()
    rows = page.rows()
    # Every finished game opens in the replay viewer, from the server alone.
    link = page.page.get_attribute("[data-finished='5'] a", "href")
    assert link == "/game/5#g5h1m0"
    page.page.click("[data-finished='5'] a")
    page.page.wait_for_selector("html[data-ready]", timeout=15_000)
    assert page.page.evaluate("document.documentElement.dataset.position") == "g5h1m0"
    assert not page.errors, page.errors
    assert not page.outside(), page.outside()
    page.page.close()
    streamed = events.join()
    assert run.interrupt() == 130
    _clean(run.stderr())

    folder = tmp_path / "cup"
    records = list(read_games(folder / "games.gin"))
    assert len(records) == 12
    hands = _record_hands(records)
    live = [s for e in streamed for s in e["live"]]
    assert live, "no game in progress was ever sent"
    for snapshot in live:
        check_spectator(snapshot, hands)
    # The check itself sees a card that was not shown (one of a hand or of the stock).
    last = live[-1]
    hand = hands[(last["g"], last["hand"])]
    unseen = next(c for c in hand["deck"] if c not in hand["public"][last["move"]])
    leaked = {**last, "moves": [*last["moves"][:-1], {"p": 0, "k": "stock", "c": unseen}]}
    with pytest.raises(AssertionError, match="shows"):
        check_spectator(leaked, hands)
    check_page_games(seen["games"], hands)
    assert seen["games"], "the page never drew a game in progress"
    for n in range(1, 13):  # the final page holds no game in progress
        assert f'data-live-game="{n}"' not in html
    _same_standings(rows, _standings_json(folder))


def test_fifty_clients(serve: Callable[..., Served], tmp_path: Path) -> None:
    """50 event streams at once, some hanging up mid-stream: every game is played, the
    referee's memory stays bounded, and nothing is logged of the clients that left."""
    toml = _tournament_toml(tmp_path, 6, ENGINES[:2])
    run = serve("tournament", str(toml))
    before = _rss_kib(run.process.pid)
    clients = [Events(run.url, leave_after=2 if i % 3 == 0 else None) for i in range(CLIENTS)]
    during = before
    while any(c.thread.is_alive() for c in clients):
        during = max(during, _rss_kib(run.process.pid))
        time.sleep(0.05)
    for c in clients:
        c.join()
    state = run.wait_over()
    print(
        f"\nreferee RSS with {CLIENTS} clients: {before / 1024:.1f} MiB before,"
        f" {during / 1024:.1f} MiB at most during ({(during - before) / 1024:+.1f} MiB)"
    )
    assert state["played"] == state["total"] == 6
    assert len(state["finished"]) == 6
    stayed = [c for i, c in enumerate(clients) if i % 3]
    assert all(c.events[-1]["played"] == 6 and c.events[-1]["over"] for c in stayed)
    assert during - before < 100 * 1024, (before, during)
    assert run.interrupt() == 130
    _clean(run.stderr())


def test_resume_serves_what_the_store_holds(serve: Callable[..., Served], tmp_path: Path) -> None:
    """A page of ``--resume`` (the server restarted) shows every game of the earlier run, and
    the standings of the store."""
    toml = _tournament_toml(tmp_path, 2, ENGINES[:2])
    first = serve("tournament", str(toml))
    first.wait_over()
    assert first.interrupt() == 130
    folder = tmp_path / "cup"
    again = serve("tournament", "--resume", str(folder))
    state = again.wait_over()
    assert [f["n"] for f in state["finished"]] == [1, 2]
    status, page = again.get("/game/2")
    assert status == 200 and 'id="ginproto-game-2"' in page
    assert again.interrupt() == 130
    names = [e["name"] for e in state["standings"]["engines"]]
    assert names == [e["name"] for e in _standings_json(folder)]


# ------------------------------------------------------------------------------------------
# Matches


MATCH = ["match", "simple", "random", "--games", "8", "--seed", "5", "--record", "m.gin",
         "--sprt", "0", "50", "0.001", "0.001", *FAST]


@pytest.fixture(scope="module")
def match_run(serve: Callable[..., Served]) -> Served:
    """A two-engine match with an SPRT, recorded, its page kept up."""
    return serve(*MATCH)


def _check_match(run: Served, games: int) -> dict[str, Any]:
    events = Events(run.url)
    state = run.wait_over()
    streamed = events.join()
    records = list(read_games(run.folder / "m.gin"))
    assert len(records) == games == state["played"]
    hands = _record_hands(records)
    for snapshot in (s for e in streamed for s in e["live"]):
        check_spectator(snapshot, hands)
    return state


def test_match_page(browser: Any, match_run: Served, tmp_path: Path) -> None:
    """The match's page, and its record: byte for byte the one the same match records
    without ``--serve``."""
    state = _check_match(match_run, 8)
    alone = subprocess.run(
        [*GINREF, *MATCH, "-q"], capture_output=True, text=True, cwd=tmp_path, timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert alone.returncode == 0, alone.stderr
    assert (tmp_path / "m.gin").read_bytes() == (match_run.folder / "m.gin").read_bytes()
    page = Page(browser, match_run.url)
    page.page.wait_for_selector("#sprt[data-sprt]")
    rows = page.rows()
    assert [int(r["games"]) for r in rows] == [8, 8]
    assert int(rows[0]["wins"]) == state["standings"]["head_to_head"]["wins"]
    assert page.page.get_attribute("#sprt", "data-sprt") == state["standings"]["sprt"]["state"]
    assert page.played() == 8
    assert not page.errors and not page.outside(), (page.errors, page.outside())
    page.page.close()


@pytest.mark.parametrize(
    "args",
    [["simple", "random", "simple", "--games", "4"], ["simple", "random", "--games", "3",
                                                      "--variant", "hollywood"]],
    ids=["three-players", "hollywood"],
)
def test_match_variants(serve: Callable[..., Served], args: list[str]) -> None:
    run = serve("match", *args, "--seed", "3", "--record", "m.gin", *FAST)
    state = _check_match(run, int(args[args.index("--games") + 1]))
    assert all(e["elo"] is not None for e in state["standings"]["engines"])
    assert run.interrupt() == 130
    _clean(run.stderr())


def test_only_get_and_known_paths(match_run: Served) -> None:
    assert match_run.get("/nowhere")[0] == 404
    assert match_run.get("/game/999")[0] == 404
    status, body = match_run.get("/", method="POST")
    assert status == 405 and "Traceback" not in body
    assert match_run.get("/events", method="DELETE")[0] == 405
    status, body = match_run.get("/")
    assert status == 200 and "data-standings" in body and 'data-games-played="0"' in body


def test_a_port_in_use_is_refused_before_any_game(match_run: Served, tmp_path: Path) -> None:
    host, port = match_run.url[len("http://"):].rstrip("/").rsplit(":", 1)
    done = subprocess.run(
        [*GINREF, "match", "random", "simple", "--record", "r.gin", "--serve", f"{host}:{port}",
         *FAST],
        capture_output=True, text=True, cwd=tmp_path, timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 1, done.stderr
    assert f"cannot serve the live page on {host}:{port}" in done.stderr
    assert "Traceback" not in done.stderr and "Match:" not in done.stderr
    assert not (tmp_path / "r.gin").exists()


# ------------------------------------------------------------------------------------------
# Refusals


@pytest.mark.parametrize("value", ["70000", "abc", "-1", "host:", ":80", "::1:80"])
def test_a_bad_serve_value_is_a_usage_error(value: str) -> None:
    result = CliRunner().invoke(cli, ["match", "random", "simple", "--serve", value])
    assert result.exit_code == 2, result.output
    assert "--serve" in result.output and "Traceback" not in result.output


def test_without_the_web_extra_serve_is_refused(tmp_path: Path) -> None:
    """aiohttp hidden: exit 2 naming the install line, and no engine started."""
    marker = tmp_path / "STARTED"
    engine = f"{sys.executable} -c \"open({str(marker)!r}, 'w')\""
    hide = "import sys; sys.modules['aiohttp'] = None; from referee.__main__ import main; main()"
    for args in (
        ["match", engine, "random", "--serve", "0", *FAST],
        ["tournament", "--resume", str(tmp_path), "--serve", "8080"],
    ):
        done = subprocess.run(
            [sys.executable, "-c", hide, *args], capture_output=True, text=True, cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60,
        )
        assert done.returncode == 2, done.stderr
        assert "pip install 'ginproto[web]'" in done.stderr
        assert "Traceback" not in done.stderr
        assert not marker.exists()


def test_a_title_is_shown_as_written_even_when_it_looks_like_a_placeholder() -> None:
    # A tournament's name comes from its config: the page shows it escaped and as it is, and
    # never reads it as one of the page's own placeholders.
    pytest.importorskip("aiohttp")
    from referee.views.html.page import asset
    from referee.views.live import LiveState
    from referee.views.live_server import _page

    page = _page(LiveState("<b>{{script}}</b> cup", "tournament"))
    assert "&lt;b&gt;{{script}}&lt;/b&gt; cup" in page
    assert page.count(asset("live.js")) == 1
