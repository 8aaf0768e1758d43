"""Matches and tournaments from Python: what ``ginref match`` and ``ginref tournament`` do,
as functions that return results instead of printing them.

``play_match`` takes the same choices as ``ginref match`` (engines by built-in name or command
line, the variant and rules, games, seed, clock, duplicate deals, a record file, the sandbox),
runs the same code (``referee.match``: the check of every engine before game 1, the pool of
workers, the record written game by game) and returns a frozen `MatchResult`: every game's
outcome, each engine's standing, the Elo difference with its interval, points per hand, and
``to_json()``, which is exactly what ``ginref match --json`` prints for the same match, built
by the same function. ``play_tournament`` runs a tournament config (a `TournamentConfig`, a
TOML file, or a table of the same shape) and returns its standings, stored as ``ginref
tournament`` stores them, so that the command line can resume or verify it.

Nothing here prints. Mistakes in the arguments raise ``ValueError`` (``RulesError``,
``TimeControlError``, ``EngineSpecError``, ``ConfigError`` are kinds of it); an engine that
fails its check before game 1 raises `EngineNotReady`; a sandbox required where it cannot run
raises `SandboxError`; a file of the referee's own that cannot be written raises ``OSError``
naming it. An engine that misbehaves during a game is not an exception: it forfeits that game,
and the ruling is in the game's outcome (`GameOutcome.fault`).

The ``*_async`` flavours run the same function in a worker thread (``asyncio.to_thread``), so
that a notebook's event loop stays free; cancelling one does not stop the games under way.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import logging
import os
from collections.abc import Callable, Coroutine, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from ginproto.game import GameEnd
from ginproto.protocol import check_rules_fit
from ginproto.rules import Rules, Variant
from ginproto.table import Fault
from referee.clock import DEFAULT_MARGIN, TimeControl
from referee.engine import EngineSpec
from referee.engine_api import OptionValue, option_pairs, option_text
from referee.match import (
    MatchConfig,
    Played,
    engine_names,
    match_json,
    random_seed,
    run_match,
    sprt_json,
)
from referee.outputs import check_folder, check_outputs, remove_if_empty, reserve_paths, sandboxed
from referee.preflight import EngineNotReady, preflight
from referee.sandbox import SandboxMode, start_warnings
from referee.stats import SPRT, EloInterval, MeanInterval, PairStats
from referee.store import DirectoryLock, Store
from referee.tournament import (
    FOLDER_FILES,
    ConfigError,
    JobContext,
    LocalBackend,
    TournamentConfig,
    TournamentStandings,
    build_config,
    cpu_plan,
    load_config,
    open_tournament,
    run_tournament,
)

if TYPE_CHECKING:
    from referee.tournament import Backend

log = logging.getLogger(__name__)

__all__ = [
    "EngineStanding",
    "GameOutcome",
    "MatchResult",
    "SprtResult",
    "play_match",
    "play_match_async",
    "play_tournament",
    "play_tournament_async",
]


@dataclass(frozen=True, slots=True)
class GameOutcome:
    """One finished game of a match. Engines are numbered by their place in ``engines`` (from
    0); players by their seat in the game (the seats rotate from game to game)."""

    number: int
    """The game's number in the match, from 1 (the record's ``[Game]`` header)."""
    key: int
    """Its deck sequence: the games of a duplicate set share one."""
    engines: tuple[int, ...]
    """The engine playing as each player: ``engines[player]``."""
    winner: int | None
    """The engine that won it, or None for a drawn game."""
    end: GameEnd
    """Why it ended: the target reached, the hand cap, or a forfeit."""
    hands: int
    """The hands played, drawn hands included."""
    scores: tuple[tuple[int, ...], ...]
    """The final scores: one tuple per game scored (three in Hollywood), each by engine."""
    fault: Fault | None
    """The ruling that forfeited it, if one did (``Fault.player`` is a player number)."""


@dataclass(frozen=True, slots=True)
class EngineStanding:
    """One engine's results in a match: the figures of a row of the result block."""

    name: str
    games: int
    wins: int
    losses: int
    draws: int
    score: float
    """(wins + draws / 2) / games."""
    hands: int
    """The hands it held cards in."""
    hands_won: int
    points_per_hand: MeanInterval | None
    """Points scored per hand it held cards in (0 for a hand lost or drawn), with its 95%
    interval; None before any hand."""
    faults: Mapping[str, int]
    """Games forfeited, by fault kind (``"timeout"``, ``"crash"``...)."""
    hollywood_games_won: int
    """Hollywood: the games won of the three scored in each series."""


