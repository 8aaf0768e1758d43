"""One seat against built-in engines, as a Gymnasium environment: ``ginproto/GinRummy-v0``.

``import ginproto.env`` registers it, so that::

    import gymnasium
    import ginproto.env  # noqa: F401 - registers ginproto/GinRummy-v0

    env = gymnasium.make("ginproto/GinRummy-v0", opponent="simple", variant="oklahoma")
    observation, info = env.reset(seed=7)

The learner plays one player (``player``, 0 by default) of the PettingZoo environment
``ginproto.env.raw_env``; every other player is a built-in engine (``random``, ``simple``,
``camper``, ``expert``) or any ``ginproto.table.Player`` object, played in process between
the learner's actions exactly as the table plays it: the same views, the same decisions, the
same notices at the end of each hand and game. The spaces, the observation and the action
table are the PettingZoo environment's (docs/ENV.md); so are the rewards, summed over the
steps between two of the learner's actions. The environment judges nothing: every move, the
engines' included, is played through the rules core.

An action outside the mask ends the episode, with ``illegal_reward`` (-1) for the learner and
the move and the reason in ``info["illegal"]``, as ``ginproto.env.env()`` rules it. A hand
that ends before the learner's first decision (an engine knocks on its first turn) is no
episode: ``reset`` deals the seed's next game instead and reports the learner's reward of each
such hand in ``info["skipped"]``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
import numpy.typing as npt

from ginproto.env import GYM_ENV_ID, NUM_ACTIONS, Episode, action_to_move, raw_env
from ginproto.game import Game, GameView
from ginproto.hand import IllegalMoveError
from ginproto.rules import Rules
from ginproto.sdk import Engine
from ginproto.table import Decision, Player, decision_of

__all__ = ["ENV_ID", "GinRummyEnv"]

ENV_ID = GYM_ENV_ID

Observation = dict[str, npt.NDArray[Any]]


def _player_of(opponent: str | Player) -> Player:
    if not isinstance(opponent, str):
        return opponent
    import engines  # the built-in engines sit above the core: loaded only when named

    return engines.in_process(opponent)


class GinRummyEnv(gymnasium.Env[Observation, np.int64]):
    """One learner against engines played in process (see the module)."""

    metadata = {"render_modes": ["human", "ansi"], "render_fps": 1}  # noqa: RUF012

    def __init__(
        self,
        opponent: str | Player | Sequence[str | Player] = "simple",
        variant: str = "standard",
        rules: Rules | None = None,
        episode: Episode = "hand",
        player: int = 0,
        illegal_reward: float = -1.0,
        render_mode: str | None = None,
    ) -> None:
        """``opponent``: a built-in engine's name or a ``Player``, or one for each other
        player in player-number order (the three-player game has two); ``player``: the
        learner's player number."""
        self.game_env = raw_env(variant=variant, rules=rules, episode=episode)
        self.rules = self.game_env.rules
        players = self.rules.players
        if not 0 <= player < players:
            raise ValueError(f"player must be 0 to {players - 1}, not {player}")
        others = [p for p in range(players) if p != player]
        given: list[str | Player] = (
            list(opponent)
            if isinstance(opponent, Sequence) and not isinstance(opponent, str)
            else [opponent]
        )
        if len(given) == 1:
            given = given * len(others)
        if len(given) != len(others):
            raise ValueError(f"{self.rules.variant} has {len(others)} opponents, not {len(given)}")
        self.opponents: dict[int, Player] = {
            p: _player_of(o) for p, o in zip(others, given, strict=True)
        }
        self.player = player
        self.agent = self.game_env.possible_agents[player]
        self.illegal_reward = illegal_reward
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of human, ansi or None, not {render_mode!r}")
        self.render_mode = render_mode
        self.game_env.render_mode = "ansi" if render_mode is not None else None
        self.observation_space = self.game_env.observation_space(self.agent)
        self.action_space = self.game_env.action_space(self.agent)
        self._entries = 0
        self._over = True

    # -- episodes -------------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        """Deal a new episode (``seed`` and ``options`` as ``raw_env.reset``) and play the
        engines up to the learner's first decision."""
        super().reset(seed=seed)
        self.game_env.reset(seed=seed, options=options)
        if seed is not None:  # the engines' own choices follow the seed too
            for other in self.opponents.values():
                if isinstance(other, Engine) and any(o.name == "Seed" for o in other.options):
                    other.set_option("Seed", str(seed % 2**31))
        skipped: list[float] = []
        while True:
            self._entries = 0
            self._over = False
            reward = self._play_others()
            if not self._over:
                break
            # The hand ended before the learner's first decision (a knock on the first turn
            # of the other player): its reward is reported, and the next game key is dealt.
            skipped.append(reward)
            self.game_env.reset()
        return self._observe(), {"skipped": skipped} if skipped else {}

    def step(self, action: Any) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        """Play the learner's action, then the engines' moves up to its next decision (or the
        end of the episode)."""
        if self._over:
            raise ValueError("the episode is over: reset() starts another")
        game_env = self.game_env
        move = action_to_move(int(action)) if 0 <= int(action) < NUM_ACTIONS else None
        try:
            if move is None:
                raise IllegalMoveError(f"no action {int(action)}")
            game_env.play(move)
        except IllegalMoveError as exc:
            self._over = True
            info = {"illegal": {"action": int(action), "move": str(move), "reason": str(exc)}}
            return self._observe(), self.illegal_reward, True, False, info
        reward = game_env.rewards[self.agent]
        self._notify()
        reward += self._play_others()
        terminated = game_env.terminations[self.agent]
        if terminated:
            self._over = True
            self._game_over()
        return self._observe(), float(reward), terminated, False, {}

    # -- the engines ----------------------------------------------------------------------
    def _play_others(self) -> float:
        """Play the engines' decisions until the learner's; the learner's rewards meanwhile."""
        game_env = self.game_env
        reward = 0.0
        while not game_env.terminations[self.agent]:
            agent = game_env.agent_selection
            player = game_env.possible_agents.index(agent)
            if player == self.player:
                break
            view, decision = self._decision(player)
            game_env.play(self.opponents[player].decide(view, decision))
            reward += game_env.rewards[self.agent]
            self._notify()
        if game_env.terminations[self.agent]:
            self._over = True
            self._game_over()
        return reward

    def _decision(self, player: int) -> tuple[GameView, Decision]:
        """What the table shows ``player`` and asks of it at this point."""
        game = self._game
        assert game.hand is not None
        view = game.view(player)
        roles = game.roles
        if roles is not None and player == roles.sitter and self.game_env.advice_due:
            return view, Decision.ADVICE
        advice = self.game_env.advice
        if roles is not None and player == roles.captain and advice is not None:
            view = dataclasses.replace(view, advice=advice)
        return view, decision_of(game.hand.phase)

    def _notify(self) -> None:
        """Tell the engines of each hand that ended since the last call (as the table does)."""
        game = self._game
        while self._entries < len(game.entries):
            entry = game.entries[self._entries]
            self._entries += 1
            for p, other in self.opponents.items():
                other.hand_over(p, entry)

    def _game_over(self) -> None:
        game = self._game
        if game.is_over:
            for p, other in self.opponents.items():
                other.game_over(p, game, None)

    @property
    def _game(self) -> Game:
        game = self.game_env.game
        assert game is not None
        return game

    # -- observing ------------------------------------------------------------------------
    def _observe(self) -> Observation:
        return self.game_env.observe(self.agent)

    def render(self) -> str | None:
        text = self.game_env.render()
        if self.render_mode == "human" and text is not None:
            print(text)
            return None
        return text

    def close(self) -> None:
        self.game_env.close()
