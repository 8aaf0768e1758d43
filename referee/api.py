"""Matches and tournaments from Python: what ``ginref match`` and ``ginref tournament`` do,
as functions that return results instead of printing them.

This is the one way through: ``ginref match`` and ``ginref tournament`` only read their options,
call `play_match` and `play_tournament`, and print what the hooks and the results say. So each
option of the command line is a parameter here, or a field of a value one takes (``clock``, a
`Clock`; ``sandbox``, a `Sandbox`; ``outputs``, `Outputs`: ``referee.settings``), and the same
arguments give the same records and standings from either.

``play_match`` takes the engines (by built-in name, command line or `EngineSpec`), the variant
and rules, games, seed, clock, duplicate deals, a record file, the sandbox, and runs
``referee.scheduling.match`` (the check of every engine before game 1, the pool of workers, the
record written game by game); it returns a frozen `MatchResult`: every game's outcome, each engine's
standing, the Elo difference with its interval, points per hand, and ``to_json()``, which is
exactly what ``ginref match --json`` prints for the same match, built by the same function.
``play_tournament`` runs a tournament config (a `TournamentConfig`, a TOML file, a table of the
same shape, or the settings stored by an earlier run, to resume) and returns its standings,
stored as ``ginref tournament`` stores them, so that the command line can resume or verify it.

Hooks: ``on_start`` is called once the engines are checked, just before game 1, with what is
about to be played; ``on_game`` with each game as it finishes, in order; ``on_warning`` with
each warning line (the sandbox's, the CPU affinity's; default: the ``logging`` module);
``stop`` is asked as the games begin and between games, and once it says True no new game
starts; ``on_over`` is called as soon as no game is being played any more (a Ctrl-C before it
has returned is still the games' own: the result so far comes with the interrupt).

Nothing here prints. Mistakes in the arguments raise ``ValueError`` (``RulesError``,
``TimeControlError``, ``EngineSpecError``, ``ConfigError`` are kinds of it); what the referee
cannot do raises a `RefereeError` (``referee.errors``): an engine that fails its check before
game 1, a sandbox required where it cannot run, a store that holds another tournament, a
cluster that cannot be reached, a file of its own that cannot be made. A file of the referee's
own that cannot be written once the games are under way raises ``OSError`` naming it. An engine
that misbehaves during a game is not an exception: it forfeits that game, and the ruling is in
the game's outcome (`GameOutcome.fault`).

The ``*_async`` flavours run the same function in a worker thread (``asyncio.to_thread``), so
that a notebook's event loop stays free; cancelling one does not stop the games under way.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
from collections.abc import Callable, Coroutine, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from ginproto.protocol import check_rules_fit
from ginproto.rules import Rules, Variant
from ginproto.text import NAME_LIMIT, SEED_LIMIT, nfc, plural, too_long
from referee.defaults import FOLDER_FILES
from referee.errors import CannotServe, OutputError, ReportError
from referee.outputs import (
    check_folder,
    remove_if_empty,
    reserve_paths,
)
from referee.results.match import (
    EngineStanding,
    GameOutcome,
    MatchInterrupted,
    MatchResult,
    SprtResult,
    outcome_of,
)
from referee.results.played import Played
from referee.scheduling.backends import cpu_plan
from referee.scheduling.config import CLOCK_KEYS, ConfigError, TournamentConfig, check_size
from referee.scheduling.loader import build_config, load_config
from referee.scheduling.match import MatchConfig, engine_names, random_seed, run_match
from referee.seat.clock import TimeControl
from referee.seat.player import EngineSpec, sandboxed
from referee.seat.preflight import preflight
from referee.seat.running import OptionValue, option_pairs, option_text
from referee.seat.sandbox import Limits, SandboxMode, start_warnings
from referee.settings import Clock, Outputs, Sandbox, check_run_options, deprecated_keywords

# The store (SQLite) and the tournament machinery are imported by play_tournament: a match
# needs neither.
if TYPE_CHECKING:
    from ginproto.record import GameRecord
    from referee.cluster.backend import DaskBackend
    from referee.results.integrity import StoreReport
    from referee.results.report import Standings
    from referee.results.standings import TournamentStandings
    from referee.results.store import DirectoryLock, GameResult, Scheduled, Store
    from referee.scheduling.backends import Backend, JobContext, Watch
    from referee.views.live import Address
    from referee.views.live_page import LivePage

log = logging.getLogger(__name__)

__all__ = [
    "EngineStanding",
    "GameOutcome",
    "MatchInterrupted",
    "MatchResult",
    "MatchStart",
    "SprtResult",
    "TournamentInterrupted",
    "TournamentStart",
    "play_match",
    "play_match_async",
    "play_tournament",
    "play_tournament_async",
    "verify_tournament",
]

Warn = Callable[[str], None]
@dataclass(frozen=True, slots=True)
class MatchStart:
    """What a match is about to play, its engines checked: ``play_match``'s ``on_start``."""

    names: tuple[str, ...]
    """Each engine's name, as shown (`MatchResult.names`)."""
    variant: Variant
    games: int
    duplicate: bool
    seed: int | str
    control: TimeControl
    cluster: str | None
    """The Dask cluster the games are played on, described; None for local workers."""


