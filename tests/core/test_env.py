"""ginproto.env, the PettingZoo environment: PettingZoo's own API and seed tests on every
variant, the action table both ways on random play, what an observation may hold, the
rewards, and the core's rulings passed through untouched."""

from __future__ import annotations

import hashlib
import os
import random
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

import pytest
from helpers import make_deck, thorough

from ginproto.cards import DECK, Card, shuffled_deck
from ginproto.game import GameView
from ginproto.hand import IllegalMoveError, Outcome
from ginproto.moves import Move, MoveKind
from ginproto.rules import Rules, Variant

if os.environ.get("CI", "").lower() not in ("1", "true", "yes"):
    pytest.importorskip("pettingzoo", reason="the env extra is missing: pip install -e '.[env]'")
    pytest.importorskip("numpy", reason="the env extra is missing: pip install -e '.[env]'")

import numpy as np
from pettingzoo.test import api_test, seed_test
from pettingzoo.utils import wrappers

from ginproto import env as ginenv

VARIANTS = [v.value for v in Variant]


def rules_players(variant: str) -> int:
    return Rules(variant=Variant(variant)).players


def _play(
    env: Any,
    rng: random.Random,
    knock_first: bool = False,
    finals: dict[str, float] | None = None,
    limit: int = 100_000,
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Play random legal actions (knocks first, if ``knock_first``), yielding each acting
    agent and its observation before it acts; ``finals`` gets each agent's episode reward."""
    for steps, agent in enumerate(env.agent_iter()):
        obs, reward, term, trunc, _ = env.last()
        if term or trunc:
            if finals is not None:
                finals[agent] = reward
            env.step(None)
            continue
        yield agent, obs
        legal = np.flatnonzero(obs["action_mask"]).tolist()
        knocks = [a for a in legal if a >= ginenv.KNOCK_BASE]
        env.step(rng.choice(knocks if knock_first and knocks else legal))
        assert steps < limit


# -- PettingZoo's own tests ---------------------------------------------------------------
@pytest.mark.parametrize("variant", VARIANTS)
def test_pettingzoo_api_test_passes_for_each_variant(variant: str) -> None:
    api_test(ginenv.env(variant=variant), num_cycles=300)


@pytest.mark.parametrize("variant", VARIANTS)
def test_pettingzoo_api_test_passes_for_whole_games(variant: str) -> None:
    api_test(ginenv.env(variant=variant, episode="game"), num_cycles=300)


@pytest.mark.parametrize("episode", ["hand", "game"])
@pytest.mark.parametrize("variant", VARIANTS)
def test_pettingzoo_seed_test_passes(variant: str, episode: str) -> None:
    seed_test(lambda: ginenv.env(variant=variant, episode=episode), num_cycles=300)


def _pettingzoo_wrapped(variant: str) -> Any:
    """The raw environment in PettingZoo's own three wrappers, as env() wrapped it before."""
    wrapped: Any = ginenv.raw_env(variant=variant)
    wrapped = wrappers.TerminateIllegalWrapper(wrapped, illegal_reward=-1)
    wrapped = wrappers.AssertOutOfBoundsWrapper(wrapped)
    return wrappers.OrderEnforcingWrapper(wrapped)


@pytest.mark.parametrize("variant", ["standard", "threehanded"])
def test_the_wrappers_behave_as_pettingzoos_own(variant: str) -> None:
    # env()'s wrappers read the raw environment's state directly: before a reset, along play
    # with now and then an illegal action, everything seen must be what PettingZoo's give.
    runs = []
    for make in (lambda: ginenv.env(variant=variant), lambda: _pettingzoo_wrapped(variant)):
        env = make()
        seen: list[Any] = [str(env), env.action_space("player_0")]
        for name in ("agents", "agent_selection", "rewards", "_cumulative_rewards", "infos"):
            try:
                seen.append(getattr(env, name))
            except AttributeError as error:
                seen.append(str(error))
        rng = random.Random(variant)
        for seed in range(8):
            env.reset(seed=seed)
            for agent in env.agent_iter():
                obs, reward, term, trunc, info = env.last()
                seen.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes()))
                seen.append((reward, term, trunc, info, env.rewards, env.terminations))
                seen.append((env.truncations, env.agents, env._cumulative_rewards))
                mask = obs["action_mask"]
                if term or trunc:
                    action = None
                elif rng.random() < 0.01:
                    action = rng.choice(np.flatnonzero(mask == 0).tolist())  # illegal
                else:
                    action = rng.choice(np.flatnonzero(mask).tolist())
                env.step(action)
        runs.append(seen)
    assert runs[0] == runs[1]


