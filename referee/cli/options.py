"""Command-line options that several ``ginref`` commands share, declared once."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click

from referee import outputs
from referee.defaults import DEFAULT_MARGIN
from referee.seat.sandbox import SandboxMode

# The machinery (the protocol, the engines, the outputs) is imported by the functions that use
# it, when a command runs: declaring the options, for a command's --help, needs none of it.
if TYPE_CHECKING:
    from ginproto.rules import Rules
    from referee.seat.player import EngineSpec
    from referee.seat.sandbox import Limits
    from referee.settings import Clock, Outputs

F = TypeVar("F", bound=Callable[..., Any])


def _margin(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    """``--time-margin`` checked by `Clock`'s own check (``referee.settings``), worded for an
    option."""
    if value is None:
        return None
    from referee.seat.clock import TimeControlError
    from referee.settings import MARGIN_MAX, clock_setting

    try:
        return float(clock_setting("time_margin", value))
    except TimeControlError:
        raise click.BadParameter(f"must be a number of seconds from 0 to {MARGIN_MAX}") from None


def margin_option(default: float | None = DEFAULT_MARGIN) -> Callable[[F], F]:
    """``--time-margin`` (alias ``--timemargin``, as in cutechess and fastchess): seconds of
    grace on every decision's limit and on the game clock (spec/PROTOCOL.md, "Time")."""
    return click.option(
        "--time-margin",
        "--timemargin",
        "time_margin",
        type=float,
        default=default,
        show_default=default is not None,
        callback=_margin,
        help="Seconds of grace on each time limit, for pipe and scheduling delays.",
    )


class Duration(click.ParamType[float]):
    """Seconds: a finite positive number whose milliseconds fit in a protocol line
    (``referee.seat.clock.duration``, the one check that config files use too)."""

    name = "seconds"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        from referee.seat.clock import TimeControlError, duration

        if isinstance(value, float):
            text: object = value
        else:
            text = str(value).strip()
        try:
            return duration(text, "it")
        except TimeControlError as exc:
            self.fail(str(exc), param, ctx)


SECONDS = Duration()


class OutputPath(click.ParamType[str]):
    """A path the referee writes, checked when the command line is read, before anything is
    played or made (``referee.outputs``: a regular file or a new one in an existing folder;
    with ``folder``, a folder that exists or can be made). A device, a FIFO, a link given
    for a file, or a file in a folder that does not exist is refused with its reason."""

    def __init__(self, folder: bool = False, files: Sequence[str] = ()) -> None:
        self.folder = folder
        self.files = tuple(files)
        self.name = "folder" if folder else "file"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        path = str(value)
        try:
            if self.folder:
                outputs.check_folder(path, self.files)
            else:
                outputs.check_file(path)
        except OSError as exc:
            self.fail(str(exc), param, ctx)
        return path


OUTPUT_FILE = OutputPath()
OUTPUT_FOLDER = OutputPath(folder=True)
OUTPUT_RULE = outputs.OUTPUT_RULE
OUTPUTS_HELP = f"Outputs: {OUTPUT_RULE} A folder output may be a folder or a link to one."
"""The epilog of every command that writes files."""




def timeout_options(move_default: float = 10.0) -> Callable[[F], F]:
    """``--move-timeout`` (seconds per decision), ``--startup-timeout`` (seconds for the
    handshake and each ``isready``) and ``--time-margin``."""

    def decorate(command: F) -> F:
        command = margin_option()(command)
        command = click.option(
            "--startup-timeout",
            type=SECONDS,
            default=10.0,
            show_default=True,
            help="Seconds for the engine's handshake and for each isready.",
        )(command)
        return click.option(
            "--move-timeout",
            type=SECONDS,
            default=move_default,
            show_default=True,
            help="Seconds for each decision of an engine.",
        )(command)

    return decorate


