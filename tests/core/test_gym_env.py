"""ginproto/GinRummy-v0, one seat against engines in process: Gymnasium's own ``check_env``,
the engines asked exactly what the table asks them, the rewards, and illegal actions."""

from __future__ import annotations

import os
from typing import Any

import pytest

from ginproto.game import GameView
from ginproto.melds import best_melds
from ginproto.moves import Move, MoveKind
from ginproto.rules import Rules, Variant

if os.environ.get("CI", "").lower() not in ("1", "true", "yes"):
    pytest.importorskip("gymnasium", reason="the env extra is missing: pip install -e '.[env]'")
    pytest.importorskip("numpy", reason="the env extra is missing: pip install -e '.[env]'")

import gymnasium
import numpy as np
from gymnasium.utils.env_checker import check_env

import ginproto.env as ginenv
from engines import in_process
from engines.random_engine import RandomEngine
from engines.simple_engine import SimpleEngine
from ginproto.gym_env import GinRummyEnv
from ginproto.table import Decision, play_game

VARIANTS = [v.value for v in Variant]


@pytest.mark.parametrize("variant", VARIANTS)
def test_gymnasium_check_env_passes(variant: str) -> None:
    env = gymnasium.make("ginproto/GinRummy-v0", opponent="simple", variant=variant)
    check_env(env.unwrapped)
    env.close()


def test_make_registers_one_id_with_its_arguments() -> None:
    env = gymnasium.make("ginproto/GinRummy-v0", opponent="camper", variant="oklahoma", player=1)
    inner: Any = env.unwrapped
    assert isinstance(inner, GinRummyEnv)
    assert inner.rules == Rules(variant=Variant.OKLAHOMA)
    assert inner.agent == "player_1"
    assert list(inner.opponents) == [0]


def _short(variant: str) -> Rules:
    """The variant's rules, with games short enough for random players: a target of 10."""
    return Rules(variant=Variant(variant), target=10)


def _mirror_play(variant: str, seed: int, player: int) -> tuple[Any, float]:
    """One whole game: the learner plays what a random engine would play in its seat,
    against random engines; the game, and the learner's total reward."""
    env = GinRummyEnv(opponent="random", rules=_short(variant), episode="game", player=player)
    mirror = RandomEngine()
    mirror.set_option("Seed", str(seed))
    observation, _ = env.reset(seed=seed)
    total, done = 0.0, False
    while not done:
        view, decision = env._decision(player)
        move = mirror.decide(view, decision)
        action = ginenv.move_to_action(move)
        assert observation["action_mask"][action] == 1
        observation, reward, done, truncated, _ = env.step(action)
        assert not truncated
        total += reward
    return env.game_env.game, total


@pytest.mark.parametrize(
    ("variant", "player"), [("standard", 0), ("oklahoma", 1), ("hollywood", 0), ("threehanded", 2)]
)
def test_the_engines_are_asked_what_the_table_asks_them(variant: str, player: int) -> None:
    """Random engines answer from the whole view and the decision: the same game as the
    table's, hand by hand, shows that the environment asks them exactly what it asks."""
    rules = _short(variant)
    for seed in (11,):
        game, total = _mirror_play(variant, seed, player)
        players = [RandomEngine() for _ in range(rules.players)]
        for engine in players:
            engine.set_option("Seed", str(seed))
        log = play_game(rules, players, seed)
        assert log.fault is None
        assert [e.result for e in game.entries] == [e.result for e in log.game.entries]
        assert game.totals == log.game.totals
        assert game.winner == log.game.winner
        share = 1.0 / (rules.players - 1)
        assert total == (1.0 if game.winner == player else -share)


def test_a_hands_reward_is_the_learners_points() -> None:
    env = GinRummyEnv(opponent="simple", variant="standard", episode="hand")
    rng = np.random.default_rng(5)
    for seed in range(20):
        observation, _ = env.reset(seed=seed)
        total, done = 0.0, False
        while not done:
            action = rng.choice(np.flatnonzero(observation["action_mask"]))
            observation, reward, done, _, _ = env.step(action)
            total += reward
        entry = env.game_env.game.entries[-1]
        expected = 0 if entry.winner is None else entry.result.points
        assert total == (expected if entry.winner == 0 else -expected)


def test_a_hand_over_before_the_learner_decides_is_reported_and_skipped() -> None:
    """Seed 15229585: simple takes the first upcard and knocks at once, for 47 points."""
    env = GinRummyEnv(opponent="simple")
    observation, info = env.reset(seed=15229585)
    assert info == {"skipped": [-47.0]}
    assert observation["action_mask"].any()
    game = env.game_env.game
    assert game is not None and game.hand is not None and not game.entries
    again = GinRummyEnv(opponent="simple", episode="game")
    _, info = again.reset(seed=15229585)  # in a whole game the next hand follows
    assert info == {} and again.game_env.game is not None
    assert len(again.game_env.game.entries) == 1


def test_an_illegal_action_ends_the_episode_with_a_reason() -> None:
    env = GinRummyEnv(opponent="simple")
    observation, _ = env.reset(seed=3)
    illegal = int(np.flatnonzero(observation["action_mask"] == 0)[0])
    _, reward, terminated, truncated, info = env.step(illegal)
    assert (reward, terminated, truncated) == (-1.0, True, False)
    assert info["illegal"]["action"] == illegal and info["illegal"]["reason"]
    harsh = GinRummyEnv(opponent="simple", illegal_reward=-5.0)
    harsh.reset(seed=3)
    assert harsh.step(illegal)[1] == -5.0
    with pytest.raises(ValueError, match="reset"):
        env.step(0)
    for out_of_range in (-1, ginenv.NUM_ACTIONS):
        env.reset(seed=3)
        _, reward, terminated, _, info = env.step(out_of_range)
        assert terminated and info["illegal"]["move"] == "None"


