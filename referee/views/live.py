"""A run watched live: what a spectator may see of it, kept for the web server to publish.

``ginref tournament --serve`` and ``ginref match --serve`` keep one ``LiveState``: the progress,
the standings, the finished games (each with its record, for the replay viewer) and the games
in progress. The run writes into it; the server (``referee.views.live_server``) reads it at its own
pace. Nothing here ever waits for a reader: the run stores a snapshot and goes on, and a
reader that falls behind skips to the newest one. So a slow or vanished browser never slows
a game, and ``--serve`` changes nothing that is played, recorded or stored.

A game in progress is seen as a spectator at the table sees it (``spectator``): the scores,
the discard pile, the number of cards in the stock, whose turn it is and the moves so far,
with the cards that were shown (the upcard, a card taken from the pile, every discard) and
never another one: no hand card, no stock card, no card drawn from the stock. It is read
from the view the table gives the player to move (``ginproto.game.GameView``), through a
``Player`` wrapper (``Watcher.players``); a game played in a worker process sends its
spectator snapshots, a few a second at most, through a pipe to the referee.

Nothing of the run's secret is shown while it goes on: not the seed, not a deck key (with
either, ``hand_deck(seed, key, hand)`` rebuilds decks still being played). A finished game's
deal (its record, in the replay viewer) is shown once no game of the run that is still in
progress or still to be played shares its deck key (``LiveState.plan``): the games of a
duplicate set, and the same round of every pairing of a tournament, are dealt the same cards.
Until then the game is listed, its deal "withheld". Once nothing is left to play, everything
is shown, the seed too.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import threading
import time
import zlib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from ginproto.cards import Card
from ginproto.game import Entry, Game, GameView
from ginproto.moves import Move, MoveKind
from ginproto.table import Decision, Fault, Player
from referee.views.progress import Progress

if TYPE_CHECKING:
    from referee.results.played import GameJob, Played
    from referee.results.report import Standings
    from referee.results.standings import TournamentStandings
    from referee.results.store import GameResult, Scheduled, Store

log = logging.getLogger(__name__)

__all__ = [
    "WEB_INSTALL",
    "Address",
    "LiveState",
    "Watcher",
    "parse_address",
    "spectator",
    "web_missing",
]

WEB_INSTALL: Final = "pip install 'ginproto[web]'"
DEFAULT_HOST: Final = "127.0.0.1"
SEND_EVERY: Final = 0.1  # seconds between two batches of snapshots from a worker process
FINISHED_PER_EVENT: Final = 500  # finished games at most in one event (a late page catches up)


def web_missing() -> str | None:
    """Why ``--serve`` cannot run here (the web extra is not installed), or None."""
    try:
        import aiohttp  # noqa: F401
    except ImportError:
        return f"--serve needs the web server, which is not installed: {WEB_INSTALL}"
    return None


@dataclass(frozen=True, slots=True)
class Address:
    """Where the live page is served: ``host`` (127.0.0.1 unless given) and ``port`` (0: any
    free port)."""

    host: str
    port: int

    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"


def parse_address(text: str) -> Address:
    """``PORT``, ``HOST:PORT`` or ``[IPV6]:PORT``; ``ValueError`` saying what is wrong."""
    text = text.strip()
    host, sep, port = text.rpartition(":")
    if not sep:
        host = ""
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        raise ValueError(f"{text!r}: write an IPv6 host in brackets, as [::1]:8080")
    if not port.isdigit() or not port.isascii():
        raise ValueError(f"{text!r} is not [HOST:]PORT (such as 8080 or 0.0.0.0:8080)")
    number = int(port)
    if not 0 <= number <= 65535:
        raise ValueError(f"port {number} is out of range (0 to 65535; 0 picks a free one)")
    if sep and not host:
        raise ValueError(f"{text!r}: the host before the ':' is empty")
    return Address(host or DEFAULT_HOST, number)


# ------------------------------------------------------------------------------------------
# What a spectator sees


def _public_card(kind: MoveKind, move: Move, drawn: Card | None) -> Card | None:
    """The card a move shows the table: the one taken from the pile, or the one discarded.
    A stock draw shows none."""
    if kind in (MoveKind.TAKE, MoveKind.PILE):
        return drawn
    if kind in (MoveKind.DISCARD, MoveKind.KNOCK):
        return move.card
    return None


def spectator(number: int, names: Sequence[str], view: GameView) -> dict[str, Any]:
    """Game ``number`` (from 1) as a spectator sees it when the player of ``view`` is to move:
    the players ``names`` (by player number), the hand's dealer and roles, the scores, the
    pile, the stock count, who is to move and the moves of the hand, with only the cards the
    table has seen."""
    hand = view.hand
    seats = view.seats
    moves = []
    for turn in hand.history:
        kind = turn.move.kind
        card = _public_card(kind, turn.move, turn.card)
        move: dict[str, Any] = {"p": seats[turn.seat], "k": str(kind)}
        if card is not None:
            move["c"] = str(card)
        moves.append(move)
    roles = view.roles
    return {
        "g": number,
        "players": list(names),
        "hand": view.hand_number,
        "move": len(hand.history),
        "dealer": seats[hand.dealer],
        "seats": list(seats),
        "roles": None
        if roles is None
        else {"box": roles.box, "captain": roles.captain, "sitter": roles.sitter},
        "limit": hand.knock_limit,
        "totals": [list(t) for t in view.totals],
        "to": seats[hand.to_move],
        "phase": str(hand.phase),
        "pile": "".join(str(c) for c in hand.pile),
        "stock": hand.stock,
        "moves": moves,
    }


def _hand_result(entry: Entry) -> dict[str, Any]:
    """A finished hand as the table announces it: who won it, how and for how many points
    (both hands were shown, but the page needs no card of them)."""
    return {
        "hand": entry.number,
        "outcome": str(entry.result.outcome),
        "winner": entry.winner,
        "points": entry.result.points,
        "totals": [list(t) for t in entry.totals],
    }


# ------------------------------------------------------------------------------------------
# Watching the games in progress


_ENDED: Final = "ended"


class _Spectated:
    """A player whose decisions are watched: before each one, the view it is given goes to
    the watcher (the player itself is untouched, and answers as it would)."""

    def __init__(self, inner: Player, watcher: Watcher, number: int, names: list[str]) -> None:
        self.inner = inner
        self.watcher = watcher
        self.number = number
        self.names = names

    def decide(self, view: GameView, decision: Decision) -> Move:
        if decision is not Decision.ADVICE:  # the sitter's advice is the captain's to hear
            self.watcher.observe(self.number, self.names, view)
        return self.inner.decide(view, decision)

    def hand_over(self, player: int, entry: Entry) -> None:
        self.inner.hand_over(player, entry)
        if player == 0:
            self.watcher.hand_over(self.number, entry)

    def game_over(self, player: int, game: Game, fault: Fault | None) -> None:
        self.inner.game_over(player, game, fault)
        if player == 0:
            self.watcher.ended(self.number)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class Watcher:
    """Collects the games in progress for a ``LiveState``, from the referee's own worker
    threads or from its worker processes (forked after the watcher was made).

    The players only store their newest view (``observe``): no conversion, no lock, no wait.
    In the referee's process, the server turns them into snapshots when it publishes; in a
    worker process, a thread of its own sends them, a few times a second, through a pipe that
    a thread of the referee reads into the state."""

    def __init__(self, state: LiveState, names: Sequence[str]) -> None:
        self.state = state
        self.names = list(names)
        self._pid = os.getpid()
        self._latest: dict[int, Any] = {}
        self._results: dict[int, dict[str, Any]] = {}
        self._pipe: Any = None
        self._sender: threading.Thread | None = None
        self._reader: threading.Thread | None = None
        if "fork" in multiprocessing.get_all_start_methods():
            self._pipe = multiprocessing.get_context("fork").Queue()
            self._reader = threading.Thread(target=self._read, name="live-reader", daemon=True)
            self._reader.start()
        state.sources.append(self.collect)

    def players(self, job: GameJob, players: list[Player]) -> list[Player]:
        """``job``'s players, watched (a backend's ``watch``: ``referee.scheduling.backends``)."""
        names = [self.names[e] for e in job.lineup]
        return [_Spectated(p, self, job.index + 1, names) for p in players]

    # -- in the worker that plays ---------------------------------------------------------
    def _here(self) -> None:
        """In a worker process forked from the referee: start afresh, with a sender."""
        if os.getpid() == self._pid:
            return
        self._pid = os.getpid()
        self._latest = {}
        self._results = {}
        if self._pipe is not None:
            self._pipe.cancel_join_thread()  # a worker's exit never waits for the pipe
            self._sender = threading.Thread(target=self._send, name="live-sender", daemon=True)
            self._sender.start()

    def observe(self, number: int, names: list[str], view: GameView) -> None:
        self._here()
        self._latest[number] = (names, view)

    def hand_over(self, number: int, entry: Entry) -> None:
        self._here()
        self._results[number] = _hand_result(entry)

    def ended(self, number: int) -> None:
        self._here()
        self._latest[number] = _ENDED

    def collect(self) -> dict[int, dict[str, Any] | None]:
        """The newest snapshot of each game seen since the last call (None: it ended)."""
        latest, self._latest = self._latest, {}
        out: dict[int, dict[str, Any] | None] = {}
        for number, item in latest.items():
            if item == _ENDED:
                out[number] = None
                self._results.pop(number, None)
                continue
            names, view = item
            snap = spectator(number, names, view)
            last = self._results.get(number)
            if last is not None:
                snap["last"] = last
            out[number] = snap
        return out

    def _send(self) -> None:
        while True:
            time.sleep(SEND_EVERY)
            items = self.collect()
            if items:
                with contextlib.suppress(Exception):  # the referee is gone: nobody watches
                    self._pipe.put(items)

    # -- in the referee -------------------------------------------------------------------
    def _read(self) -> None:
        while True:
            try:
                items = self._pipe.get()
            except (EOFError, OSError):
                return
            if items is None:
                return
            self.state.merge_live(items)

    def close(self) -> None:
        if self._pipe is not None and os.getpid() == self._pid:
            with contextlib.suppress(Exception):
                self._pipe.put(None)


# ------------------------------------------------------------------------------------------
# The state the page shows


class LiveState:
    """The run as the live page shows it. The run's thread writes (``plan``, ``finished``,
    ``set_standings``, ``run_over``), worker threads or a reader thread add the games in
    progress (``merge_live``), and the server reads (``event``): every method takes the lock
    for a moment and none waits for anything else.

    ``record(n)`` gives the record text of finished game ``n`` (from the store, or from
    memory), for the replay viewer; ``deal_shown(n)`` says whether its deal may be shown yet.
    """

    def __init__(self, title: str, kind: str) -> None:
        self.title = title
        self.kind = kind  # "tournament" or "match"
        self.lock = threading.Lock()
        self.version = 0
        self.total = 0
        self.played = 0
        self.over = False
        self.status = "starting"
        self.standings: dict[str, Any] = {}
        self.finished: list[dict[str, Any]] = []
        self.live: dict[int, dict[str, Any]] = {}
        self._done: set[int] = set()
        self._records: dict[int, bytes] = {}
        self.record_reader: Callable[[int], str | None] | None = None
        self.sources: list[Callable[[], dict[int, dict[str, Any] | None]]] = []
        self.progress: Progress | None = None
        self._cache: dict[int, tuple[int, dict[str, Any], int]] = {}
        # The run's secret, and which finished games' deals wait for games sharing their key.
        self._seed: str | None = None
        self._planned = False
        self._keys: dict[int, int] = {}  # game number -> deck key, every game of the run
        self._open: Counter[int] = Counter()  # deck key -> its games not finished yet
        self._waiting: dict[int, set[int]] = {}  # deck key -> its finished games, withheld
        self.revealed = False  # nothing is left to play: everything may be shown

    # -- written by the run ---------------------------------------------------------------
    def plan(self, keys: Mapping[int, int], seed: int | str) -> None:
        """The deck key of every game of the run (game number from 1 -> key), those finished
        already included, and the run's seed (shown once nothing is left to play). Without a
        plan, no finished game's deal is shown before the run is over."""
        with self.lock:
            self._seed = str(seed)
            self._planned = True
            self._keys = dict(keys)
            self._open = Counter(k for n, k in self._keys.items() if n not in self._done)
            self._waiting = {}
            for n in self._done:
                key = self._keys.get(n)
                if key is not None and key in self._open:
                    self._waiting.setdefault(key, set()).add(n)
            self.version += 1

    def _finish(self, number: int) -> None:
        """Game ``number`` is finished (the lock held): its key has one open game fewer, and
        the finished games of a key with none left are shown."""
        if number in self._done:
            return
        self._done.add(number)
        key = self._keys.get(number)
        if key is None:
            return
        left = self._open[key] - 1
        if left > 0:
            self._open[key] = left
            self._waiting.setdefault(key, set()).add(number)
        else:
            self._open.pop(key, None)
            self._waiting.pop(key, None)

    def deal_shown(self, number: int) -> bool:
        """Whether finished game ``number``'s deal may be shown: the run is over, or no game
        still in progress or to be played shares its deck key."""
        with self.lock:
            return self._deal_shown(number)

    def _deal_shown(self, number: int) -> bool:
        if self.revealed:
            return True
        if not self._planned or number not in self._done:
            return False
        key = self._keys.get(number)
        return key is not None and key not in self._open

    def _withheld(self) -> list[int]:
        """The finished games whose deal is not shown yet (the lock held)."""
        if self.revealed:
            return []
        if not self._planned:
            return sorted(self._done)
        return sorted(n for games in self._waiting.values() for n in games)

    def start(self, total: int, played: int, status: str = "playing") -> None:
        with self.lock:
            self.total, self.played, self.status = total, played, status
            self.progress = Progress(total - played, quiet=True)
            self.version += 1

    def add_finished(self, entry: dict[str, Any], record: str | None = None) -> None:
        """Finished game ``entry["n"]``: its line in the list, and its record (kept
        compressed) unless ``record_reader`` reads it from the store."""
        with self.lock:
            number = entry["n"]
            self._finish(number)
            self.live.pop(number, None)
            self.finished.append(entry)
            if record is not None:
                self._records[number] = zlib.compress(record.encode("utf-8"), 6)
            self.version += 1

    def game_done(self, entry: dict[str, Any], record: str | None = None) -> None:
        """A game of this run finished: as ``add_finished``, and one more step of progress."""
        self.add_finished(entry, record)
        with self.lock:
            self.played += 1
            if self.progress is not None:
                self.progress.step()

    def set_standings(self, standings: dict[str, Any]) -> None:
        with self.lock:
            self.standings = standings
            self.version += 1

    def run_over(self, status: str, resumable: bool = False) -> None:
        """The run is over, ``status`` saying how. Everything is shown from now on, the seed
        too, unless the run is ``resumable`` (a tournament, which ``--resume`` continues)
        and games are still to be played: those games' deals and the seed stay hidden."""
        with self.lock:
            self.over = True
            self.status = status
            self.live.clear()
            self.revealed = not resumable or (self._planned and not self._open)
            self.version += 1

    def merge_live(self, items: dict[int, dict[str, Any] | None]) -> None:
        if not items:
            return
        with self.lock:
            for number, snap in items.items():
                if snap is None or number in self._done or self.over:
                    self.live.pop(number, None)
                else:
                    self.live[number] = snap
            self.version += 1

    # -- read by the server ---------------------------------------------------------------
    def refresh(self) -> None:
        """Take in the games in progress that the watchers hold (the server calls it)."""
        for source in self.sources:
            self.merge_live(source())

    def has_finished(self, number: int) -> bool:
        """Whether game ``number`` of the run is finished (and so in the list)."""
        with self.lock:
            return number in self._done

    def record(self, number: int) -> str | None:
        with self.lock:
            packed = self._records.get(number)
            known = number in self._done
        if packed is not None:
            return zlib.decompress(packed).decode("utf-8")
        if known and self.record_reader is not None:
            return self.record_reader(number)
        return None

    def event(self, cursor: int) -> tuple[int, dict[str, Any], int]:
        """``(version, state, new cursor)``: everything the page shows, with the finished
        games from ``cursor`` on (at most ``FINISHED_PER_EVENT`` of them). The same version
        and cursor give the same object, so that many clients cost one build."""
        with self.lock:
            cached = self._cache.get(cursor)
            if cached is not None and cached[0] == self.version:
                return cached
            eta = self.progress.eta() if self.progress is not None and not self.over else None
            end = min(len(self.finished), cursor + FINISHED_PER_EVENT)
            state = {
                "v": self.version,
                "kind": self.kind,
                "title": self.title,
                "status": self.status,
                "over": self.over,
                "played": self.played,
                "total": self.total,
                "eta": None if eta is None else round(eta),
                "standings": self.standings,
                "seed": self._seed if self.revealed else None,
                "withheld": self._withheld(),
                "first": cursor,
                "finished": self.finished[cursor:end],
                "more": end < len(self.finished),
                "live": [self.live[n] for n in sorted(self.live)],
            }
            out = (self.version, state, end)
            if len(self._cache) > 8:
                self._cache.clear()
            self._cache[cursor] = out
            return out