def as_value(name: str, build: Callable[..., Any], *keys: str) -> Callable[[F], F]:
    """Hand the command its options ``keys`` as one value, ``build(*their values)``, under
    ``name``: a `Clock`, `Outputs`, as ``referee.api`` takes them. Put it below the options'
    own decorators (nearest the function)."""

    def decorate(command: F) -> F:
        @functools.wraps(command)
        def run(*args: Any, **kwargs: Any) -> Any:
            kwargs[name] = build(*(kwargs.pop(key) for key in keys))
            return command(*args, **kwargs)

        return run  # type: ignore[return-value]

    return decorate


CLOCK_OPTIONS = ("tc", "move_timeout", "startup_timeout", "time_margin")


def clock_value(
    tc: str | None,
    move_timeout: float | None,
    startup_timeout: float | None,
    time_margin: float | None,
) -> Clock:
    """The `Clock` of ``--tc``, ``--move-timeout``, ``--startup-timeout`` and
    ``--time-margin`` (None: not given). The others are parsed as seconds, so checked, as
    the command line is read; the `Clock` refuses a bad ``--tc``."""
    from referee.seat.clock import TimeControlError
    from referee.settings import Clock

    try:
        return Clock(tc, move_timeout, startup_timeout, time_margin)
    except TimeControlError as exc:
        option = "--" + (exc.setting or "tc").replace("_", "-")
        raise click.BadParameter(str(exc), param_hint=option) from None


def outputs_value(
    record: str | None, debug_log: str | None, stderr_dir: str | None, html: str | None
) -> Outputs:
    """The `Outputs` of ``--record``, ``--debug-log``, ``--stderr-dir`` and ``--html``
    (each checked as the command line is read, `OutputPath`)."""
    from referee.settings import Outputs

    return Outputs(record, debug_log, stderr_dir, html)


def env_option(numbered: bool) -> Callable[[F], F]:
    """``--env NAME=VALUE`` (with ``numbered``, ``[N:]NAME=VALUE`` for engine N or all): a
    variable added to the minimal environment an engine gets (spec/PROTOCOL.md)."""
    return click.option(
        "--env",
        "env",
        multiple=True,
        metavar="[N:]NAME=VALUE" if numbered else "NAME=VALUE",
        help="An environment variable for the engine"
        + (" N or all" if numbered else "")
        + " (repeatable); engines get only PATH, HOME and LANG otherwise.",
    )


def env_item(text: str, item: str) -> tuple[str, str]:
    """``NAME=VALUE`` of an ``--env`` option (``item`` is the whole option, for messages)."""
    name, sep, value = text.partition("=")
    if not sep or not name or "\0" in text:
        raise click.BadParameter(f"expected [N:]NAME=VALUE, not {item!r}", param_hint="--env")
    return name, value


def rule_items(items: Sequence[str]) -> dict[str, str]:
    """``--rule NAME=VALUE`` options as a mapping; ``-`` in a name reads as ``_``."""
    rules: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise click.BadParameter(f"expected NAME=VALUE, not {item!r}", param_hint="--rule")
        rules[name.strip().replace("-", "_")] = value
    return rules


def seed_value(text: str) -> int | str:
    """A ``--seed``: a whole number, or any other text, which seeds just as well; not empty,
    which would deal the same cards to everyone who left the value out by mistake."""
    from ginproto.text import SEED_LIMIT, nfc, too_long

    if not text.strip():
        raise click.BadParameter(
            "must not be empty: an empty seed deals the same cards every time; leave --seed"
            " out for a random one",
            param_hint="--seed",
        )
    text = nfc(text)  # the same seed however its accents were typed
    why = too_long(text, SEED_LIMIT, "the seed")
    if why is not None:
        raise click.BadParameter(why, param_hint="--seed")
    return int(text) if text.isascii() and text.isdigit() else text