@dataclass(frozen=True, slots=True)
class TournamentStart:
    """What a tournament is about to play: ``play_tournament``'s ``on_start``, called with
    the store open, before the games (and, on resume, before its engines are checked)."""

    directory: str
    resumed: bool
    played: int
    """Games already stored (from an earlier run)."""
    scheduled: int
    names: tuple[str, ...]
    config: TournamentConfig
    """The settings in force: the config's, the overrides', and a seed."""
    cluster: str | None
    """The Dask cluster the games are played on, described; None for local workers."""


class TournamentInterrupted(KeyboardInterrupt):
    """Ctrl-C during the games of `play_tournament`: the games in progress are lost (played
    again on resume); ``standings`` are those of the games stored. ``report_error`` is the
    `ReportError` of an HTML report that could not be written, if one was asked for."""

    def __init__(
        self, standings: TournamentStandings, report_error: ReportError | None = None
    ) -> None:
        super().__init__()
        self.standings = standings
        self.report_error = report_error


def play_match(
    engines: Sequence[str | EngineSpec],
    *,
    variant: str | Variant | None = None,
    rules: Rules | Mapping[str, OptionValue] | None = None,
    games: int = 10,
    seed: int | str | None = None,
    concurrency: int = 1,
    duplicate: bool = False,
    clock: Clock | None = None,
    sandbox: Sandbox | SandboxMode | str | None = None,  # a mode: deprecated
    outputs: Outputs | None = None,
    options: Mapping[str, OptionValue] | Sequence[Mapping[str, OptionValue]] | None = None,
    env: Mapping[str, str] | Sequence[Mapping[str, str]] | None = None,
    names: Sequence[str | None] | None = None,
    sprt: tuple[float, float, float, float] | None = None,
    affinity: bool = False,
    dask: str | None = None,
    serve: Address | LivePage | None = None,
    event: str = "ginref match",
    on_start: Callable[[MatchStart], None] | None = None,
    on_game: Callable[[GameOutcome], None] | None = None,
    on_warning: Warn | None = None,
    stop: Callable[[], bool] | None = None,
    on_over: Callable[[], None] | None = None,
    **deprecated: Any,
) -> MatchResult:
    """Play a match of two engines (three for the three-player game) as ``ginref match``
    does, and return its result: docs/API.md says what each argument is."""
    given = deprecated_keywords("play_match", deprecated, clock, sandbox, outputs)
    time, box, out = given[0] or Clock(), given[1] or Sandbox(), given[2] or Outputs()
    count = len(engines)
    _check_match(count, games, concurrency, sprt, dask, out.debug_log, affinity)
    the_rules = _rules(variant, rules, count)
    specs = _specs(engines, options, env, names)
    engine_limits = box.engine_limits(count)
    warn = on_warning or _log_warning
    page, own_page = _page(serve)
    for line in start_warnings(box.chosen_mode):  # SandboxError: "require" where it cannot run
        warn(line)
    out.check()  # UnsafeOutput (an OSError) before anything
    made = [p for p in out.files if p and not os.path.lexists(p)]  # removed if no game is played
    with ExitStack() as stack:
        if own_page:
            stack.callback(page.close)
        try:
            specs = _sandboxed(specs, box, engine_limits, out)
            if page is not None:
                page.open(event, "match")
            specs, cluster = _cluster(stack, dask, specs, time)
            config = _match_config(
                specs,
                the_rules,
                games,
                seed,
                time,
                duplicate,
                concurrency,
                out,
                sprt,
                event,
                affinity,
            )
            _warn_affinity(cpu_plan(affinity, concurrency, count, games), warn)
            display = engine_names(config, check=cluster is None)
        except KeyboardInterrupt:
            remove_if_empty(made)
            raise MatchInterrupted(None) from None
        except BaseException:
            remove_if_empty(made)
            raise
        return _play_match(
            config, display, cluster, page, made, out.path("html"), on_start, on_game, stop,
            on_over, warn,
        )


