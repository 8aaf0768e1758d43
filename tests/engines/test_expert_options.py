"""The expert's options as a user sets them, through the text protocol (``setoption``): each one
the engine declares must change how it plays, not only be accepted. ``Seed`` changes its
random choices (and the same seed repeats them), ``Movetime`` the effort of a decision.

The games are short (one hand or a few, to 10 points), at a small ``Movetime`` where chance
decides close choices."""

from __future__ import annotations

from engines.expert_engine import DEFAULT_MOVETIME, ExpertEngine
from engines.simple_engine import SimpleEngine
from ginproto.rules import Rules
from ginproto.table import play_game
from tests.protocol.test_sdk import TextPlayer


def moves(options: dict[str, int], deal: str = "options") -> list[str]:
    """The expert's game against the simple engine, with ``options`` set by ``setoption``."""
    expert = TextPlayer(ExpertEngine())
    try:
        for name, value in options.items():
            expert.send(f"setoption name {name} value {value}")
        log = play_game(Rules(target=10), [expert, SimpleEngine()], deal, 1)
    finally:
        expert.close()
    assert log.fault is None
    return [f"{s.player} {s.turn.move} {s.turn.card}" for h in log.hands for s in h.steps]


def test_the_handshake_declares_the_options() -> None:
    expert = TextPlayer(ExpertEngine())
    try:
        said = list(expert.received)
    finally:
        expert.close()
    declared = [line.split()[2] for line in said if line.startswith("option name ")]
    assert declared == ["Seed", "Movetime"]


def test_the_seed_option_changes_the_experts_choices_and_repeats_them() -> None:
    games = [moves({"Seed": seed, "Movetime": 1}) for seed in (1, 2, 3)]
    assert len({tuple(g) for g in games}) > 1, "every seed gave the same game"
    assert moves({"Seed": 2, "Movetime": 1}) == games[1]


def test_the_movetime_option_sets_the_effort_of_a_decision() -> None:
    """No budget at all (``Movetime`` 0: the fallback on sampled showdowns alone) plays
    another game than the default budget, from the same seed and deal."""
    default = moves({"Seed": 1})
    assert moves({"Seed": 1, "Movetime": DEFAULT_MOVETIME}) == default
    assert moves({"Seed": 1, "Movetime": 0}) != default
