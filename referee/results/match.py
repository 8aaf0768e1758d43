"""A match's result, as the Python API gives it and ``ginref match`` prints it.

``MatchResult`` holds every finished game (``GameOutcome``, made from a backend's ``Played``
game by ``outcome_of``), each engine's standing (``EngineStanding``), the two-engine figures
and the SPRT's verdict; ``MatchInterrupted`` carries the result of the games finished before a
Ctrl-C. ``match_result`` builds one from the match's ``Standings``. They are the one result
and the one interrupt of a match: the scheduling that plays it returns and raises them, and
``referee.api`` hands them on (``referee.MatchResult``, ``referee.MatchInterrupted``).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ginproto.game import GameEnd
from ginproto.rules import Variant
from ginproto.table import Fault
from ginproto.text import REASON_LIMIT, printable
from referee.results.played import Played
from referee.results.report import Standings, Tally, finite_json
from referee.results.stats import SPRT, EloInterval, MeanInterval, PairStats

__all__ = [
    "EngineStanding",
    "GameOutcome",
    "MatchInterrupted",
    "MatchResult",
    "SprtResult",
    "fault_json",
    "match_result",
    "outcome_of",
    "sprt_json",
]


@dataclass(frozen=True, slots=True)
class GameOutcome:
    """One finished game of a match. Engines are numbered by their place in ``engines`` (from
    0); players by their seat in the game (the seats rotate from game to game)."""

    number: int
    """The game's number in the match, from 1 (the record's ``[Game]`` header)."""
    key: int
    """Its deck sequence: the games of a duplicate set share one."""
    engines: tuple[int, ...]
    """The engine playing as each player: ``engines[player]``."""
    winner: int | None
    """The engine that won it, or None for a drawn game."""
    end: GameEnd
    """Why it ended: the target reached, the hand cap, or a forfeit."""
    hands: int
    """The hands played, drawn hands included."""
    scores: tuple[tuple[int, ...], ...]
    """The final scores: one tuple per game scored (three in Hollywood), each by engine."""
    fault: Fault | None
    """The ruling that forfeited it, if one did (``Fault.player`` is a player number)."""


@dataclass(frozen=True, slots=True)
class EngineStanding:
    """One engine's results in a match: the figures of a row of the result block."""

    name: str
    games: int
    wins: int
    losses: int
    draws: int
    score: float
    """(wins + draws / 2) / games."""
    hands: int
    """The hands it held cards in."""
    hands_won: int
    points_per_hand: MeanInterval | None
    """Points scored per hand it held cards in (0 for a hand lost or drawn), with its 95%
    interval; None before any hand."""
    faults: Mapping[str, int]
    """Games forfeited, by fault kind (``"timeout"``, ``"crash"``...)."""
    hollywood_games_won: int
    """Hollywood: the games won of the three scored in each series."""


@dataclass(frozen=True, slots=True)
class SprtResult:
    """Where the SPRT stopped: its log-likelihood ratio, its bounds and its verdict."""

    llr: float
    lower: float
    upper: float
    state: str
    """``"H0"``, ``"H1"`` (accepted) or ``"continue"`` (undecided)."""


@dataclass(frozen=True, slots=True)
class MatchResult:
    """A finished match. The figures are those ``ginref match`` prints; intervals are 95%.
    Two-engine figures (``elo``, ``los``, ``net_points_per_hand``, ``pairs``) are None in the
    three-player game and before they can be computed. An infinite end of an interval (or an
    infinite Elo, after a perfect record) is ``math.inf`` here and ``null`` in `to_json`."""

    names: tuple[str, ...]
    """Each engine's name, as shown: the one given, else the one it gives itself."""
    variant: Variant
    seed: int | str
    """The seed of the deals: the same seed gives the same deals."""
    games: tuple[GameOutcome, ...] = field(repr=False)
    """Every finished game, in order."""
    standings: tuple[EngineStanding, ...]
    """Each engine's results, in the order of ``names``."""
    elo: EloInterval | None
    """The first engine's Elo difference against the second, with its interval."""
    los: float | None
    """The likelihood that the first engine is the stronger, from 0 to 1."""
    net_points_per_hand: MeanInterval | None
    """The first engine's points per hand minus the second's, with its interval."""
    pairs: PairStats | None
    """With ``duplicate``: the pentanomial counts of the pairs and the Elo they give."""
    sprt: SprtResult | None
    stopped_early: bool
    """True when the SPRT decided before every game was played."""
    table: str = field(repr=False)
    """The result block and the standings table, as ``ginref match`` prints them."""
    _json: Mapping[str, Any] = field(repr=False, compare=False, hash=False)

    def to_json(self) -> dict[str, Any]:
        """What ``ginref match --json`` prints for this match (as a new dict each time)."""
        return copy.deepcopy(dict(self._json))