def _sandboxed(
    specs: tuple[EngineSpec, ...], box: Sandbox, limits: list[Limits] | None, out: Outputs
) -> tuple[EngineSpec, ...]:
    """The engines with their sandbox policies (``referee.seat.player.sandboxed``): the
    output files are made first, so that the sandbox hides them."""
    try:
        return sandboxed(
            specs,
            box.chosen_mode,
            limits,
            bool(box.network),
            out.files,
            [out.path("stderr_dir")],
            list(box.readable),
        )
    except OSError as exc:
        raise OutputError.cannot_write(exc) from None


def _cluster(
    stack: ExitStack, dask: str | None, specs: tuple[EngineSpec, ...], clock: Clock
) -> tuple[tuple[EngineSpec, ...], DaskBackend | None]:
    """The engines of a match and the ``dask`` cluster that plays its games (closed with
    ``stack``; None: the local workers), every engine checked and named on its workers."""
    if dask is None:
        return specs, None
    from referee.cluster.backend import DaskBackend

    cluster = stack.enter_context(DaskBackend(dask))
    ids = cluster.check_engines(specs, clock.control, clock.startup)
    return _named_on_cluster(ids, specs), cluster


def _match_config(
    specs: tuple[EngineSpec, ...],
    rules: Rules,
    games: int,
    seed: int | str | None,
    clock: Clock,
    duplicate: bool,
    concurrency: int,
    outputs: Outputs,
    sprt: tuple[float, float, float, float] | None,
    event: str,
    affinity: bool,
) -> MatchConfig:
    """The `MatchConfig` of `play_match`'s settings (a random seed where none is given)."""
    return MatchConfig(
        engines=specs,
        rules=rules,
        games=games,
        seed=random_seed()
        if seed is None
        else _user_text(seed, SEED_LIMIT, "the seed")
        if isinstance(seed, str)
        else seed,
        control=clock.control,
        duplicate=duplicate,
        concurrency=concurrency,
        startup_timeout=clock.startup,
        record=outputs.path("record"),
        debug_log=outputs.path("debug_log"),
        stderr_dir=outputs.path("stderr_dir"),
        sprt=sprt,
        event=event,
        affinity=affinity,
    )


def _check_match(
    count: int,
    games: int,
    concurrency: int,
    sprt: tuple[float, float, float, float] | None,
    dask: str | None,
    debug_log: object,
    affinity: bool,
) -> None:
    """`play_match`'s ``ValueError`` for arguments it cannot use."""
    if count not in (2, 3):
        raise ValueError("give two engines (or three for the three-player game)")
    if games < 1:
        raise ValueError(f"games must be at least 1, not {games}")
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, not {concurrency}")
    check_run_options(count, sprt, dask, debug_log, affinity)


def _play_match(
    config: MatchConfig,
    display: list[str],
    cluster: DaskBackend | None,
    page: LivePage | None,
    made: list[str],
    html: str | None,
    on_start: Callable[[MatchStart], None] | None,
    on_game: Callable[[GameOutcome], None] | None,
    stop: Callable[[], bool] | None,
    on_over: Callable[[], None] | None = None,
    warn: Warn | None = None,
) -> MatchResult:
    """The games of `play_match`, its engines checked and named, played on ``cluster`` or on
    local workers. ``on_over`` is called as soon as no game is being played any more, within
    the reach of the Ctrl-C handling of the games."""
    shown, watch = _match_page(page, config, display, local=cluster is None)
    backend = _backend(cluster, config.concurrency, watch, config.engines, warn)
    if on_start is not None:
        on_start(
            MatchStart(
                tuple(display), config.rules.variant, config.games, config.duplicate,
                config.seed, config.control, None if cluster is None else cluster.describe(),
            )
        )
    records: list[GameRecord] = []

    def finished(done: Played, standings: Standings) -> None:
        if shown is not None:
            shown(done, standings)
        if html is not None:
            records.append(_record(done, config.event))
        if on_game is not None:
            on_game(outcome_of(done))

    result = None
    try:
        try:
            result = run_match(config, display, finished, backend, stop)
        finally:
            if on_over is not None:
                on_over()
    except MatchInterrupted:
        remove_if_empty(made)
        if html is not None and records:
            _match_report(records, html, display, config)
        raise
    except KeyboardInterrupt:
        if result is None:  # before the first game started
            remove_if_empty(made)
            raise MatchInterrupted(None) from None
        raise MatchInterrupted(result) from None  # as the games ended, before on_over returned
    return _match_over(config, display, result, records, html, page)


