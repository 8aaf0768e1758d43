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
import itertools
import json
import logging
import math
import shlex
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from engines import BUILTIN
from ginproto.rules import Rules
from ginproto.text import plural
from referee.seat.clock import DEFAULT_MARGIN, TimeControl
from referee.seat.player import EngineSpec
from referee.seat.sandbox import Limits, Policy, SandboxMode
from referee.settings import (
    DEFAULT_TC,
    Clock,
    Sandbox,
)

log = logging.getLogger(__name__)

DEFAULT_EVENT: Final = "ginref tournament"
MAX_GAMES: Final = 100_000
"""The most games a tournament may schedule in all. Its store lists every game from the start,
so a count beyond any run would only keep the referee writing the list while the disk fills."""


T = TypeVar("T")
CLOCK_KEYS: Final = ("tc", "move_timeout", "startup_timeout", "time_margin")


class ConfigError(ValueError):
    """A tournament config that cannot be used; the message says where and why."""


class Problems:
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
class RemoteRun:
    """Where a tournament's remote engines (``remote = "NAME"``) connect: its config's
    ``listen``, ``tokens`` (made absolute, relative to the file), ``latency_margin`` and
    ``remote_wait``, for ``ginref tournament``, whose options of the same names override
    each. Run options: neither stored nor compared on resume. None: not set."""

    listen: str | None = None
    tokens: str | None = None
    latency_margin: float | None = None
    remote_wait: float | None = None


def _moved(old: str, new: str) -> Any:
    """A read-only attribute of `TournamentConfig` under its old name: ``new``'s value, with
    a ``DeprecationWarning``."""
    group, field = new.split(".")

    def get(self: TournamentConfig) -> Any:
        warnings.warn(
            f"TournamentConfig.{old} is deprecated: read TournamentConfig.{new}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(getattr(self, group), field)

    return property(get, doc=f"Deprecated: ``{new}``.")


@dataclass(frozen=True, slots=True)
class TournamentConfig:
    """A checked tournament config. See ``settings()`` for what a resume must keep.
    ``clock`` and ``sandbox`` have every setting set (the config's, else the default)."""

    engines: tuple[EngineEntry, ...]
    format: str = "round-robin"
    rules: Rules = dataclasses.field(default_factory=Rules)
    games: int = 2
    seed: int | str | None = None  # None until chosen: at random, or the stored one on resume
    duplicate: bool = False
    clock: Clock = dataclasses.field(default_factory=lambda: Clock().canonical())
    event: str = DEFAULT_EVENT
    concurrency: int = 1
    output: str | None = None
    dask: str | None = None  # a Dask scheduler's address, or local:N; None: local workers
    sandbox: Sandbox = dataclasses.field(
        default_factory=lambda: Sandbox(SandboxMode.AUTO, Limits(), False, ())
    )
    affinity: bool = False  # pin each local worker's engines to CPUs of their own
    remote: RemoteRun = dataclasses.field(default_factory=RemoteRun)  # not stored

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
            "tc": self.clock.tc,
            "move_timeout": self.clock.move_timeout,
            "engines": [e.settings() for e in self.engines],
        }

    def run_options(self) -> dict[str, Any]:
        """Options free to change from run to run."""
        return {
            "concurrency": self.concurrency,
            "startup_timeout": self.clock.startup_timeout,
            "time_margin": self.clock.time_margin,
            "sandbox": str(self.sandbox.chosen_mode),
            "limits": (self.sandbox.shared_limits or Limits()).settings(),
            "network": bool(self.sandbox.network),
            "read": list(self.sandbox.readable),
            "affinity": self.affinity,
        }

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(e.name for e in self.engines)

    def specs(self, hidden: Sequence[str] = ()) -> tuple[EngineSpec, ...]:
        """How to start each engine. In the sandbox, each engine's view hides the referee's
        ``hidden`` paths and the other engines' own folders."""
        out = []
        clock = self.clock.control
        for entry in self.engines:
            others = [e.cwd for e in self.engines if e.cwd is not None and e.cwd != entry.cwd]
            policy = self.sandbox.policy((*hidden, *others))
            tc = self.clock.tc or DEFAULT_TC
            out.append(entry.spec(tc, clock.move, clock.margin, policy))
        return tuple(out)

    @property
    def control(self) -> TimeControl:
        """The game clock, the move limit and the margin: ``clock.control``."""
        return self.clock.control

    @property
    def startup_timeout(self) -> float:
        """Seconds for each engine's handshake and ``isready``: ``clock.startup_timeout``."""
        return self.clock.startup

    # The settings' names before they were grouped in ``clock`` and ``sandbox``: read for
    # one minor version more, with a DeprecationWarning naming the new place.
    tc = _moved("tc", "clock.tc")
    move_timeout = _moved("move_timeout", "clock.move_timeout")
    time_margin = _moved("time_margin", "clock.time_margin")
    limits = _moved("limits", "sandbox.limits")
    network = _moved("network", "sandbox.network")
    readable = _moved("readable", "sandbox.read")
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
