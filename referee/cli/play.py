"""``ginref play``: a person against engines at the terminal, through the same referee.

The game loop is ``ginproto.table.play_game``'s; the person's seat (``HumanPlayer``) and the
words it prints are ``referee.views.play``'s; this module reads the options, starts the engines and
records the game. Its exit status: 0 for a game played out or resigned with ``quit``, 1 when
the input ended (Ctrl-D), 130 for Ctrl-C; the game is recorded in every one of these cases.
"""

from __future__ import annotations

import datetime
import shlex
import sys
from typing import TYPE_CHECKING

import click

from ginproto.rules import Variant
from referee.cli.options import (
    OUTPUT_FILE,
    OUTPUTS_HELP,
    announce_sandbox,
    engine_limits,
    env_option,
    parse_engines,
    parse_rules,
    parse_seed,
    rule_items,
    sandbox_mode,
    sandbox_options,
    sandboxed,
    timeout_options,
)

# The game machinery and the person's seat are imported when the command runs.
if TYPE_CHECKING:
    from ginproto.record import EngineInfo
    from ginproto.rules import Rules
    from ginproto.table import GameLog, Player
    from referee.seat.clock import TimeControl
    from referee.seat.player import EnginePlayer, EngineSpec
    from referee.views.play import HumanPlayer

VARIANTS = [v.value for v in Variant]
ROLES = ("box", "captain", "sitter")