def _match_page(
    page: LivePage | None, config: MatchConfig, display: list[str], local: bool
) -> tuple[Callable[[Played, Standings], None] | None, Watch | None]:
    """The live page's hook for each finished game, and the watch of the games in progress
    (local games only), or None for both without a page."""
    if page is None:
        return None, None
    from referee.scheduling.match import match_jobs
    from referee.views.live import feed_match

    # No seed in the title: the page shows it only once the match is over.
    page.state.title = f"{' vs '.join(display)}: {config.rules.variant}"
    shown = feed_match(
        page.state, display, match_jobs(config), config.seed, config.sprt, config.event
    )
    return shown, page.watch(display) if local else None


def _record(done: Played, event: str) -> GameRecord:
    """The record of a finished game, for the HTML report."""
    from ginproto.record import record_from_log

    extra = [("Game", str(done.job.index + 1))]
    return record_from_log(done.log, done.engines, event=event, extra=extra)


def _match_over(
    config: MatchConfig,
    display: list[str],
    public: MatchResult,
    records: list[GameRecord],
    html: str | None,
    page: LivePage | None,
) -> MatchResult:
    """A match whose games are over: its HTML report and its live page's last word."""
    failed: ReportError | None = None
    played = len(public.games)
    try:  # Ctrl-C once the games are over: the result of every game, at once
        if html is not None:
            try:
                _match_report(records, html, display, config)
            except ReportError as exc:
                failed = ReportError(str(exc), public)
        if page is not None:
            page.over(
                f"stopped early after {played} of {plural(config.games, 'game')}"
                if public.stopped_early
                else f"complete: {played} of {plural(config.games, 'game')}"
            )
    except KeyboardInterrupt:
        raise MatchInterrupted(public) from None
    if failed is not None:
        raise failed
    return public