# -- the action table ---------------------------------------------------------------------
def test_the_action_table_is_one_move_per_action() -> None:
    assert len(ginenv.ACTIONS) == ginenv.NUM_ACTIONS == 109
    assert len(set(ginenv.ACTIONS)) == ginenv.NUM_ACTIONS
    for action in range(ginenv.NUM_ACTIONS):
        assert ginenv.move_to_action(ginenv.action_to_move(action)) == action
    assert ginenv.action_to_move(ginenv.TAKE) == Move.take()
    assert ginenv.action_to_move(ginenv.PILE) == Move.pile()
    card = Card.from_str("7h")
    assert ginenv.action_to_move(ginenv.DISCARD_BASE + card.index) == Move.discard(card)
    assert ginenv.action_to_move(ginenv.KNOCK_BASE + card.index) == Move.knock(card)
    assert ginenv.action_to_move(ginenv.BIG_GIN) == Move.big_gin()
    with pytest.raises(ValueError):
        ginenv.action_to_move(ginenv.NUM_ACTIONS)
    with pytest.raises(ValueError, match="declared melds"):
        ginenv.move_to_action(Move.from_str("knock 7h 2c-3c-4c"))


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_mask_is_exactly_the_cores_legal_moves_on_random_play(variant: str) -> None:
    # The big gin option on, and (every other hand) a knock limit that random play reaches.
    base = Rules(variant=Variant(variant), big_gin=True, discard_taken=variant == "oklahoma")
    envs = [ginenv.raw_env(rules=base), ginenv.raw_env(rules=replace(base, knock_limit=40))]
    rng = random.Random(variant)
    kinds: set[MoveKind] = set()
    for hand in range(thorough(200, 20)):
        env = envs[hand % 2]
        env.reset(seed=hand)
        for _, obs in _play(env, rng, knock_first=hand % 4 == 1):
            legal = env.legal_moves()
            actions = {ginenv.move_to_action(m) for m in legal}
            assert len(actions) == len(legal)
            assert set(np.flatnonzero(obs["action_mask"]).tolist()) == actions
            assert [ginenv.action_to_move(a) for a in sorted(actions)] == sorted(
                legal, key=ginenv.move_to_action
            )
            kinds.update(m.kind for m in legal)
    expected = {MoveKind.TAKE, MoveKind.PASS, MoveKind.STOCK, MoveKind.PILE, MoveKind.DISCARD}
    if variant != "oklahoma":  # its knock limit is the upcard's, often too low for random play
        expected.add(MoveKind.KNOCK)
    assert kinds >= expected


def test_big_gin_and_gin_are_played_by_the_core() -> None:
    # Player 1 (the non-dealer) holds As-4s, 5h-7h, 9c 9d 9h; the upcard 5s completes big gin.
    deck = make_deck("As 2s 3s 4s 5h 6h 7h 9c 9d 9h", "Kc Qd Jh 10c 8d 6c 4d 2h Kd Qh", "5s")
    env = ginenv.raw_env(rules=Rules(big_gin=True))
    env.reset(seed=0, options={"deck": deck, "dealer": 0})
    assert env.agent_selection == "player_1"
    env.step(ginenv.TAKE)
    mask = env.observe("player_1")["action_mask"]
    assert mask[ginenv.BIG_GIN] == 1 and mask[ginenv.KNOCK_BASE + Card.from_str("As").index]
    assert mask[ginenv.DISCARD_BASE + Card.from_str("5s").index] == 0  # just taken
    env.step(ginenv.BIG_GIN)
    game = env.game
    assert game is not None
    result = game.entries[-1].result
    assert result.outcome is Outcome.BIG_GIN
    assert env.rewards == {"player_1": result.points, "player_0": -result.points}
    # Without the option, knocking As (the run 2s-5s left) is gin: a knock with no deadwood.
    env = ginenv.raw_env()
    env.reset(seed=0, options={"deck": deck, "dealer": 0})
    env.step(ginenv.TAKE)
    assert env.observe("player_1")["action_mask"][ginenv.BIG_GIN] == 0
    env.step(ginenv.KNOCK_BASE + Card.from_str("As").index)
    assert env.game is not None
    assert env.game.entries[-1].result.outcome is Outcome.GIN


