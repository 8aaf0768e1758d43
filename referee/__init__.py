"""The referee: runs untrusted Gin Rummy engines, enforces the rules and keeps the score.

The names below are its Python API (docs/API.md), importable from ``referee`` itself:
``play_match`` and ``play_tournament`` run what ``ginref match`` and ``ginref tournament``
run and return the results, their settings given as values (``Clock``, ``Sandbox``,
``Outputs``); ``RunningEngine.popen`` drives one engine process from your own
code (``Engine`` is its old name).
They keep their meaning within a major version; every other module and name of the package
is private and may change. Each name is imported on first use, so ``import referee`` costs
nothing until then.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ginproto.lazy import lazy_names

if TYPE_CHECKING:
    from referee.api import (
        EngineStanding,
        GameOutcome,
        MatchInterrupted,
        MatchResult,
        MatchStart,
        SprtResult,
        TournamentInterrupted,
        TournamentStart,
        play_match,
        play_match_async,
        play_tournament,
        play_tournament_async,
        verify_tournament,
    )
    from referee.errors import RefereeError, ReportError
    from referee.results.standings import TournamentStandings
    from referee.results.stats import EloInterval, MeanInterval, PairStats
    from referee.results.store import StoreError
    from referee.scheduling.config import ConfigError, EngineEntry, TournamentConfig
    from referee.scheduling.loader import load_config
    from referee.seat.clock import TimeControl, TimeControlError
    from referee.seat.player import EngineId, EngineSpec, EngineSpecError
    from referee.seat.preflight import EngineNotReady
    from referee.seat.running import Engine, RunningEngine
    from referee.seat.sandbox import Limits, SandboxError, SandboxMode
    from referee.settings import Clock, Outputs, Sandbox

_WHERE = {
    "referee.api": (
        "EngineStanding",
        "GameOutcome",
        "MatchInterrupted",
        "MatchResult",
        "MatchStart",
        "SprtResult",
        "TournamentInterrupted",
        "TournamentStart",
        "play_match",
        "play_match_async",
        "play_tournament",
        "play_tournament_async",
        "verify_tournament",
    ),
    "referee.seat.clock": ("TimeControl", "TimeControlError"),
    "referee.seat.player": ("EngineId", "EngineSpec", "EngineSpecError"),
    "referee.seat.running": ("Engine", "RunningEngine"),
    "referee.errors": ("RefereeError", "ReportError"),
    "referee.seat.preflight": ("EngineNotReady",),
    "referee.seat.sandbox": ("Limits", "SandboxError", "SandboxMode"),
    "referee.results.stats": ("EloInterval", "MeanInterval", "PairStats"),
    "referee.results.store": ("StoreError",),
    "referee.scheduling.config": ("ConfigError", "EngineEntry", "TournamentConfig"),
    "referee.scheduling.loader": ("load_config",),
    "referee.results.standings": ("TournamentStandings",),
    "referee.settings": ("Clock", "Outputs", "Sandbox"),
}
__all__ = [
    "Clock",
    "ConfigError",
    "EloInterval",
    "Engine",
    "EngineEntry",
    "EngineId",
    "EngineNotReady",
    "EngineSpec",
    "EngineSpecError",
    "EngineStanding",
    "GameOutcome",
    "Limits",
    "MatchInterrupted",
    "MatchResult",
    "MatchStart",
    "MeanInterval",
    "Outputs",
    "PairStats",
    "RefereeError",
    "ReportError",
    "RunningEngine",
    "Sandbox",
    "SandboxError",
    "SandboxMode",
    "SprtResult",
    "StoreError",
    "TimeControl",
    "TimeControlError",
    "TournamentConfig",
    "TournamentInterrupted",
    "TournamentStandings",
    "TournamentStart",
    "load_config",
    "play_match",
    "play_match_async",
    "play_tournament",
    "play_tournament_async",
    "verify_tournament",
]


if not TYPE_CHECKING:  # type checkers see the imports above, and catch a misspelt name
    __getattr__, __dir__ = lazy_names("referee", _WHERE, globals(), __all__)