def dask_option(help_text: str) -> Callable[[F], F]:
    """``--dask ADDRESS``: a Dask scheduler's address, or ``local:N``."""

    def check(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
        if value is None:
            return None
        from referee.scheduling.address import parse_address

        try:
            return parse_address(value)
        except ValueError as exc:
            raise click.BadParameter(str(exc)) from None

    return click.option("--dask", metavar="ADDRESS", callback=check, help=help_text)




def sandbox_options(limits: bool = True, default: str | None = "auto") -> Callable[[F], F]:
    """``--sandbox auto|require|off`` and its alias ``--no-sandbox``; with ``limits``, also
    ``--limit [N:]NAME=VALUE`` and ``--network``. A ``default`` of None leaves the mode to a
    config file."""

    def decorate(command: F) -> F:
        if limits:
            command = click.option(
                "--read",
                "readable",
                multiple=True,
                metavar="PATH",
                type=click.Path(exists=True),
                help="A file or folder every sandboxed engine may read, besides what its"
                " command needs (repeatable): a runtime its script starts, a data file.",
            )(command)
            command = click.option(
                "--network",
                is_flag=True,
                help="Let the sandboxed engines use the network (default: none).",
            )(command)
            command = click.option(
                "--limit",
                "limits",
                multiple=True,
                metavar="[N:]NAME=VALUE",
                help="A sandbox limit for engine N or all: memory=2G, processes=128,"
                " disk=256M, cpus=1 (the defaults; repeatable). cpus is CPU time, however"
                " many processes use it: 0.5 is half of one CPU.",
            )(command)
        command = click.option(
            "--no-sandbox",
            is_flag=True,
            help="Run the engines bare, on purpose (as --sandbox off).",
        )(command)
        return click.option(
            "--sandbox",
            "sandbox",
            type=click.Choice([m.value for m in SandboxMode]),
            default=default,
            show_default=default is not None,
            help="Each engine in a bubblewrap sandbox: auto (where it can run, else a"
            " warning), require (refuse to start without it), off."
            + ("" if default else " Default: the file's, else auto."),
        )(command)

    return decorate


AFFINITY_HELP = (
    "Pin each game's engines to CPUs of their own, the engines of games played at once to"
    " different CPUs (where there are enough; a warning says when games must share)."
)


def affinity_option(flag: bool = True) -> Callable[[F], F]:
    """``--affinity`` (with ``flag=False``, ``--affinity/--no-affinity``, default None: the
    config file's): pin each local game's engines to CPUs of their own
    (``referee.seat.affinity``)."""
    if flag:
        return click.option("--affinity", is_flag=True, help=AFFINITY_HELP)
    return click.option(
        "--affinity/--no-affinity", default=None, help=AFFINITY_HELP + " Default: the file's."
    )




def sandbox_mode(sandbox: str | None, no_sandbox: bool) -> SandboxMode:
    """The mode from ``--sandbox`` and ``--no-sandbox``, which must not contradict."""
    if no_sandbox:
        if sandbox not in (None, SandboxMode.AUTO.value, SandboxMode.OFF.value):
            raise click.UsageError(f"--no-sandbox contradicts --sandbox {sandbox}")
        return SandboxMode.OFF
    return SandboxMode(sandbox or SandboxMode.AUTO.value)


def announce_sandbox(mode: SandboxMode) -> None:
    """Print the sandbox's warning lines on stderr (where it cannot run, or a limit cannot
    be enforced); with ``require``, refuse to start (`SandboxError`) where it cannot run."""
    from referee.seat.sandbox import start_warnings

    for line in start_warnings(mode):
        click.echo(line, err=True)


def engine_prefix(item: str, count: int, hint: str) -> tuple[list[int], str]:
    """``N:REST`` -> ([N - 1], REST); without a number prefix every engine: (all, item)."""
    head, sep, rest = item.partition(":")
    if sep and head.isdigit():
        index = int(head)
        if not 1 <= index <= count:
            raise click.BadParameter(
                f"engine number {index} is not between 1 and {count}", param_hint=hint
            )
        return [index - 1], rest
    return list(range(count)), item


def engine_limits(items: Sequence[str], count: int) -> list[Limits]:
    """Each engine's limits from ``--limit [N:]NAME=VALUE`` options."""
    from referee.seat.sandbox import Limits

    per_engine: list[dict[str, str]] = [{} for _ in range(count)]
    for item in items:
        target, rest = engine_prefix(item, count, "--limit")
        name, sep, value = rest.partition("=")
        if not sep or not name.strip():
            raise click.BadParameter(
                f"expected [N:]NAME=VALUE, not {item!r}", param_hint="--limit"
            )
        for i in target:
            per_engine[i][name] = value
    out = []
    for values in per_engine:
        try:
            out.append(Limits().updated(values))
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--limit") from None
    return out




def sandboxed(
    specs: Sequence[EngineSpec],
    mode: SandboxMode,
    limits: Sequence[Limits] | None = None,
    network: bool = False,
    files: Sequence[str | None] = (),
    folders: Sequence[str | None] = (),
    readable: Sequence[str] = (),
) -> tuple[EngineSpec, ...]:
    """``referee.seat.player.sandboxed``, a failure to make an output file being a clear message
    (exit 1)."""
    from referee.seat import player

    try:
        return player.sandboxed(specs, mode, limits, network, files, folders, readable)
    except OSError as exc:
        raise _cannot_write(exc) from None


def _cannot_write(exc: OSError) -> click.ClickException:
    from referee.errors import OutputError

    return click.ClickException(str(OutputError.cannot_write(exc)))


def parse_rules(variant: str | None, rule: Sequence[str], engines: int) -> Rules:
    """The rules from ``--variant`` and ``--rule NAME=VALUE`` options."""
    from ginproto.protocol import check_rules_fit
    from ginproto.rules import Rules, RulesError

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
    engines: Sequence[str],
    options: Sequence[str],
    names: Sequence[str],
    env: Sequence[str] = (),
) -> tuple[EngineSpec, ...]:
    """Engine specs from the arguments, ``-o [N:]NAME=VALUE``, ``--name N=NAME`` and
    ``--env [N:]NAME=VALUE``."""
    from ginproto.text import NAME_LIMIT, nfc, too_long
    from referee.seat.player import EngineSpec, EngineSpecError

    per_engine: list[list[tuple[str, str]]] = [[] for _ in engines]
    for item in options:
        target, item_rest = engine_prefix(item, len(engines), "--option")
        name, sep, value = item_rest.partition("=")
        if not sep or not name:
            raise click.BadParameter(f"expected [N:]NAME=VALUE, not {item!r}", param_hint="-o")
        for i in target:
            per_engine[i].append((name, value))
    environments: list[dict[str, str]] = [{} for _ in engines]
    for item in env:
        target, item_rest = engine_prefix(item, len(engines), "--env")
        name, value = env_item(item_rest, item)
        for i in target:
            environments[i][name] = value
    overrides: dict[int, str] = {}
    for item in names:
        index, sep, name = item.partition("=")
        if not sep or not index.isdigit() or not 1 <= int(index) <= len(engines) or not name:
            raise click.BadParameter(
                f"expected N=NAME with N from 1, not {item!r}", param_hint="--name"
            )
        name = nfc(name)
        why = too_long(name, NAME_LIMIT, "the name")
        if why is not None:
            raise click.BadParameter(f"{why} (engine {index})", param_hint="--name")
        overrides[int(index) - 1] = name
    specs = []
    for i, text in enumerate(engines):
        try:
            specs.append(
                EngineSpec.parse(
                    text,
                    name=overrides.get(i),
                    options=tuple(per_engine[i]),
                    env=tuple(environments[i].items()),
                )
            )
        except EngineSpecError as exc:
            raise click.BadParameter(str(exc), param_hint="ENGINES") from None
    return tuple(specs)


def random_seed() -> int:
    """``referee.scheduling.match.random_seed``: a seed for a run given none."""
    from referee.scheduling.match import random_seed

    return random_seed()




def parse_seed(seed: str | None) -> int | str:
    if seed is None:
        return random_seed()
    return seed_value(seed)