def play_tournament(
    config: TournamentConfig | str | os.PathLike[str] | Mapping[str, Any] | None = None,
    *,
    output: str | os.PathLike[str] | None = None,
    resume: bool | str | os.PathLike[str] = False,
    format: str | None = None,  # the config's key, and ginref's option
    variant: str | Variant | None = None,
    rules: Mapping[str, OptionValue] | None = None,
    games: int | None = None,
    seed: int | str | None = None,
    duplicate: bool | None = None,
    concurrency: int | None = None,
    clock: Clock | None = None,
    sandbox: Sandbox | SandboxMode | str | None = None,  # a mode: deprecated
    outputs: Outputs | None = None,
    event: str | None = None,
    dask: str | None = None,
    affinity: bool | None = None,
    serve: Address | LivePage | None = None,
    on_start: Callable[[TournamentStart], None] | None = None,
    on_game: Callable[[Scheduled, GameResult], None] | None = None,
    on_warning: Warn | None = None,
    stop: Callable[[], bool] | None = None,
    on_over: Callable[[], None] | None = None,
    **deprecated: Any,
) -> TournamentStandings:
    """Play a tournament (round-robin or gauntlet) from ``config`` (a `TournamentConfig`, a
    TOML file, a table, or None to resume the one stored), as ``ginref tournament`` does, and
    return its standings; docs/API.md says what each argument is. The keywords from
    ``format`` to ``affinity`` override the config's settings (a `Clock`'s, those it sets)."""
    allowed = (*CLOCK_KEYS, "stderr_dir", "html")
    given = deprecated_keywords("play_tournament", deprecated, clock, sandbox, outputs, allowed)
    out = _tournament_outputs(given[2])
    overrides = _overrides(format, variant, rules, games, seed, duplicate, concurrency, event)
    overrides |= _settings_overrides(given[0], given[1], dask, affinity)  # checked by the config
    resuming = resume is not False
    cfg, directory, source = _tournament_config(config, output, resume, overrides)
    warn = on_warning or _log_warning
    for line in start_warnings(cfg.sandbox.chosen_mode):  # SandboxError: "require", cannot run
        warn(line)
    from referee.scheduling.backends import JobContext
    from referee.scheduling.tournament import open_tournament

    # affinity = true in the config
    plan = cpu_plan(cfg.affinity, cfg.concurrency, len(cfg.engines), dask=cfg.dask is not None)
    _warn_affinity(plan, warn)
    errors = out.path("stderr_dir")
    out.check()  # UnsafeOutput (an OSError) before anything is made
    page, own_page = _page(serve)
    with ExitStack() as stack:
        if own_page:
            stack.callback(page.close)
        if page is not None:
            page.open(cfg.event, "tournament")
        lock = _locked(directory, errors)  # StoreBusy while another run plays there
        try:
            if not resuming and cfg.dask is None:
                # before the store is created: a new run is not started at all
                preflight(cfg.specs(), cfg.control, cfg.startup_timeout)
            # No sandboxed engine sees the store, the records, the config or the stderr files.
            try:
                hidden = reserve_paths([source], [directory, errors])
            except OSError as exc:
                raise OutputError.cannot_write(exc) from None
            watch = None if page is None or cfg.dask is not None else page.watch(cfg.names)
            context = JobContext.of(cfg, errors, hidden)
            backend, where = _tournament_backend(cfg, context, stack, watch, warn)
            with open_tournament(cfg, directory, resuming) as store:
                return _play_tournament(
                    store, cfg, backend, context, directory, resuming, where, page,
                    out.path("html"), on_start, on_game, stop, on_over,
                )
        finally:
            lock.release()


def _locked(directory: str, errors: str | None) -> DirectoryLock:
    """The tournament's folder (and its stderr folder) made, and locked for this run."""
    from referee.results.store import DirectoryLock

    try:
        os.makedirs(directory, exist_ok=True)
        if errors:
            os.makedirs(errors, exist_ok=True)
        lock = DirectoryLock(directory)
        lock.acquire()  # StoreBusy while another run plays there
    except OSError as exc:
        raise OutputError(str(exc)) from None
    return lock


def _tournament_outputs(outputs: Outputs | None) -> Outputs:
    """`play_tournament`'s outputs: its records go to its folder, not to files of their own."""
    outputs = outputs or Outputs()
    if outputs.record is not None or outputs.debug_log is not None:
        raise ValueError(
            "a tournament keeps its records in its output folder, and no debug log:"
            " give outputs=Outputs(stderr_dir=..., html=...)"
        )
    return outputs


def _overrides(
    fmt: str | None,
    variant: str | Variant | None,
    rules: Mapping[str, OptionValue] | None,
    games: int | None,
    seed: int | str | None,
    duplicate: bool | None,
    concurrency: int | None,
    event: str | None,
) -> dict[str, Any]:
    """`play_tournament`'s keywords that override the config's keys of the same name."""
    given = {
        "format": fmt,
        "variant": None if variant is None else str(variant),
        "rules": dict(rules) if rules else None,
        "games": games,
        "seed": seed,
        "duplicate": duplicate,
        "concurrency": concurrency,
        "event": event,
    }
    return {key: value for key, value in given.items() if value is not None}


def _settings_overrides(
    clock: Clock | None, sandbox: Sandbox | None, dask: str | None, affinity: bool | None
) -> dict[str, Any]:
    """The config's keys that the `Clock` and `Sandbox` given set, and ``dask`` and
    ``affinity``: each one checked again where the config's keys are."""
    out: dict[str, Any] = {} if clock is None else clock.settings()
    if sandbox is not None:
        if sandbox.limits is not None and sandbox.shared_limits is None:
            raise ValueError(
                "a tournament's sandbox limits are for every engine (one engine's go in its"
                " [[engines]] table)"
            )
        if sandbox.mode is not None:
            out["sandbox"] = str(sandbox.mode)
        if sandbox.shared_limits is not None:
            out["limits"] = sandbox.shared_limits.settings()
        if sandbox.network is not None:
            out["network"] = sandbox.network
        if sandbox.read is not None:
            out["read"] = [os.path.abspath(p) for p in sandbox.readable]
    return out | {k: v for k, v in (("dask", dask), ("affinity", affinity)) if v is not None}


