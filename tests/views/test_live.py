"""``--serve``: the live page of a tournament or a match, in a real headless Chromium and over
plain HTTP.

The browser is the distribution's ``chromium`` (``GINPROTO_CHROMIUM`` names another), as in
tests/views/test_html.py: without it the browser tests skip, saying why, except under CI
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

ROOT = Path(__file__).resolve().parents[2]
GINREF = [sys.executable, "-c", "import sys; from referee.__main__ import main; sys.exit(main())"]
FAST = ["--tc", "inf", "--no-sandbox"]
CARD = re.compile(r"\b[A2-9TJQK][cdhs]\b")
URL_LINE = re.compile(r"Live page: (http://\S+)")
CLIENTS = 50


# ------------------------------------------------------------------------------------------
# A served run


def _child_setup(files: int | None = None) -> None:
    """Ctrl-C as a terminal gives it, and death with the test run; ``files``: the process's
    open-file limit (``ulimit -n``)."""
    import ctypes
    import resource

    signal.signal(signal.SIGINT, signal.SIG_DFL)
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if files is not None:
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (files, hard))


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

    @property
    def port(self) -> int:
        return int(self.url.rstrip("/").rsplit(":", 1)[1])

    def get(
        self, path: str, method: str = "GET", headers: dict[str, str] | None = None
    ) -> tuple[int, str]:
        # Always to 127.0.0.1 (a run served on 0.0.0.0 too), naming the host it was given.
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.request(
                method, path, headers=headers or {"Host": self.url[len("http://"):].rstrip("/")}
            )
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

    def start(
        *args: str, wait: bool = True, address: str = "127.0.0.1:0", files: int | None = None
    ) -> Served:
        """``files``: the run's open-file limit (``ulimit -n``), when not the test's."""
        folder = tmp_path_factory.mktemp("live")
        out, err = folder / "stdout", folder / "stderr"
        with out.open("wb") as o, err.open("wb") as e:
            process = subprocess.Popen(
                [*GINREF, *args, "--serve", address],
                stdin=subprocess.DEVNULL, stdout=o, stderr=e, cwd=folder,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
                start_new_session=True, preexec_fn=lambda: _child_setup(files),
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


def _tournament_toml(
    folder: Path, games: int, engines: list[tuple[str, str]], seed: int = 11
) -> Path:
    lines = [
        'event = "Live cup"', f"games = {games}", f"seed = {seed}", "concurrency = 2",
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
    assert page.page.get_attribute("#seed", "data-seed") == "11"  # the run is over
    assert not page.page.query_selector("[data-withheld]")
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


# ------------------------------------------------------------------------------------------
# What the page keeps to itself while the run goes on

SEED = "8675309421"
GAME_BLOB = re.compile(
    r'<script type="application/gzip-base64" id="ginproto-game-\d+">([^<]*)</script>'
)


def _unpacked(page: str) -> str:
    """A page with the games it packs (the viewer's gzip-base64 blobs) unpacked."""
    import base64
    import gzip

    blobs = [gzip.decompress(base64.b64decode(b)).decode() for b in GAME_BLOB.findall(page)]
    return "\n".join([page, *blobs])


def _secret_in(text: str) -> list[str]:
    """What ``text`` gives away of the run's secret: the seed's digits, a Seed or Key header
    (as a record writes it, or as the viewer's data names it)."""
    found = [SEED] if SEED in text else []
    found += [w for w in ('[Seed "', '[Key "', '"Seed":', '"Key":') if w in text]
    return found


def _keys(records: list[Any]) -> dict[int, str]:
    return {int(r.header("Game")): r.header("Key") for r in records}


@pytest.mark.parametrize(
    "kind", ["tournament", "match"], ids=["tournament", "duplicate-match"]
)
def test_no_seed_and_no_key_while_the_run_goes_on(
    serve: Callable[..., Served], tmp_path: Path, kind: str
) -> None:
    """A run seeded with 8675309421: no response (/, /state, /game/N for every N) and no event
    gives away its digits or a deck key before the run is over, and a game's replay is served
    only once every game sharing its deck key is finished. Once it is over, the seed shows."""
    if kind == "tournament":
        run = serve("tournament", str(_tournament_toml(tmp_path, 4, ENGINES, int(SEED))))
        total = 12
    else:
        total = 6
        run = serve("match", "random", "simple", "--games", str(total), "--duplicate",
                    "--seed", SEED, "--record", "m.gin", *FAST)
    events = Events(run.url)
    served: list[tuple[int, set[int]]] = []  # a replay served, and the games finished after
    deadline = time.monotonic() + 120
    while True:
        assert time.monotonic() < deadline, "the run did not end"
        pages = {n: run.get(f"/game/{n}") for n in range(1, total + 1)}
        index = run.get("/")
        state = run.state()
        if state["over"]:
            break
        for text in (index[1], json.dumps(state)):
            assert not _secret_in(text), text
        assert state["seed"] is None
        finished = {f["n"] for f in state["finished"]}
        for n, (status, page) in pages.items():
            whole = _unpacked(page)
            assert not _secret_in(whole), (n, _secret_in(whole))
            if status == 200 and GAME_BLOB.search(page):
                served.append((n, finished))
            elif status == 200:  # listed, its replay withheld
                assert "data-withheld" in page and n in finished, (n, page)
            else:
                assert status == 404
    streamed = events.join()
    for event in streamed:
        if not event["over"]:
            assert not _secret_in(json.dumps(event)), event
    # After the run: the seed, and every replay with its Seed and Key.
    assert state["seed"] == SEED and state["withheld"] == []
    status, page = run.get("/game/1")
    assert status == 200 and _secret_in(_unpacked(page)) == [SEED, '"Seed":', '"Key":']
    assert run.interrupt() == 130
    _clean(run.stderr())
    records = list(read_games(tmp_path / "cup" / "games.gin" if kind == "tournament"
                              else run.folder / "m.gin"))
    keys = _keys(records)
    assert len(set(keys.values())) < total, "no two games share a deck key"
    for n, finished in served:  # served while a game of its key was still to finish: a leak
        sharing = {m for m, k in keys.items() if k == keys[n]}
        assert sharing <= finished, (n, sharing - finished)


# ------------------------------------------------------------------------------------------
# The standings, ranked at every moment


def _ranked(standings: dict[str, Any], by: Callable[[dict[str, Any]], Any]) -> None:
    engines = standings["engines"]
    assert [e["rank"] for e in engines] == list(range(1, len(engines) + 1)), engines
    keys = [by(e) for e in engines]
    assert keys == sorted(keys), engines


def test_match_standings_ranked_from_the_first_game(serve: Callable[..., Served]) -> None:
    """``random`` named first, ``simple`` winning: in every state sent from the first game
    on, the page ranks Simple first, as the match's final table does, and the head-to-head
    figures still say whose they are."""
    run = serve("match", "random", "simple", "--games", "3", "--seed", "5", *FAST)
    events = Events(run.url)
    polled = [run.state()]
    deadline = time.monotonic() + 60
    while not polled[-1]["over"]:
        assert time.monotonic() < deadline and run.process.poll() is None, run.stderr()
        time.sleep(0.05)
        polled.append(run.state())
    state = polled[-1]
    streamed = events.join()
    assert run.interrupt() == 130
    table = run.out.read_text()
    ranked = [line.split()[1] for line in table.splitlines() if line[:1].isdigit()]
    assert ranked == ["Simple", "Random"], table
    # Every state sent or asked for from the first game on, the last one too.
    played = [e for e in streamed + polled if e["played"] >= 1]
    assert played, streamed
    for event in played:
        standings = event["standings"]
        _ranked(standings, lambda e: -e["score"])
        assert [e["name"] for e in standings["engines"]] == ranked
        assert standings["head_to_head"]["names"] == ["Random", "Simple"]
    final = state["standings"]
    assert final["head_to_head"]["wins"] == next(
        e["wins"] for e in final["engines"] if e["name"] == "Random"
    )



# ------------------------------------------------------------------------------------------
# The server, in the test's own process, serving a state made to order


def _records(keys: list[int]) -> list[str]:
    """The records of games 1, 2, ... dealt from SEED with the deck ``keys`` (in order)."""
    from helpers import KnockerPlayer

    from ginproto.record import EngineInfo, record_from_log, write_game
    from ginproto.rules import Rules
    from ginproto.table import play_game

    out = []
    for n, key in enumerate(keys, 1):
        log = play_game(Rules(), [KnockerPlayer(n), KnockerPlayer(100 + n)], int(SEED), key)
        record = record_from_log(
            log, [EngineInfo("a"), EngineInfo("b")], event="Cup", extra=[("Game", str(n))]
        )
        out.append(write_game(record))
    return out


class Local:
    """A ``LiveServer`` on 127.0.0.1 in this process, and a client of it."""

    def __init__(
        self,
        state: Any,
        clients_cap: int | None = None,
        header_timeout: float = 0,
        write_timeout: float = 0,
    ) -> None:
        from referee.views.live import Address
        from referee.views.live_server import LiveServer

        self.server = LiveServer(state, Address("127.0.0.1", 0), clients_cap)
        if header_timeout:
            self.server.header_timeout = header_timeout
        if write_timeout:
            self.server.write_timeout = write_timeout
        self.port = self.server.start().port

    def get(self, path: str, host: str | None = None) -> tuple[int, str]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.request("GET", path, headers={"Host": host or f"127.0.0.1:{self.port}"})
            r = conn.getresponse()
            return r.status, r.read().decode("utf-8", "replace")
        finally:
            conn.close()

    def close(self) -> None:
        self.server.stop()


@pytest.fixture
def local() -> Iterator[Callable[..., Local]]:
    pytest.importorskip("aiohttp")
    made: list[Local] = []

    def make(*args: Any, **kwargs: Any) -> Local:
        made.append(Local(*args, **kwargs))
        return made[-1]

    yield make
    for each in made:
        each.close()


def _finish(state: Any, number: int, record: str) -> None:
    from referee.views.live import game_entry

    state.game_done(game_entry(number, ["a", "b"], 0, "knock", 1, None), record)


def test_a_deal_is_withheld_while_games_sharing_its_key_are_to_be_played(
    local: Callable[..., Local],
) -> None:
    """Games 1 and 2 share deck key 0: game 1's replay waits for game 2. Game 3 (key 1, alone)
    opens as soon as it is finished, without the seed or its key. A run stopped with game 4
    still to play (a tournament that --resume continues) keeps the seed; a run over shows it."""
    from referee.views.live import LiveState

    records = _records([0, 0, 1, 2])
    state = LiveState("Cup", "tournament")
    state.plan({1: 0, 2: 0, 3: 1, 4: 2}, int(SEED))
    state.start(4, 0)
    server = local(state)

    _finish(state, 1, records[0])
    status, page = server.get("/game/1")
    assert status == 200 and "data-withheld" in page and not GAME_BLOB.search(page)
    assert server.get("/state")[1].count(SEED) == 0
    assert json.loads(server.get("/state")[1])["withheld"] == [1]

    _finish(state, 3, records[2])
    status, page = server.get("/game/3")
    assert status == 200 and 'id="ginproto-game-3"' in page
    assert _secret_in(_unpacked(page)) == []
    assert server.get("/game/1")[1].count("data-withheld") == 1

    _finish(state, 2, records[1])
    for n in (1, 2):
        status, page = server.get(f"/game/{n}")
        assert status == 200 and f'id="ginproto-game-{n}"' in page
        assert _secret_in(_unpacked(page)) == []
    assert json.loads(server.get("/state")[1])["withheld"] == []

    state.run_over("stopped", resumable=True)  # game 4 is still to be played
    data = json.loads(server.get("/state")[1])
    assert data["over"] and data["seed"] is None
    assert _secret_in(_unpacked(server.get("/game/1")[1])) == []

    state.run_over("complete")
    assert json.loads(server.get("/state")[1])["seed"] == SEED
    page = _unpacked(server.get("/game/1")[1])
    assert _secret_in(page) == [SEED, '"Seed":', '"Key":']


def test_a_game_page_is_rendered_once(
    local: Callable[..., Local], monkeypatch: pytest.MonkeyPatch
) -> None:
    from referee.views import live_server
    from referee.views.live import LiveState

    renders: list[tuple[Any, ...]] = []
    render = live_server._viewer

    def counted(*args: Any) -> Any:
        renders.append(args)
        return render(*args)

    monkeypatch.setattr(live_server, "_viewer", counted)
    state = LiveState("Cup", "match")
    state.plan({1: 0}, 1)
    state.start(1, 0)
    _finish(state, 1, _records([0])[0])
    server = local(state)
    pages = [server.get("/game/1") for _ in range(5)]
    assert pages[0][0] == 200 and 'id="ginproto-game-1"' in pages[0][1]
    assert all(p == pages[0] for p in pages)
    assert len(renders) == 1


@pytest.mark.parametrize(
    "path",
    [
        "/game/%EF%BC%91",  # a full-width 1, which int() reads as 1
        "/game/" + "1" * 4301,  # more digits than int() reads
        "/game/" + "0" * 30 + "1",  # game 1 written too long
    ],
    ids=["full-width", "4301-digits", "long-zeros"],
)
def test_a_bad_game_number_is_a_short_404(
    local: Callable[..., Local], caplog: pytest.LogCaptureFixture, path: str
) -> None:
    import logging

    from referee.views.live import LiveState

    caplog.set_level(logging.DEBUG)
    state = LiveState("Cup", "match")
    state.plan({1: 0, 2: 1}, 1)
    state.start(2, 0)
    _finish(state, 1, _records([0])[0])
    server = local(state)
    status, body = server.get(path)
    assert status == 404 and len(body) < 100, (status, body[:200])
    assert "Traceback" not in body
    for other in ("/game/2", "/game/9", "/game/0"):  # not finished, beyond the games, none
        assert server.get(other)[0] == 404
    assert all(len(r.getMessage()) < 200 for r in caplog.records), caplog.text[:500]
    assert server.get("/game/1")[0] == 200


def test_a_host_the_server_does_not_answer_for_is_a_421(local: Callable[..., Local]) -> None:
    """DNS rebinding: a page of another site that reaches 127.0.0.1 still names its own host."""
    from referee.views.live import LiveState

    server = local(LiveState("Cup", "match"))
    port = server.port
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", f"LOCALHOST:{port}"):
        assert server.get("/state", host)[0] == 200, host
    for host in (f"rebind.example:{port}", "rebind.example", f"localhost:{port + 1}",
                 "127.0.0.1"):
        for path in ("/", "/state", "/events", "/game/1"):
            status, body = server.get(path, host)
            assert status == 421 and len(body) < 100, (host, path, status)


def _stall(port: int) -> socket.socket:
    """A client that sends half a request line and nothing more."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(b"GET /state HTTP/1.1\r\nHost: 127.0")
    return sock


def test_connections_beyond_the_cap_are_answered_503(local: Callable[..., Local]) -> None:
    """A server for 4 connections at once, 4 clients stalled on it: a fifth is answered 503
    at once, and once they have gone, the server serves again."""
    from referee.views.live import LiveState

    server = local(LiveState("Cup", "match"), clients_cap=4)
    stalled = [_stall(server.port) for _ in range(4)]
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=30) as extra:
            with contextlib.suppress(OSError):
                extra.sendall(b"GET /state HTTP/1.1\r\n")
            assert extra.recv(64).startswith(b"HTTP/1.1 503 "), "the fifth was served"
    finally:
        for sock in stalled:
            sock.close()
    deadline = time.monotonic() + 30
    while (status := server.get("/state")[0]) == 503 and time.monotonic() < deadline:
        time.sleep(0.05)  # the server sees them go as it gets to it
    assert status == 200


def test_a_client_that_never_finishes_its_headers_is_dropped(
    local: Callable[..., Local],
) -> None:
    from referee.views.live import LiveState

    server = local(LiveState("Cup", "match"), header_timeout=0.2)
    stalled = [_stall(server.port) for _ in range(3)]
    try:
        for sock in stalled:  # each closed by the server: the end of its stream, or a reset
            with contextlib.suppress(ConnectionResetError):
                assert sock.recv(64) == b""
    finally:
        for sock in stalled:
            sock.close()
    assert server.get("/state")[0] == 200


# ------------------------------------------------------------------------------------------
# Served to others, and to many


def test_a_public_address_is_warned_about(serve: Callable[..., Served]) -> None:
    """Served on every interface, the page is public: stderr says so, and any Host is
    answered (the name others reach it by is not known). (The test's requests go to
    127.0.0.1 alone.)"""
    run = serve("match", "random", "simple", "--games", "1", *FAST, address="0.0.0.0:0")
    assert "warning: the live page is public" in run.stderr()
    status, _ = run.get("/state", headers={"Host": f"gin.example:{run.port}"})
    assert status == 200
    run.wait_over()
    assert run.interrupt() == 130
    _clean(run.stderr())


def test_a_loopback_address_is_not_warned_about(match_run: Served) -> None:
    match_run.wait_over()
    assert "public" not in match_run.stderr()


STALLED = 1100


@pytest.mark.slow
def test_stalled_clients_cannot_stop_the_run(
    serve: Callable[..., Served], tmp_path: Path
) -> None:
    """Under ``ulimit -n 1024``, 1 100 clients open a connection and never finish their
    request, before the first game (its engine waits for the test to let it start): the
    tournament then plays every game, the page serves again, the command ends by itself
    (``--serve-for``) with exit 0, and stderr holds no traceback."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = STALLED + 200  # this test's own sockets, and what pytest holds
    if soft != resource.RLIM_INFINITY and soft < need:
        if hard != resource.RLIM_INFINITY and hard < need:
            pytest.skip(f"the test needs {need} open files; the hard limit is {hard}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))
    games = 6
    go = tmp_path / "go"
    gated = (  # the random engine, once the file ``go`` exists
        f"import os, sys, time; sys.path.insert(0, {str(ROOT)!r});"
        f" [time.sleep(0.05) for _ in iter(lambda: os.path.exists({str(go)!r}), True)];"
        " from engines.random_engine import main; main()"
    )
    toml = tmp_path / "cup.toml"
    toml.write_text(
        "\n".join([
            'event = "Stalled cup"', f"games = {games}", "seed = 11", "concurrency = 2",
            'tc = "inf"', 'sandbox = "off"', 'output = "cup"', "startup_timeout = 300",
            "[[engines]]", 'name = "Random"',
            f"command = [{json.dumps(sys.executable)}, \"-c\", {json.dumps(gated)}]",
            "[[engines]]", 'name = "Simple"', 'command = "simple"',
        ]) + "\n"
    )
    # The page stays up 20 s after the run: the stalled clients are dropped 10 s after they
    # connected (the header timeout), and then it answers again.
    run = serve("tournament", str(toml), "--serve-for", "20", files=1024)
    stalled: list[socket.socket] = []
    try:
        deadline = time.monotonic() + 60
        while len(stalled) < STALLED and time.monotonic() < deadline:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            stalled.append(sock)
            sock.settimeout(5)
            with contextlib.suppress(OSError):  # refused, or answered 503 and closed
                sock.connect(("127.0.0.1", run.port))
                sock.sendall(b"GET /state HTTP/1.1\r\nHost: 127.0")
        assert run.process.poll() is None, run.stderr()[-3000:]
        assert not re.search(r"^\[\d+/\d+", run.stderr(), re.M), "a game was played"
        go.touch()  # the games start, the clients still there
        deadline = time.monotonic() + 120
        state: dict[str, Any] = {}
        while not state:
            assert run.process.poll() is None, run.stderr()[-3000:]
            assert time.monotonic() < deadline, "the run did not end"
            with contextlib.suppress(OSError, http.client.HTTPException):
                status, body = run.get("/state")
                if status == 200 and json.loads(body)["over"]:
                    state = json.loads(body)
            time.sleep(0.2)
    finally:
        go.touch()
        for sock in stalled:
            sock.close()
        if soft != resource.RLIM_INFINITY and soft < need:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert len(stalled) == STALLED
    assert state["played"] == state["total"] == games
    assert state["status"].startswith("complete")
    assert run.process.wait(timeout=60) == 0, run.stderr()[-3000:]
    stderr = run.stderr()
    _clean(stderr)
    assert "Too many open files" not in stderr
    assert len(list(read_games(tmp_path / "cup" / "games.gin"))) == games


def test_a_client_that_stops_reading_is_dropped(local: Callable[..., Local]) -> None:
    """A client that asks for a large /state and reads none of it: once the server has
    waited ``write_timeout`` for it to take a byte, the connection is closed, and no more
    is kept for it."""
    from referee.views.live import LiveState, game_entry

    state = LiveState("Cup", "match")
    state.start(20_000, 0)
    for n in range(1, 20_001):  # some megabytes of JSON
        state.add_finished(game_entry(n, ["a" * 40, "b" * 40], 0, "knock", 1, None))
    server = local(state, write_timeout=0.2)
    listener = server.server.listener
    assert listener is not None
    for each in listener.sockets:  # small system buffers: the server's own buffer fills
        each.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 8192)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.settimeout(30)
        sock.connect(("127.0.0.1", server.port))
        sock.sendall(f"GET /state HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode())
        gate = server.server.gate
        assert gate is not None
        deadline = time.monotonic() + 60
        while not gate.count and time.monotonic() < deadline:  # until the server has it
            time.sleep(0.01)
        while gate.count and time.monotonic() < deadline:
            time.sleep(0.05)
        assert gate.count == 0, "the connection of a client that reads nothing is kept"
        received = 0
        with contextlib.suppress(ConnectionResetError):
            while chunk := sock.recv(65536):
                received += len(chunk)
        assert received < 1_000_000
    finally:
        sock.close()
    assert server.get("/")[0] == 200


@pytest.mark.parametrize(
    ("files", "cap"), [(1024, 256), (64, 16), (20, 16), (1_000_000, 1024)]
)
def test_the_connection_cap_follows_the_open_file_limit(
    monkeypatch: pytest.MonkeyPatch, files: int, cap: int
) -> None:
    import resource

    pytest.importorskip("aiohttp")
    from referee.views import live_server

    monkeypatch.setattr(resource, "getrlimit", lambda which: (files, resource.RLIM_INFINITY))
    assert live_server.max_clients() == cap


def test_the_page_marks_a_withheld_deal_and_shows_the_seed_at_the_end(
    browser: Any, local: Callable[..., Local]
) -> None:
    from referee.views.live import LiveState

    records = _records([0, 0])
    state = LiveState("Cup", "tournament")
    state.plan({1: 0, 2: 0}, int(SEED))
    state.start(2, 0)
    _finish(state, 1, records[0])
    server = local(state)
    page = Page(browser, f"http://127.0.0.1:{server.port}/")
    page.page.wait_for_selector("[data-finished='1'][data-withheld]", timeout=15_000)
    assert "deal withheld" in page.page.inner_text("[data-finished='1']")
    assert page.page.query_selector("#seed") is None
    _finish(state, 2, records[1])
    page.page.wait_for_selector("[data-finished='2']", timeout=15_000)
    page.page.wait_for_function("() => !document.querySelector('[data-withheld]')")
    assert SEED not in page.page.content()
    state.run_over("complete")
    page.page.wait_for_selector(f"#seed[data-seed='{SEED}']", timeout=15_000)
    assert not page.errors and not page.outside(), (page.errors, page.outside())
    page.page.close()