def test_an_illegal_action_is_the_cores_ruling() -> None:
    raw = ginenv.raw_env()
    raw.reset(seed=3)
    with pytest.raises(IllegalMoveError):
        raw.step(ginenv.STOCK)  # the first decision is the upcard offer
    wrapped = ginenv.env()
    wrapped.reset(seed=3)
    agent = wrapped.agent_selection
    wrapped.step(ginenv.STOCK)
    assert wrapped.rewards[agent] == -1
    assert all(wrapped.terminations.values())


# -- observations -------------------------------------------------------------------------
def _same_visible_deck(deck: Sequence[Card], fixed: set[int], seed: int) -> tuple[Card, ...]:
    """``deck`` with the cards at the positions outside ``fixed`` shuffled among themselves."""
    free = [i for i in range(52) if i not in fixed]
    cards = [deck[i] for i in free]
    random.Random(seed).shuffle(cards)
    out = list(deck)
    for i, card in zip(free, cards, strict=True):
        out[i] = card
    return tuple(out)


def _observations(
    variant: str, deck: Sequence[Card], actions: Sequence[int], watched: Sequence[str]
) -> list[np.ndarray[Any, Any]]:
    env = ginenv.raw_env(variant=variant)
    env.reset(seed=11, options={"deck": deck, "dealer": 0})
    seen = [env.observe(a)["observation"] for a in watched]
    for action in actions:
        env.step(action)
        seen += [env.observe(a)["observation"] for a in watched]
    return seen


def test_hidden_cards_do_not_change_an_observation() -> None:
    # Player 0 deals: it holds the cards at the odd positions 1-19; 20 is the upcard. The
    # opponent passes, player 0 passes, the opponent draws from the stock and discards the card
    # dealt at position 0 - kept in both deals, as is everything player 0 can see.
    deck = shuffled_deck(5, 0, 1)
    fixed = {*range(1, 20, 2), 20, 0}
    kept = deck[0]
    for seed in range(5):
        other = _same_visible_deck(deck, fixed, seed)
        assert other != deck
        actions = [ginenv.PASS, ginenv.PASS, ginenv.STOCK, ginenv.DISCARD_BASE + kept.index]
        a = _observations("standard", deck, actions, ["player_0"])
        b = _observations("standard", other, actions, ["player_0"])
        assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
        theirs_a = _observations("standard", deck, actions, ["player_1"])
        theirs_b = _observations("standard", other, actions, ["player_1"])
        assert not np.array_equal(theirs_a[0], theirs_b[0])  # the test can see a difference