def _play_tournament(
    store: Store,
    cfg: TournamentConfig,
    backend: Backend,
    context: JobContext,
    directory: str,
    resuming: bool,
    where: str | None,
    page: LivePage | None,
    html: str | None,
    on_start: Callable[[TournamentStart], None] | None,
    on_game: Callable[[Scheduled, GameResult], None] | None,
    stop: Callable[[], bool] | None,
    on_over: Callable[[], None] | None = None,
) -> TournamentStandings:
    """The games of `play_tournament`, in its open store, played on ``backend`` with the
    engines of ``context``."""
    from referee.results.standings import TournamentStandings
    from referee.scheduling.tournament import run_tournament

    names = store.names
    done, total = store.counts()
    if on_start is not None:
        on_start(TournamentStart(directory, resuming, done, total, tuple(names), cfg, where))
    if resuming and done < total and cfg.dask is None:
        preflight(cfg.specs(), cfg.control, cfg.startup_timeout)  # a cluster's were checked
    shown = None
    if page is not None:
        from referee.views.live import feed_tournament

        shown = feed_tournament(page.state, store)

    def finished(game: Scheduled, result: GameResult) -> None:
        if shown is not None:
            shown(game, result)
        if on_game is not None:
            on_game(game, result)

    lost = False  # Ctrl-C during the games: those in progress are dropped
    halt = stop or _never
    halt()  # first asked as the games begin (ginref takes Ctrl-C over from here)
    try:
        try:
            run_tournament(store, cfg, backend, finished, stop=halt, context=context)
        finally:
            if on_over is not None:  # a Ctrl-C before it has returned is caught below
                on_over()
    except KeyboardInterrupt:
        lost = True
    standings = TournamentStandings.from_store(store)
    done, total = standings.played, standings.scheduled
    if page is not None:
        # A stopped tournament may be resumed: what its games still to play share stays hidden.
        page.over(
            f"complete: {done} of {plural(total, 'game')}" if done == total else "stopped",
            resumable=True,
        )
    halted = lost or (stop is not None and stop())
    failed: ReportError | None = None
    if html is not None and not (halted and done < total and not done):
        try:
            _tournament_report(directory, cfg, list(names), html)
        except ReportError as exc:
            failed = ReportError(str(exc), standings)
    if lost:
        raise TournamentInterrupted(standings, failed)
    if failed is not None:
        raise failed
    return standings


def _tournament_config(
    config: TournamentConfig | str | os.PathLike[str] | Mapping[str, Any] | None,
    output: str | os.PathLike[str] | None,
    resume: bool | str | os.PathLike[str],
    overrides: dict[str, Any],
) -> tuple[TournamentConfig, str, str | None]:
    """`play_tournament`'s config (with its seed), the folder its results go to, and the
    config file to hide from the engines (if it came from one)."""
    resuming = resume is not False
    directory = (
        os.fspath(resume) if isinstance(resume, str | os.PathLike) else _path(output)
    )
    stored: dict[str, Any] | None = None
    if resuming and directory is not None:
        stored = _stored(directory)
    source: str | None = None
    if isinstance(config, TournamentConfig):
        if overrides:
            raise ValueError(
                f"give {', '.join(overrides)} in the TournamentConfig itself, not as overrides"
            )
        cfg = config
    elif isinstance(config, str | os.PathLike):
        source = os.fspath(config)
        cfg = load_config(source, overrides)
    elif config is None:
        if stored is None:
            raise ValueError("give a config, or resume= the folder of a stored tournament")
        cfg = build_config(stored, None, f"{directory}: ", overrides, stored=True)
    else:
        cfg = build_config(config, None, "", overrides)
    from_config = directory is None
    if directory is None:
        directory = cfg.output
    if directory is None:
        raise NoOutput("say where the results go: output in the config, or output=DIR")
    if resuming and stored is None:
        stored = _stored(directory)
    if from_config:  # the config's output: checked as an output given here is
        try:
            check_folder(directory, FOLDER_FILES)
        except OSError as exc:
            raise OutputError(f"cannot use the config's output: {exc}") from None
    if cfg.seed is None:
        cfg = replace(cfg, seed=stored["seed"] if stored else random_seed())
    if not resuming:  # counted before any engine starts (a file's was, as it was read)
        check_size(cfg)
    return cfg, directory, source


