"""``ginref tournament``: run a round-robin or gauntlet from a TOML file, and resume it.

A thin layer over ``referee.tournament``: it turns options into config overrides, errors into
exit codes (a bad config or option: 2; a store that cannot be used or a refused resume: 1),
and shows the progress and the standings.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from types import FrameType
from typing import TYPE_CHECKING, Any, NoReturn

import click

from ginproto.rules import Variant
from referee.cli.options import (
    OUTPUT_FILE,
    OUTPUT_FOLDER,
    OUTPUTS_HELP,
    SECONDS,
    OutputPath,
    affinity_option,
    announce_affinity,
    announce_sandbox,
    check_output_folder,
    dask_option,
    margin_option,
    open_cluster,
    random_seed,
    reserve_paths,
    rule_items,
    sandbox_mode,
    sandbox_options,
    seed_value,
)
from referee.cli.serve import Live, check_web, serve_option
from referee.dask_address import DaskError
from referee.defaults import FOLDER_FILES, FORMATS

# The store (SQLite), the tournament machinery and the Dask backend are imported by the
# functions that use them, when the command runs.
if TYPE_CHECKING:
    from referee.live import Address
    from referee.store import GameResult, Scheduled, Store
    from referee.tournament import Backend, TournamentConfig

EXAMPLE = """\
\b
Example config (every key but the engines has a default):
\b
    event = "Spring cup"
    format = "round-robin"      # or "gauntlet": the first engine against each other
    variant = "standard"        # standard, oklahoma, hollywood, threehanded
    games = 4                   # per pairing; seats rotate, so even numbers balance them
    seed = 2024                 # default: random, stored for the resume
    duplicate = false
    concurrency = 2
    affinity = false            # pin each game's engines to CPUs of their own
    tc = "60+0.5"               # game clock BASE+INC, or "inf"
    move_timeout = 10
    time_margin = 0.1           # seconds of grace on every time limit
    output = "spring-cup"       # relative to this file
    # dask = "tcp://scheduler:8786"   # play on a Dask cluster (or "local:4")
\b
    [rules]
    gin_bonus = 25
\b
    [[engines]]
    name = "Simple"
    command = "simple"          # a built-in, or a command line ("python3 bot.py")
\b
    [[engines]]
    name = "My bot"
    command = ["./mybot", "--fast"]
    cwd = "bots/mine"           # relative to this file
    tc = "30+0.5"               # its own time control
    options = { Seed = 7 }
    env = { PYTHONPATH = "lib" }  # added to the engine's minimal environment
    limits = { memory = "4G" }  # its own sandbox limits (see sandbox, [limits] below)
    network = false

    Sandbox (every engine runs in bubblewrap where it can):

    sandbox = "auto"            # or "require", or "off"
    network = false             # may the engines use the network
    read = ["/opt/runtimes"]    # more paths every engine may read (relative to this file)
    [limits]                    # per engine; these are the defaults
    memory = "2G"
    processes = 128
    disk = "256M"               # its private /tmp and home
    cpus = 1                    # CPU time, however many processes use it (0.5: half a CPU)