def test_the_sitter_and_the_captain_see_nothing_of_the_box() -> None:
    # The box deals every hand (hand seat 0): its cards are at the odd positions. The captain
    # (hand seat 1) holds the even positions; the stock's top (21) is kept for its draw, and the
    # box's first card (1) for the box's discard.
    env = ginenv.raw_env(variant="threehanded")
    env.reset(seed=11)
    game = env.game
    assert game is not None and game.roles is not None
    roles = game.roles
    deck = shuffled_deck(6, 0, 1)
    captain_card = deck[0]
    fixed = {*range(0, 20, 2), 20, 21, 1}
    watched = [f"player_{roles.captain}", f"player_{roles.sitter}"]
    actions = [
        ginenv.PASS, ginenv.PASS,  # the sitter's advice, the captain's pass
        ginenv.PASS,  # the box
        ginenv.STOCK, ginenv.STOCK,  # advice and draw
        ginenv.DISCARD_BASE + captain_card.index, ginenv.DISCARD_BASE + captain_card.index,
        ginenv.STOCK, ginenv.DISCARD_BASE + deck[1].index,  # the box
    ]
    for seed in range(4):
        other = _same_visible_deck(deck, fixed, seed)
        a = _observations("threehanded", deck, actions, watched)
        b = _observations("threehanded", other, actions, watched)
        assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def test_the_observation_planes_hold_the_views_cards() -> None:
    env = ginenv.raw_env()
    env.reset(seed=2)
    game = env.game
    assert game is not None
    for agent, obs in _play(env, random.Random(2)):
        player = env.possible_agents.index(agent)
        view = game.view(player).hand
        planes = obs["observation"][: ginenv.ADVICE_OFFSET].reshape(ginenv.CARD_PLANES, 52)
        assert set(np.flatnonzero(planes[ginenv.PLANE_HAND]).tolist()) == {
            c.index for c in view.cards
        }
        assert set(np.flatnonzero(planes[ginenv.PLANE_PILE]).tolist()) == {
            c.index for c in view.pile
        }
        top = [view.pile[-1].index] if view.pile else []
        assert np.flatnonzero(planes[ginenv.PLANE_PILE_TOP]).tolist() == top
        scalars = obs["observation"][ginenv.SCALAR_OFFSET :]
        assert scalars[ginenv.S_STOCK] * 31 == pytest.approx(view.stock)
        assert scalars[ginenv.S_TO_DECIDE] == 1


def test_the_captain_is_shown_the_sitters_advice() -> None:
    env = ginenv.raw_env(variant="threehanded")
    env.reset(seed=4)
    game = env.game
    assert game is not None and game.roles is not None
    assert env.agent_selection == f"player_{game.roles.sitter}"
    sitter_obs = env.observe(env.agent_selection)["observation"]
    assert sitter_obs[ginenv.SCALAR_OFFSET + ginenv.S_ADVISING] == 1
    env.step(ginenv.TAKE)
    assert env.agent_selection == f"player_{game.roles.captain}"
    obs = env.observe(env.agent_selection)["observation"]
    advice = obs[ginenv.ADVICE_OFFSET : ginenv.SCALAR_OFFSET]
    assert np.flatnonzero(advice).tolist() == [ginenv.TAKE]


