"""``ginref match``: play engines against each other, a fixed number of games or until an SPRT
decides, and print the standings. The games are ``referee.match``'s; this module only turns
options into a ``MatchConfig`` and results into output."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

import click

from ginproto.rules import Variant
from referee.cli.options import (
    OUTPUT_FILE,
    OUTPUT_FOLDER,
    OUTPUTS_HELP,
    affinity_option,
    announce_affinity,
    announce_sandbox,
    dask_option,
    engine_limits,
    env_option,
    open_cluster,
    parse_engines,
    parse_rules,
    parse_seed,
    remove_if_empty,
    sandbox_mode,
    sandbox_options,
    sandboxed,
    timeout_options,
)
from referee.cli.serve import Live, check_web, serve_option
from referee.dask_address import DaskError

if TYPE_CHECKING:
    from ginproto.record import GameRecord
    from referee.clock import TimeControl
    from referee.dask_backend import DaskCluster
    from referee.engine import EngineSpec
    from referee.live import Address
    from referee.match import JobRunner, MatchConfig, MatchResult, Played
    from referee.report import Standings


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
    record: str | None,
    debug_log: str | None,
    stderr_dir: str | None,
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
    html_out: str | None = None,
    serve: Address | None = None,
) -> None:
    """Play a match between two engines (three for the three-player game).

    An ENGINE is a built-in name (random, simple, expert, camper, js-simple) or a command line
    in quotes, split as a shell would split it but never run through one:

        ginref match random simple --games 20

        ginref match "python3 mybot.py" simple --tc 60+0.5 --record games.gin

        ginref match simple random --games 10000 --dask tcp://scheduler:8786

    --serve PORT shows the match live in a browser (http://127.0.0.1:PORT/).
    """
    # The game machinery is imported here, not with the command: ``ginref --help`` needs none.
    from ginproto.record import record_from_log
    from referee.clock import TimeControl, TimeControlError
    from referee.match import (
        MatchConfig,
        MatchInterrupted,
        cpu_plan,
        engine_names,
        run_jobs,
        run_match,
    )
    from referee.preflight import EngineNotReady
    from referee.progress import Progress
    from referee.stats import SPRT

    if serve is not None:
        check_web()
    if len(engines) not in (2, 3):
        raise click.UsageError("give two engines (or three for the three-player game)")
    rules = parse_rules(variant, rule, len(engines))
    specs = parse_engines(engines, options, names, env)
    mode = sandbox_mode(sandbox, no_sandbox)
    engine_limit = engine_limits(limits, len(engines))
    try:
        control = TimeControl.parse(tc, move=move_timeout, margin=time_margin)
    except TimeControlError as exc:
        raise click.BadParameter(str(exc), param_hint="--tc") from None
    if sprt is not None:
        if len(engines) != 2:
            raise click.UsageError("--sprt compares two engines")
        try:
            SPRT(*sprt)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="'--sprt'") from None
    if dask is not None and debug_log is not None:
        raise click.UsageError(
            "--debug-log is not available with --dask: the engines run on the workers"
        )
    if dask is not None and affinity:
        raise click.UsageError(
            "--affinity pins the engines of local games; it is not available with --dask"
        )
    announce_sandbox(mode)
    # Files made here for the sandbox to hide are removed again if no game is played.
    new_files = [p for p in (record, debug_log) if p and not os.path.lexists(p)]
    specs = sandboxed(
        specs, mode, engine_limit, network, [record, debug_log], [stderr_dir], readable
    )
    runner: JobRunner = run_jobs
    where = ""
    live = None if serve is None else Live.open(serve, "ginref match", "match")
    if dask is not None:
        try:
            cluster = click.get_current_context().with_resource(open_cluster(dask))
            specs = _checked_on_cluster(cluster, specs, control, startup_timeout)
        except click.ClickException:
            remove_if_empty(new_files)
            raise
        except KeyboardInterrupt:
            remove_if_empty(new_files)
            _interrupted(None, games, record, as_json)
        runner = cluster.run_jobs
        where = f", on {cluster.describe()}"
    config = MatchConfig(
        engines=specs,
        rules=rules,
        games=games,
        seed=parse_seed(seed),
        control=control,
        duplicate=duplicate,
        concurrency=concurrency,
        startup_timeout=startup_timeout,
        record=record,
        debug_log=debug_log,
        stderr_dir=stderr_dir,
        sprt=sprt,
        affinity=affinity,
    )
    announce_affinity(cpu_plan(config))
    err = sys.stderr
    try:
        display = engine_names(config, check=dask is None)
    except EngineNotReady as exc:
        remove_if_empty(new_files)
        raise click.ClickException(str(exc)) from None
    except KeyboardInterrupt:  # while the engines start
        remove_if_empty(new_files)
        _interrupted(None, games, record, as_json)
    if not quiet:
        click.echo(
            f"Match: {' vs '.join(display)}, {rules.variant}, {games} games"
            f"{' (duplicate)' if duplicate else ''}, seed {config.seed}, tc {control}{where}",
            err=True,
        )
    progress = Progress(games, stream=err, quiet=quiet)
    records: list[GameRecord] = []
    finished: list[Standings] = []  # the standings after the last finished game
    shown = None
    if live is not None:
        shown = _live_match(live, display, config, dask is None)
        if dask is None:
            runner = live.watching(runner, display)

    def on_game(done: Played, standings: Standings) -> None:
        if shown is not None:
            shown(done, standings)
        finished[:] = [standings]
        if html_out is not None:
            records.append(
                record_from_log(
                    done.log, done.engines, event=config.event,
                    extra=[("Game", str(done.job.index + 1))],
                )
            )
        fault = done.log.fault
        who = done.log.winner
        text = "drawn" if who is None else f"{display[done.job.lineup[who]]} wins"
        if fault is not None:
            text += f" ({display[done.job.lineup[fault.player]]} forfeits: {fault.kind})"
        progress.step(f"game {done.job.index + 1}: {text}")

    try:
        result = run_match(config, display, on_game, runner)
    except MatchInterrupted as exc:
        progress.close()
        remove_if_empty(new_files)
        if html_out is not None and records:
            _write_report(records, html_out, display, config)
        _interrupted(exc.result, games, record, as_json, config)
    except KeyboardInterrupt:  # before the first game started
        progress.close()
        remove_if_empty(new_files)
        _interrupted(None, games, record, as_json)
    except OSError as exc:
        played = finished[0].games if finished else 0
        kept = f", kept in {record}" if record and played else ""
        raise click.ClickException(
            f"the referee cannot write its own file: {exc.strerror or exc}"
            f"{': ' + str(exc.filename) if exc.filename else ''}; the match stopped after"
            f" {played} finished game{'' if played == 1 else 's'}{kept}"
        ) from None
    except DaskError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        progress.close()
    failed: click.ClickException | None = None
    if html_out is not None:
        try:
            _write_report(records, html_out, display, config)
        except click.ClickException as exc:  # the results are still printed, then this
            failed = exc
    if live is not None:
        live.over(
            f"stopped early after {result.played} of {games} games"
            if result.stopped_early
            else f"complete: {result.played} of {games} games"
        )
    _print_results(config, result, as_json, games)
    if failed is not None:
        raise failed
    if live is not None:
        live.stay()


def _live_match(
    live: Live, names: Sequence[str], config: MatchConfig, local: bool
) -> Callable[[Played, Standings], None]:
    """The live page's hook for each finished game, the page titled as the match."""
    from referee.live import feed_match

    live.state.title = f"{' vs '.join(names)}: {config.rules.variant}, seed {config.seed}"
    return feed_match(live.state, names, config.games, config.sprt, config.event)


def _print_results(config: MatchConfig, result: MatchResult, as_json: bool, games: int) -> None:
    from referee.match import match_json, sprt_json

    if as_json:  # the same figures as the Python API's MatchResult.to_json(), by one function
        click.echo(json.dumps(match_json(config, result), indent=2, allow_nan=False))
        return
    sprt_state = sprt_json(result.sprt)
    for line in result.standings.lines():
        click.echo(line)
    if sprt_state is not None:
        llr, lower, upper = sprt_state["llr"], sprt_state["lower"], sprt_state["upper"]
        words = _sprt_words(str(sprt_state["state"]))
        click.echo(f"SPRT: llr {llr:.3f} ({lower:.3f}, {upper:.3f}), {words}")
    if result.stopped_early:
        click.echo(f"Stopped early after {result.played} of {games} games.")


def _write_report(
    records: list[GameRecord], out: str, names: Sequence[str], config: MatchConfig
) -> None:
    from ginproto.record import RecordError
    from referee.html.report import write_match_report  # the page's assets load only when asked

    title = f"{' vs '.join(names)}: {config.rules.variant}, seed {config.seed}"
    try:
        write_match_report(
            records, out, title=title, names=names, sprt=config.sprt,
            duplicate=config.duplicate,
        )
    except OSError as exc:
        raise click.ClickException(f"cannot write {out}: {exc.strerror or exc}") from None
    except RecordError as exc:
        raise click.ClickException(f"cannot write {out}: {exc}") from None


def _interrupted(
    result: MatchResult | None,
    games: int,
    record: str | None,
    as_json: bool,
    config: MatchConfig | None = None,
) -> NoReturn:
    """Ctrl-C: the standings of the games finished so far, as cutechess-cli prints them (with
    ``--json``, their JSON), then exit 130. The games in progress are dropped whole (none is
    recorded); before the first game finished, standard output stays empty."""
    from referee.match import match_json

    played = result.played if result is not None else 0
    click.echo(f"\nInterrupted after {played} of {games} games.", err=True)
    if result is not None and config is not None and played:
        if as_json:
            click.echo(json.dumps(match_json(config, result), indent=2, allow_nan=False))
        else:
            for line in result.standings.lines():
                click.echo(line)
        if record:
            click.echo(f"The finished games are kept in {record}.", err=True)
    raise click.exceptions.Exit(130)


def _checked_on_cluster(
    cluster: DaskCluster,
    specs: tuple[EngineSpec, ...],
    control: TimeControl,
    startup_timeout: float,
) -> tuple[EngineSpec, ...]:
    """Check every engine on every worker before game 1 (refusing to begin otherwise), and
    name each engine as it names itself there (it may not even exist here)."""
    try:
        ids = cluster.check_engines(specs, control, startup_timeout)
    except DaskError as exc:
        raise click.ClickException(str(exc)) from None
    return tuple(
        dataclasses.replace(s, name=s.name or ids[i] or s.label) for i, s in enumerate(specs)
    )


def _sprt_words(state: str) -> str:
    return {"H0": "H0 accepted", "H1": "H1 accepted"}.get(state, "continue")
