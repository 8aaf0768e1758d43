"""A tournament's config: a TOML file (or a table of the same shape) checked into a
``TournamentConfig``.

``TournamentConfig.settings()`` is its canonical form: everything that decides the games and
their records, nothing else (not the concurrency, not the output directory). The store keeps
it, and a resume compares it (``diff_settings``). ``pairings`` says which groups of engines a
format makes meet (``round-robin``: every group; ``gauntlet``: the first engine with every
group of the others).
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import itertools
import json
import logging
import math
import os
import re
import shlex
import shutil
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from engines import BUILTIN
from ginproto.protocol import check_rules_fit
from ginproto.rules import Rules
from ginproto.text import EVENT_LIMIT, NAME_LIMIT, SEED_LIMIT, nfc, plural, printable, too_long
from referee.cluster.address import parse_address
from referee.defaults import FORMATS
from referee.outputs import UnsafeOutput, check_folder
from referee.seat.clock import DEFAULT_MARGIN, TimeControl, TimeControlError, duration
from referee.seat.player import REMOTE, EngineSpec, EngineSpecError, remote_name
from referee.seat.sandbox import Limits, Policy, SandboxMode

log = logging.getLogger(__name__)

DEFAULT_EVENT: Final = "ginref tournament"
MAX_GAMES: Final = 100_000
"""The most games a tournament may schedule in all. Its store lists every game from the start,
so a count beyond any run would only keep the referee writing the list while the disk fills."""


class ConfigError(ValueError):
    """A tournament config that cannot be used; the message says where and why."""


class _Problems:
    """Every problem found in a config, so that one error lists them all (each unknown key,
    each bad value), rather than one a run."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.found: list[str] = []

    def add(self, message: str) -> None:
        self.found.append(message)

    @contextlib.contextmanager
    def check(self) -> Iterator[None]:
        """Run a check: the `ConfigError` it raises is noted, and the parsing goes on."""
        try:
            yield
        except ConfigError as exc:
            self.add(str(exc))

    def raise_any(self) -> None:
        """A `ConfigError` of the problems found: the one, or a list of them."""
        if len(self.found) == 1:
            raise ConfigError(self.found[0])
        if self.found:
            lines = "\n".join(f"  - {p.removeprefix(self.where)}" for p in self.found)
            raise ConfigError(f"{self.where}{len(self.found)} problems:\n{lines}")




