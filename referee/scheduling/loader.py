"""Reading a tournament's config: a TOML file (`load_config`) or a table of the same shape
(`build_config`), every problem of it found and told in one `ConfigError`, into a
``TournamentConfig`` (``referee.scheduling.config``).

Each setting is checked where it is defined: the clock and the sandbox by their values
(``referee.settings``), the rules by ``ginproto.rules``; this module finds the settings in the
table, says where each one is (``cup.toml: engines[2].tc``), and gathers the problems.
"""

from __future__ import annotations

import difflib
import logging
import os
import re
import shlex
import shutil
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, TypeVar

from engines import BUILTIN
from ginproto.protocol import check_rules_fit
from ginproto.rules import Rules
from ginproto.text import EVENT_LIMIT, NAME_LIMIT, SEED_LIMIT, nfc, printable, too_long
from referee.defaults import FORMATS
from referee.outputs import UnsafeOutput, check_folder
from referee.scheduling.address import parse_address
from referee.scheduling.config import (
    CLOCK_KEYS,
    DEFAULT_EVENT,
    ConfigError,
    EngineEntry,
    Problems,
    RemoteRun,
    TournamentConfig,
    check_size,
)
from referee.seat.clock import TimeControlError, duration
from referee.seat.player import REMOTE, EngineSpecError, remote_name
from referee.seat.sandbox import Limits, SandboxMode
from referee.settings import (
    API_WORDS,
    Clock,
    RunOptionError,
    Sandbox,
    check_run_options,
    clock_setting,
    sandbox_mode,
)

log = logging.getLogger(__name__)

T = TypeVar("T")


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
    # where the remote engines connect: run options of ginref tournament (RemoteRun)
    "listen": "str",
    "tokens": "str",
    "latency_margin": "number",
    "remote_wait": "number",
}
REMOTE_KEYS: Final = ("listen", "tokens", "latency_margin", "remote_wait")
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
    table: Mapping[str, Any], known: Mapping[str, str], where: str, problems: Problems
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
    table = _read(name)
    config = build_config(table, Path(name).resolve().parent, f"{name}: ", overrides)
    check_size(config, f"{name}: ")
    return config


def load_remote(path: str | os.PathLike[str]) -> tuple[RemoteRun, tuple[str, ...]]:
    """A TOML config's remote run options (`RemoteRun`) and the names of its remote engines
    (``remote = "NAME"``), for ``ginref tournament`` to listen for them before the config is
    read whole (`load_config`, which checks the rest). `ConfigError` for a file that cannot
    be read, or a remote run option that is wrong (listing the file's other problems too)."""
    name = os.fspath(path)
    table = _read(name)
    where = f"{name}: "
    problems = Problems(where)
    base = Path(name).resolve().parent
    keys: dict[str, Any] = {key: table[key] for key in REMOTE_KEYS if key in table}
    run = _remote_run(_check_keys(keys, _TOP_KEYS, where, problems), base, where, problems)
    if problems.found:  # every problem of the file in one error, as load_config says them
        build_config(table, base, where)
        problems.raise_any()
    return run, remote_names(table)


def remote_names(table: Mapping[str, Any]) -> tuple[str, ...]:
    """The names of the remote engines of a config table: a file's (``remote = "NAME"``) or
    a store's settings (``command = ["remote:NAME"]``). A name that is no plain word is left
    to the config's checks."""
    names = []
    engines = table.get("engines")
    for engine in engines if isinstance(engines, list) else ():
        if not isinstance(engine, dict):
            continue
        text = engine.get("remote")
        command = engine.get("command")
        if text is None and isinstance(command, list) and len(command) == 1:
            text = command[0][len(REMOTE) :] if str(command[0]).startswith(REMOTE) else None
        if isinstance(text, str):
            try:
                names.append(remote_name(REMOTE + text))
            except EngineSpecError:
                continue
    return tuple(names)


