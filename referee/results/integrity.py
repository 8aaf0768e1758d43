"""Checking a tournament's store against its records: no stored result stands unless the
record's moves give it.

The standings are computed from the store, and anyone who can write to the store can turn a
loss into a win there. The records are the evidence: each holds every deal and every move, and
``ginproto.replay`` re-runs them through the one rules engine. ``verify_store`` checks that the
store's schedule is the one its settings give (every game, with its seats, seed and deck key:
no game deleted, none re-dealt), and, game by game, that:

- the store's copy of the record reads and verifies (every move legal, every score right);
- its deals are the ones the stored seed and deck key give, and its headers name the game, the
  seed, the key and the engines of the scheduled seats;
- the stored result (winner, termination, hands, faults, and the summary the standings are
  computed from) is the one the record gives, derived with the same ``summarize`` the referee
  uses when it plays;
- the records file (``games.gin``) holds the same text for the game as the store.

What an interrupted run leaves behind is not a difference: stored games not yet appended to the
records file, or a torn last game in it (a resume rewrites the file from the store). Those are
reported as notes. Everything else that disagrees is a ``Difference``, named by game, with why.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ginproto.game import Game
from ginproto.record import (
    Cut,
    Deal,
    FaultLine,
    GameRecord,
    HandStart,
    RecordError,
    Result,
    TruncatedRecordError,
    loads,
    read_games,
    write_game,
)
from ginproto.replay import replay_game, verify_game
from ginproto.table import Fault, GameLog, HandLog, first_dealer, hand_deck, role_draw
from ginproto.text import plural
from referee.results.report import summarize, summary_json
from referee.results.store import RECORDS_NAME, FaultRow, GameResult, Scheduled, Store, StoreError

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Difference:
    """A stored game that its records contradict: ``game`` is its schedule position (the
    record's ``Game`` header is ``game + 1``; ``None`` for a game of the records file that
    names none), ``reason`` says what differs."""

    game: int | None
    reason: str

    def __str__(self) -> str:
        where = "the records file" if self.game is None else f"game {self.game + 1}"
        return f"{where}: {self.reason}"


@dataclass
class StoreReport:
    """What ``verify_store`` found."""

    stored: int = 0  # finished games in the store
    in_file: int = 0  # of them, those whose record is in the records file
    results: set[int] = field(default_factory=set)  # the games the store has a result of
    differences: list[Difference] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.differences

    @property
    def games(self) -> list[int]:
        """The games that differ, in schedule order."""
        return sorted({d.game for d in self.differences if d.game is not None})

    def summary(self, where: str) -> str:
        if self.ok:
            return (
                f"{where}: {plural(self.stored, 'stored game')}, {self.in_file} in the records"
                " file: every stored result is the one its record gives"
            )
        differ = len(set(self.games) & self.results)
        if not differ:  # a game deleted from the schedule, or one only the records file holds
            count = len(self.differences)
            return f"{where}: the store and its records disagree ({plural(count, 'difference')})"
        return (
            f"{where}: {differ} of {plural(self.stored, 'stored game')}"
            + (" differs from its record" if differ == 1 else " differ from their records")
        )


def verify_store(
    store: Store, planned: Sequence[Scheduled], records: str | Path | None = None
) -> StoreReport:
    """Cross-check every finished game of ``store`` against its record and the records file
    (``records``, by default the store's ``games.gin``), and its schedule against ``planned``,
    the games its stored settings give (``referee.scheduling.tournament.verify_tournament``
    plans them)."""
    try:
        return _verify(store, planned, records)
    except (sqlite3.Error, ValueError, TypeError) as exc:  # a store altered beyond reading
        raise StoreError(f"{store.path}: cannot read the store to check it: {exc}") from None


def _verify(
    store: Store, planned: Sequence[Scheduled], records: str | Path | None
) -> StoreReport:
    report = StoreReport()
    names = store.names
    scheduled = {g.game: g for g in store.games()}
    _check_schedule(store, scheduled, planned, report)
    stored: dict[int, str] = {}
    for result in store.results():
        report.stored += 1
        report.results.add(result.game)
        stored[result.game] = result.record
        game = scheduled.get(result.game)
        if game is None:
            report.differences.append(
                Difference(result.game, "the store has a result for a game it never scheduled")
            )
            continue
        if game.state != "done":
            report.differences.append(
                Difference(result.game, f"the store has its result, but marks it {game.state}")
            )
        try:
            reasons = check_result(result, game, names)
        except (ValueError, TypeError, KeyError, IndexError) as exc:
            reasons = [f"it cannot be checked: {exc!r}"]
        for reason in reasons:
            report.differences.append(Difference(result.game, reason))
    for game in scheduled.values():
        if game.state == "done" and game.game not in stored:
            report.differences.append(
                Difference(game.game, "the store marks it done, but holds no result for it")
            )
    path = Path(records) if records is not None else store.directory / RECORDS_NAME
    _check_file(path, stored, report)
    report.differences.sort(key=lambda d: -1 if d.game is None else d.game)
    return report


def _check_schedule(
    store: Store,
    scheduled: Mapping[int, Scheduled],
    expected: Sequence[Scheduled],
    report: StoreReport,
) -> None:
    """The stored schedule must be the one the stored settings give (``expected``): the seed
    and the deck keys decide every deal, so a game whose seed or key was changed in the store
    (with a record dealt from them) or a game deleted from it would otherwise check out."""
    names = store.names

    def shown(g: Scheduled) -> str:
        seats = ", ".join(names[e] if 0 <= e < len(names) else f"engine {e}" for e in g.seats)
        return f"seed {str(g.seed)!r}, key {g.key}, seats {seats}"

    for game in scheduled.values():
        if not 0 <= game.game < len(expected):
            report.differences.append(
                Difference(game.game, "the store schedules it, but its settings give no such game")
            )
            continue
        want = expected[game.game]
        got = (game.pairing, game.round, game.seats, str(game.seed), game.key)
        if got != (want.pairing, want.round, want.seats, str(want.seed), want.key):
            report.differences.append(
                Difference(
                    game.game,
                    f"the store schedules it with {shown(game)}, but its settings give"
                    f" {shown(want)}",
                )
            )
    for n in range(len(expected)):
        if n not in scheduled:
            report.differences.append(
                Difference(n, "its settings schedule it, but the store holds no such game")
            )


def check_result(result: GameResult, game: Scheduled, names: Sequence[str]) -> list[str]:
    """What is wrong with one stored game: an empty list when the stored result is the one its
    stored record gives."""
    records = loads(result.record)
    if len(records) != 1:
        return [f"the store's record holds {len(records)} games, not one"]
    [record] = records
    if record.errors:
        return [f"the store's record does not read: {_where(record.errors[0])}"]
    try:
        played = replay_game(record)
    except RecordError as exc:
        return [f"the store's record does not verify: {_where(exc)}"]
    problems = _check_headers(record, game, names)
    problems += _check_deals(record, game)
    derived = _result_of(record, played, game)
    problems += _compare(result, derived, names)
    return problems


def _where(error: RecordError) -> str:
    return f"line {error.line}: {error.message}" if error.line else error.message


def _check_headers(record: GameRecord, game: Scheduled, names: Sequence[str]) -> list[str]:
    want = {"Game": str(game.game + 1), "Seed": str(game.seed), "Key": str(game.key)}
    for p, engine in enumerate(game.seats):
        want[f"Player{p}"] = names[engine] if engine < len(names) else f"engine {engine}"
    out = []
    for name, value in want.items():
        got = record.header(name)
        if got != value:
            shown = "no such header" if got is None else repr(got)
            out.append(f"its record's [{name}] is {shown}, but the store schedules {value!r}")
    return out


def _check_deals(record: GameRecord, game: Scheduled) -> list[str]:
    """The record's chance events must be the ones the stored seed and key give."""
    rules = record.rules()
    hand = 0
    for item in record.events:
        if isinstance(item, Cut) and item.cards != role_draw(game.seed, game.key)[1]:
            return ["its record's cut for roles is not the one the stored seed and key give"]
        if isinstance(item, HandStart):
            hand = item.number
            if hand == 1 and rules.players == 2:
                dealer = first_dealer(game.seed, game.key)
                if item.dealer != dealer:
                    return [f"its record's first dealer is {item.dealer}, the seed gives {dealer}"]
        if isinstance(item, Deal) and item.deck != hand_deck(game.seed, game.key, hand):
            return [f"its record's deal of hand {hand} is not the one the stored seed and key give"]
    return []


def _result_of(record: GameRecord, played: Game, game: Scheduled) -> GameResult:
    """The result the record gives, as the referee would have stored it."""
    events = record.events
    started = sum(isinstance(e, HandStart) for e in events)
    finished = sum(isinstance(e, Result) for e in events)
    fault = None
    fault_line = next((e for e in events if isinstance(e, FaultLine)), None)
    if fault_line is not None:
        in_hand = started if started > finished else 0
        fault = Fault(fault_line.player, fault_line.kind, fault_line.detail, in_hand)
    hands = [HandLog(e.number, (), e.dealer, e.seats, e.roles, entry=e) for e in played.entries]
    game_log = GameLog(played.rules, game.seed, game.key, 0, played.roles, (), played, hands, fault)
    summary = summarize(game.seats, game.key, game_log)
    faults: tuple[FaultRow, ...] = ()
    if fault is not None:
        faults = (
            FaultRow(
                game.seats[fault.player], fault.player, fault.kind.value, fault.detail, fault.hand
            ),
        )
    return GameResult(
        game=game.game,
        winner=summary.winner,
        termination=str(played.end),
        hands=started,
        summary=summary_json(summary),
        record=write_game(record),
        faults=faults,
    )


def _compare(stored: GameResult, derived: GameResult, names: Sequence[str]) -> list[str]:
    def who(engine: int | None) -> str:
        if engine is None:
            return "a draw"
        return repr(names[engine]) if 0 <= engine < len(names) else f"engine {engine}"

    out = []
    if stored.winner != derived.winner:
        out.append(
            f"the store gives the win to {who(stored.winner)}, but its record gives"
            f" {who(derived.winner) if derived.winner is None else 'it to ' + who(derived.winner)}"
        )
    if stored.termination != derived.termination:
        out.append(
            f"the store says it ended by {stored.termination!r}, its record by"
            f" {derived.termination!r}"
        )
    if stored.hands != derived.hands:
        out.append(f"the store counts {stored.hands} hands, its record {derived.hands}")
    if stored.faults != derived.faults:
        out.append(
            f"the store's faults {_faults(stored.faults, names)} are not its record's"
            f" {_faults(derived.faults, names)}"
        )
    got, want = _json(stored.summary), _json(derived.summary)
    if got != want:
        keys = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
        out.append(
            "the store's summary (what the standings count) differs from its record's in: "
            + ", ".join(keys)
        )
    if stored.record != derived.record:
        out.append("the store's record is not in the canonical form the referee writes")
    return out


def _faults(faults: Iterable[FaultRow], names: Sequence[str]) -> str:
    shown = [
        f"{names[f.engine] if 0 <= f.engine < len(names) else f.engine} {f.kind}" for f in faults
    ]
    return "(" + ", ".join(shown) + ")" if shown else "(none)"


def _json(text: str) -> Mapping[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return {"(unreadable)": text}
    return value if isinstance(value, dict) else {"(not an object)": value}


def _check_file(path: Path, stored: Mapping[int, str], report: StoreReport) -> None:
    """The records file must hold, for each of its games, the store's text of that game."""
    if not path.exists():
        if stored:
            report.notes.append(f"{path.name} is missing; a resume writes it again from the store")
        return
    seen: set[int] = set()
    games = list(read_games(path))
    for n, record in enumerate(games):
        last = n == len(games) - 1
        if not record.items and not record.errors:
            continue
        if last and any(isinstance(e, TruncatedRecordError) for e in record.errors):
            report.notes.append(
                f"{path.name}: its last game (line {record.line}) was cut off by an interrupted"
                " append; a resume rewrites the file from the store"
            )
            continue
        number = record.header("Game")
        if number is None or not number.isdigit() or int(number) < 1:
            report.differences.append(
                Difference(
                    None, f"{path.name} holds a game at line {record.line} with no Game header"
                )
            )
            continue
        game = int(number) - 1
        if game in seen:
            report.differences.append(Difference(game, f"{path.name} holds it twice"))
            continue
        seen.add(game)
        text = stored.get(game)
        if text is None:
            report.differences.append(
                Difference(
                    game,
                    f"{path.name} holds it (line {record.line}); the store has no result for it",
                )
            )
            continue
        reason = _file_differs(path, record, text)
        if reason is not None:
            report.differences.append(Difference(game, reason))
    report.in_file = len(seen & set(stored))
    missing = len(stored) - report.in_file
    if missing:
        report.notes.append(
            f"{plural(missing, 'stored game')} {'is' if missing == 1 else 'are'} not in"
            f" {path.name} yet; a resume writes {'it' if missing == 1 else 'them'} from the store"
        )


def _file_differs(path: Path, record: GameRecord, text: str) -> str | None:
    """Why the file's copy of a game is not the store's ``text``, or None if it is."""
    if not record.errors and write_game(record) == text:
        return None
    ours = text.split("\n")
    theirs = [] if record.errors else write_game(record).split("\n")
    why = ""
    errors = verify_game(record)
    if errors:
        why = f"; the file's copy does not verify: {_where(errors[0])}"
    if record.errors:
        return f"{path.name}'s copy does not read as the store's record{why}"
    for i, (a, b) in enumerate(zip(theirs, ours, strict=False)):
        if a != b:
            return (
                f"{path.name}:{record.line + i} says {a!r}, but the store's record says {b!r}{why}"
            )
    return f"{path.name}'s copy is not the store's record{why}"


__all__ = ["Difference", "StoreReport", "check_result", "verify_store"]
