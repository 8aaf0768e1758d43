"""Tournaments: a TOML config, a plan of games, a backend that plays them, and standings.

The old home of these names, kept so that ``referee.tournament`` still imports them: each
idea is a module of ``referee.scheduling`` now (``config``, ``plan``, ``backends``,
``tournament``, ``standings``).

The pieces, in the order a run uses them:

- ``load_config`` / ``build_config``: a TOML file (or a table of the same shape) to a checked
  ``TournamentConfig``. ``TournamentConfig.settings()`` is its canonical form: everything that
  decides the games and their records, nothing else (not the concurrency, not the output
  directory). The store keeps it, and a resume compares it (``diff_settings``).
- ``plan``: the pairings (``round-robin``: every group of engines; ``gauntlet``: the first engine
  with every group of the others) and their games. Game ``r`` of every pairing is dealt from
  the same deck key, so every engine meets the same deals, and the seats rotate within each
  pairing (balanced when the games per pairing are a multiple of the players; otherwise each
  pairing starts one seat further, which balances them over the pairings). Pairings are
  interleaved, one game of each in turn, so partial results cover every pairing.
- ``play_job``: the pure job, ``(JobContext, GameJob) -> GameResult``: start the engines, play,
  stop them, return the record text and the result. ``LocalBackend`` runs the same jobs on
  local worker threads with the engines kept warm; another backend (a cluster) only needs to
  turn ``GameJob``s into ``GameResult``s.
- ``open_tournament`` / ``run_tournament``: create or resume the store, play what is pending,
  commit each game with its record, keep the records file.
- ``TournamentStandings``: per engine games, score, maximum-likelihood Elo with its interval,
  points per hand and faults; and the pairwise cross-table.
"""

from __future__ import annotations

from referee.defaults import (
    FOLDER_FILES as FOLDER_FILES,
)
from referee.defaults import (
    FORMATS as FORMATS,
)
from referee.results.report import (
    summary_from_json as summary_from_json,
)
from referee.scheduling.backends import (
    Backend as Backend,
)
from referee.scheduling.backends import (
    JobContext as JobContext,
)
from referee.scheduling.backends import (
    LocalBackend as LocalBackend,
)
from referee.scheduling.backends import (
    cpu_plan as cpu_plan,
)
from referee.scheduling.backends import (
    play_job as play_job,
)
from referee.scheduling.backends import (
    result_of as result_of,
)
from referee.scheduling.config import (
    DEFAULT_EVENT as DEFAULT_EVENT,
)
from referee.scheduling.config import (
    MAX_GAMES as MAX_GAMES,
)
from referee.scheduling.config import (
    ConfigError as ConfigError,
)
from referee.scheduling.config import (
    EngineEntry as EngineEntry,
)
from referee.scheduling.config import (
    TournamentConfig as TournamentConfig,
)
from referee.scheduling.config import (
    build_config as build_config,
)
from referee.scheduling.config import (
    check_size as check_size,
)
from referee.scheduling.config import (
    diff_settings as diff_settings,
)
from referee.scheduling.config import (
    load_config as load_config,
)
from referee.scheduling.config import (
    pairings as pairings,
)
from referee.scheduling.plan import (
    Plan as Plan,
)
from referee.scheduling.plan import (
    job_of as job_of,
)
from referee.scheduling.plan import (
    plan as plan,
)
from referee.scheduling.standings import (
    TournamentStandings as TournamentStandings,
)
from referee.scheduling.standings import (
    pairwise as pairwise,
)
from referee.scheduling.tournament import (
    SettingsChanged as SettingsChanged,
)
from referee.scheduling.tournament import (
    StoreDiffers as StoreDiffers,
)
from referee.scheduling.tournament import (
    open_tournament as open_tournament,
)
from referee.scheduling.tournament import (
    run_tournament as run_tournament,
)
from referee.scheduling.tournament import (
    stored_config as stored_config,
)
from referee.scheduling.tournament import (
    verify_tournament as verify_tournament,
)

__all__ = [
    "DEFAULT_EVENT",
    "FOLDER_FILES",
    "FORMATS",
    "MAX_GAMES",
    "Backend",
    "ConfigError",
    "EngineEntry",
    "JobContext",
    "LocalBackend",
    "Plan",
    "SettingsChanged",
    "StoreDiffers",
    "TournamentConfig",
    "TournamentStandings",
    "build_config",
    "check_size",
    "cpu_plan",
    "diff_settings",
    "job_of",
    "load_config",
    "open_tournament",
    "pairings",
    "pairwise",
    "plan",
    "play_job",
    "result_of",
    "run_tournament",
    "stored_config",
    "summary_from_json",
    "verify_tournament",
]