@dataclass(frozen=True, slots=True)
class SprtResult:
    """Where the SPRT stopped: its log-likelihood ratio, its bounds and its verdict."""

    llr: float
    lower: float
    upper: float
    state: str
    """``"H0"``, ``"H1"`` (accepted) or ``"continue"`` (undecided)."""


@dataclass(frozen=True, slots=True)
class MatchResult:
    """A finished match. The figures are those ``ginref match`` prints; intervals are 95%.
    Two-engine figures (``elo``, ``los``, ``net_points_per_hand``, ``pairs``) are None in the
    three-player game and before they can be computed. An infinite end of an interval (or an
    infinite Elo, after a perfect record) is ``math.inf`` here and ``null`` in `to_json`."""

    names: tuple[str, ...]
    """Each engine's name, as shown: the one given, else the one it gives itself."""
    variant: Variant
    seed: int | str
    """The seed of the deals: the same seed gives the same deals."""
    games: tuple[GameOutcome, ...] = field(repr=False)
    """Every finished game, in order."""
    standings: tuple[EngineStanding, ...]
    """Each engine's results, in the order of ``names``."""
    elo: EloInterval | None
    """The first engine's Elo difference against the second, with its interval."""
    los: float | None
    """The likelihood that the first engine is the stronger, from 0 to 1."""
    net_points_per_hand: MeanInterval | None
    """The first engine's points per hand minus the second's, with its interval."""
    pairs: PairStats | None
    """With ``duplicate``: the pentanomial counts of the pairs and the Elo they give."""
    sprt: SprtResult | None
    stopped_early: bool
    """True when the SPRT decided before every game was played."""
    table: str = field(repr=False)
    """The result block and the standings table, as ``ginref match`` prints them."""
    _json: Mapping[str, Any] = field(repr=False, compare=False, hash=False)

    def to_json(self) -> dict[str, Any]:
        """What ``ginref match --json`` prints for this match (as a new dict each time)."""
        return copy.deepcopy(dict(self._json))