# ------------------------------------------------------------------------------------------
# A run's games and standings as the page lists them


def game_entry(
    number: int,
    players: Sequence[str],
    winner: int | None,
    how: str,
    hands: int,
    fault: tuple[int, str] | None,
) -> dict[str, Any]:
    """Finished game ``number`` (from 1) in the list: its players by seat, the winner's player
    number (None: drawn), how it ended, its hands, and a fault ``(player, kind)``."""
    return {
        "n": number,
        "players": list(players),
        "winner": winner,
        "how": how,
        "hands": hands,
        "fault": None if fault is None else {"p": fault[0], "kind": fault[1]},
    }


def tournament_standings(standings: TournamentStandings) -> dict[str, Any]:
    """The standings as ``ginref tournament --json`` gives them: engines best first with
    their maximum-likelihood Elo, and the cross-table."""
    data = standings.to_json()
    return {
        "engines": data["engines"],
        "cross_table": data["cross_table"],
        "confidence": data["confidence"],
        "games": data["games"],
    }


def _minus(x: float | None) -> float | None:
    return None if x is None else -x


def match_standings(
    standings: Standings,
    sprt: tuple[float, float, float, float] | None,
    rated: TournamentStandings,
) -> dict[str, Any]:
    """The standings as ``ginref match --json`` gives them, each engine with an Elo: the
    head-to-head difference for two engines (the second engine's is its negation), the
    maximum-likelihood rating of each for three (from ``rated``, the same games as a
    tournament counts them); and the SPRT's state when the match runs one.

    The engines are listed best first, each with its ``rank``, as the match's final table
    ranks them (by score; engines with the same score in the order they were named); the
    head-to-head figures are the first-named engine's, which ``head_to_head["names"]``
    says."""
    from referee.results.report import finite_json
    from referee.results.stats import SPRT

    data = standings.to_json()
    engines = data["engines"]
    h2h = data.get("head_to_head")
    if h2h is not None:
        elo = h2h.get("elo")
        engines[0]["elo"] = elo
        engines[1]["elo"] = None if elo is None else {
            "elo": _minus(elo["elo"]), "lo": _minus(elo["hi"]), "hi": _minus(elo["lo"])
        }
    else:
        by_name = {r["name"]: r["elo"] for r in rated.to_json()["engines"]}
        for e in engines:
            e["elo"] = by_name.get(e["name"])
    names = [e["name"] for e in engines]
    ranked = sorted(engines, key=lambda e: -e["score"])  # stable: ties in the named order
    for rank, e in enumerate(ranked, 1):
        e["rank"] = rank
    out: dict[str, Any] = {"engines": ranked, "games": data["games"]}
    if h2h is not None:
        out["head_to_head"] = {**h2h, "names": names}
    if sprt is not None and h2h is not None:
        test = SPRT(*sprt)
        test.update(h2h["wins"], h2h["losses"], h2h["draws"])
        out["sprt"] = {
            "llr": test.llr, "lower": test.lower, "upper": test.upper, "state": test.state,
            "elo0": sprt[0], "elo1": sprt[1], "alpha": sprt[2], "beta": sprt[3],
        }
    result: dict[str, Any] = finite_json(out)
    return result


