"""``ginref tournament``: run a round-robin or gauntlet from a TOML file, and resume it.

A thin layer over ``referee.api.play_tournament``: it turns options into its arguments (the
config's overrides), its hooks into progress, errors into exit codes (a bad config or option:
2; a store that cannot be used or a refused resume: 1), and shows the standings.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

import click

from ginproto.rules import Variant
from ginproto.text import plural
from referee.cli.interrupts import interrupts
from referee.cli.options import (
    CLOCK_OPTIONS,
    OUTPUT_FILE,
    OUTPUT_FOLDER,
    OUTPUTS_HELP,
    SECONDS,
    OutputPath,
    affinity_option,
    as_value,
    clock_value,
    dask_option,
    margin_option,
    outputs_value,
    rule_items,
    sandbox_mode,
    sandbox_options,
    seed_value,
)
from referee.cli.remote import NO_REMOTE, RemoteOptions, remote_json, remote_options
from referee.cli.serve import Live, check_serve, serve_option
from referee.defaults import FOLDER_FILES, FORMATS
from referee.errors import DaskError, RefereeError, ReportError

# The store (SQLite), the tournament machinery and the Dask backend are imported by the
# functions that use them, when the command runs.
if TYPE_CHECKING:
    from referee import api
    from referee.results.standings import TournamentStandings
    from referee.results.store import GameResult, Scheduled
    from referee.scheduling.config import RemoteRun
    from referee.settings import Clock, Outputs
    from referee.views.faults import Forfeit
    from referee.views.live import Address

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
    # Engines that connect (remote = "NAME" in place of command; gin-connect --games K):
    # listen = "0.0.0.0:9000"   # where they connect (--listen)
    # tokens = "tokens.toml"    # their tokens, relative to this file (--tokens)
    # latency_margin = 0.2      # seconds added to their moves (--latency-margin)
    # remote_wait = 300         # seconds they have to connect (--remote-wait)
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


def _outputs(stderr_dir: str | None, html: str | None) -> Outputs:
    """The `Outputs` of ``--stderr-dir`` and ``--html``: a tournament's records are kept in
    its folder."""
    return outputs_value(None, None, stderr_dir, html)


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
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="Show the last lines of an engine's stderr under each of its forfeits.",
)
@as_value("clock", clock_value, *CLOCK_OPTIONS)
@as_value("outputs", _outputs, "stderr_dir", "html_out")
@remote_options()
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
    clock: Clock,
    event: str | None,
    output: str | None,
    outputs: Outputs,
    verify: str | None,
    dask: str | None,
    sandbox: str | None,
    no_sandbox: bool,
    affinity: bool | None,
    as_json: bool,
    quiet: bool,
    verbose: bool,
    serve: Address | None = None,
    serve_for: float | None = None,
    remote: RemoteOptions = NO_REMOTE,
) -> None:
    """Run a tournament from a CONFIG file (TOML), or resume one with --resume DIR.

    Every finished game is stored at once, with its record, in DIR/tournament.sqlite, and the
    records are kept in DIR/games.gin. An interrupted tournament (Ctrl-C, a crash, kill -9)
    resumes with every finished game kept and none played twice:

        ginref tournament cup.toml

        ginref tournament --resume cup-results

    Options given on the command line override the file. The first Ctrl-C lets the games in
    progress finish; a second one stops at once (those games are played again on resume).
    Either way the standings of the games stored are printed, and the exit code is 130. A
    Ctrl-C once the last game has ended ends the command at once, also with 130.

    --verify DIR re-runs every stored game's record through the rules and checks that the
    store's result is the one it gives (a resume checks the same, and refuses a store that
    fails):

        ginref tournament --verify cup-results

    --serve PORT shows the run live in a browser (http://127.0.0.1:PORT/): the progress, the
    standings, the games in progress as a spectator sees them, and every finished game in
    the replay viewer. The page stays up after the last game until Ctrl-C, or for
    --serve-for SECONDS (0: the command ends with the run, as it does without --serve).
    """
    from referee.settings import Sandbox

    _check_folders(config, resume, output, verify, serve, serve_for)
    if verify is not None:
        _verify(verify)
        return
    mode = None if sandbox is None and not no_sandbox else sandbox_mode(sandbox, no_sandbox)
    settings = {  # the config's settings these override
        "format": fmt,
        "variant": variant,
        "rules": rule_items(rule) or None,
        "games": games,
        "seed": None if seed is None else seed_value(seed),
        "duplicate": duplicate,
        "concurrency": concurrency,
        "clock": clock,
        "sandbox": Sandbox(mode),
        "outputs": outputs,
        "event": event,
        "dask": dask,
        "affinity": affinity,
    }
    where = {"output": output, "resume": False if resume is None else resume}
    shown = _Progress(quiet, verbose=verbose)
    _run(config, where | settings, shown, as_json, serve, serve_for, remote)


def _run(
    config: str | None,
    arguments: dict[str, Any],
    shown: _Progress,
    as_json: bool,
    serve: Address | None,
    serve_for: float | None,
    remote: RemoteOptions = NO_REMOTE,
) -> None:
    """Play the tournament (`referee.api.play_tournament` with ``arguments``), showing its
    progress, then print its standings; a live page stays up after it with ``serve``, and
    the remote engines (``remote = "NAME"``) connect to the listener held for it."""
    import sqlite3

    from referee import api
    from referee.results.store import StoreError
    from referee.scheduling.config import ConfigError

    live = None if serve is None else Live(serve)
    failed: RefereeError | None = None
    lost = False  # a second Ctrl-C: the games in progress were dropped
    run, names = _remote_engines(config, arguments["resume"])
    remote = remote.over(run)  # the config's listen = ..., under the command line's
    listening = remote.listening(names, quiet=shown.quiet, every=True)
    # One handler for the whole command, whose meaning follows the run: no Ctrl-C is lost
    # between the games, the results and the live page that stays up.
    with listening, interrupts(defer_first=True) as signals:
        shown.on_last = signals.over
        try:
            standings = api.play_tournament(
                config,
                **arguments,
                serve=None if live is None else live.page,
                on_start=remote.checked(shown.start),  # remote engines: not on Dask
                on_game=shown.game,
                on_warning=_warn,
                stop=signals,
                on_over=signals.over,
            )
        except api.TournamentInterrupted as exc:
            standings, failed, lost = exc.standings, exc.report_error, True
        except ReportError as exc:  # the standings are still printed, then this
            standings, failed = exc.result, exc
        except api.NoOutput:
            raise click.UsageError(
                'say where the results go: output = "DIR" in the file, or --output DIR'
            ) from None
        except ConfigError as exc:
            raise click.BadParameter(str(exc), param_hint="CONFIG" if config else None) from None
        except (OSError, sqlite3.Error, StoreError, DaskError) as exc:
            if shown.run is not None:  # during the games: say how to resume
                raise _stopped(exc, shown.run.directory) from None
            if isinstance(exc, RefereeError):  # the group says it
                raise
            raise click.ClickException(str(exc)) from None
        finally:
            shown.close()
        signals.over()
        assert shown.run is not None, "a run that returns has started"
        _results(shown.run, standings, as_json, lost, signals.signum, failed, shown, names)
        if signals.signum is not None:  # the games were all played, then Ctrl-C
            click.echo(
                "Interrupted; the tournament is complete"
                f" ({plural(standings.played, 'game')}).",
                err=True,
            )
            raise click.exceptions.Exit(128 + signals.signum)
        if live is not None:
            live.stay(signals, serve_for)


def _remote_engines(
    config: str | None, resume: str | bool
) -> tuple[RemoteRun, tuple[str, ...]]:
    """Where the config says its remote engines connect, and their names (the stored
    tournament's, resumed without a config), known before anything listens."""
    import sqlite3

    from referee.results.store import Store, StoreError
    from referee.scheduling.config import ConfigError, RemoteRun
    from referee.scheduling.loader import load_remote, remote_names

    if config is not None:
        try:
            return load_remote(config)
        except ConfigError as exc:
            raise click.BadParameter(str(exc), param_hint="CONFIG") from None
    if isinstance(resume, str):
        try:
            with Store.open(resume) as store:
                return RemoteRun(), remote_names(store.settings)
        except (OSError, sqlite3.Error, StoreError):
            pass  # the resume itself says what is wrong with the folder
    return RemoteRun(), ()


def _check_folders(
    config: str | None,
    resume: str | None,
    output: str | None,
    verify: str | None,
    serve: Address | None,
    serve_for: float | None,
) -> None:
    """Refuse (exit 2) an empty folder, or options that do not go together."""
    for hint, folder in (("--verify", verify), ("--resume", resume), ("--output", output)):
        if folder is not None and not folder.strip():
            raise click.BadParameter("must name a folder, not be empty", param_hint=hint)
    if serve is not None and verify is not None:
        raise click.UsageError("--serve shows a run live: it does not go with --verify")
    check_serve(serve, serve_for)
    if verify is not None:
        if config is not None or resume is not None:
            raise click.UsageError(
                "--verify DIR checks a stored tournament: give no CONFIG nor --resume"
            )
    elif config is None and resume is None:
        raise click.UsageError("give a CONFIG file, or --resume DIR to continue a tournament")


class _Progress:
    """What the tournament shows on stderr as it plays: the line that says what is played,
    once its store is open (``on_start``), then a line or a bar per game (``on_game``)."""

    def __init__(
        self, quiet: bool, on_last: Callable[[], None] = lambda: None, verbose: bool = False
    ) -> None:
        from referee.views.progress import Progress

        self.quiet = quiet
        self.on_last = on_last
        self.left = 0
        self.verbose = verbose
        self.forfeits: list[Forfeit] = []  # this run's, for the list under the standings
        self.run: api.TournamentStart | None = None
        self.bar = Progress(0, quiet=True)

    def start(self, start: api.TournamentStart) -> None:
        from referee.views.progress import Progress

        self.run = start
        self.left = start.scheduled - start.played
        if not self.quiet:
            _announce(start)
        self.bar = Progress(start.scheduled - start.played, stream=sys.stderr, quiet=self.quiet)

    def game(self, game: Scheduled, result: GameResult) -> None:
        from referee.views.faults import Forfeit, fault_words, stderr_block

        assert self.run is not None, "on_start comes first"
        names = self.run.names
        players = " vs ".join(names[e] for e in game.seats)
        text = "drawn" if result.winner is None else f"{names[result.winner]} wins"
        below: list[str] = []
        for f in result.faults:
            text += f" ({names[f.engine]} forfeits: {fault_words(f.kind, f.reason or f.detail)})"
            if self.verbose:
                below += stderr_block(f.stderr)
            self.forfeits.append(
                Forfeit(game.game + 1, names[f.engine], f.kind, f.reason or f.detail, f.stderr)
            )
        # A forfeit is shown on a terminal too, above the bar.
        self.bar.step(f"game {game.game + 1}: {players}: {text}", bool(result.faults), below)
        self.left -= 1
        if self.left == 0:  # the last game has ended
            self.on_last()

    def close(self) -> None:
        self.bar.close()


def _announce(start: api.TournamentStart) -> None:
    """The line that says what is about to be played, on stderr."""
    cfg, names = start.config, start.names
    what = (
        f"Resuming {start.directory}: {start.played} of {plural(start.scheduled, 'game')}"
        " played"
        if start.resumed
        else f"Tournament in {start.directory}: {plural(start.scheduled, 'game')}"
    )
    click.echo(
        f"{what}; {cfg.format} of {len(names)} engines ({', '.join(names)}),"
        f" {cfg.rules.variant}, {plural(cfg.games, 'game')} per pairing"
        f"{' (duplicate)' if cfg.duplicate else ''}, seed {cfg.seed}, tc {cfg.control},"
        + (
            f" on {start.cluster}"
            if start.cluster is not None
            else f" concurrency {cfg.concurrency}"
        ),
        err=True,
    )


def _stopped(exc: Exception, directory: str) -> click.ClickException:
    """A failure of the referee's own files or of the cluster during the games."""
    if isinstance(exc, DaskError):
        what = str(exc)
    elif isinstance(exc, OSError) and exc.filename and exc.strerror:
        what = f"the referee cannot write its own file: {exc.strerror}: {exc.filename}"
    else:
        what = f"cannot store the results in {directory}: {exc}"
    return click.ClickException(
        f"{what}; the games stored so far are kept: resume with"
        f" ginref tournament --resume {directory}"
    )


def _warn(line: str) -> None:
    click.echo(line, err=True)


def _results(
    start: api.TournamentStart,
    standings: TournamentStandings,
    as_json: bool,
    lost: bool,
    signum: int | None,
    failed: RefereeError | None,
    shown: _Progress | None = None,
    remotes: Sequence[str] = (),
) -> None:
    """The standings of the games stored, and the forfeits of this run's games, then the
    exit: 130 after Ctrl-C, 1 when a report could not be written or games are left to
    play. With ``--json``, the connections of the remote engines ``remotes`` too."""
    from referee.views.faults import fault_lines

    cfg, directory = start.config, start.directory
    done, total = standings.played, standings.scheduled
    interrupted = signum is not None and done < total
    if interrupted and not done:  # nothing finished: nothing to show
        _interrupted(directory, done, total, lost, signum)
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
        if remotes:
            out["remote"] = remote_json(remotes)
        click.echo(json.dumps(out, indent=2))
    else:
        click.echo(f"{cfg.event}: {done} of {plural(total, 'game')} played")
        click.echo("")
        for line in standings.lines():
            click.echo(line)
        if shown is not None:
            title = "Forfeits in this run:" if start.resumed else "Forfeits:"
            for line in fault_lines(shown.forfeits, shown.verbose, title):
                click.echo(line)
    if failed is not None:
        if not interrupted:
            raise click.ClickException(str(failed))
        click.ClickException(str(failed)).show()
    if interrupted:  # Ctrl-C: after the standings of the games finished, exit 130
        _interrupted(directory, done, total, lost, signum)
    if done < total:
        raise click.ClickException(
            f"stopped after {done} of {plural(total, 'game')}; resume with:"
            f" ginref tournament --resume {directory}"
        )


def _verify(directory: str) -> None:
    """Print each stored game that its records contradict, and a summary; exit 1 if any."""
    import sqlite3

    from ginproto.record import RecordError
    from referee.api import verify_tournament

    try:
        report = verify_tournament(directory)  # StoreError: the group says why
    except RecordError as exc:
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


def _interrupted(
    directory: str, done: int, total: int, lost: bool, signum: int | None
) -> NoReturn:
    """Ctrl-C (or SIGTERM): say where the tournament stopped and how to resume it, then exit
    128 + the signal's number (130 for Ctrl-C)."""
    click.echo(
        f"Interrupted after {done} of {plural(total, 'game')}"
        f"{'; the games in progress are lost' if lost else ''}. Resume with:"
        f" ginref tournament --resume {directory}",
        err=True,
    )
    raise click.exceptions.Exit(128 + (signum or signal.SIGINT))