@dataclass(frozen=True, slots=True)
class EngineEntry:
    """One engine of a tournament. ``command`` is a built-in name or an argv."""

    name: str
    command: str | tuple[str, ...]
    cwd: str | None = None
    options: tuple[tuple[str, str], ...] = ()  # sorted by name
    tc: str | None = None
    move_timeout: float | None = None
    env: tuple[tuple[str, str], ...] = ()  # sorted by name
    limits: tuple[tuple[str, int | float], ...] = ()  # its own sandbox limits, by name
    network: bool | None = None

    def spec(
        self,
        tc: str,
        move_timeout: float,
        margin: float = DEFAULT_MARGIN,
        sandbox: Policy | None = None,
    ) -> EngineSpec:
        """How to start it; its own time control when it has one (else the tournament's),
        and its own limits on top of the tournament's sandbox policy."""
        control = None
        if self.tc is not None or self.move_timeout is not None:
            control = TimeControl.parse(
                self.tc or tc,
                move=self.move_timeout if self.move_timeout else move_timeout,
                margin=margin,
            )
        argv = tuple(BUILTIN[self.command]) if isinstance(self.command, str) else self.command
        policy = sandbox or Policy()
        policy = dataclasses.replace(
            policy,
            limits=policy.limits.updated(dict(self.limits)),
            network=policy.network if self.network is None else self.network,
        )
        return EngineSpec(
            argv, self.name, self.cwd, self.options, control, self.env, sandbox=policy
        )

    def settings(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "command": self.command if isinstance(self.command, str) else list(self.command),
            "options": dict(self.options),
        }
        for key in ("cwd", "tc", "move_timeout", "network"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        if self.env:
            out["env"] = dict(self.env)
        if self.limits:
            out["limits"] = dict(self.limits)
        return out


@dataclass(frozen=True, slots=True)
class TournamentConfig:
    """A checked tournament config. See ``settings()`` for what a resume must keep."""

    engines: tuple[EngineEntry, ...]
    format: str = "round-robin"
    rules: Rules = dataclasses.field(default_factory=Rules)
    games: int = 2
    seed: int | str | None = None  # None until chosen: at random, or the stored one on resume
    duplicate: bool = False
    tc: str = "120+1"
    move_timeout: float = 10.0
    event: str = DEFAULT_EVENT
    concurrency: int = 1
    startup_timeout: float = 10.0
    output: str | None = None
    time_margin: float = DEFAULT_MARGIN
    dask: str | None = None  # a Dask scheduler's address, or local:N; None: local workers
    sandbox: SandboxMode = SandboxMode.AUTO
    limits: Limits = dataclasses.field(default_factory=Limits)
    network: bool = False
    readable: tuple[str, ...] = ()  # more paths every sandboxed engine may read
    affinity: bool = False  # pin each local worker's engines to CPUs of their own

    def settings(self) -> dict[str, Any]:
        """The canonical settings: what decides the games and their records. Itself a valid
        config table, so a tournament can be resumed from its store alone."""
        if self.seed is None:
            raise ValueError("the seed is not chosen yet")
        rules = self.rules.to_params()
        variant = rules.pop("variant")
        return {
            "event": self.event,
            "format": self.format,
            "variant": variant,
            "rules": rules,
            "games": self.games,
            "seed": self.seed,
            "duplicate": self.duplicate,
            "tc": self.tc,
            "move_timeout": self.move_timeout,
            "engines": [e.settings() for e in self.engines],
        }

    def run_options(self) -> dict[str, Any]:
        """Options free to change from run to run."""
        return {
            "concurrency": self.concurrency,
            "startup_timeout": self.startup_timeout,
            "time_margin": self.time_margin,
            "sandbox": str(self.sandbox),
            "limits": self.limits.settings(),
            "network": self.network,
            "read": list(self.readable),
            "affinity": self.affinity,
        }

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(e.name for e in self.engines)

    def specs(self, hidden: Sequence[str] = ()) -> tuple[EngineSpec, ...]:
        """How to start each engine. In the sandbox, each engine's view hides the referee's
        ``hidden`` paths and the other engines' own folders."""
        out = []
        for entry in self.engines:
            others = [e.cwd for e in self.engines if e.cwd is not None and e.cwd != entry.cwd]
            policy = Policy(
                self.sandbox,
                self.limits,
                self.network,
                (*hidden, *others),
                readable=self.readable,
            )
            out.append(entry.spec(self.tc, self.move_timeout, self.time_margin, policy))
        return tuple(out)

    @property
    def control(self) -> TimeControl:
        return TimeControl.parse(self.tc, move=self.move_timeout, margin=self.time_margin)


_TOP_KEYS: Final[dict[str, str]] = {
    "event": "str",
    "format": "str",
    "variant": "str",
    "rules": "table",
    "games": "int",
    "seed": "seed",
    "duplicate": "bool",
    "concurrency": "int",
    "output": "str",
    "tc": "tc",
    "move_timeout": "number",
    "startup_timeout": "number",
    "time_margin": "number",
    "dask": "str",
    "sandbox": "str",
    "limits": "table",
    "network": "bool",
    "read": "paths",
    "affinity": "bool",
    "engines": "engines",
}
_ENGINE_KEYS: Final[dict[str, str]] = {
    "name": "str",
    "command": "command",
    "remote": "str",  # remote = "NAME": a bot that connects (referee.seat.remote)
    "cwd": "str",
    "options": "table",
    "tc": "tc",
    "move_timeout": "number",
    "env": "table",
    "limits": "table",
    "network": "bool",
}
_KINDS: Final[dict[str, str]] = {
    "str": "a string",
    "int": "a whole number",
    "bool": "true or false",
    "number": "a number",
    "table": "a table",
    "seed": "a whole number or a string",
    "tc": 'a time control such as "60+0.5" or "inf"',
    "engines": "an array of tables ([[engines]])",
    "command": "a string or an array of strings",
    "paths": "an array of strings",
}


def _type_ok(kind: str, value: object) -> bool:
    is_int = isinstance(value, int) and not isinstance(value, bool)
    return {
        "str": isinstance(value, str),
        "int": is_int,
        "bool": isinstance(value, bool),
        "number": is_int or isinstance(value, float),
        "table": isinstance(value, dict),
        "seed": is_int or isinstance(value, str),
        "tc": isinstance(value, str) or is_int or isinstance(value, float),
        "engines": isinstance(value, list) and all(isinstance(v, dict) for v in value),
        "command": isinstance(value, str)
        or (isinstance(value, list) and all(isinstance(v, str) for v in value)),
        "paths": isinstance(value, list) and all(isinstance(v, str) for v in value),
    }[kind]


def _check_keys(
    table: Mapping[str, Any], known: Mapping[str, str], where: str, problems: _Problems
) -> dict[str, Any]:
    """The keys of ``table`` that are known and of the right kind; each other one is a
    problem."""
    good = {}
    for key, value in table.items():
        if key not in known:
            close = difflib.get_close_matches(key, list(known), n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"known keys: {', '.join(known)}"
            problems.add(f"{where}unknown key {key!r} ({hint})")
        elif not _type_ok(known[key], value):
            problems.add(f"{where}{key} must be {_KINDS[known[key]]}, not {_toml_text(value)}")
        else:
            good[key] = value
    return good


def _toml_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    return repr(value)


def _option_text(value: object) -> str:
    """An option or rule value in the protocol's text form."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def load_config(
    path: str | os.PathLike[str], overrides: Mapping[str, Any] | None = None
) -> TournamentConfig:
    """Read and check a TOML config; ``overrides`` (the command line's) win over the file.

    Relative paths in the file (``output``, each engine's ``cwd``) are relative to the file's
    directory. Raises ``ConfigError`` with the file name and what is wrong.
    """
    name = os.fspath(path)
    try:
        with open(name, "rb") as f:
            table = tomllib.load(f)
    except FileNotFoundError:
        raise ConfigError(f"{name}: no such file") from None
    except OSError as exc:
        raise ConfigError(f"{name}: cannot read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{name}: not valid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{name}: not UTF-8 text: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{name}: too deeply nested (arrays or tables in each other)") from None
    config = build_config(table, Path(name).resolve().parent, f"{name}: ", overrides)
    check_size(config, f"{name}: ")
    return config


def check_size(config: TournamentConfig, where: str = "") -> None:
    """`ConfigError` for a tournament too large to store: its plan is made on demand, but its
    store lists every game from the start, so a count such as 10**12 would fill the disk.
    The games are counted (`pairing_count`), never listed: 700 engines of the three-handed
    game make 56.9 million pairings, which would take gigabytes only to be refused."""
    groups = pairing_count(config.format, len(config.engines), config.rules.players)
    total = game_count(config)
    if total > MAX_GAMES:
        raise ConfigError(
            f"{where}games = {config.games} per pairing, over {plural(groups, 'pairing')},"
            f" makes {plural(total, 'game')}: a tournament"
            f" holds at most {MAX_GAMES}, since its store lists every game from the start"
        )


def build_config(
    table: Mapping[str, Any],
    base: Path | None = None,
    where: str = "",
    overrides: Mapping[str, Any] | None = None,
    find_engines: bool = True,
    stored: bool = False,
) -> TournamentConfig:
    """Check a config table (a TOML file's, or stored settings) and build the config.

    ``overrides`` are applied on top (``rules`` merged name by name); paths in them are taken
    as they are (relative to the current directory). A missing ``seed`` is left as ``None`` in
    the returned config's ``seed``, for the caller to fill (a new random seed, or the stored
    one on resume). ``find_engines=False`` does not look for the engines' programs (to read a
    stored tournament's schedule on a machine without them). Names, seeds and the event are
    taken in NFC form and refused past their limits (``ginproto.text``), except, with
    ``stored=True``, those of the table: a store's settings are used as they were stored.
    """
    base = base or Path.cwd()
    problems = _Problems(where)
    merged = _check_keys(table, _TOP_KEYS, where, problems)
    if overrides:
        for key, value in _check_keys(overrides, _TOP_KEYS, "", problems).items():
            if key == "rules":
                merged["rules"] = {**merged.get("rules", {}), **value}
            elif key == "output":
                merged["output"] = os.path.abspath(value) if value.strip() else value
            else:
                merged[key] = value

    fmt = merged.get("format", "round-robin")
    if fmt not in FORMATS:
        problems.add(f"{where}format must be one of {', '.join(FORMATS)}, not {fmt!r}")
        fmt = "round-robin"
    rules = _rules(merged, where, problems)

    games = merged.get("games", 2)
    if games < 1:
        problems.add(f"{where}games (per pairing) must be at least 1, not {games}")
    duplicate = merged.get("duplicate", False)
    if duplicate and games >= 1 and games % rules.players:
        problems.add(
            f"{where}with duplicate, games (per pairing) must be a multiple of"
            f" {rules.players}: each deal is played once from every seat"
        )
    concurrency = merged.get("concurrency", 1)
    if concurrency < 1:
        problems.add(f"{where}concurrency must be at least 1, not {concurrency}")
    seed = merged.get("seed")
    if isinstance(seed, int) and seed < 0:
        problems.add(f"{where}seed must not be negative")
    if isinstance(seed, str) and not seed.strip():
        problems.add(
            f"{where}seed must not be empty: an empty seed deals the same cards every time;"
            " leave it out for a random one"
        )
    def given(key: str) -> bool:  # a value the user gives now, not one read from a store
        return not stored or key in (overrides or {})

    if isinstance(seed, str) and given("seed"):
        seed = nfc(seed)
        if (why := too_long(seed, SEED_LIMIT, "seed")) is not None:
            problems.add(f"{where}{why}")
    if isinstance(seed, str) and seed.isascii() and seed.isdigit() and len(seed) <= 4000:
        seed = int(seed)
    event = merged.get("event", DEFAULT_EVENT)
    if isinstance(event, str) and given("event"):
        event = nfc(event)
        if (why := too_long(event, EVENT_LIMIT, "event")) is not None:
            problems.add(f"{where}{why}")
    tc, move_timeout, startup_timeout = "120+1", 10.0, 10.0
    with problems.check():
        tc = _tc_text(merged.get("tc", "120+1"), f"{where}tc")
    with problems.check():
        move_timeout = _positive(merged.get("move_timeout", 10.0), f"{where}move_timeout")
    with problems.check():
        startup_timeout = _positive(
            merged.get("startup_timeout", 10.0), f"{where}startup_timeout"
        )
    time_margin = merged.get("time_margin", DEFAULT_MARGIN)
    if not (math.isfinite(time_margin) and 0 <= time_margin <= 3600):
        problems.add(f"{where}time_margin must be seconds from 0 to 3600, not {time_margin}")
    output = merged.get("output")
    with problems.check():
        output = _output(output, base, where)
    dask = merged.get("dask")
    if dask is not None:
        try:
            dask = parse_address(dask)
        except ValueError as exc:
            problems.add(f"{where}dask: {exc}")
    affinity = merged.get("affinity", False)
    if affinity and dask is not None:
        problems.add(
            f"{where}affinity pins the engines of local games; it cannot be used with dask"
        )
    sandbox = merged.get("sandbox", "auto")
    if sandbox not in [m.value for m in SandboxMode]:
        problems.add(
            f"{where}sandbox must be one of {', '.join(m.value for m in SandboxMode)},"
            f" not {sandbox!r}"
        )
    limits = Limits()
    with problems.check():
        limits = _limits(Limits(), merged.get("limits", {}), f"{where}limits")

    raw_engines = merged.get("engines", [])
    # On a cluster the engines run on the workers, which are checked before game 1.
    engines = _engines(
        raw_engines,
        base,
        where,
        problems,
        find=find_engines and dask is None,
        user=given("engines"),
    )
    if len(raw_engines) < rules.players:
        problems.add(
            f"{where}a {fmt} of {rules.variant} needs at least {rules.players} engines"
            f" ([[engines]] tables), not {len(raw_engines)}"
        )
    problems.raise_any()
    return TournamentConfig(
        engines=engines,
        format=fmt,
        rules=rules,
        games=games,
        seed=seed,
        duplicate=duplicate,
        tc=tc,
        move_timeout=move_timeout,
        event=event,
        concurrency=concurrency,
        startup_timeout=startup_timeout,
        output=output,
        time_margin=float(time_margin),
        dask=dask,
        sandbox=SandboxMode(sandbox),
        limits=limits,
        network=merged.get("network", False),
        readable=tuple(str(base / path) for path in merged.get("read", [])),
        affinity=affinity,
    )


def _rules(merged: Mapping[str, Any], where: str, problems: _Problems) -> Rules:
    """The rules of a config: its variant, and its ``[rules]`` each checked on its own, so
    that every unknown or bad one is a problem. The variant's defaults after a problem."""
    variant = merged.get("variant", "standard")
    try:
        rules = Rules.from_params({"variant": variant})
    except ValueError as exc:  # RulesError
        problems.add(f"{where}{exc}")
        variant, rules = "standard", Rules()
    params = {"variant": variant}
    ok = True
    for rule, value in merged.get("rules", {}).items():
        if not isinstance(value, str | int | bool | float):
            problems.add(f"{where}rules.{rule} must be a number, true/false or a string")
            ok = False
            continue
        params[rule] = _option_text(value)
        try:
            Rules.from_params({"variant": variant, rule: params[rule]})
        except ValueError as exc:
            problems.add(f"{where}rules: {exc}")
            ok = False
    if not ok:
        return rules
    try:
        rules = Rules.from_params(params)
        check_rules_fit(rules)
    except ValueError as exc:  # RulesError too
        problems.add(f"{where}{'' if 'variant' in str(exc) else 'rules: '}{exc}")
    return rules


def _output(output: str | None, base: Path, where: str) -> str | None:
    """The results folder, as an absolute path; `ConfigError` for one that cannot be."""
    if output is None:
        return None
    if not output.strip():
        raise ConfigError(f"{where}output must name a folder for the results, not be empty")
    output = str(base / output)
    if os.path.lexists(output) and not os.path.isdir(output):
        try:
            check_folder(output)
        except UnsafeOutput as exc:
            raise ConfigError(
                f"{where}output {exc.filename} is {exc.strerror}: name a folder for the"
                " results"
            ) from None
    return output


def _limits(base: Limits, table: Mapping[str, Any], where: str) -> Limits:
    try:
        return base.updated(table)
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def _tc_text(value: object, where: str) -> str:
    try:
        control = TimeControl.parse(_option_text(value))
    except TimeControlError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    return "inf" if control.base is None else f"{control.base:g}+{control.increment:g}"


def _positive(value: float, where: str) -> float:
    try:
        return duration(value, where)
    except TimeControlError as exc:
        raise ConfigError(str(exc)) from None


def _engines(
    raw: Sequence[Mapping[str, Any]],
    base: Path,
    where: str,
    problems: _Problems,
    find: bool = True,
    user: bool = True,
) -> tuple[EngineEntry, ...]:
    """The engines, each checked in full: every problem of every engine is noted in
    ``problems``, and an engine with any is left out of the result. ``user``: the names are
    given now (taken in NFC form, within their limit), not read from a store."""
    entries: list[tuple[int, dict[str, Any]]] = []
    for n, given in enumerate(raw, 1):
        shown = given.get("name") or given.get("command") or "?"
        at = f"{where}engines[{n}] ({printable(str(shown), 40)}): "
        before = len(problems.found)
        table = _check_keys(given, _ENGINE_KEYS, at, problems)
        entry = _engine(table, at, base, find, problems, user)
        if entry is not None and len(problems.found) == before:
            entries.append((n, entry))
    return _named(entries, where, problems)


def _engine(
    table: Mapping[str, Any], at: str, base: Path, find: bool, problems: _Problems, user: bool
) -> dict[str, Any] | None:
    """One engine's entry, or ``None`` when its command cannot be used; every problem of its
    keys is noted in ``problems``."""
    command: str | tuple[str, ...] | None = None
    with problems.check():
        command = _command(table, at)
    cwd = table.get("cwd")
    usable = True  # the folder to look for the program in
    if cwd is not None:
        cwd = str(base / cwd)
        if find and not os.path.isdir(cwd):
            problems.add(f"{at}cwd {cwd} is not a directory")
            usable = False
    program = command[0] if isinstance(command, tuple) else None
    program = None if program is not None and program.startswith(REMOTE) else program  # remote
    if find and usable and program is not None and not _findable(program, cwd):
        problems.add(
            f"{at}cannot find the program {program!r}: it is not a built-in engine"
            f" ({', '.join(BUILTIN)}) nor "
            + ("an executable file" if "/" in program else "a command on the PATH")
        )
    options = []
    for key, value in table.get("options", {}).items():
        if not isinstance(value, str | int | bool | float):
            problems.add(f"{at}options.{key} must be a string, number or true/false")
            continue
        options.append((key, _option_text(value)))
    env = []
    for key, value in table.get("env", {}).items():
        if not isinstance(value, str | int | float) or isinstance(value, bool):
            problems.add(f"{at}env.{key} must be a string or a number")
            continue
        text = _option_text(value)
        if not key or "=" in key or "\0" in key or "\0" in text:
            problems.add(f"{at}env.{key}: not a usable environment variable")
            continue
        env.append((key, text))
    tc = move_timeout = limits = None
    with problems.check():
        tc = _tc_text(table["tc"], f"{at}tc") if "tc" in table else None
    with problems.check():
        if "move_timeout" in table:
            move_timeout = _positive(table["move_timeout"], f"{at}move_timeout")
    with problems.check():
        limits = _engine_limits(table.get("limits", {}), f"{at}limits")
    name = table.get("name")
    if isinstance(name, str) and user:  # a stored name is as it was stored
        name = nfc(name)
        if (why := too_long(name, NAME_LIMIT, "name")) is not None:
            problems.add(f"{at}{why}")
    if command is None:
        return None
    return {
        "name": name,
        "command": command,
        "cwd": cwd,
        "options": tuple(sorted(options)),
        "env": tuple(sorted(env)),
        "tc": tc,
        "move_timeout": move_timeout,
        "limits": limits,
        "network": table.get("network"),
    }


def _command(table: Mapping[str, Any], at: str) -> str | tuple[str, ...]:
    """An engine's command: a built-in's name, or its argv."""
    if "remote" in table:  # remote:NAME, an argv of one word (referee.seat.player.EngineSpec)
        try:
            return (REMOTE + remote_name(REMOTE + table["remote"]),)
        except EngineSpecError as exc:
            raise ConfigError(f"{at}remote: {exc}") from None
    if "command" not in table:
        raise ConfigError(f"{at}command is missing (a built-in name or a command line)")
    raw_command = table["command"]
    if isinstance(raw_command, str) and raw_command.strip() in BUILTIN:
        return str(raw_command.strip())
    try:
        argv = (
            tuple(shlex.split(raw_command))
            if isinstance(raw_command, str)
            else tuple(raw_command)
        )
    except ValueError as exc:
        raise ConfigError(f"{at}cannot split the command: {exc}") from None
    if not argv or not argv[0]:
        raise ConfigError(f"{at}command is empty")
    return argv


def _named(
    entries: Sequence[tuple[int, dict[str, Any]]], where: str, problems: _Problems
) -> tuple[EngineEntry, ...]:
    """The engines, each with its name: the one it was given, which must differ from the
    others', or one made from its command."""
    explicit: dict[str, int] = {}
    for n, e in entries:
        name = e["name"]
        if name is not None:
            if not name.strip():
                problems.add(f"{where}engines[{n}]: name is empty")
            elif name in explicit:  # the same after NFC: the same name
                problems.add(
                    f"{where}engines[{explicit[name]}] and engines[{n}] are both named"
                    f" {name!r}; names must differ"
                )
            else:
                explicit[name] = n
    taken = set(explicit)
    out = []
    for _, e in entries:
        if e["name"] is None:
            label = _default_name(e["command"])
            name, k = label, 1
            while name in taken:
                k += 1
                name = f"{label}#{k}"
            e["name"] = name
            taken.add(name)
        out.append(EngineEntry(**e))
    return tuple(out)


def _engine_limits(
    table: Mapping[str, Any], where: str
) -> tuple[tuple[str, int | float], ...]:
    """An engine's own limits, by name, in bytes (memory, disk), a count (processes) or
    CPUs (cpus)."""
    checked = _limits(Limits(), table, where)
    return tuple(sorted((k.strip().lower(), getattr(checked, k.strip().lower())) for k in table))


_INTERPRETER = re.compile(r"(python|pypy|node|nodejs|deno|bun|ruby|perl|php|java|lua)[\d.]*")


def _default_name(command: str | tuple[str, ...]) -> str:
    """A built-in's name, else the program's file name; for an interpreter running a script
    (``python3 bot.py``, ``node bot.js``, ``python -m bot``), the script's."""
    if isinstance(command, str):
        return command
    program = os.path.basename(command[0])
    if _INTERPRETER.fullmatch(program):
        args = command[1:]
        if "-m" in args[:-1]:
            return args[args.index("-m") + 1].rpartition(".")[2] or program
        script = next((a for a in args if not a.startswith("-")), None)
        if script:
            return os.path.splitext(os.path.basename(script))[0] or program
    return program


def _findable(program: str, cwd: str | None) -> bool:
    """Whether ``program`` would start: an executable path (relative to the engine's working
    directory), or a command on the PATH the engine gets."""
    if "/" in program:
        path = os.path.join(cwd or os.getcwd(), program)
        return os.path.isfile(path) and os.access(path, os.X_OK)
    return shutil.which(program, path=os.environ.get("PATH", os.defpath)) is not None


def diff_settings(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """What changed from ``old`` to ``new`` (canonical settings), one line per change."""
    changes: list[str] = []
    labels = {
        "games": "games per pairing",
        "tc": "time control",
        "move_timeout": "move timeout",
    }
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        if key == "engines":
            changes += _diff_engines(a or [], b or [])
        elif key == "rules":
            for rule in sorted(set(a or {}) | set(b or {})):
                x, y = (a or {}).get(rule), (b or {}).get(rule)
                if x != y:
                    changes.append(f"rule {rule}: {x or '(none)'} -> {y or '(none)'}")
        else:
            changes.append(f"{labels.get(key, key)}: {_show(a)} -> {_show(b)}")
    return changes


def _diff_engines(old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]) -> list[str]:
    old_names = [e.get("name") for e in old]
    new_names = [e.get("name") for e in new]
    if old_names != new_names:
        return [f"engines: {', '.join(map(str, old_names))} -> {', '.join(map(str, new_names))}"]
    out = []
    for n, (a, b) in enumerate(zip(old, new, strict=True), 1):
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                what = "time control" if key == "tc" else key.replace("_", " ")
                out.append(
                    f"engine {n} ({a.get('name')}) {what}: {_show(a.get(key))}"
                    f" -> {_show(b.get(key))}"
                )
    return out


def _show(value: object) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={v}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return shlex.join(map(str, value))
    return json.dumps(value) if isinstance(value, str | bool) else str(value)

def pairing_count(fmt: str, engines: int, players: int) -> int:
    """How many pairings `pairings` makes, by arithmetic: nothing is listed."""
    if fmt == "round-robin":
        return math.comb(engines, players)
    if fmt == "gauntlet":
        return math.comb(engines - 1, players - 1) if engines > 0 else 0
    raise ValueError(f"unknown format {fmt!r}")


def game_count(config: TournamentConfig) -> int:
    """How many games the tournament schedules: its games per pairing for each pairing."""
    return config.games * pairing_count(config.format, len(config.engines), config.rules.players)


def pairings(fmt: str, engines: int, players: int) -> list[tuple[int, ...]]:
    """The groups of engines that meet: every group (round-robin), or the first engine with
    every group of the others (gauntlet)."""
    if fmt == "round-robin":
        return list(itertools.combinations(range(engines), players))
    if fmt == "gauntlet":
        return [(0, *rest) for rest in itertools.combinations(range(1, engines), players - 1)]
    raise ValueError(f"unknown format {fmt!r}")