def verify_tournament(directory: str | os.PathLike[str]) -> StoreReport:
    """Check every game stored in ``directory`` against its record, as ``ginref tournament
    --verify`` does: the report lists the games whose stored result differs."""
    from referee.results.store import Store
    from referee.scheduling.tournament import verify_tournament as verify

    with Store.open(os.fspath(directory)) as store:
        return verify(store)


class NoOutput(ConfigError):
    """Neither the call nor the config says where a tournament's results go."""


P = ParamSpec("P")
R = TypeVar("R")


def _in_thread(function: Callable[P, R]) -> Callable[P, Coroutine[Any, Any, R]]:
    """``function`` as a coroutine that runs it in a worker thread."""

    @functools.wraps(function)
    async def run(*args: P.args, **kwargs: P.kwargs) -> R:
        return await asyncio.to_thread(function, *args, **kwargs)

    run.__doc__ = f"`{function.__name__}` in a worker thread, for an event loop."
    return run


play_match_async = _in_thread(play_match)
play_tournament_async = _in_thread(play_tournament)


# ------------------------------------------------------------------------------------------


def _path(path: str | os.PathLike[str] | None) -> str | None:
    return None if path is None else os.fspath(path)


def _never() -> bool:
    return False


def _log_warning(line: str) -> None:
    log.warning("%s", line)


def _warn_affinity(plan: Any, warn: Warn) -> None:
    """The CPU plan's warning, when the games played at once must share CPUs."""
    line = plan.warning() if plan is not None else None
    if line is not None:
        warn(line)


def _per_engine(value: Any, count: int, what: str) -> list[Any]:
    """``value`` for each of ``count`` engines: one for all (a mapping, a `Limits`), or a
    sequence of one per engine."""
    if value is None or isinstance(value, Mapping | Limits):
        return [value] * count
    items = list(value)
    if len(items) != count:
        raise ValueError(f"{what}: give one for all engines, or one per engine ({count})")
    return items


def _specs(
    engines: Sequence[str | EngineSpec],
    options: Mapping[str, OptionValue] | Sequence[Mapping[str, OptionValue]] | None,
    env: Mapping[str, str] | Sequence[Mapping[str, str]] | None,
    names: Sequence[str | None] | None,
) -> tuple[EngineSpec, ...]:
    count = len(engines)
    each_options = _per_engine(options, count, "options")
    each_env = _per_engine(env, count, "env")
    each_name = [None] * count if names is None else _per_engine(names, count, "names")
    specs = []
    for engine, opts, variables, name in zip(
        engines, each_options, each_env, each_name, strict=True
    ):
        spec = engine if isinstance(engine, EngineSpec) else EngineSpec.parse(engine)
        if opts:
            spec = replace(spec, options=spec.options + option_pairs(opts))
        if variables:
            spec = replace(spec, env=spec.env + tuple((k, str(v)) for k, v in variables.items()))
        if name is not None:
            spec = replace(spec, name=_user_text(name, NAME_LIMIT, "the name"))
        specs.append(spec)
    return tuple(specs)


def _user_text(text: str, limit: int, what: str) -> str:
    """A name or seed given by the caller, in NFC form; ``ValueError`` past ``limit``."""
    text = nfc(text)
    why = too_long(text, limit, what)
    if why is not None:
        raise ValueError(why)
    return text


def _page(serve: Address | LivePage | None) -> tuple[Any, bool]:
    """The live page to feed, and whether it is this call's own (closed when it returns)."""
    if serve is None:
        return None, False
    from referee.views.live import Address, web_missing
    from referee.views.live_page import LivePage

    missing = web_missing()
    if missing is not None:
        raise CannotServe(missing)
    if isinstance(serve, Address):
        return LivePage(serve), True
    return serve, False