class _Declaring(SimpleEngine):
    """Simple, declaring the melds of each knock (and of each advice to knock): the best
    melds of the cards it keeps, and every move it answers is noted."""

    def __init__(self) -> None:
        super().__init__()
        self.moves: list[Move] = []

    def discard(self, view: GameView) -> Move:
        move = super().discard(view)
        if move.kind is MoveKind.KNOCK and move.card is not None and move.melds is None:
            kept = [c for c in view.hand.cards if c != move.card]
            move = Move.knock(move.card, best_melds(kept).melds)
        self.moves.append(move)
        return move


def _never_knock(observation: dict[str, Any]) -> int:
    """Pass, draw from the stock, discard the last card the mask allows: never a knock, so
    that the engines end the hands."""
    mask = observation["action_mask"]
    for action in (ginenv.PASS, ginenv.STOCK):
        if mask[action]:
            return action
    return int(np.flatnonzero(mask[: ginenv.KNOCK_BASE])[-1])


def test_an_opponents_declared_melds_are_played_as_declared() -> None:
    """An engine's knock with declared melds is played with them: the hand records the knock
    as declared, and the showdown lays out the knocker's cards in those melds."""
    declaring = _Declaring()
    env = GinRummyEnv(opponent=declaring, episode="hand")
    declared = 0
    for seed in range(4):
        observation, _ = env.reset(seed=seed)
        done = False
        while not done:
            observation, _, done, _, _ = env.step(_never_knock(observation))
        game = env.game_env.game
        assert game is not None
        result = game.entries[-1].result
        knock = declaring.moves[-1]
        if result.knocker is not None and knock.melds is not None:
            played = env.game_env._hand
            assert played is not None and played.history[-1].move == knock
            assert result.knocker_melds == knock.melds
            declared += 1
    assert declared > 0


def test_a_sitters_advice_with_declared_melds_is_shown_as_its_knock() -> None:
    """The learner as captain sees a sitter's advice to knock with declared melds as the
    knock's action (the action table has no melds)."""
    sitter = _Declaring()  # player 2; player 0 is the learner
    env = GinRummyEnv(opponent=["simple", sitter], variant="threehanded", episode="game")
    for seed in range(6):
        observation, _ = env.reset(seed=seed)
        done = False
        while not done:
            game = env.game_env.game
            assert game is not None and game.roles is not None
            advice = env.game_env.advice
            if game.roles.captain == 0 and advice is not None and advice.melds is not None:
                assert advice.card is not None and game.roles.sitter == 2
                knock = ginenv.move_to_action(Move.knock(advice.card))
                start = ginenv.ADVICE_OFFSET
                advised = observation["observation"][start : start + ginenv.NUM_ACTIONS]
                assert np.flatnonzero(advised).tolist() == [knock]
                return
            observation, _, done, _, _ = env.step(_never_knock(observation))
    pytest.fail("no sitter advised the learner to knock with melds in six games")


def test_opponents_by_name_object_or_one_per_seat() -> None:
    with pytest.raises(ValueError, match="random, simple, expert, camper"):
        GinRummyEnv(opponent="stockfish")
    with pytest.raises(ValueError, match="2 opponents, not 3"):
        GinRummyEnv(opponent=["simple"] * 3, variant="threehanded")
    with pytest.raises(ValueError, match="player must be 0 to 1"):
        GinRummyEnv(player=2)
    env = GinRummyEnv(opponent=["simple", in_process("camper")], variant="threehanded")
    assert [type(p).__name__ for p in env.opponents.values()] == ["SimpleEngine", "CamperEngine"]
    observation, _ = env.reset(seed=1)
    assert observation["action_mask"].any()


class _Recorder(SimpleEngine):
    """Simple, noting every view and decision it is given."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[tuple[GameView, Decision]] = []

    def decide(self, view: GameView, decision: Decision) -> Move:
        self.asked.append((view, decision))
        return super().decide(view, decision)


def test_the_learner_as_sitter_advises_the_captain() -> None:
    """In the three-player game the learner as sitter is asked for advice: its mask is the
    captain's legal moves, and its advice reaches the captain's view."""
    for seed in range(30):
        box, captain = _Recorder(), _Recorder()
        env = GinRummyEnv(opponent=[box, captain], variant="threehanded", player=2)
        observation, _ = env.reset(seed=seed)
        game = env.game_env.game
        assert game is not None and game.roles is not None
        if game.roles.sitter != 2:
            continue
        by_player = {0: box, 1: captain}
        engine = by_player[game.roles.captain]
        assert env.game_env.advice_due and game.hand is not None
        legal = {ginenv.move_to_action(m) for m in game.hand.legal_moves()}
        assert set(np.flatnonzero(observation["action_mask"]).tolist()) == legal
        advice = max(legal)
        before = len(engine.asked)
        env.step(advice)
        view, decision = engine.asked[before]
        assert decision is not Decision.ADVICE
        assert view.advice == ginenv.action_to_move(advice)
        return
    pytest.fail("no seed of thirty made player 2 the sitter")
