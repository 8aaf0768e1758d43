"""Creating, resuming and running a tournament: ``open_tournament`` creates or resumes the
store (refusing one whose settings changed, or whose results its records contradict),
``run_tournament`` plays what is pending and commits each game with its record, keeping the
records file, and ``verify_tournament`` checks a stored one.
"""

from __future__ import annotations

import datetime
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee.results.played import Played
from referee.results.report import summarize, summary_json
from referee.results.store import (
    RECORDS_NAME,
    FaultRow,
    GameResult,
    Scheduled,
    Store,
    StoreError,
)
from referee.scheduling.match import deferred_interrupts

if TYPE_CHECKING:
    from referee.results.integrity import StoreReport

from ginproto.text import plural
from referee.scheduling.backends import Backend, JobContext, LocalBackend
from referee.scheduling.config import (
    DEFAULT_EVENT,
    ConfigError,
    TournamentConfig,
    check_size,
    diff_settings,
)
from referee.scheduling.loader import build_config
from referee.scheduling.plan import job_of, plan

log = logging.getLogger(__name__)


class StoreDiffers(StoreError):
    """A resume of a store whose results its records contradict; ``games`` are the games that
    differ (schedule positions), ``report`` says why (``referee.results.integrity``)."""

    def __init__(self, directory: str, report: StoreReport, shown: int = 20) -> None:
        self.report = report
        self.games = report.games
        lines = [f"  {d}" for d in report.differences[:shown]]
        if len(report.differences) > shown:
            lines.append(f"  ... and {len(report.differences) - shown} more")
        super().__init__(
            f"cannot resume {directory}: {report.summary(directory).partition(': ')[2]}, so its"
            " results cannot be trusted:\n" + "\n".join(lines) + "\n"
            f"ginref tournament --verify {directory} lists them all. Play the tournament again"
            " in another directory."
        )


class SettingsChanged(StoreError):
    """A resume whose settings differ from the stored ones; ``changes`` names each one."""

    def __init__(self, directory: str, changes: Sequence[str]) -> None:
        self.changes = list(changes)
        lines = "\n".join(f"  {c}" for c in self.changes)
        super().__init__(
            f"cannot resume {directory}: the settings changed, and the results would not be"
            f" consistent:\n{lines}\nResume without these changes, or start a new tournament"
            " in another directory."
        )




def open_tournament(
    config: TournamentConfig, directory: str | os.PathLike[str], resume: bool
) -> Store:
    """Create the store of a new tournament, or open a stored one to resume it.

    A new tournament refuses a directory that already holds one. A resume refuses settings
    that differ from the stored ones (``SettingsChanged``, naming each change), and a store
    whose results its records contradict (``StoreDiffers``, naming the games).
    """
    folder = os.fspath(directory)
    if not resume:
        if Store.exists(folder):
            with Store.open(folder) as old:
                done, total = old.counts()
            raise StoreError(
                f"{folder} already holds a tournament ({done} of {plural(total, 'game')} played);"
                f" continue it with --resume {folder}, or choose another output directory"
            )
        records = Path(folder) / RECORDS_NAME
        if records.exists():
            raise StoreError(
                f"{folder} already holds a records file ({records.name}) but no tournament;"
                " choose another output directory"
            )
        check_size(config)
        p = plan(config)
        return Store.create(
            folder, config.settings(), config.names, p.pairings, p.games, config.run_options()
        )
    store = Store.open(folder)
    changes = diff_settings(store.settings, config.settings())
    if changes:
        store.close()
        raise SettingsChanged(folder, changes)
    report = verify_tournament(store)
    if not report.ok:
        store.close()
        raise StoreDiffers(folder, report)
    store.set_run_options(config.run_options())
    return store


def verify_tournament(store: Store) -> StoreReport:
    """Check ``store`` against its records and its schedule against the one its stored
    settings give (``referee.results.integrity``); ``StoreError`` if the settings are not usable."""
    from referee.results.integrity import verify_store  # it derives results as this module does

    try:
        config = build_config(
            store.settings, None, f"{store.path}: ", find_engines=False, stored=True
        )
    except ConfigError as exc:
        raise StoreError(f"cannot check the schedule, the settings are not usable: {exc}") from None
    return verify_store(store, plan(config).games)


def stored_config(store: Store, overrides: Mapping[str, Any] | None = None) -> TournamentConfig:
    """The config of a stored tournament, with ``overrides`` (the command line's) on top."""
    table = {**store.settings, **store.run_options}
    config = build_config(table, None, f"{store.path}: ", overrides, stored=True)
    if config.seed is None:  # pragma: no cover - the store always holds one
        raise StoreError(f"{store.path}: no seed in the stored settings")
    return config


def result_of(done: Played, event: str = DEFAULT_EVENT) -> GameResult:
    """A played game as the store keeps it: result, faults, summary and record text."""
    from ginproto.record import record_from_log, write_game

    job, game = done.job, done.log
    record = record_from_log(
        game,
        done.engines,
        event=event,
        date=datetime.date.today().strftime("%Y.%m.%d"),
        extra=[("Game", str(job.index + 1))],
    )
    summary = summarize(job.lineup, job.key, game)
    faults: tuple[FaultRow, ...] = ()
    if game.fault is not None:
        f = game.fault
        engine = job.lineup[f.player]
        faults = (FaultRow(engine, f.player, f.kind.value, f.detail, f.hand, f.why, f.stderr),)
    return GameResult(
        game=job.index,
        winner=summary.winner,
        termination=str(game.game.end),
        hands=len(game.hands),
        summary=summary_json(summary),
        record=write_game(record),
        faults=faults,
        seconds=done.seconds,
    )


def run_tournament(
    store: Store,
    config: TournamentConfig,
    backend: Backend | None = None,
    on_game: Callable[[Scheduled, GameResult], None] | None = None,
    stop: Callable[[], bool] = lambda: False,
    records: str | os.PathLike[str] | None = None,
    context: JobContext | None = None,
) -> int:
    """Play every pending game on ``backend`` (default: ``config.concurrency`` local workers)
    with the engines of ``context`` (default: ``config``'s), committing each with its record as
    it comes; return how many were played. The records file is first reconciled with the
    store, then appended to."""
    from referee.results.store import RecordsFile

    file = RecordsFile(store, records)
    if file.reconcile():
        log.warning("%s did not match the store; rewritten from it", file.path)
    pending = {g.game: g for g in store.games("pending")}
    jobs = [job_of(g, config.rules) for g in pending.values()]
    backend = backend or LocalBackend(config.concurrency)
    seats = (context or JobContext.of(config)).seats
    played = 0
    for done in backend.run(jobs, seats, stop):
        result = result_of(done, config.event)
        with deferred_interrupts():  # a Ctrl-C waits for the game to be stored and recorded
            store.commit(result)
            file.add(result.game, result.record)
            played += 1
            if on_game is not None:
                on_game(pending.pop(result.game), result)
    return played