def play_match(
    engines: Sequence[str | EngineSpec],
    *,
    variant: str | Variant | None = None,
    rules: Rules | Mapping[str, OptionValue] | None = None,
    games: int = 10,
    seed: int | str | None = None,
    concurrency: int = 1,
    duplicate: bool = False,
    record: str | os.PathLike[str] | None = None,
    tc: str | TimeControl = "120+1",
    move_timeout: float = 10.0,
    startup_timeout: float = 10.0,
    time_margin: float = DEFAULT_MARGIN,
    options: Mapping[str, OptionValue] | None = None,
    sprt: tuple[float, float, float, float] | None = None,
    sandbox: str | SandboxMode = SandboxMode.AUTO,
    debug_log: str | os.PathLike[str] | None = None,
    stderr_dir: str | os.PathLike[str] | None = None,
    event: str = "ginref match",
    on_game: Callable[[GameOutcome], None] | None = None,
) -> MatchResult:
    """Play a match between two engines (three for the three-player game), as ``ginref
    match`` does, and return its result.

    ``engines``: built-in names (``"simple"``, ``"random"``, ``"expert"``, ``"js-simple"``),
    command lines (``"python3 mybot.py"``, split as a shell would but never run through one),
    or `EngineSpec` objects (``EngineSpec.parse("random", name="R", options=(("Seed", "7"),))``
    for a name or options of its own). ``rules``: a `Rules`, or rule options by name
    (``{"gin_bonus": 20}``) on top of ``variant`` (default: standard, or threehanded for three
    engines). ``tc``: the game clock, ``"BASE+INC"`` in seconds or ``"inf"``. ``options`` are
    set on every engine (``-o NAME=VALUE``). ``seed``: default a random one (in the result).
    ``record``: append each finished game's record to this file. ``sandbox``: ``"auto"``,
    ``"require"`` or ``"off"``. ``on_game`` is called with each game as it finishes, in order.
    """
    if len(engines) not in (2, 3):
        raise ValueError("give two engines (or three for the three-player game)")
    if games < 1:
        raise ValueError(f"games must be at least 1, not {games}")
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, not {concurrency}")
    the_rules = _rules(variant, rules, len(engines))
    control = (
        tc if isinstance(tc, TimeControl) else TimeControl.parse(tc, move_timeout, time_margin)
    )
    if sprt is not None:
        if len(engines) != 2:
            raise ValueError("the SPRT compares two engines")
        SPRT(*sprt)  # ValueError for bounds it cannot use
    mode = SandboxMode(sandbox)
    specs = tuple(_spec(e, options) for e in engines)
    for line in start_warnings(mode):  # SandboxError for "require" where it cannot run
        log.warning("%s", line)
    files = [_path(record), _path(debug_log)]
    check_outputs(files, [_path(stderr_dir)])  # UnsafeOutput (an OSError) before anything
    made = [p for p in files if p and not os.path.lexists(p)]
    specs = sandboxed(specs, mode, files=files, folders=[_path(stderr_dir)])
    config = MatchConfig(
        engines=specs,
        rules=the_rules,
        games=games,
        seed=random_seed() if seed is None else seed,
        control=control,
        duplicate=duplicate,
        concurrency=concurrency,
        startup_timeout=startup_timeout,
        record=files[0],
        debug_log=files[1],
        stderr_dir=_path(stderr_dir),
        sprt=sprt,
        event=event,
    )
    try:
        names = engine_names(config)
    except EngineNotReady:
        remove_if_empty(made)
        raise
    outcomes: list[GameOutcome] = []

    def finished(done: Played, _: object) -> None:
        outcomes.append(_outcome(done))
        if on_game is not None:
            on_game(outcomes[-1])

    result = run_match(config, names, finished)
    standings = result.standings
    two = standings.head_to_head() if len(names) == 2 else {}
    pairs = standings.pairs() if len(names) == 2 else None
    sprt_state = sprt_json(result.sprt)
    return MatchResult(
        names=tuple(names),
        variant=the_rules.variant,
        seed=config.seed,
        games=tuple(outcomes),
        standings=tuple(
            EngineStanding(
                name=t.name,
                games=t.games,
                wins=t.wins,
                losses=t.losses,
                draws=t.draws,
                score=t.score,
                hands=t.hands,
                hands_won=t.hands_won,
                points_per_hand=t.points.interval() if t.points.n else None,
                faults=dict(sorted(t.faults.items())),
                hollywood_games_won=t.columns_won,
            )
            for t in standings.tallies
        ),
        elo=EloInterval(**two["elo"]) if "elo" in two else None,
        los=two.get("los"),
        net_points_per_hand=MeanInterval(
            two["net_points_per_hand"]["mean"],
            two["net_points_per_hand"]["lo"],
            two["net_points_per_hand"]["hi"],
        )
        if "net_points_per_hand" in two
        else None,
        pairs=None
        if pairs is None
        else PairStats(tuple(pairs["pentanomial"]), pairs["elo"], pairs["lo"], pairs["hi"]),
        sprt=None if sprt_state is None else SprtResult(**sprt_state),
        stopped_early=result.stopped_early,
        table="\n".join(standings.lines()),
        _json=match_json(config, result),
    )


