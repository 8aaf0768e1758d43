"""The ``ginref`` command line: a thin click layer over the referee and the library."""

from __future__ import annotations

import json
import logging
import secrets
import sys
from collections.abc import Sequence

import click

from ginproto import __version__
from ginproto.protocol import check_rules_fit
from ginproto.rules import Rules, RulesError, Variant
from referee.cli_options import rule_items, seed_value, timeout_options
from referee.clock import TimeControl, TimeControlError
from referee.engine import EngineSpec, EngineSpecError
from referee.match import MatchConfig, Played, engine_names, run_match
from referee.progress import Progress
from referee.report import Standings
from referee.stats import SPRT


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ginref")
@click.option("-v", "--verbose", count=True, help="More log output on stderr (-vv for every line).")
def cli(verbose: int) -> None:
    """ginref: a referee for Gin Rummy engines.

    Plays engines against each other over a UCI-like line protocol (spec/PROTOCOL.md),
    enforces the rules, rules on faults, and records every game for replay.
    """
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")


VARIANTS = [v.value for v in Variant]


def parse_rules(variant: str | None, rule: Sequence[str], engines: int) -> Rules:
    """The rules from ``--variant`` and ``--rule NAME=VALUE`` options."""
    if variant is None:
        variant = "threehanded" if engines == 3 else "standard"
    items = rule_items(rule)
    try:
        rules = Rules.from_params({"variant": variant, **items})
        check_rules_fit(rules)
    except (RulesError, ValueError) as exc:
        raise click.BadParameter(str(exc), param_hint="'--rule'") from None
    if rules.players != engines:
        raise click.UsageError(
            f"{rules.variant} is played by {rules.players} engines, but {engines} were given"
        )
    return rules


def parse_engines(
    engines: Sequence[str], options: Sequence[str], names: Sequence[str]
) -> tuple[EngineSpec, ...]:
    """Engine specs from the arguments, ``-o [N:]NAME=VALUE`` and ``--name N=NAME``."""
    per_engine: list[list[tuple[str, str]]] = [[] for _ in engines]
    for item in options:
        target, item_rest = _engine_prefix(item, len(engines), "--option")
        name, sep, value = item_rest.partition("=")
        if not sep or not name:
            raise click.BadParameter(f"expected [N:]NAME=VALUE, not {item!r}", param_hint="-o")
        for i in target:
            per_engine[i].append((name, value))
    overrides: dict[int, str] = {}
    for item in names:
        index, sep, name = item.partition("=")
        if not sep or not index.isdigit() or not 1 <= int(index) <= len(engines) or not name:
            raise click.BadParameter(
                f"expected N=NAME with N from 1, not {item!r}", param_hint="--name"
            )
        overrides[int(index) - 1] = name
    specs = []
    for i, text in enumerate(engines):
        try:
            specs.append(
                EngineSpec.parse(text, name=overrides.get(i), options=tuple(per_engine[i]))
            )
        except EngineSpecError as exc:
            raise click.BadParameter(str(exc), param_hint="ENGINES") from None
    return tuple(specs)


def _engine_prefix(item: str, count: int, hint: str) -> tuple[list[int], str]:
    head, sep, rest = item.partition(":")
    if sep and head.isdigit():
        index = int(head)
        if not 1 <= index <= count:
            raise click.BadParameter(
                f"engine number {index} is not between 1 and {count}", param_hint=hint
            )
        return [index - 1], rest
    return list(range(count)), item


def parse_seed(seed: str | None) -> int | str:
    if seed is None:
        return secrets.randbelow(10**9)
    return seed_value(seed)