def _read(name: str) -> dict[str, Any]:
    """The table of the TOML file ``name``; `ConfigError` saying why it cannot be read."""
    try:
        with open(name, "rb") as f:
            return tomllib.load(f)
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
    Every problem found is listed in the one `ConfigError`.
    """
    base = base or Path.cwd()
    problems = Problems(where)
    merged = _merged(table, overrides, problems)

    def given(key: str) -> bool:  # a value the user gives now, not one read from a store
        return not stored or key in (overrides or {})

    fmt = merged.get("format", "round-robin")
    if fmt not in FORMATS:
        problems.add(f"{where}format must be one of {', '.join(FORMATS)}, not {fmt!r}")
        fmt = "round-robin"
    rules = _rules(merged, where, problems)
    games, duplicate, concurrency = _counts(merged, rules, where, problems)
    seed = _seed(merged, where, problems, given("seed"))
    event = _event(merged, where, problems, given("event"))
    clock = _clock(merged, where, problems)
    output = merged.get("output")
    with problems.check():
        output = _output(output, base, where)
    dask, affinity = _workers(merged, where, problems)
    sandbox = _sandbox(merged, base, where, problems)
    remote = _remote_run(merged, base, where, problems)
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
        clock=clock,
        event=event,
        concurrency=concurrency,
        output=output,
        dask=dask,
        sandbox=sandbox,
        affinity=affinity,
        remote=remote,
    )


def _merged(
    table: Mapping[str, Any], overrides: Mapping[str, Any] | None, problems: Problems
) -> dict[str, Any]:
    """The table's known keys of the right kind, with ``overrides`` on top."""
    merged = _check_keys(table, _TOP_KEYS, problems.where, problems)
    for key, value in _check_keys(overrides or {}, _TOP_KEYS, "", problems).items():
        if key == "rules":
            merged["rules"] = {**merged.get("rules", {}), **value}
        elif key == "output":
            merged["output"] = os.path.abspath(value) if value.strip() else value
        else:
            merged[key] = value
    return merged


def _counts(
    merged: Mapping[str, Any], rules: Rules, where: str, problems: Problems
) -> tuple[int, bool, int]:
    """The games per pairing, duplicate deals, and the games played at once."""
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
    return games, duplicate, concurrency


def _seed(
    merged: Mapping[str, Any], where: str, problems: Problems, given: bool
) -> int | str | None:
    """The seed: a whole number, or a string (a string of digits is its number)."""
    seed = merged.get("seed")
    if isinstance(seed, int) and seed < 0:
        problems.add(f"{where}seed must not be negative")
    if isinstance(seed, str) and not seed.strip():
        problems.add(
            f"{where}seed must not be empty: an empty seed deals the same cards every time;"
            " leave it out for a random one"
        )
    if isinstance(seed, str) and given:
        seed = nfc(seed)
        if (why := too_long(seed, SEED_LIMIT, "seed")) is not None:
            problems.add(f"{where}{why}")
    if isinstance(seed, str) and seed.isascii() and seed.isdigit() and len(seed) <= 4000:
        seed = int(seed)
    return seed


def _event(merged: Mapping[str, Any], where: str, problems: Problems, given: bool) -> str:
    event = merged.get("event", DEFAULT_EVENT)
    if isinstance(event, str) and given:
        event = nfc(event)
        if (why := too_long(event, EVENT_LIMIT, "event")) is not None:
            problems.add(f"{where}{why}")
    return event  # type: ignore[no-any-return]


def _clock(merged: Mapping[str, Any], where: str, problems: Problems) -> Clock:
    """The config's `Clock`, each of its keys checked by the `Clock`'s own check; the
    defaults where unset, and where a value is bad."""
    values: dict[str, Any] = {}
    for key in CLOCK_KEYS:
        if key in merged:
            value = _option_text(merged[key]) if key == "tc" else merged[key]
            try:
                values[key] = clock_setting(key, value, f"{where}{key}")
            except TimeControlError as exc:
                problems.add(str(exc))
    return Clock(**values).canonical()