# ------------------------------------------------------------------------------------------
# Feeding the state from a tournament or a match


def _store_reader(path: str | os.PathLike[str]) -> Callable[[int], str | None]:
    """Game ``n``'s record as the store holds it, read on a connection of the caller's own
    (the server's thread), read-only: the run's connection is the run's alone."""
    import sqlite3
    from pathlib import Path

    uri = Path(path).resolve().as_uri() + "?mode=ro"

    def read(number: int) -> str | None:
        with contextlib.closing(sqlite3.connect(uri, uri=True)) as db:
            row = db.execute("SELECT record FROM results WHERE game = ?", (number - 1,)).fetchone()
        return None if row is None else str(row[0])

    return read


def feed_tournament(state: LiveState, store: Store) -> Callable[[Scheduled, GameResult], None]:
    """Fill ``state`` with what ``store`` holds (the games finished in earlier runs too), and
    return the hook that adds each game of this run as it is stored."""
    from referee.results.report import summary_from_json
    from referee.results.standings import TournamentStandings

    names = store.names
    games = list(store.games())
    seats = {g.game: g.seats for g in games}
    # Every scheduled game's deck key, so that a finished game's deal shows only once the
    # games sharing its key (the same round of every pairing) are finished too.
    state.plan({g.game + 1: g.key for g in games}, games[0].seed if games else "")

    def entry(result: GameResult) -> dict[str, Any]:
        lineup = seats[result.game]
        fault = result.faults[0] if result.faults else None
        return game_entry(
            result.game + 1,
            [names[e] for e in lineup],
            None if result.winner is None else lineup.index(result.winner),
            result.termination,
            result.hands,
            None if fault is None else (fault.player, fault.kind),
        )

    standings = TournamentStandings(names)
    for result in store.results():
        standings.add(summary_from_json(result.summary))
        state.add_finished(entry(result))
    state.record_reader = _store_reader(store.path)
    state.set_standings(tournament_standings(standings))
    done, total = store.counts()
    state.start(total, done)

    def on_game(game: Scheduled, result: GameResult) -> None:
        standings.add(summary_from_json(result.summary))
        state.game_done(entry(result))
        state.set_standings(tournament_standings(standings))

    return on_game