def play_tournament(
    config: TournamentConfig | str | os.PathLike[str] | Mapping[str, Any],
    *,
    output: str | os.PathLike[str] | None = None,
    resume: bool = False,
    stderr_dir: str | os.PathLike[str] | None = None,
) -> TournamentStandings:
    """Play a tournament (round-robin or gauntlet) and return its standings, as ``ginref
    tournament`` does.

    ``config``: a `TournamentConfig`, the path of a TOML file as ``ginref tournament`` reads
    it, or a table of the same shape (``{"games": 2, "engines": [{"name": "S", "command":
    "simple"}, ...]}``; its relative paths are from the current directory). The store and
    the records go to ``output``, else the config's ``output``. ``resume``: continue the
    tournament stored there (the same settings; the stored seed when the config has none).
    A seed the config leaves out is chosen at random and stored.

    Raises ``ConfigError`` for a config that cannot be used, ``StoreError`` for an output
    folder that holds another tournament (or, on resume, none, or other settings),
    `EngineNotReady` when an engine fails its check before game 1, ``OSError`` for files.
    """
    source: str | None = None
    if isinstance(config, TournamentConfig):
        cfg = config
    elif isinstance(config, str | os.PathLike):
        source = os.fspath(config)
        cfg = load_config(source)
    else:
        cfg = build_config(config)
    out = os.fspath(output) if output is not None else cfg.output
    if out is None:
        raise ConfigError("say where the results go: output in the config, or output=DIR")
    stored_seed = None
    if resume:
        with Store.open(out) as old:
            stored_seed = old.settings["seed"]
    if cfg.seed is None:
        cfg = replace(cfg, seed=stored_seed if stored_seed is not None else random_seed())
    for line in start_warnings(cfg.sandbox):
        log.warning("%s", line)
    plan = cpu_plan(cfg)  # affinity = true in the config
    if plan is not None and plan.warning() is not None:
        log.warning("%s", plan.warning())
    errors = _path(stderr_dir)
    check_folder(out, FOLDER_FILES)  # UnsafeOutput (an OSError) before anything is made
    check_outputs(folders=[errors])
    os.makedirs(out, exist_ok=True)
    lock = DirectoryLock(out)
    lock.acquire()
    try:
        if not resume and cfg.dask is None:
            preflight(cfg.specs(), cfg.control, cfg.startup_timeout)
        hidden = reserve_paths([source], [out, errors])
        with ExitStack() as stack:
            backend = _backend(cfg, JobContext.of(cfg, errors, hidden), stack)
            with open_tournament(cfg, out, resume) as store:
                if resume and cfg.dask is None and store.counts()[0] < store.counts()[1]:
                    preflight(cfg.specs(), cfg.control, cfg.startup_timeout)
                run_tournament(store, cfg, backend)
                return TournamentStandings.from_store(store)
    finally:
        lock.release()


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


def _spec(engine: str | EngineSpec, options: Mapping[str, OptionValue] | None) -> EngineSpec:
    spec = engine if isinstance(engine, EngineSpec) else EngineSpec.parse(engine)
    if options:
        spec = replace(spec, options=spec.options + option_pairs(options))
    return spec


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


def _outcome(done: Played) -> GameOutcome:
    lineup = done.job.lineup
    game = done.log.game
    assert game.end is not None, "a played game is over"

    def by_engine(scores: Sequence[int]) -> tuple[int, ...]:
        out = [0] * len(lineup)
        for player, score in enumerate(scores):
            out[lineup[player]] = score
        return tuple(out)

    return GameOutcome(
        number=done.job.index + 1,
        key=done.job.key,
        engines=lineup,
        winner=None if game.winner is None else lineup[game.winner],
        end=game.end,
        hands=len(game.entries),
        scores=tuple(by_engine(game.final_scores(c)) for c in range(len(game.totals))),
        fault=done.log.fault,
    )


def _backend(cfg: TournamentConfig, context: JobContext, stack: ExitStack) -> Backend:
    """Local workers, or the config's Dask cluster with every engine checked on every
    worker (closed with ``stack``)."""
    if cfg.dask is None:
        return LocalBackend(context, cfg.concurrency)
    from referee.dask_backend import DaskBackend, DaskCluster

    cluster = stack.enter_context(DaskCluster(cfg.dask))
    backend = DaskBackend(cluster, context)
    backend.check_engines()
    return backend