"""


TOURNAMENT_FOLDER = OutputPath(folder=True, files=FOLDER_FILES)


@click.command(epilog=EXAMPLE + "\n" + OUTPUTS_HELP)
@click.argument("config", required=False, type=click.Path(dir_okay=False))
@click.option(
    "--resume",
    metavar="DIR",
    type=TOURNAMENT_FOLDER,
    help="Continue the tournament stored in DIR. With CONFIG too, its settings must match.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    help="round-robin, or gauntlet (engine 1 vs all).",
)
@click.option("--variant", type=click.Choice([v.value for v in Variant]), help="The variant.")
@click.option(
    "--rule", "rule", multiple=True, metavar="NAME=VALUE", help="A rule option (repeatable)."
)
@click.option("--games", type=click.IntRange(min=1), help="Games per pairing.")
@click.option("--seed", help="Seed of the deals (default: the file's, else random).")
@click.option(
    "--duplicate/--no-duplicate",
    default=None,
    help="Play each deck sequence from every seat.",
)
@click.option("--concurrency", type=click.IntRange(min=1), help="Games in parallel.")
@click.option("--tc", help="Game clock BASE+INC in seconds, or 'inf'.")
@click.option("--move-timeout", type=SECONDS, help="Seconds per decision.")
@click.option(
    "--startup-timeout",
    type=SECONDS,
    help="Seconds for the handshake and isready.",
)
@margin_option(default=None)
@click.option("--event", help="The event name in every game record.")
@click.option(
    "--output",
    "-d",
    metavar="DIR",
    type=TOURNAMENT_FOLDER,
    help="Where the store and the records go (default: the file's 'output').",
)
@click.option(
    "--stderr-dir",
    type=OUTPUT_FOLDER,
    help="Keep each engine's stderr in this folder (default: discarded).",
)
@click.option(
    "--verify",
    metavar="DIR",
    type=click.Path(file_okay=False),
    help="Check every stored result in DIR against its record, then exit (1 if any differ).",
)
@dask_option("Play on a Dask cluster: a scheduler's address, or local:N (default: the file's).")
@sandbox_options(limits=False, default=None)
@affinity_option(flag=False)
@click.option("--json", "as_json", is_flag=True, help="Print the standings as JSON.")
@click.option(
    "--html",
    "html_out",
    type=OUTPUT_FILE,
    metavar="OUT.html",
    help="Write the report, with every game to replay, as one HTML page.",
)
@serve_option()
@click.option("-q", "--quiet", is_flag=True, help="No progress output.")
def tournament(
    config: str | None,
    resume: str | None,
    fmt: str | None,
    variant: str | None,
    rule: tuple[str, ...],
    games: int | None,
    seed: str | None,
    duplicate: bool | None,
    concurrency: int | None,
    tc: str | None,
    move_timeout: float | None,
    startup_timeout: float | None,
    time_margin: float | None,
    event: str | None,
    output: str | None,
    stderr_dir: str | None,
    verify: str | None,
    dask: str | None,
    sandbox: str | None,
    no_sandbox: bool,
    affinity: bool | None,
    as_json: bool,
    quiet: bool,
    html_out: str | None = None,
    serve: Address | None = None,
) -> None:
    """Run a tournament from a CONFIG file (TOML), or resume one with --resume DIR.

    Every finished game is stored at once, with its record, in DIR/tournament.sqlite, and the
    records are kept in DIR/games.gin. An interrupted tournament (Ctrl-C, a crash, kill -9)
    resumes with every finished game kept and none played twice:

        ginref tournament cup.toml

        ginref tournament --resume cup-results

    Options given on the command line override the file. The first Ctrl-C lets the games in
    progress finish; a second one stops at once (those games are played again on resume).
    Either way the standings of the games stored are printed, and the exit code is 130.

    --verify DIR re-runs every stored game's record through the rules and checks that the
    store's result is the one it gives (a resume checks the same, and refuses a store that
    fails):

        ginref tournament --verify cup-results

    --serve PORT shows the run live in a browser (http://127.0.0.1:PORT/): the progress, the
    standings, the games in progress as a spectator sees them, and every finished game in
    the replay viewer.
    """
    from referee.store import Store, StoreError
    from referee.tournament import ConfigError, build_config, cpu_plan, load_config

    for hint, folder in (("--verify", verify), ("--resume", resume), ("--output", output)):
        if folder is not None and not folder.strip():
            raise click.BadParameter("must name a folder, not be empty", param_hint=hint)
    if serve is not None:
        if verify is not None:
            raise click.UsageError("--serve shows a run live: it does not go with --verify")
        check_web()
    if verify is not None:
        if config is not None or resume is not None:
            raise click.UsageError(
                "--verify DIR checks a stored tournament: give no CONFIG nor --resume"
            )
        _verify(verify)
        return
    if config is None and resume is None:
        raise click.UsageError("give a CONFIG file, or --resume DIR to continue a tournament")
    overrides = _overrides(
        format=fmt,
        variant=variant,
        games=games,
        duplicate=duplicate,
        concurrency=concurrency,
        tc=tc,
        move_timeout=move_timeout,
        startup_timeout=startup_timeout,
        time_margin=time_margin,
        event=event,
        dask=dask,
        seed=None if seed is None else seed_value(seed),
        rules=rule_items(rule) or None,
        sandbox=None if sandbox is None and not no_sandbox else sandbox_mode(sandbox, no_sandbox),
        affinity=affinity,
    )
    directory = resume or output
    stored: dict[str, Any] | None = None
    if resume is not None:
        try:
            with Store.open(resume) as old:
                stored = old.settings
                run = old.run_options
        except StoreError as exc:
            raise click.ClickException(str(exc)) from None
    try:
        if config is not None:
            cfg = load_config(config, overrides)
        else:
            assert stored is not None
            cfg = build_config({**stored, **run}, None, f"{resume}: ", overrides)
    except ConfigError as exc:
        raise click.BadParameter(str(exc), param_hint="CONFIG" if config else None) from None
    if directory is None:
        directory = cfg.output
    if directory is None:
        raise click.UsageError(
            'say where the results go: output = "DIR" in the file, or --output DIR'
        )
    if output is None and resume is None:  # the file's output: checked as --output is
        check_output_folder(directory, FOLDER_FILES, "the config's output")
    if cfg.seed is None:
        cfg = replace(cfg, seed=stored["seed"] if stored else random_seed())
    announce_sandbox(cfg.sandbox)
    announce_affinity(cpu_plan(cfg))
    live = None if serve is None else Live.open(serve, cfg.event, "tournament")
    _run(cfg, directory, resume is not None, stderr_dir, as_json, quiet, html_out, config, live)
    if live is not None:
        live.stay()


def _verify(directory: str) -> None:
    """Print each stored game that its records contradict, and a summary; exit 1 if any."""
    import sqlite3

    from ginproto.record import RecordError
    from referee.store import Store, StoreError
    from referee.tournament import verify_tournament

    try:
        with Store.open(directory) as store:
            report = verify_tournament(store)
    except (StoreError, RecordError) as exc:
        raise click.ClickException(str(exc)) from None
    except (OSError, sqlite3.Error, ValueError) as exc:
        raise click.ClickException(f"cannot read the store in {directory}: {exc}") from None
    for note in report.notes:
        click.echo(f"note: {note}", err=True)
    for difference in report.differences:
        click.echo(str(difference))
    if not report.ok:
        raise click.ClickException(report.summary(directory))
    click.echo(report.summary(directory))


def _overrides(**given: Any) -> dict[str, Any]:
    """The settings given on the command line (those left out are ``None``)."""
    return {key: value for key, value in given.items() if value is not None}


def _run(
    cfg: TournamentConfig,
    directory: str,
    resume: bool,
    stderr_dir: str | None,
    as_json: bool,
    quiet: bool,
    html_out: str | None = None,
    config: str | None = None,
    live: Live | None = None,
) -> None:
    from referee.store import DirectoryLock, StoreError
    from referee.tournament import open_tournament

    try:
        os.makedirs(directory, exist_ok=True)
        if stderr_dir:
            os.makedirs(stderr_dir, exist_ok=True)
        lock = DirectoryLock(directory)
        lock.acquire()
    except (OSError, StoreError) as exc:
        raise click.ClickException(str(exc)) from None
    try:
        if not resume and cfg.dask is None:
            _preflight(cfg)  # before the store is created: a new run is not started at all
        # No sandboxed engine sees the store, the records, the config or the stderr files.
        hidden = reserve_paths([config], [directory, stderr_dir])
        watch = None if live is None or cfg.dask is not None else live.watch(cfg.names)
        # On a cluster: checks every worker's engines.
        backend = _backend(cfg, stderr_dir, hidden, watch)
        try:
            store = open_tournament(cfg, directory, resume)
        except StoreError as exc:
            raise click.ClickException(str(exc)) from None
        with store:
            _play(store, cfg, backend, directory, resume, as_json, quiet, html_out, live)
    finally:
        lock.release()


def _write_report(directory: str, cfg: TournamentConfig, names: list[str], out: str) -> None:
    from ginproto.record import RecordError
    from referee.html.report import write_match_report  # the page's assets load only when asked
    from referee.store import RECORDS_NAME

    records = os.path.join(directory, RECORDS_NAME)
    try:
        write_match_report(
            [records] if os.path.exists(records) else [],
            out,
            title=cfg.event,
            names=names,
            duplicate=cfg.duplicate,
            tournament=True,
        )
    except OSError as exc:
        raise click.ClickException(f"cannot write {out}: {exc.strerror or exc}") from None
    except RecordError as exc:
        raise click.ClickException(f"cannot write {out}: {exc}") from None


def _preflight(cfg: TournamentConfig) -> None:
    """Every engine starts, completes its handshake and declares its options, or exit 1."""
    from referee.preflight import EngineNotReady, preflight

    try:
        preflight(cfg.specs(), cfg.control, cfg.startup_timeout)
    except EngineNotReady as exc:
        raise click.ClickException(str(exc)) from None


def _backend(
    cfg: TournamentConfig, stderr_dir: str | None, hidden: list[str], watch: Any = None
) -> Backend:
    """Local workers, or the Dask cluster, connected and with every engine checked on every
    worker before game 1. A sandboxed engine sees none of the ``hidden`` paths. ``watch``
    wraps the local workers' seats (the live page)."""
    from referee.tournament import JobContext, LocalBackend

    context = JobContext.of(cfg, stderr_dir, hidden)
    if cfg.dask is None:
        return LocalBackend(context, cfg.concurrency, watch)
    from referee.dask_backend import DaskBackend

    cluster = click.get_current_context().with_resource(open_cluster(cfg.dask))
    backend = DaskBackend(cluster, context)
    try:
        backend.check_engines()
    except DaskError as exc:
        raise click.ClickException(str(exc)) from None
    return backend


def _play(
    store: Store,
    cfg: TournamentConfig,
    backend: Backend,
    directory: str,
    resume: bool,
    as_json: bool,
    quiet: bool,
    html_out: str | None = None,
    live: Live | None = None,
) -> None:
    import sqlite3

    from referee.dask_backend import DaskBackend
    from referee.live import feed_tournament
    from referee.progress import Progress
    from referee.store import StoreError
    from referee.tournament import TournamentStandings, run_tournament

    names = store.names
    done, total = store.counts()
    if not quiet:
        what = (
            f"Resuming {directory}: {done} of {total} games played"
            if resume
            else f"Tournament in {directory}: {total} games"
        )
        click.echo(
            f"{what}; {cfg.format} of {len(names)} engines ({', '.join(names)}),"
            f" {cfg.rules.variant}, {cfg.games} games per pairing"
            f"{' (duplicate)' if cfg.duplicate else ''}, seed {cfg.seed}, tc {cfg.control},"
            + (
                f" on {backend.cluster.describe()}"
                if isinstance(backend, DaskBackend)
                else f" concurrency {cfg.concurrency}"
            ),
            err=True,
        )
    if resume and done < total and not isinstance(backend, DaskBackend):
        _preflight(cfg)  # a cluster's workers were checked when it was connected
    progress = Progress(total - done, stream=sys.stderr, quiet=quiet)
    shown = None if live is None else feed_tournament(live.state, store)

    def on_game(game: Scheduled, result: GameResult) -> None:
        if shown is not None:
            shown(game, result)
        players = " vs ".join(names[e] for e in game.seats)
        text = "drawn" if result.winner is None else f"{names[result.winner]} wins"
        for f in result.faults:
            text += f" ({names[f.engine]} forfeits: {f.kind})"
        progress.step(f"game {game.game + 1}: {players}: {text}")

    lost = False  # a second Ctrl-C: the games in progress were dropped
    with _interrupts() as stopping:
        try:
            run_tournament(store, cfg, backend, on_game, stop=stopping.is_set)
        except KeyboardInterrupt:
            lost = True
        except (OSError, sqlite3.Error, StoreError) as exc:
            what = (
                f"the referee cannot write its own file: {exc.strerror}: {exc.filename}"
                if isinstance(exc, OSError) and exc.filename and exc.strerror
                else f"cannot store the results in {directory}: {exc}"
            )
            raise click.ClickException(
                f"{what}; the games stored so far are kept: resume with"
                f" ginref tournament --resume {directory}"
            ) from None
        except DaskError as exc:
            raise click.ClickException(
                f"{exc}; the games stored so far are kept: resume with ginref tournament"
                f" --resume {directory}"
            ) from None
        finally:
            progress.close()
    standings = TournamentStandings.from_store(store)
    done, total = store.counts()
    interrupted = stopping.signum is not None and done < total
    if live is not None:
        live.over(f"complete: {done} of {total} games" if done == total else "stopped")
    if interrupted and not done:  # nothing finished: nothing to show
        _interrupted(directory, done, total, lost, stopping.signum)
    failed: click.ClickException | None = None
    if html_out is not None:
        try:
            _write_report(directory, cfg, list(names), html_out)
        except click.ClickException as exc:  # the standings are still printed, then this
            failed = exc
    if as_json:
        out = {
            "tournament": {
                "directory": os.path.abspath(directory),
                "event": cfg.event,
                "format": cfg.format,
                "variant": str(cfg.rules.variant),
                "games_per_pairing": cfg.games,
                "seed": cfg.seed,
                "duplicate": cfg.duplicate,
                "played": done,
                "scheduled": total,
                "complete": done == total,
            },
            **standings.to_json(),
        }
        click.echo(json.dumps(out, indent=2))
    else:
        click.echo(f"{cfg.event}: {done} of {total} games played")
        click.echo("")
        for line in standings.lines():
            click.echo(line)
    if failed is not None:
        if not interrupted:
            raise failed
        failed.show()
    if interrupted:  # Ctrl-C: after the standings of the games finished, exit 130
        _interrupted(directory, done, total, lost, stopping.signum)
    if done < total:
        raise click.ClickException(
            f"stopped after {done} of {total} games; resume with:"
            f" ginref tournament --resume {directory}"
        )


def _interrupted(
    directory: str, done: int, total: int, lost: bool, signum: int | None
) -> NoReturn:
    """Ctrl-C (or SIGTERM): say where the tournament stopped and how to resume it, then exit
    128 + the signal's number (130 for Ctrl-C)."""
    click.echo(
        f"Interrupted after {done} of {total} games"
        f"{'; the games in progress are lost' if lost else ''}. Resume with:"
        f" ginref tournament --resume {directory}",
        err=True,
    )
    raise click.exceptions.Exit(128 + (signum or signal.SIGINT))


class _Stopping(threading.Event):
    """Set by the first SIGINT or SIGTERM; ``signum`` is the first one received."""

    signum: int | None = None


@contextmanager
def _interrupts() -> Iterator[_Stopping]:
    """The first SIGINT or SIGTERM sets the event (no new game starts); a second one raises
    ``KeyboardInterrupt``. Handlers are installed only in the main thread."""
    stopping = _Stopping()
    if threading.current_thread() is not threading.main_thread():
        yield stopping
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        if stopping.is_set():
            raise KeyboardInterrupt
        stopping.signum = signum
        stopping.set()
        sys.stderr.write(
            "\nStopping after the games in progress (interrupt again to stop at once)...\n"
        )

    previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stopping
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