def _rules(
    variant: str | Variant | None,
    rules: Rules | Mapping[str, OptionValue] | None,
    engines: int,
) -> Rules:
    """The rules of a match, checked to fit the protocol and the number of engines."""
    if isinstance(rules, Rules):
        if variant is not None and Variant(variant) is not rules.variant:
            raise ValueError(f"variant {variant} contradicts the rules' {rules.variant}")
        chosen = rules
    else:
        name = variant if variant is not None else ("threehanded" if engines == 3 else "standard")
        params = {"variant": str(name), **{k: option_text(v) for k, v in (rules or {}).items()}}
        chosen = Rules.from_params(params)
    check_rules_fit(chosen)
    if chosen.players != engines:
        raise ValueError(
            f"{chosen.variant} is played by {chosen.players} engines, but {engines} were given"
        )
    return chosen


def _named_on_cluster(
    ids: Sequence[str | None], specs: Sequence[EngineSpec]
) -> tuple[EngineSpec, ...]:
    """Each engine named as it names itself on the cluster's workers (it may not even exist
    here), unless it was given a name."""
    return tuple(replace(s, name=s.name or ids[i] or s.label) for i, s in enumerate(specs))


def _report(write: Callable[[], object], out: str) -> None:
    """Write an HTML report; a failure is a `ReportError` naming the file."""
    from ginproto.record import RecordError

    try:
        write()
    except OSError as exc:
        raise ReportError(f"cannot write {out}: {exc.strerror or exc}") from None
    except RecordError as exc:
        raise ReportError(f"cannot write {out}: {exc}") from None


def _match_report(
    records: list[GameRecord], out: str, names: Sequence[str], config: MatchConfig
) -> None:
    from referee.views.html.report import (
        write_match_report,  # the page's assets load only when asked
    )

    title = f"{' vs '.join(names)}: {config.rules.variant}, seed {config.seed}"
    _report(
        lambda: write_match_report(
            records, out, title=title, names=names, sprt=config.sprt,
            duplicate=config.duplicate,
        ),
        out,
    )


def _tournament_report(directory: str, cfg: TournamentConfig, names: list[str], out: str) -> None:
    from referee.results.store import RECORDS_NAME
    from referee.views.html.report import write_match_report

    records = os.path.join(directory, RECORDS_NAME)
    _report(
        lambda: write_match_report(
            [records] if os.path.exists(records) else [],
            out,
            title=cfg.event,
            names=names,
            duplicate=cfg.duplicate,
            tournament=True,
        ),
        out,
    )


def _stored(directory: str) -> dict[str, Any]:
    """The settings and run options stored in a tournament's folder."""
    from referee.results.store import Store

    with Store.open(directory) as old:
        return {**old.settings, **old.run_options}


def _backend(
    cluster: DaskBackend | None,
    concurrency: int,
    watch: Watch | None = None,
    specs: Sequence[EngineSpec] = (),
    warn: Warn | None = None,
) -> Backend:
    """Where a match's or a tournament's games are played: on the Dask cluster, else on
    ``concurrency`` local workers (their games in progress shown through ``watch``). With
    remote engines among ``specs``, the workers are threads (the listener is this
    process's), and no more than each remote engine's client plays at once."""
    if cluster is not None:
        return cluster
    from referee.scheduling.backends import LocalBackend

    remote = [spec.remote for spec in specs if spec.remote is not None]
    if not remote:
        return LocalBackend(concurrency, watch)
    from referee.seat.remote import games_at_once

    at_once = games_at_once(remote, concurrency)
    if at_once < concurrency:
        (warn or _log_warning)(
            f"{at_once} games at a time, not {concurrency}: a remote engine's client plays"
            f" {at_once} at once (gin-connect --games)"
        )
    return LocalBackend(at_once, watch, processes=False)


def _tournament_backend(
    cfg: TournamentConfig,
    context: JobContext,
    stack: ExitStack,
    watch: Watch | None = None,
    warn: Warn | None = None,
) -> tuple[Backend, str | None]:
    """The tournament's backend (``_backend``): local workers, or the config's Dask cluster
    with every engine checked on every worker (closed with ``stack``), and its description."""
    if cfg.dask is None:
        return _backend(None, cfg.concurrency, watch, cfg.specs(), warn), None
    from referee.cluster.backend import DaskBackend

    cluster = stack.enter_context(DaskBackend(cfg.dask))
    cluster.check_engines(context.engines, context.control, context.startup_timeout)
    return _backend(cluster, cfg.concurrency), cluster.describe()
