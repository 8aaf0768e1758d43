"""Settings as values: what travels together is one frozen value that checks itself.

A run's clock (`Clock`: the game clock, the move, startup and margin limits), its sandbox
(`Sandbox`: the mode, the limits, the network, the paths the engines may read) and the files
it writes (`Outputs`: the record, the debug log, the stderr folder, the HTML report) are each
one value, as python-chess passes a search's `Limit` and httpx its ``Timeout``. The same values
are taken by ``play_match`` and ``play_tournament``, built by ``ginref``'s commands from their
options and by a tournament config from its keys; each setting is checked here, in one place,
and every front end words the error its own way only by naming the setting
(``the move timeout``, ``cup.toml: move_timeout``).

A field left ``None`` is unset: the default for a match, the config's for a tournament. So
``Clock(tc="60+1")`` changes a tournament's game clock and keeps its move timeout.

``deprecated_keywords`` turns the loose keywords these values replace (``tc=``,
``record=``, ``sandbox="off"``...) into the values, with a ``DeprecationWarning`` naming the
replacement; they are kept for one minor version.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from decimal import Decimal
from typing import Any, Final, cast

from referee.defaults import DEFAULT_MARGIN
from referee.outputs import check_outputs
from referee.seat.clock import TimeControl, TimeControlError, duration
from referee.seat.sandbox import Limits, Policy, SandboxMode

__all__ = ["Clock", "Outputs", "Sandbox"]

DEFAULT_TC: Final = "120+1"
DEFAULT_MOVE: Final = 10.0
DEFAULT_STARTUP: Final = 10.0
MARGIN_MAX: Final = 3600
"""The longest time margin, in seconds."""

_NAMES: Final = {
    "tc": "the time control",
    "move_timeout": "the move timeout",
    "startup_timeout": "the startup timeout",
    "time_margin": "the time margin",
}

Path = str | os.PathLike[str]
LimitsGiven = Limits | Mapping[str, object]


def clock_setting(name: str, value: object, what: str | None = None) -> Any:
    """One setting of a `Clock`, checked and in its form (``tc`` text, the others float
    seconds). `TimeControlError` names it as ``what`` (a config's ``cup.toml: tc``), else as
    the Python API does (``the move timeout``); its ``setting`` is ``name``."""
    try:
        return _clock_setting(name, value, what)
    except TimeControlError as exc:
        exc.setting = name  # which option, for the command line
        raise


def _clock_setting(name: str, value: object, what: str | None) -> Any:
    if name == "tc":
        if not isinstance(value, str):
            raise TimeControlError(
                f"{what or _NAMES[name]} must be BASE+INC in seconds (e.g. 60+0.5), not {value!r}"
            )
        try:
            TimeControl.parse(value)
        except TimeControlError as exc:
            raise TimeControlError(f"{what}: {exc}" if what else str(exc)) from None
        return value
    if name == "time_margin":
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not (math.isfinite(value) and 0 <= value <= MARGIN_MAX)
        ):
            raise TimeControlError(
                f"{what or _NAMES[name]} must be seconds from 0 to {MARGIN_MAX}, not {value}"
            )
        return float(value)
    return duration(value, what or _NAMES[name])


@dataclass(frozen=True, slots=True)
class Clock:
    """The time limits of a run: ``tc``, the game clock (``"BASE+INC"`` seconds, or
    ``"inf"``); ``move_timeout``, seconds per decision; ``startup_timeout``, seconds for the
    handshake and each ``isready``; ``time_margin``, seconds of grace on every limit. None:
    unset (the default: ``120+1``, 10, 10, 0.1; in a tournament, the config's).

    A bad value raises `TimeControlError` (a ``ValueError``) as it is made."""

    tc: str | None = None
    move_timeout: float | None = None
    startup_timeout: float | None = None
    time_margin: float | None = None

    def __post_init__(self) -> None:
        for name in _NAMES:
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, clock_setting(name, value))

    @classmethod
    def of(cls, control: TimeControl, startup_timeout: float | None = None) -> Clock:
        """The clock of a `TimeControl` (its game clock, move limit and margin)."""
        tc = "inf" if control.base is None else f"{_text(control.base)}+{_text(control.increment)}"
        return cls(tc, control.move, startup_timeout, control.margin)

    def over(self, base: Clock) -> Clock:
        """This clock, ``base``'s settings where this one's are unset."""
        return Clock(*(_given(self, base, f.name) for f in fields(self)))

    @property
    def control(self) -> TimeControl:
        """The game clock, move limit and margin (the defaults where unset)."""
        margin = DEFAULT_MARGIN if self.time_margin is None else self.time_margin
        move = DEFAULT_MOVE if self.move_timeout is None else self.move_timeout
        return TimeControl.parse(self.tc or DEFAULT_TC, move=move, margin=margin)

    @property
    def startup(self) -> float:
        """The startup timeout (the default where unset)."""
        return DEFAULT_STARTUP if self.startup_timeout is None else self.startup_timeout

    def canonical(self) -> Clock:
        """The same clock with its game clock in one text form (``60+0.5``, ``inf``): the
        form a tournament stores."""
        control = self.control
        tc = "inf" if control.base is None else f"{control.base:g}+{control.increment:g}"
        return Clock(tc, control.move, self.startup, control.margin)

    def settings(self) -> dict[str, Any]:
        """The settings given, by name (a config's keys)."""
        given = {f.name: getattr(self, f.name) for f in fields(self)}
        return {name: value for name, value in given.items() if value is not None}


def _text(seconds: float) -> str:
    """Seconds as `TimeControl.parse` reads them back exactly (no exponent)."""
    short = f"{seconds:g}"
    if "e" not in short and float(short) == seconds:
        return short
    return format(Decimal(repr(seconds)), "f")


def _given(value: Any, base: Any, name: str) -> Any:
    mine = getattr(value, name)
    return getattr(base, name) if mine is None else mine


def sandbox_mode(value: object, what: str = "sandbox") -> SandboxMode:
    """A sandbox mode, checked: ``ValueError`` names it as ``what``."""
    modes = [m.value for m in SandboxMode]
    if value not in modes:
        raise ValueError(f"{what} must be one of {', '.join(modes)}, not {value!r}")
    return SandboxMode(str(value))


def limits_of(value: LimitsGiven) -> Limits:
    """`Limits`, or a table of them by name (``{"memory": "1G"}``), checked."""
    return value if isinstance(value, Limits) else Limits().updated(value)


@dataclass(frozen=True, slots=True)
class Sandbox:
    """How the engines run: ``mode`` (``"auto"``: in bubblewrap where it can run, else
    bare with a warning; ``"require"``; ``"off"``), ``limits`` (`Limits`, or a table such as
    ``{"memory": "1G"}``, for every engine; or a sequence of one per engine), ``network``
    (may they use it) and ``read`` (more paths every engine may read). None: unset (auto,
    the default limits, no network, nothing more; in a tournament, the config's).

    A bad value raises ``ValueError`` as it is made."""

    mode: SandboxMode | str | None = None
    limits: LimitsGiven | Sequence[LimitsGiven] | None = None
    network: bool | None = None
    read: Sequence[Path] | None = None

    def __post_init__(self) -> None:
        if self.mode is not None:
            object.__setattr__(self, "mode", sandbox_mode(self.mode))
        if isinstance(self.limits, Limits | Mapping):
            object.__setattr__(self, "limits", limits_of(self.limits))
        elif self.limits is not None:
            object.__setattr__(self, "limits", tuple(limits_of(item) for item in self.limits))
        if self.network is not None and not isinstance(self.network, bool):
            raise ValueError(f"network must be True or False, not {self.network!r}")
        if isinstance(self.read, str | os.PathLike):
            raise ValueError(f"read must be a sequence of paths, not one: {self.read!r}")
        if self.read is not None:
            object.__setattr__(self, "read", tuple(os.fspath(p) for p in self.read))

    @property
    def chosen_mode(self) -> SandboxMode:
        """The mode (``auto`` where unset)."""
        return SandboxMode(self.mode or SandboxMode.AUTO)

    @property
    def shared_limits(self) -> Limits | None:
        """The limits every engine shares, or None for per-engine limits or unset ones."""
        return self.limits if isinstance(self.limits, Limits) else None

    def engine_limits(self, count: int) -> list[Limits] | None:
        """Each of ``count`` engines' limits (None: the defaults)."""
        if self.limits is None:
            return None
        if isinstance(self.limits, Limits):
            return [self.limits] * count
        items = list(cast("tuple[Limits, ...]", self.limits))  # one per engine, made so
        if len(items) != count:
            raise ValueError(f"limits: give one for all engines, or one per engine ({count})")
        return items

    def policy(self, hidden: Sequence[str] = ()) -> Policy:
        """The policy of an engine under these settings, hiding ``hidden``."""
        return Policy(
            self.chosen_mode,
            self.shared_limits or Limits(),
            bool(self.network),
            tuple(hidden),
            readable=tuple(self.readable),
        )

    @property
    def readable(self) -> tuple[str, ...]:
        """The paths given to ``read`` (none where unset)."""
        return tuple(os.fspath(p) for p in self.read or ())


@dataclass(frozen=True, slots=True)
class Outputs:
    """The files a run writes besides its results: ``record`` (each finished game's record
    appended), ``debug_log`` (every protocol line), ``stderr_dir`` (each engine's stderr)
    and ``html`` (the report, one page, at the end). None: not written. A tournament keeps
    its records in its output folder: it takes ``stderr_dir`` and ``html`` only."""

    record: Path | None = None
    debug_log: Path | None = None
    stderr_dir: Path | None = None
    html: Path | None = None

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None:
                if not isinstance(value, str | os.PathLike):
                    raise ValueError(f"{f.name} must be a path, not {value!r}")
                object.__setattr__(self, f.name, os.fspath(value))

    def path(self, name: str) -> str | None:
        """The path of one output (None: not written)."""
        value = getattr(self, name)
        return None if value is None else os.fspath(value)

    @property
    def files(self) -> list[str | None]:
        """The files the games write as they are played: the record and the debug log."""
        return [self.path("record"), self.path("debug_log")]

    def check(self) -> None:
        """`UnsafeOutput` (an ``OSError``) for an output the referee never writes (a device,
        a link, a file in a folder that does not exist), before anything is played or made."""
        check_outputs(self.files, [self.path("stderr_dir")])


# ------------------------------------------------------------------------------------------
# The loose keywords of before, kept for one minor version.

_GROUPS: Final = {
    "tc": ("clock", "Clock", "tc"),
    "move_timeout": ("clock", "Clock", "move_timeout"),
    "startup_timeout": ("clock", "Clock", "startup_timeout"),
    "time_margin": ("clock", "Clock", "time_margin"),
    "limits": ("sandbox", "Sandbox", "limits"),
    "network": ("sandbox", "Sandbox", "network"),
    "read": ("sandbox", "Sandbox", "read"),
    "record": ("outputs", "Outputs", "record"),
    "debug_log": ("outputs", "Outputs", "debug_log"),
    "stderr_dir": ("outputs", "Outputs", "stderr_dir"),
    "html": ("outputs", "Outputs", "html"),
}


def deprecated_keywords(
    function: str,
    old: Mapping[str, Any],
    clock: Clock | None,
    sandbox: Sandbox | SandboxMode | str | None,
    outputs: Outputs | None,
    allowed: Sequence[str] = tuple(_GROUPS),
) -> tuple[Clock | None, Sandbox | None, Outputs | None]:
    """The values of ``function``'s call, its deprecated keywords ``old`` (``tc=``,
    ``record=``..., and ``sandbox`` as a mode) folded into them, each with a
    ``DeprecationWarning`` that names its replacement. ``TypeError`` for a keyword it never
    took, or one given with the value that replaces it (``tc=`` with ``clock=``)."""
    given = {"clock": clock, "sandbox": sandbox, "outputs": outputs}
    moved: dict[str, dict[str, Any]] = {"clock": {}, "sandbox": {}, "outputs": {}}
    for name, value in old.items():
        if name not in _GROUPS or name not in allowed:
            raise TypeError(f"{function}() got an unexpected keyword argument {name!r}")
        group, kind, field = _GROUPS[name]
        if given[group] is not None and not isinstance(given[group], str):
            raise TypeError(
                f"{function}() got both {group}= and {name}=: give {field} in the {kind}"
            )
        _warn(f"{function}({name}=...) is deprecated: give {group}={kind}({field}=...)")
        if value is not None:
            moved[group][field] = value
    if isinstance(sandbox, str):  # a SandboxMode is a str too
        _warn(f"{function}(sandbox={str(sandbox)!r}) is deprecated: give sandbox=Sandbox(mode=...)")
        moved["sandbox"]["mode"] = sandbox
        sandbox = None
    tc = moved["clock"].get("tc")
    if isinstance(tc, TimeControl):  # its move limit and margin come with it, as before
        moved["clock"].update(Clock.of(tc).settings())
    return (
        Clock(**moved["clock"]) if moved["clock"] else clock,
        Sandbox(**moved["sandbox"]) if moved["sandbox"] else sandbox,
        Outputs(**moved["outputs"]) if moved["outputs"] else outputs,
    )


def _warn(message: str) -> None:
    warnings.warn(message, DeprecationWarning, stacklevel=4)


class RunOptionError(ValueError):
    """Options of a run that cannot be used together, or an SPRT it cannot run. ``option``
    names the one option at fault, where one is (as the caller spells it)."""

    def __init__(self, message: str, option: str | None = None) -> None:
        super().__init__(message)
        self.option = option


API_WORDS: Mapping[str, str] = {
    "sprt": "the SPRT",
    "dask": "dask",
    "debug_log": "debug_log",
    "affinity": "affinity",
}
"""How `check_run_options` names the options for a Python caller; ``ginref match`` names
them as its options (``--sprt``...)."""


def check_run_options(
    count: int,
    sprt: tuple[float, float, float, float] | None,
    dask: str | None,
    debug_log: object,
    affinity: bool,
    words: Mapping[str, str] = API_WORDS,
) -> None:
    """The one check of the options of a run that depend on each other, for `play_match`,
    ``ginref match`` and a tournament's config alike: `RunOptionError` naming them as
    ``words`` says."""
    from referee.results.stats import SPRT

    if sprt is not None:
        if count != 2:
            raise RunOptionError(f"{words['sprt']} compares two engines")
        try:
            SPRT(*sprt)
        except ValueError as exc:  # bounds it cannot use
            raise RunOptionError(str(exc), words["sprt"]) from None
    if dask is not None and debug_log is not None:
        raise RunOptionError(
            f"{words['debug_log']} is not available with {words['dask']}: the engines run on"
            " the workers"
        )
    if dask is not None and affinity:
        raise RunOptionError(
            f"{words['affinity']} pins the engines of local games; it is not available with"
            f" {words['dask']}"
        )
