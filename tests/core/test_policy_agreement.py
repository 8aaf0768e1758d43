"""One rules engine: the environment (``ginproto.env``) and the referee (``ginref`` with
``gin-policy`` engines) play the same game alike, in every variant.

A deterministic policy (tests/programs/policy_agreement.py: a choice hashed from the whole
observation and mask) plays whole games of seed S in the environment (``reset(seed=S)``, then
``reset()`` for the next game key), and plays every seat of a ``ginref match --seed S`` of as
many games through ``gin-policy``. Then, game by game:

- every decision showed the same observation and the same action mask: the policy logs a hash
  of both at each decision, in the referee's engines as in the environment;
- the same player made the same move at each step, the three-player sitter's advice included
  (the record's moves against the environment's agents and actions);
- every hand was dealt by the same player with the same roles, and ended with the same
  showdown, lay-offs, result and totals, and the game with the same end (the record's lines
  against the lines the record writer makes of the environment's game).

The referee runs bare (``--no-sandbox``): the sandbox has tests of its own, and the policy must
write its log where the test reads it.
"""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from click.testing import CliRunner

from ginproto.env import move_to_action, raw_env
from ginproto.record import (
    Advice,
    End,
    HandStart,
    LayOff,
    Play,
    Result,
    Show,
    Totals,
    end_event,
    entry_events,
    read_games,
)
from ginproto.rules import Rules
from referee.cli import cli

POLICY = Path(__file__).parents[1] / "programs" / "policy_agreement.py"
GIN_POLICY = str(Path(sys.executable).with_name("gin-policy"))

# (variant, rule options as ginref's --rule takes them, seed, games). A target of 50 keeps the
# games short (a few hands, a few hundred decisions) while each plays several hands, so that the
# observations also carry a previous hand's showdown and the scores. Two games of one match
# (keys 0 and 1: a later ``reset()``) show that nothing of a game reaches the next.
CASES = [
    ("standard", {"target": "50"}, 3, 2),
    ("oklahoma", {"target": "50"}, 3, 1),
    ("hollywood", {"target": "50"}, 3, 1),
    ("threehanded", {"target": "50"}, 3, 1),
    ("standard", {"target": "50", "big_gin": "true", "discard_taken": "true"}, 4, 1),
]

Step = tuple[str, int, int]  # ("play" or "advise", player number, action)


@dataclass
class Played:
    """One game in the environment: its steps, the hash of each decision's observation and
    mask, and the core's ``Game`` at the end."""

    steps: list[Step] = field(default_factory=list)
    seen: list[str] = field(default_factory=list)
    game: Any = None


def _policy() -> ModuleType:
    """The policy module, loaded from its file (its folder stays off sys.path)."""
    spec = importlib.util.spec_from_file_location("policy_agreement", POLICY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def play_in_the_environment(rules: Rules, seed: int, games: int) -> list[Played]:
    """Games ``0..games-1`` of ``seed`` in the environment, as a match of that seed plays them:
    ``reset(seed=seed)``, then ``reset()`` for each next key."""
    policy = _policy()
    env = raw_env(rules=rules, episode="game")
    out = []
    for key in range(games):
        env.reset(seed=seed if key == 0 else None)
        played = Played()
        for agent in env.agent_iter():
            observation, _, termination, truncation, _ = env.last()
            if termination or truncation:
                env.step(None)
                continue
            player = env.possible_agents.index(agent)
            game = env.game
            mover = game.seats[game.hand.to_move]
            kind = "play" if player == mover else "advise"  # the sitter acts before the captain
            action = int(policy.act(observation))
            played.seen.append(policy.digest(observation))
            played.steps.append((kind, player, action))
            env.step(action)
        played.game = env.game
        out.append(played)
    return out


@pytest.mark.parametrize(
    ("variant", "options", "seed", "games"),
    CASES,
    ids=["-".join([v, *(o for o in options if o != "target")]) for v, options, _, _ in CASES],
)
def test_the_environment_and_the_referee_play_the_same_games(
    variant: str, options: dict[str, str], seed: int, games: int, tmp_path: Path
) -> None:
    rules = Rules.from_params({"variant": variant, **options})
    expected = play_in_the_environment(rules, seed, games)

    record, log = tmp_path / "games.gin", tmp_path / "decisions.log"
    engine = f"{GIN_POLICY} {POLICY}:act"
    result = CliRunner().invoke(
        cli,
        [
            "match",
            *[engine] * rules.players,
            "--variant",
            variant,
            *[arg for name, value in options.items() for arg in ("--rule", f"{name}={value}")],
            "--seed",
            str(seed),
            "--games",
            str(games),
            "--record",
            str(record),
            "--env",
            f"GIN_POLICY_LOG={log}",
            "--no-sandbox",
            "--quiet",
        ],
    )
    assert result.exit_code == 0, result.output
    records = list(read_games(record))
    assert len(records) == games

    # Each decision: the same observation and mask (in the referee's order of decisions,
    # one game after the other).
    assert log.read_text().split() == [digest for p in expected for digest in p.seen]
    for key, (played, env_game) in enumerate(zip(records, expected, strict=True)):
        assert played.rules() == rules
        assert (played.header("Seed"), played.header("Key")) == (str(seed), str(key))
        # Each move: the same player, the same action, the advice in its place.
        moves = [
            ("advise" if isinstance(e, Advice) else "play", e.player, move_to_action(e.move))
            for e in played.events
            if isinstance(e, Play | Advice)
        ]
        assert moves == env_game.steps
        # Each hand: the same dealer and roles, showdown, lay-offs, result and totals; the end.
        game = env_game.game
        hands = [(e.number, e.dealer, e.roles) for e in played.events if isinstance(e, HandStart)]
        assert hands == [(e.number, e.dealer, e.roles) for e in game.entries]
        derived = [
            e for e in played.events if isinstance(e, Show | LayOff | Result | Totals | End)
        ]
        scored = [event for entry in game.entries for event in entry_events(entry, rules)]
        assert derived == [*scored, end_event(game)]
        assert game.is_over and len(game.entries) >= 2