@click.command("play", epilog=OUTPUTS_HELP)
@click.argument("engine")
@click.argument("engine2", required=False, metavar="[ENGINE2]")
@click.option(
    "--variant",
    type=click.Choice(VARIANTS),
    help="The game to play. Default: standard against one engine, threehanded with two"
    " (threehanded with one ENGINE: it plays both other seats).",
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
    type=OUTPUT_FILE,
    help="Append the game's record to FILE (also when it is forfeited).",
)
@click.option(
    "--first/--second",
    default=None,
    help="Play as player 0 (--first, the default) or player 1 (--second).",
)
@click.option(
    "--player",
    "player_number",
    type=click.IntRange(0, 2),
    help="Play as this player number (threehanded: 0, 1 or 2).",
)
@click.option(
    "--role",
    type=click.Choice(ROLES),
    help="Threehanded: start the game in this role (the seed's role draw decides which"
    " player that is); the roles then change hand by hand as the rules say.",
)
@click.option(
    "--tc", default="120+1", show_default=True, help="The engines' game clock BASE+INC, or 'inf'."
)
@timeout_options()
@click.option(
    "-o",
    "--option",
    "options",
    multiple=True,
    metavar="[N:]NAME=VALUE",
    help="An engine option, e.g. -o Seed=7 (repeatable; N: for ENGINE or ENGINE2 only).",
)
@env_option(numbered=False)
@click.option("--name", default="human", show_default=True, help="Your name in the game record.")
@click.option(
    "--color/--no-color",
    "colour",
    default=None,
    help="Suit symbols and colour (default: on a terminal, unless NO_COLOR is set).",
)
@sandbox_options()
def play(
    engine: str,
    engine2: str | None,
    variant: str | None,
    rule: tuple[str, ...],
    seed: str | None,
    record: str | None,
    first: bool | None,
    player_number: int | None,
    role: str | None,
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
    """Play a game yourself against ENGINE, in the terminal; with ENGINE2 too, the game for
    three players (threehanded): in the box, as captain, or sitting out to advise the captain.

    You are one more seat at the table: the same referee and rules as a match, and the game
    is recorded like any other (--record) and replays with ginref replay. Type help during
    the game for the commands. Exit status: 0 when the game ends (or you resign with quit),
    1 when the input ends (Ctrl-D), 130 on Ctrl-C; the game is recorded in each case.

    \b
        ginref play simple
        ginref play "python3 mybot.py" --variant oklahoma --seed 7 --record mine.gin
        ginref play simple random --role captain
    """
    from ginproto.record import EngineInfo
    from referee.seat.player import EnginePlayer
    from referee.views.play import EXIT_STATUS, HumanPlayer, play_style

    rules, specs = _game_and_engines(engine, engine2, variant, rule, options, env)
    if not name.strip():
        raise click.BadParameter("your name must not be empty", param_hint="--name")
    game_seed = parse_seed(seed)
    me = _person(rules, first, player_number, role, game_seed)
    mode = sandbox_mode(sandbox, no_sandbox)
    announce_sandbox(mode)
    specs = sandboxed(
        specs, mode, engine_limits(limits, len(specs)), network, [record], readable=readable
    )
    control = _time_control(tc, move_timeout, time_margin)
    out = sys.stdout
    style = play_style(out, colour)
    others = [p for p in range(rules.players) if p != me]
    seats = [EnginePlayer(spec, control, startup_timeout) for spec in specs]
    try:
        by_player = dict(zip(others, _start(seats, others, rules), strict=True))
        human = HumanPlayer(
            me, rules, [by_player.get(p, "You") for p in range(rules.players)], style, out
        )
        _greet(me, rules, game_seed, by_player)
        players: list[Player] = list(seats)
        players.insert(me, human)
        game_log = _play_game(rules, players, game_seed, human)
        infos = _engine_infos(seats)
    finally:
        for seat in seats:
            seat.close()
    status = EXIT_STATUS[human.left]
    if record is None:
        click.echo(f"Not recorded (use --record FILE to keep a game). Seed {game_seed}.")
        sys.exit(status)
    infos.insert(me, EngineInfo(name=name.strip()))
    _record(record, game_log, infos)
    sys.exit(status)


def _game_and_engines(
    engine: str,
    engine2: str | None,
    variant: str | None,
    rule: tuple[str, ...],
    options: tuple[str, ...],
    env: tuple[str, ...],
) -> tuple[Rules, tuple[EngineSpec, ...]]:
    """The rules, and the engine of each other seat (the one engine in both when one is given
    for the three-player game)."""
    given = (engine,) if engine2 is None else (engine, engine2)
    rules = _rules(variant, rule, len(given))
    specs = parse_engines(given, options, (), env)
    if rules.players == 3 and len(specs) == 1:
        specs = (specs[0], specs[0])  # one engine program in both other seats
    return rules, specs


def _time_control(tc: str, move_timeout: float, time_margin: float) -> TimeControl:
    """The engines' time control of ``--tc`` and the timeout options."""
    from referee.seat.clock import TimeControl, TimeControlError

    try:
        return TimeControl.parse(tc, move=move_timeout, margin=time_margin)
    except TimeControlError as exc:
        raise click.BadParameter(str(exc), param_hint="--tc") from None


def _start(seats: list[EnginePlayer], others: list[int], rules: Rules) -> list[str]:
    """Start the engines, ready for a new game as players ``others``; their names as shown."""
    from referee.seat.preflight import ready

    for seat in seats:
        ready(seat)  # EngineNotReady: the group says why
    for seat, number in zip(seats, others, strict=True):
        seat.new_game(1, number, rules)
    return _display_names([seat.name for seat in seats])


def _greet(me: int, rules: Rules, game_seed: int | str, by_player: dict[int, str]) -> None:
    """Say who the person plays with, the game and how to type commands."""
    against = ", ".join(f"{engine} (player {p})" for p, engine in by_player.items())
    if rules.players == 3:
        game = f"with {against}. Gin for three players"
    else:
        game = f"against {against}. {str(rules.variant).capitalize()} gin"
    click.echo(f"You are player {me}, {game} to {rules.target}, seed {game_seed}.")
    click.echo("Type help for the commands. Cards are typed as 7h, Td, Qs, Ac.")


def _play_game(
    rules: Rules, players: list[Player], game_seed: int | str, human: HumanPlayer
) -> GameLog:
    """The game played out; exit 130 (not recorded) on Ctrl-C."""
    from ginproto.table import play_game
    from referee.views.play import EXIT_STATUS, Leaving, catch_interrupts

    try:
        with catch_interrupts(human):
            return play_game(rules, players, game_seed, 0, on_step=human.on_step)
    except KeyboardInterrupt:
        click.echo("\nInterrupted: the game was abandoned and is not recorded.", err=True)
        sys.exit(EXIT_STATUS[Leaving.INTERRUPT])


def _engine_infos(seats: list[EnginePlayer]) -> list[EngineInfo]:
    """The engines as the game record names them."""
    from ginproto.record import EngineInfo

    return [
        EngineInfo(
            name=seat.name,
            version=seat.id.version or "",
            command=shlex.join(seat.spec.argv),
            options=seat.spec.options,
        )
        for seat in seats
    ]


def _record(record: str, game_log: GameLog, engines: list[EngineInfo]) -> None:
    """Append the game to the record file ``record``, and say how to replay it."""
    from ginproto.record import append_game, record_from_log

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


def _rules(variant: str | None, rule: tuple[str, ...], engines: int) -> Rules:
    """The rules of ``--variant`` and ``--rule``: a two-player game against one engine, the
    three-player one with one or two (the person is the other player)."""
    named = variant or rule_items(rule).get("variant")
    if named is None:
        named = Variant.THREEHANDED.value if engines == 2 else Variant.STANDARD.value
    players = 3 if named == Variant.THREEHANDED.value else 2
    try:
        rules = parse_rules(variant, rule, players)
    except click.BadParameter:
        raise
    except click.UsageError:  # --variant and --rule variant= disagree on the players
        rules = parse_rules(None, rule, 3 if players == 2 else 2)
    if rules.players - 1 < engines:
        raise click.UsageError(
            f"{rules.variant} is played against one engine, but two were given"
            " (threehanded is the game for two engines and you)"
        )
    return rules


def _person(
    rules: Rules, first: bool | None, number: int | None, role: str | None, seed: int | str
) -> int:
    """The person's player number, from ``--first/--second``, ``--player`` or ``--role``."""
    from ginproto.table import role_draw

    given = {"--first/--second": first, "--player": number, "--role": role}
    chosen = [option for option, value in given.items() if value is not None]
    if len(chosen) > 1:
        raise click.UsageError(f"give only one of {' and '.join(chosen)}")
    if role is not None:
        if rules.players != 3:
            raise click.UsageError("--role is for the three-player game (threehanded)")
        roles, _ = role_draw(seed, 0)
        return int(getattr(roles, role))
    if number is not None:
        if number >= rules.players:
            raise click.BadParameter(
                f"{rules.variant} has players 0 to {rules.players - 1}", param_hint="--player"
            )
        return number
    return 1 if first is False else 0


def _display_names(names: list[str]) -> list[str]:
    """Engine names as shown, repeated ones numbered ``#2`` (as ``ginref match`` shows them)."""
    from referee.scheduling.match import numbered

    return numbered(names)