def feed_match(
    state: LiveState,
    names: Sequence[str],
    jobs: Sequence[GameJob],
    seed: int | str,
    sprt: tuple[float, float, float, float] | None,
    event: str,
) -> Callable[[Played, Standings], None]:
    """Start ``state`` for a match between ``names`` that plays ``jobs`` (the deck keys of
    its games are read from them) from ``seed``, and return the hook that adds each finished
    game (its record kept in memory, compressed, for the viewer)."""
    from ginproto.record import record_from_log, write_game
    from referee.results.report import summarize
    from referee.results.standings import TournamentStandings

    rated = TournamentStandings(names)
    state.plan({job.index + 1: job.key for job in jobs}, seed)
    state.start(len(jobs), 0)

    def on_game(done: Played, standings: Standings) -> None:
        job, game_log = done.job, done.log
        number = job.index + 1
        record = record_from_log(
            game_log, done.engines, event=event, extra=[("Game", str(number))]
        )
        rated.add(summarize(job.lineup, job.key, game_log))
        fault = game_log.fault
        state.game_done(
            game_entry(
                number,
                [names[e] for e in job.lineup],
                game_log.winner,
                str(game_log.game.end),
                len(game_log.hands),
                None if fault is None else (fault.player, fault.kind.value),
            ),
            write_game(record),
        )
        state.set_standings(match_standings(standings, sprt, rated))

    return on_game