def _reference(
    env: Any, agent: str, hand: Any, advice: Move | None
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """What ``agent`` must be shown: ``encode_observation`` of the core's view (the sitter's
    ``advice`` shown to the captain; after the episode's last hand, the finished ``hand``'s
    view with the final scores) and the core's legal moves if the agent is to act."""
    game = env.game
    player = env.possible_agents.index(agent)
    acting = agent == env.agent_selection and not env.terminations.get(agent, True)
    if game.hand is not None:
        view = game.view(player)
        if advice is not None and game.roles is not None and player == game.roles.captain:
            view = replace(view, advice=advice)
    else:
        entry = game.entries[-1]
        view = GameView(
            player=player,
            hand=hand.view(entry.seats.index(player) if player in entry.seats else 1),
            seats=entry.seats,
            totals=entry.totals,
            closed=tuple(game.closed),
            hand_number=entry.number,
            roles=entry.roles,
        )
    observation = np.zeros(ginenv.OBSERVATION_SIZE, dtype=np.float32)
    entry = game.entries[-1] if game.entries else None
    advising = acting and game.roles is not None and player == game.roles.sitter
    ginenv.encode_observation(view, env.rules, entry, advising, acting, observation)
    mask = np.zeros(ginenv.NUM_ACTIONS, dtype=np.int8)
    if acting:
        mask[[ginenv.move_to_action(m) for m in game.hand.legal_moves()]] = 1
    return observation, mask


@pytest.mark.slow
@pytest.mark.parametrize("episode", ["hand", "game"])
@pytest.mark.parametrize("variant", VARIANTS)
def test_every_observation_is_the_reference_encoding_of_the_cores_view(
    variant: str, episode: str
) -> None:
    # The environment follows each hand turn by turn instead of encoding the whole view on
    # every step: along random play, every observation and mask it returns, of any agent at
    # any time (some observe several turns late), must be encode_observation's and the core's
    # legal moves, and stay as returned.
    env = ginenv.raw_env(variant=variant, episode=episode)
    rng = random.Random(f"{variant} {episode}")
    returned: list[tuple[dict[str, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]] = []
    checked = 0
    for seed in range(thorough(40, 6) if episode == "hand" else thorough(4, 1)):
        env.reset(seed=seed)
        game = env.game
        assert game is not None
        hand, advice = game.hand, None
        watching = seed % 3 != 2  # else only the end is observed, by agents never observed
        for steps, agent in enumerate(env.agent_iter()):
            if watching or env.terminations[agent]:
                others = [*rng.sample(env.agents, rng.randrange(len(env.agents) + 1)), agent]
            else:
                others = []
            for other in others:
                obs = env.observe(other)
                expected = _reference(env, other, hand, advice)
                assert np.array_equal(obs["observation"], expected[0]), (seed, steps, other)
                assert np.array_equal(obs["action_mask"], expected[1]), (seed, steps, other)
                returned.append((obs, expected[0], expected[1]))
                checked += 1
            if env.terminations[agent]:
                env.step(None)
                continue
            if not watching:
                mask = np.zeros(ginenv.NUM_ACTIONS, dtype=np.int8)
                mask[[ginenv.move_to_action(m) for m in env.legal_moves()]] = 1
                obs = {"action_mask": mask}
            legal = np.flatnonzero(obs["action_mask"]).tolist()
            knocks = [a for a in legal if a >= ginenv.KNOCK_BASE]
            action = rng.choice(knocks if knocks and rng.random() < 0.3 else legal)
            sitter = game.roles is not None and env.possible_agents.index(agent) == (
                game.roles.sitter
            )
            env.step(action)
            advice = ginenv.action_to_move(action) if sitter else None
            hand = game.hand or hand
    for obs, observation, mask in returned:  # the caller's to keep: never written again
        assert np.array_equal(obs["observation"], observation)
        assert np.array_equal(obs["action_mask"], mask)
    assert checked > 100


# The digest of every observation and mask of every agent along the seeded play below, as
# the environment encoded them before it followed hands turn by turn (each from the whole view
# with encode_observation, as gin-policy does). A change to the layout or the meaning of an
# observation changes it.
_PINNED = "b508aacafa495b3b1674d0ddf7efb34a9522cd7905c4c60eadf2b1e01f6955d6"


def test_observations_are_pinned() -> None:
    digest = hashlib.sha256()
    for variant in VARIANTS:
        rules = Rules(variant=Variant(variant), big_gin=True, target=60)
        for episode in ("hand", "game"):
            env = ginenv.raw_env(rules=rules, episode=episode)
            rng = random.Random(variant)
            for seed in range(3):
                env.reset(seed=seed)
                for _ in env.agent_iter():
                    for other in env.possible_agents:
                        obs = env.observe(other)
                        digest.update(obs["observation"].tobytes() + obs["action_mask"].tobytes())
                    obs, _, term, _, _ = env.last()
                    if term:
                        env.step(None)
                        continue
                    legal = np.flatnonzero(obs["action_mask"]).tolist()
                    knocks = [a for a in legal if a >= ginenv.KNOCK_BASE]
                    env.step(rng.choice(knocks if knocks and rng.random() < 0.5 else legal))
    assert digest.hexdigest() == _PINNED


def test_the_last_observation_shows_the_showdown() -> None:
    env = ginenv.raw_env()
    rng = random.Random(8)
    for seed in range(40):
        env.reset(seed=seed)
        for _ in _play(env, rng, knock_first=True):
            pass
        game = env.game
        assert game is not None
        result = game.entries[-1].result
        if result.outcome is Outcome.DRAW:
            continue
        for agent in env.possible_agents:
            obs = env.observe(agent)["observation"]
            planes = obs[: ginenv.ADVICE_OFFSET].reshape(ginenv.CARD_PLANES, 52)
            melded = {c.index for m in result.knocker_melds for c in m.cards}
            assert set(np.flatnonzero(planes[ginenv.PLANE_KNOCKER_MELDS]).tolist()) == melded
            scalars = obs[ginenv.SCALAR_OFFSET :]
            outcome = ginenv.S_OUTCOME + list(ginenv._OUTCOMES).index(result.outcome)
            assert scalars[outcome] == 1
        return
    pytest.fail("no hand ended in a knock")


# -- rewards and seeds --------------------------------------------------------------------
@pytest.mark.parametrize("variant", ["standard", "threehanded"])
def test_a_hand_pays_its_points_zero_sum(variant: str) -> None:
    env = ginenv.raw_env(variant=variant)
    rng = random.Random(1)
    scored = 0
    for seed in range(30):
        env.reset(seed=seed)
        rewards: dict[str, float] = {}
        for _ in _play(env, rng, knock_first=True, finals=rewards):
            pass
        game = env.game
        assert game is not None
        entry = game.entries[-1]
        assert len(rewards) == rules_players(variant)
        assert sum(rewards.values()) == 0
        if entry.winner is None:
            assert set(rewards.values()) == {0}
        else:
            scored += 1
            assert rewards[f"player_{entry.winner}"] == entry.result.points
    assert scored > 0


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_whole_game_pays_one_to_its_winner(variant: str) -> None:
    env = ginenv.raw_env(variant=variant, episode="game")
    env.reset(seed=7)
    rewards: dict[str, float] = {}
    for _ in _play(env, random.Random(7), knock_first=True, finals=rewards):
        pass
    game = env.game
    assert game is not None and game.is_over
    assert len(rewards) == rules_players(variant)
    assert sum(rewards.values()) == pytest.approx(0)
    if game.winner is not None:
        assert rewards[f"player_{game.winner}"] == 1
    if variant == "hollywood":
        assert all(game.closed)


def test_reset_with_a_seed_replays_everything() -> None:
    def run(rules: Rules) -> list[tuple[str, bytes]]:
        env = ginenv.raw_env(rules=rules, episode="game")
        env.reset(seed=21)
        play = _play(env, random.Random(0), knock_first=True)
        first = [(a, o["observation"].tobytes()) for a, o in play]
        env.reset()  # the seed's next game
        play = _play(env, random.Random(0), knock_first=True)
        second = [(a, o["observation"].tobytes()) for a, o in play]
        assert first != second
        return first + second

    rules = Rules(variant=Variant.OKLAHOMA, target=50)
    assert run(rules) == run(rules)


def test_rules_are_the_cores() -> None:
    env = ginenv.raw_env(rules=Rules(target=30, knock_limit=0), episode="game")
    env.reset(seed=1)
    obs = env.observe(env.agent_selection)["observation"]
    assert obs[ginenv.SCALAR_OFFSET + ginenv.S_KNOCK_LIMIT] == 0
    with pytest.raises(ValueError):
        ginenv.raw_env(variant="oklahoma", rules=Rules(variant=Variant.HOLLYWOOD))


def test_importing_ginproto_loads_no_numpy_or_pettingzoo() -> None:
    code = (
        "import sys, ginproto; from ginproto import Hand, Game; "
        "print(sorted(m for m in ('numpy', 'pettingzoo', 'gymnasium') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_deck_option_deals_that_deck() -> None:
    env = ginenv.raw_env()
    deck = DECK[::-1]
    env.reset(seed=0, options={"deck": deck, "dealer": 1})
    game = env.game
    assert game is not None and game.hand is not None
    assert game.hand.deck == tuple(deck) and game.hand.dealer == 1


def test_render_shows_the_table_as_text() -> None:
    env = ginenv.raw_env(variant="hollywood", render_mode="ansi")
    env.reset(seed=1)
    text = env.render()
    assert isinstance(text, str)
    assert "hollywood, hand 1" in text and "to act: player_" in text
    assert ginenv.raw_env().render() is None  # no render mode: nothing to show


def test_the_environment_pickles_with_its_rules() -> None:
    import pickle

    rules = Rules(variant=Variant.OKLAHOMA, target=50)
    copy = pickle.loads(pickle.dumps(ginenv.raw_env(rules=rules, episode="game")))
    assert copy.rules == rules and copy.episode == "game"
