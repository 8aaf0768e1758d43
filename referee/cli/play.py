"""``ginref play``: a person against an engine at the terminal, through the same referee.

The game loop, the person's seat (``HumanPlayer``) and the words it prints are
``referee.play``'s; this module reads the options, starts the engine and records the game.
"""

from __future__ import annotations

import datetime
import shlex
import sys

import click

from ginproto.record import EngineInfo, append_game, record_from_log
from ginproto.table import Player, play_game
from referee.cli.options import (
    announce_sandbox,
    engine_limits,
    env_option,
    parse_engines,
    parse_rules,
    parse_seed,
    sandbox_mode,
    sandbox_options,
    sandboxed,
    timeout_options,
)
from referee.play import TWO_PLAYER_VARIANTS, HumanPlayer, catch_interrupts, play_style


@click.command("play")
@click.argument("engine")
@click.option(
    "--variant",
    type=click.Choice(TWO_PLAYER_VARIANTS),
    default="standard",
    show_default=True,
    help="The two-player game to play.",
)
@click.option(
    "--rule",
    "rule",
    multiple=True,
    metavar="NAME=VALUE",
    help="A rule option, e.g. gin_bonus=20 or target=50 (repeatable).",
)
@click.option("--seed", help="Seed of the deals; the same seed gives the same deals.")
@click.option(
    "--record",
    type=click.Path(dir_okay=False, writable=True),
    help="Append the game's record to FILE (also when it is forfeited).",
)
@click.option(
    "--first/--second",
    default=True,
    help="Play as player 0 (--first, the default) or player 1 (--second).",
)
@click.option(
    "--tc", default="120+1", show_default=True, help="The engine's game clock BASE+INC, or 'inf'."
)
@timeout_options()
@click.option(
    "-o",
    "--option",
    "options",
    multiple=True,
    metavar="NAME=VALUE",
    help="An engine option, e.g. -o Seed=7 (repeatable).",
)
@env_option(numbered=False)
@click.option(
    "--name", default="human", show_default=True, help="Your name in the game record."
)
@click.option(
    "--color/--no-color",
    "colour",
    default=None,
    help="Suit symbols and colour (default: on a terminal, unless NO_COLOR is set).",
)
@sandbox_options()
def play(
    engine: str,
    variant: str,
    rule: tuple[str, ...],
    seed: str | None,
    record: str | None,
    first: bool,
    tc: str,
    move_timeout: float,
    startup_timeout: float,
    time_margin: float,
    options: tuple[str, ...],
    env: tuple[str, ...],
    name: str,
    colour: bool | None,
    sandbox: str,
    no_sandbox: bool,
    limits: tuple[str, ...],
    network: bool,
    readable: tuple[str, ...],
) -> None:
    """Play a game yourself against ENGINE, in the terminal.

    You are one more seat at the table: the same referee and rules as a match, and the game
    is recorded like any other (--record) and replays with ginref replay. Type help during
    the game for the commands.

    \b
        ginref play simple
        ginref play "python3 mybot.py" --variant oklahoma --seed 7 --record mine.gin
    """
    from referee.clock import TimeControl, TimeControlError
    from referee.engine import EnginePlayer
    from referee.preflight import EngineNotReady, ready

    try:
        rules = parse_rules(variant, rule, 2)
    except click.BadParameter:
        raise
    except click.UsageError:
        raise click.UsageError(
            "ginref play is for the two-player games: " + ", ".join(TWO_PLAYER_VARIANTS)
        ) from None
    (spec,) = parse_engines((engine,), options, (), env)
    mode = sandbox_mode(sandbox, no_sandbox)
    announce_sandbox(mode)
    (spec,) = sandboxed(
        (spec,), mode, engine_limits(limits, 1), network, [record], readable=readable
    )
    try:
        control = TimeControl.parse(tc, move=move_timeout, margin=time_margin)
    except TimeControlError as exc:
        raise click.BadParameter(str(exc), param_hint="--tc") from None
    if not name.strip():
        raise click.BadParameter("your name must not be empty", param_hint="--name")
    game_seed = parse_seed(seed)
    me = 0 if first else 1
    out = sys.stdout
    style = play_style(out, colour)
    seat = EnginePlayer(spec, control, startup_timeout)
    try:
        try:
            ready(seat)
        except EngineNotReady as exc:
            raise click.ClickException(str(exc)) from None
        seat.new_game(1, 1 - me, rules)
        human = HumanPlayer(me, rules, seat.name, style, out)
        click.echo(
            f"You are player {me}, against {seat.name} (player {1 - me}). "
            f"{str(rules.variant).capitalize()} gin to {rules.target}, seed {game_seed}."
        )
        click.echo("Type help for the commands. Cards are typed as 7h, Td, Qs, Ac.")
        players: list[Player] = [human, seat] if me == 0 else [seat, human]
        try:
            with catch_interrupts(human):
                game_log = play_game(rules, players, game_seed, 0, on_step=human.on_step)
        except KeyboardInterrupt:
            click.echo("\nInterrupted: the game was abandoned and is not recorded.", err=True)
            sys.exit(130)
        info = EngineInfo(
            name=seat.name,
            version=seat.id.version or "",
            command=shlex.join(seat.spec.argv),
            options=seat.spec.options,
        )
    finally:
        seat.close()
    if record is None:
        click.echo(f"Not recorded (use --record FILE to keep a game). Seed {game_seed}.")
        return
    person = EngineInfo(name=name.strip())
    engines = [person, info] if me == 0 else [info, person]
    game_record = record_from_log(
        game_log,
        engines,
        event="ginref play",
        date=datetime.date.today().strftime("%Y.%m.%d"),
    )
    try:
        append_game(record, game_record)
    except OSError as exc:
        raise click.ClickException(f"cannot write the record {record}: {exc}") from None
    click.echo(f"Recorded in {record}; replay it with: ginref replay {shlex.quote(record)}")
