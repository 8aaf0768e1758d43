"""``ginref match``: play engines against each other, a fixed number of games or until an SPRT
decides, and print the standings. The match is ``referee.api.play_match``'s; this module only
turns options into its arguments, and its hooks and results into output."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

import click

from ginproto.rules import Variant
from ginproto.text import plural
from referee.cli.interrupts import interrupts
from referee.cli.options import (
    OUTPUT_FILE,
    OUTPUT_FOLDER,
    OUTPUTS_HELP,
    affinity_option,
    as_value,
    clock_value,
    dask_option,
    engine_limits,
    env_option,
    outputs_value,
    parse_engines,
    parse_rules,
    parse_seed,
    sandbox_mode,
    sandbox_options,
    timeout_options,
)
from referee.cli.remote import NO_REMOTE, RemoteOptions, remote_json, remote_options
from referee.cli.serve import Live, check_serve, serve_option
from referee.errors import RefereeError, ReportError

if TYPE_CHECKING:
    from referee.api import GameOutcome, MatchResult, MatchStart
    from referee.seat.player import EngineSpec
    from referee.settings import Outputs
    from referee.views.live import Address


VARIANTS = [v.value for v in Variant]


class SprtNumber(click.ParamType[float]):
    """One of the four numbers of ``--sprt``. Given fewer, click takes the next option as one
    (``--sprt 0 10 --games 5``), so the message says what the four are."""

    name = "number"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        if isinstance(value, float):
            return value
        try:
            return float(value)
        except ValueError:
            self.fail(
                f"{value!r} is not a number: --sprt takes four numbers, ELO0 ELO1 ALPHA BETA"
                " (such as --sprt 0 10 0.05 0.05)",
                param,
                ctx,
            )


@click.command(epilog=OUTPUTS_HELP)
@click.argument("engines", nargs=-1, required=True)
@click.option(
    "--variant", type=click.Choice(VARIANTS), help="Default: standard (threehanded for 3 engines)."
)
@click.option(
    "--rule",
    "rule",
    multiple=True,
    metavar="NAME=VALUE",
    help="A rule option, e.g. gin_bonus=20 (repeatable).",
)
@click.option(
    "--games",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="Games to the target (Hollywood: series).",
)
@click.option(
    "--seed",
    help="Seed of the deals; the same seed gives the same deals. Default: random, printed.",
)
@click.option("--duplicate", is_flag=True, help="Play each deck sequence with the seats swapped.")
@click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Games in parallel.",
)
@click.option(
    "--tc", default="120+1", show_default=True, help="Game clock BASE+INC in seconds, or 'inf'."
)
@timeout_options()
@click.option(
    "--record",
    type=OUTPUT_FILE,
    help="Append every finished game's record to FILE.",
)
@click.option(
    "--debug-log",
    type=OUTPUT_FILE,
    help="Write every protocol line, with time, engine and direction.",
)
@click.option(
    "--stderr-dir",
    type=OUTPUT_FOLDER,
    help="Keep each engine's stderr in this folder (default: discarded).",
)
@click.option(
    "--sprt",
    nargs=4,
    type=SprtNumber(),
    metavar="ELO0 ELO1 ALPHA BETA",
    help="Stop early when the SPRT decides (two engines).",
)
@click.option(
    "-o",
    "--option",
    "options",
    multiple=True,
    metavar="[N:]NAME=VALUE",
    help="An engine option, for engine N or all (repeatable).",
)
@env_option(numbered=True)
@click.option(
    "--name",
    "names",
    multiple=True,
    metavar="N=NAME",
    help="Show engine N under NAME instead of its id name.",
)
@sandbox_options()
@affinity_option()
@click.option(
    "--json", "as_json", is_flag=True, help="Print the results as JSON instead of the table."
)
@click.option(
    "--html",
    "html_out",
    type=OUTPUT_FILE,
    metavar="OUT.html",
    help="Write the match report, with every game to replay, as one HTML page.",
)
@dask_option("Play the games on a Dask cluster: a scheduler's address, or local:N workers.")
@serve_option()
@click.option("-q", "--quiet", is_flag=True, help="No progress output.")
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="Show the last lines of an engine's stderr under each of its forfeits.",
)
@as_value("outputs", outputs_value, "record", "debug_log", "stderr_dir", "html_out")
@remote_options()
def match(
    engines: tuple[str, ...],
    variant: str | None,
    rule: tuple[str, ...],
    games: int,
    seed: str | None,
    duplicate: bool,
    concurrency: int,
    tc: str,
    move_timeout: float,
    startup_timeout: float,
    time_margin: float,
    outputs: Outputs,
    sprt: tuple[float, float, float, float] | None,
    options: tuple[str, ...],
    env: tuple[str, ...],
    names: tuple[str, ...],
    sandbox: str,
    no_sandbox: bool,
    limits: tuple[str, ...],
    network: bool,
    readable: tuple[str, ...],
    affinity: bool,
    as_json: bool,
    dask: str | None,
    quiet: bool,
    verbose: bool = False,
    serve: Address | None = None,
    serve_for: float | None = None,
    remote: RemoteOptions = NO_REMOTE,
) -> None:
    """Play a match between two engines (three for the three-player game).

    An ENGINE is a built-in name (random, simple, expert, camper, js-simple, and
    openspiel:simple with the openspiel extra) or a command line in quotes, split as a shell
    would split it but never run through one:

        ginref match random simple --games 20

        ginref match "python3 mybot.py" simple --tc 60+0.5 --record games.gin

        ginref match simple random --games 10000 --dask tcp://scheduler:8786

    remote:NAME is the engine of whoever connects with NAME's token (gin-connect):

        ginref match remote:alice simple --listen 127.0.0.1:9000 --tokens tokens.toml

    --serve PORT shows the match live in a browser (http://127.0.0.1:PORT/), and keeps the
    page up after the last game until Ctrl-C, or for --serve-for SECONDS (0: the command
    ends with the match). Ctrl-C once the last game has ended ends the command at once
    (exit 130).
    """
    # The game machinery is imported here, not with the command: ``ginref --help`` needs none.
    from referee.settings import Sandbox

    check_serve(serve, serve_for)
    _check_count(engines)
    rules = parse_rules(variant, rule, len(engines))  # each of these refuses a bad value
    specs = parse_engines(engines, options, names, env)
    box = Sandbox(
        sandbox_mode(sandbox, no_sandbox), engine_limits(limits, len(engines)), network, readable
    )
    clock = clock_value(tc, move_timeout, startup_timeout, time_margin)
    _check_together(len(engines), sprt, dask, outputs.path("debug_log"), affinity)
    settings = {
        "rules": rules,
        "games": games,
        "seed": parse_seed(seed),
        "concurrency": concurrency,
        "duplicate": duplicate,
        "clock": clock,
        "sandbox": box,
        "outputs": outputs,
        "sprt": sprt,
        "affinity": affinity,
        "dask": dask,
    }
    shown = _Progress(games, quiet, verbose)
    _play(specs, settings, shown, as_json, serve, serve_for, remote)


def _check_count(engines: Sequence[str]) -> None:
    """Refuse (exit 2) an engine written as two words unquoted, and a count of engines that
    makes no match."""
    from referee.seat.diagnose import quote_hint

    unquoted = quote_hint(engines, "match")
    if unquoted is not None:
        raise click.UsageError(unquoted)
    if len(engines) not in (2, 3):
        raise click.UsageError("give two engines (or three for the three-player game)")


def _play(
    specs: tuple[EngineSpec, ...],
    settings: dict[str, Any],
    shown: _Progress,
    as_json: bool,
    serve: Address | None,
    serve_for: float | None,
    remote: RemoteOptions = NO_REMOTE,
) -> None:
    """Play the match (`referee.api.play_match` with ``settings``), showing its progress,
    then print its results; a live page stays up after it with ``serve``, and the remote
    engines (``remote:NAME``) are waited for before it."""
    from referee import api

    games, verbose = shown.games, shown.verbose
    record = settings["outputs"].path("record")
    live = None if serve is None else Live(serve)
    # One handler for the whole command, whose meaning follows the run: no Ctrl-C is lost
    # between the games, the results and the live page that stays up.
    seats = remote.seats(specs, dask=settings["dask"], quiet=shown.quiet)
    remotes = [spec.remote for spec in specs if spec.remote is not None]
    with seats as specs, interrupts(defer_first=False) as signals:  # remote engines: waited for
        try:
            result = api.play_match(
                specs,
                **settings,
                serve=None if live is None else live.page,
                on_start=shown.start,
                on_game=shown.game,
                on_warning=_warn,
                on_over=signals.over,
            )
        except api.MatchInterrupted as exc:
            shown.close()
            _interrupted(exc.result, games, record, as_json, verbose, remotes)
        except ReportError as exc:  # the results are still printed, then this
            shown.close()
            if exc.result is not None:  # None: interrupted, and the report of the games failed
                _print_results(exc.result, as_json, games, verbose, remotes)
            raise
        except OSError as exc:
            if isinstance(exc, RefereeError):
                raise
            raise _cannot_write(exc, record, shown) from None
        finally:  # a refusal (RefereeError) goes on to the group, which says it
            shown.close()
        signals.over()
        _print_results(result, as_json, games, verbose, remotes)
        if signals.signum is not None:  # the games were over, then Ctrl-C
            click.echo("Interrupted after the last game.", err=True)
            raise click.exceptions.Exit(128 + signals.signum)
        if live is not None:
            live.stay(signals, serve_for)


def _check_together(
    engines: int,
    sprt: tuple[float, float, float, float] | None,
    dask: str | None,
    debug_log: str | None,
    affinity: bool,
) -> None:
    """Refuse (exit 2) the options that do not go together, or an SPRT it cannot run: the
    one check (`referee.settings.check_run_options`), worded for the options."""
    from referee.settings import RunOptionError, check_run_options

    words = {
        "sprt": "--sprt",
        "dask": "--dask",
        "debug_log": "--debug-log",
        "affinity": "--affinity",
    }
    try:
        check_run_options(engines, sprt, dask, debug_log, affinity, words)
    except RunOptionError as exc:
        if exc.option is not None:
            raise click.BadParameter(str(exc), param_hint=f"'{exc.option}'") from None
        raise click.UsageError(str(exc)) from None


class _Progress:
    """What the match shows on stderr as it plays: the line that says what is played, once
    the engines are checked (``on_start``), then a line or a bar per game (``on_game``)."""

    def __init__(self, games: int, quiet: bool, verbose: bool = False) -> None:
        from referee.views.progress import Progress

        self.games = games
        self.quiet = quiet
        self.verbose = verbose
        self.match: MatchStart | None = None
        self.played = 0
        self.bar = Progress(games, stream=sys.stderr, quiet=True)

    def start(self, start: MatchStart) -> None:
        from referee.views.progress import Progress

        self.match = start
        if not self.quiet:
            where = "" if start.cluster is None else f", on {start.cluster}"
            click.echo(
                f"Match: {' vs '.join(start.names)}, {start.variant}, {plural(start.games, 'game')}"
                f"{' (duplicate)' if start.duplicate else ''}, seed {start.seed},"
                f" tc {start.control}{where}",
                err=True,
            )
        self.bar = Progress(self.games, stream=sys.stderr, quiet=self.quiet)

    def game(self, game: GameOutcome) -> None:
        assert self.match is not None, "on_start comes first"
        names = self.match.names
        self.played += 1
        from referee.views.faults import fault_words, stderr_block

        text = "drawn" if game.winner is None else f"{names[game.winner]} wins"
        fault = game.fault
        if fault is not None:
            words = fault_words(fault.kind.value, fault.why)
            text += f" ({names[game.engines[fault.player]]} forfeits: {words})"
        line = f"game {game.number}: {text}"
        if fault is None:
            self.bar.step(line)
            return
        # A forfeit is shown on a terminal too, above the bar, and with -v the end of stderr.
        below = stderr_block(fault.stderr) if self.verbose else []
        self.bar.step(line, note=True, below=below)

    def close(self) -> None:
        self.bar.close()


def _cannot_write(exc: OSError, record: str | None, shown: _Progress) -> click.ClickException:
    """A file of the referee's own that cannot be written: before game 1, or after some."""
    from referee.errors import OutputError

    if shown.match is None:
        return click.ClickException(str(OutputError.cannot_write(exc)))
    played = shown.played
    kept = f", kept in {record}" if record and played else ""
    return click.ClickException(
        f"{OutputError.cannot_write(exc)}; the match stopped after"
        f" {plural(played, 'finished game')}{kept}"
    )


def _warn(line: str) -> None:
    click.echo(line, err=True)


def _print_results(
    result: MatchResult,
    as_json: bool,
    games: int,
    verbose: bool = False,
    remotes: Sequence[str] = (),
) -> None:
    if as_json:
        click.echo(_json(result, remotes))
        return
    click.echo(result.table)
    _print_forfeits(result, verbose)
    if result.sprt is not None:
        words = _sprt_words(result.sprt.state)
        click.echo(
            f"SPRT: llr {result.sprt.llr:.3f} ({result.sprt.lower:.3f},"
            f" {result.sprt.upper:.3f}), {words}"
        )
    if result.stopped_early:
        click.echo(f"Stopped early after {len(result.games)} of {plural(games, 'game')}.")


def _print_forfeits(result: MatchResult, verbose: bool) -> None:
    """Each forfeit under the result block: the game, the engine, the kind and why."""
    from referee.views.faults import Forfeit, fault_lines

    faults = [
        Forfeit.of(g.number, result.names[g.engines[g.fault.player]], g.fault)
        for g in result.games
        if g.fault is not None
    ]
    for line in fault_lines(faults, verbose):
        click.echo(line)


def _json(result: MatchResult, remotes: Sequence[str]) -> str:
    """The results as JSON: the same figures as the Python API's MatchResult.to_json(), by
    one function, and with remote engines, their connections (``remote``: latency, drops)."""
    out = result.to_json()
    if remotes:
        out["remote"] = remote_json(remotes)
    return json.dumps(out, indent=2, allow_nan=False)


def _interrupted(
    result: MatchResult | None,
    games: int,
    record: str | None,
    as_json: bool,
    verbose: bool = False,
    remotes: Sequence[str] = (),
) -> NoReturn:
    """Ctrl-C: the standings of the games finished so far, as cutechess-cli prints them (with
    ``--json``, their JSON), then exit 130. The games in progress are dropped whole (none is
    recorded); before the first game finished, standard output stays empty."""
    played = len(result.games) if result is not None else 0
    click.echo(f"\nInterrupted after {played} of {plural(games, 'game')}.", err=True)
    if result is not None and played:
        if as_json:
            click.echo(_json(result, remotes))
        else:
            click.echo(result.table)
            _print_forfeits(result, verbose)
        if record:
            click.echo(f"The finished games are kept in {record}.", err=True)
    raise click.exceptions.Exit(130)


def _sprt_words(state: str) -> str:
    return {"H0": "H0 accepted", "H1": "H1 accepted"}.get(state, "continue")