def _sandbox(merged: Mapping[str, Any], base: Path, where: str, problems: Problems) -> Sandbox:
    """The config's `Sandbox`: its mode, limits (for every engine), network and the paths
    every engine may read (relative to the file). The defaults where a value is bad."""
    mode = SandboxMode.AUTO
    with problems.check():
        mode = _config_error(lambda: sandbox_mode(merged.get("sandbox", "auto"), f"{where}sandbox"))
    limits = Limits()
    with problems.check():
        limits = _limits(Limits(), merged.get("limits", {}), f"{where}limits")
    read = tuple(str(base / path) for path in merged.get("read", []))
    return Sandbox(mode, limits, merged.get("network", False), read)


def _remote_run(
    merged: Mapping[str, Any], base: Path, where: str, problems: Problems
) -> RemoteRun:
    """Where the remote engines connect: ``listen`` ([HOST:]PORT), ``tokens`` (relative to
    the file), ``latency_margin`` and ``remote_wait`` (seconds), each checked as ginref's
    option of the same name is."""
    from referee.seat.tokens import parse_listen

    listen = merged.get("listen")
    if listen is not None:
        try:
            parse_listen(listen)
        except ValueError as exc:
            problems.add(f"{where}listen: {exc}")
    tokens = merged.get("tokens")
    if tokens is not None:
        if tokens.strip():
            tokens = str(base / tokens)
        else:
            problems.add(f"{where}tokens must name the tokens file, not be empty")
    margin = wait = None
    with problems.check():
        if "latency_margin" in merged:
            value, what = merged["latency_margin"], f"{where}latency_margin"
            margin = _config_error(lambda: clock_setting("time_margin", value, what))
    with problems.check():
        if "remote_wait" in merged:
            wait = _config_error(lambda: duration(merged["remote_wait"], f"{where}remote_wait"))
    return RemoteRun(listen, tokens, margin, wait)


def _workers(merged: Mapping[str, Any], where: str, problems: Problems) -> tuple[str | None, bool]:
    """Where the games are played: the Dask cluster (None: local workers), and whether the
    local workers' engines are pinned to CPUs of their own."""
    dask = merged.get("dask")
    if dask is not None:
        try:
            dask = parse_address(dask)
        except ValueError as exc:
            problems.add(f"{where}dask: {exc}")
    affinity = merged.get("affinity", False)
    words = {**API_WORDS, "affinity": f"{where}affinity"}
    try:
        check_run_options(0, None, dask, None, affinity, words)  # a tournament has no SPRT
    except RunOptionError as exc:
        problems.add(str(exc))
    return dask, affinity


def _config_error(check: Callable[[], T]) -> T:
    """``check()``, its ``ValueError`` a `ConfigError` of the same message."""
    try:
        return check()
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def _rules(merged: Mapping[str, Any], where: str, problems: Problems) -> Rules:
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
                f"{where}output {exc.filename} is {exc.strerror}: name a folder for the results"
            ) from None
    return output


def _limits(base: Limits, table: Mapping[str, Any], where: str) -> Limits:
    try:
        return base.updated(table)
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def _tc_text(value: object, where: str) -> str:
    """An engine's own game clock, checked by the `Clock`'s check, in its one text form."""
    try:
        return Clock(tc=clock_setting("tc", _option_text(value), where)).canonical().tc or ""
    except TimeControlError as exc:
        raise ConfigError(str(exc)) from None


def _positive(value: float, where: str) -> float:
    """An engine's own move timeout, checked by the `Clock`'s check."""
    try:
        return float(clock_setting("move_timeout", value, where))
    except TimeControlError as exc:
        raise ConfigError(str(exc)) from None


def _engines(
    raw: Sequence[Mapping[str, Any]],
    base: Path,
    where: str,
    problems: Problems,
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
    table: Mapping[str, Any], at: str, base: Path, find: bool, problems: Problems, user: bool
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
            tuple(shlex.split(raw_command)) if isinstance(raw_command, str) else tuple(raw_command)
        )
    except ValueError as exc:
        raise ConfigError(f"{at}cannot split the command: {exc}") from None
    if not argv or not argv[0]:
        raise ConfigError(f"{at}command is empty")
    return argv


def _named(
    entries: Sequence[tuple[int, dict[str, Any]]], where: str, problems: Problems
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


def _engine_limits(table: Mapping[str, Any], where: str) -> tuple[tuple[str, int | float], ...]:
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