class MatchInterrupted(KeyboardInterrupt):
    """Ctrl-C during `play_match`: ``result`` holds the games finished before it (each one
    recorded whole; the games in progress are dropped), or None before game 1 was under way."""

    def __init__(self, result: MatchResult | None) -> None:
        super().__init__()
        self.result = result


def outcome_of(done: Played) -> GameOutcome:
    """A finished game as the match's result shows it: its engines by their place."""
    lineup = done.job.lineup
    game = done.log.game
    assert game.end is not None, "a played game is over"

    def by_engine(scores: Sequence[int]) -> tuple[int, ...]:
        out = [0] * len(lineup)
        for player, score in enumerate(scores):
            out[lineup[player]] = score
        return tuple(out)

    return GameOutcome(
        number=done.job.index + 1,
        key=done.job.key,
        engines=lineup,
        winner=None if game.winner is None else lineup[game.winner],
        end=game.end,
        hands=len(game.entries),
        scores=tuple(by_engine(game.final_scores(c)) for c in range(len(game.totals))),
        fault=done.log.fault,
    )


def sprt_json(sprt: SPRT | None) -> dict[str, Any] | None:
    """The SPRT's state as ``--json`` gives it: its log-likelihood ratio, bounds and verdict."""
    if sprt is None:
        return None
    return {"llr": sprt.llr, "lower": sprt.lower, "upper": sprt.upper, "state": sprt.state}


def fault_json(number: int, engine: int, name: str, fault: Fault) -> dict[str, Any]:
    """One forfeit for ``--json``: the game, the engine, the kind, the reason, its stderr."""
    return {
        "game": number,
        "engine": engine,
        "name": name,
        "kind": fault.kind.value,
        "reason": printable(fault.why, REASON_LIMIT),
        "detail": fault.detail,
        "hand": fault.hand,
        "stderr": list(fault.stderr),
    }


def _json(
    names: Sequence[str],
    variant: Variant,
    seed: int | str,
    outcomes: Sequence[GameOutcome],
    standings: Standings,
    sprt: SPRT | None,
    stopped_early: bool,
) -> dict[str, Any]:
    """The figures of ``ginref match --json``, built once for the command line and the Python
    API alike: the standings' JSON, the seed, the variant, the SPRT, whether the match
    stopped early, and every forfeit in game order. It has no infinities
    (``referee.results.report.finite_json``)."""
    out = standings.to_json()
    out["seed"] = seed
    out["variant"] = str(variant)
    out["sprt"] = sprt_json(sprt)
    out["stopped_early"] = stopped_early
    json: dict[str, Any] = finite_json(out)
    json["forfeits"] = [
        fault_json(g.number, g.engines[g.fault.player], names[g.engines[g.fault.player]], g.fault)
        for g in outcomes
        if g.fault is not None
    ]
    return json


def _standing(tally: Tally) -> EngineStanding:
    return EngineStanding(
        name=tally.name,
        games=tally.games,
        wins=tally.wins,
        losses=tally.losses,
        draws=tally.draws,
        score=tally.score,
        hands=tally.hands,
        hands_won=tally.hands_won,
        points_per_hand=tally.points.interval() if tally.points.n else None,
        faults=dict(sorted(tally.faults.items())),
        hollywood_games_won=tally.columns_won,
    )


def match_result(
    names: Sequence[str],
    variant: Variant,
    seed: int | str,
    outcomes: Sequence[GameOutcome],
    standings: Standings,
    sprt: SPRT | None,
    stopped_early: bool,
) -> MatchResult:
    """The result of the games ``outcomes`` between ``names``, whose ``standings`` they are."""
    two = standings.head_to_head() if len(names) == 2 else {}
    pairs = standings.pairs() if len(names) == 2 else None
    sprt_state = sprt_json(sprt)
    net = two.get("net_points_per_hand")
    return MatchResult(
        names=tuple(names),
        variant=variant,
        seed=seed,
        games=tuple(outcomes),
        standings=tuple(_standing(t) for t in standings.tallies),
        elo=EloInterval(**two["elo"]) if "elo" in two else None,
        los=two.get("los"),
        net_points_per_hand=None
        if net is None
        else MeanInterval(net["mean"], net["lo"], net["hi"]),
        pairs=None
        if pairs is None
        else PairStats(tuple(pairs["pentanomial"]), pairs["elo"], pairs["lo"], pairs["hi"]),
        sprt=None if sprt_state is None else SprtResult(**sprt_state),
        stopped_early=stopped_early,
        table="\n".join(standings.lines()),
        _json=_json(names, variant, seed, outcomes, standings, sprt, stopped_early),
    )