@cli.command()
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
    type=click.Path(dir_okay=False, writable=True),
    help="Append every finished game's record to FILE.",
)
@click.option(
    "--debug-log",
    type=click.Path(dir_okay=False, writable=True),
    help="Write every protocol line, with time, engine and direction.",
)
@click.option(
    "--stderr-dir",
    type=click.Path(file_okay=False),
    help="Keep each engine's stderr in this folder (default: discarded).",
)
@click.option(
    "--sprt",
    nargs=4,
    type=float,
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
@click.option(
    "--name",
    "names",
    multiple=True,
    metavar="N=NAME",
    help="Show engine N under NAME instead of its id name.",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the results as JSON instead of the table."
)
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
    record: str | None,
    debug_log: str | None,
    stderr_dir: str | None,
    sprt: tuple[float, float, float, float] | None,
    options: tuple[str, ...],
    names: tuple[str, ...],
    as_json: bool,
    quiet: bool,
) -> None:
    """Play a match between two engines (three for the three-player game).

    An ENGINE is a built-in name (random, simple, js-simple) or a command line in quotes,
    split as a shell would split it but never run through one:

        ginref match random simple --games 20

        ginref match "python3 mybot.py" simple --tc 60+0.5 --record games.gin
    """
    if len(engines) not in (2, 3):
        raise click.UsageError("give two engines (or three for the three-player game)")
    rules = parse_rules(variant, rule, len(engines))
    specs = parse_engines(engines, options, names)
    try:
        control = TimeControl.parse(tc, move=move_timeout)
    except TimeControlError as exc:
        raise click.BadParameter(str(exc), param_hint="--tc") from None
    if sprt is not None:
        if len(engines) != 2:
            raise click.UsageError("--sprt compares two engines")
        try:
            SPRT(*sprt)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="'--sprt'") from None
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
    )
    err = sys.stderr
    display = engine_names(config)
    if not quiet:
        click.echo(
            f"Match: {' vs '.join(display)}, {rules.variant}, {games} games"
            f"{' (duplicate)' if duplicate else ''}, seed {config.seed}, tc {control}",
            err=True,
        )
    progress = Progress(games, stream=err, quiet=quiet)

    def on_game(done: Played, standings: Standings) -> None:
        fault = done.log.fault
        who = done.log.winner
        text = "drawn" if who is None else f"{display[done.job.lineup[who]]} wins"
        if fault is not None:
            text += f" ({display[done.job.lineup[fault.player]]} forfeits: {fault.kind})"
        progress.step(f"game {done.job.index + 1}: {text}")

    try:
        result = run_match(config, display, on_game)
    except OSError as exc:
        raise click.ClickException(f"cannot write: {exc}") from None
    finally:
        progress.close()
    out = result.standings.to_json() if as_json else None
    sprt_state = None
    if result.sprt is not None:
        s = result.sprt
        sprt_state = {"llr": s.llr, "lower": s.lower, "upper": s.upper, "state": s.state}
    if out is not None:
        out["seed"] = config.seed
        out["variant"] = str(rules.variant)
        out["sprt"] = sprt_state
        out["stopped_early"] = result.stopped_early
        click.echo(json.dumps(out, indent=2))
        return
    for line in result.standings.lines():
        click.echo(line)
    if sprt_state is not None:
        llr, lower, upper = sprt_state["llr"], sprt_state["lower"], sprt_state["upper"]
        words = _sprt_words(str(sprt_state["state"]))
        click.echo(f"SPRT: llr {llr:.3f} ({lower:.3f}, {upper:.3f}), {words}")
    if result.stopped_early:
        click.echo(f"Stopped early after {result.played} of {games} games.")


def _sprt_words(state: str) -> str:
    return {"H0": "H0 accepted", "H1": "H1 accepted"}.get(state, "continue")


def main() -> None:
    cli(prog_name="ginref")


from referee.replay import replay  # noqa: E402 - commands register after the group

cli.add_command(replay)
from referee.cli_check import check  # noqa: E402

cli.add_command(check)
from referee.cli_tournament import tournament  # noqa: E402

cli.add_command(tournament)
from referee.play import play  # noqa: E402

cli.add_command(play)
