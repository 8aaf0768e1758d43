"""A PettingZoo AEC environment over the rules core: ``ginproto.env.env(variant=...)``.

The environment is a thin layer over ``Game`` and ``Hand``. It judges nothing itself: the
legal moves (the action mask) are ``Hand.legal_moves()``, every action is played with
``Game.apply`` (a knock's melds are chosen by the core, the lay-offs and the score too), and
each observation is encoded from what the core lets one player see (``Game.view``, and the
finished hand's ``Entry`` that every player is shown). Chance comes from the seed through
the table's own functions (``ginproto.table``), so ``reset(seed=s)`` deals what a referee
game of seed ``s`` deals.

Needs the optional extra ``env`` (``pip install 'ginproto[env]'``: PettingZoo, Gymnasium,
NumPy); ``import ginproto`` alone never loads them. docs/ENV.md documents the spaces, the
action table and the rewards.
"""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils import AgentSelector, wrappers

from ginproto.cards import DECK, Card, format_cards, parse_deck
from ginproto.game import Entry, Game, GameView
from ginproto.hand import Hand, HandView, Outcome, Phase
from ginproto.moves import Move, MoveKind
from ginproto.rules import Rules, Variant
from ginproto.table import first_dealer, hand_deck, role_draw

__all__ = [
    "ACTIONS",
    "NUM_ACTIONS",
    "OBSERVATION_SIZE",
    "action_to_move",
    "encode_observation",
    "env",
    "move_to_action",
    "raw_env",
]

# -- the action table ---------------------------------------------------------------------
TAKE, PASS, STOCK, PILE = 0, 1, 2, 3
DISCARD_BASE = 4
"""``DISCARD_BASE + card.index``: discard that card (52 actions)."""
KNOCK_BASE = DISCARD_BASE + 52
"""``KNOCK_BASE + card.index``: discard that card and knock, the core choosing the melds
(52 actions). A knock that leaves no deadwood is gin."""
BIG_GIN = KNOCK_BASE + 52
"""Big gin (the ``big_gin`` option): all eleven cards melded, no discard."""
NUM_ACTIONS = BIG_GIN + 1

ACTIONS: tuple[Move, ...] = (
    Move.take(),
    Move.pass_(),
    Move.stock(),
    Move.pile(),
    *(Move.discard(card) for card in DECK),
    *(Move.knock(card) for card in DECK),
    Move.big_gin(),
)
"""The move of each action number."""

_ACTION_OF: dict[Move, int] = {move: action for action, move in enumerate(ACTIONS)}


def action_to_move(action: int) -> Move:
    """The move of an action number. Raises ``ValueError`` outside ``0..NUM_ACTIONS-1``."""
    if not 0 <= action < NUM_ACTIONS:
        raise ValueError(f"no action {action}: actions are 0 to {NUM_ACTIONS - 1}")
    return ACTIONS[action]


def move_to_action(move: Move) -> int:
    """The action number of a move the core lists as legal. Raises ``ValueError`` for a move
    with declared melds (the environment's knocks leave the melds to the core)."""
    try:
        return _ACTION_OF[move]
    except KeyError:
        raise ValueError(f"{move} has no action: declared melds are chosen by the core") from None


# -- the observation ----------------------------------------------------------------------
# Card planes, 52 values each (one per card, by ``card.index``). "Own" is the observing
# player's hand seat (the sitter's: the captain's seat, whose cards the sitter sees), "other"
# the opposing hand seat.
PLANE_HAND = 0  # the seat's cards
PLANE_PILE = 1  # the cards in the discard pile
PLANE_PILE_TOP = 2  # the top of the pile
PLANE_PILE_ORDER = 3  # (position + 1) / 52 of each pile card, the bottom card at position 0
PLANE_UPCARD = 4  # the first upcard
PLANE_OWN_DISCARDS = 5  # the cards the seat discarded this hand (a knock's discard included)
PLANE_OTHER_DISCARDS = 6
PLANE_OWN_TAKEN = 7  # the cards the seat took from the pile (the first upcard included)
PLANE_OTHER_TAKEN = 8
PLANE_OWN_PASSED = 9  # the upcard the seat passed, and pile tops it left for a stock draw
PLANE_OTHER_PASSED = 10
# The showdown of the last finished hand of the game, as every player is shown it (zeros
# before the first one, and for a drawn hand).
PLANE_KNOCKER_MELDS = 11
PLANE_KNOCKER_DEADWOOD = 12
PLANE_LAYOFFS = 13  # the defender's cards laid off on the knocker's melds
PLANE_DEFENDER_MELDS = 14
PLANE_DEFENDER_DEADWOOD = 15
CARD_PLANES = 16

ADVICE_OFFSET = CARD_PLANES * 52
"""``NUM_ACTIONS`` values: one-hot, the sitter's advice shown to the three-player captain."""
SCALAR_OFFSET = ADVICE_OFFSET + NUM_ACTIONS
# The scalars, by offset from SCALAR_OFFSET. "Players by position" are the observer, then the
# next player number, then the one after (three-player game), each of the three slots.
S_PHASE = 0  # 4: one-hot offer, draw, discard, over
S_ADVISING = 4  # 1 when this player is asked for advice (the three-player sitter)
S_TO_DECIDE = 5  # 1 when this player is the agent to act
S_DEALER = 6  # 1 when the observer's hand seat dealt
S_STOCK = 7  # cards left in the stock / 31
S_KNOCK_LIMIT = 8  # the hand's knock limit / 10
S_TURNS = 9  # turns taken in the hand / turn_cap
S_ROLE = 10  # 3: one-hot box, captain, sitter (zeros in a two-player game)
S_SCORES = 13  # 9: per game column (3), the players by position: total / target
S_CLOSED = 22  # 3: per game column, 1 when closed
S_HAND_NUMBER = 25  # the hand number / hand_cap
S_OUTCOME = 26  # 5: the last finished hand: one-hot knock, gin, big gin, undercut, draw
S_KNOCKER = 31  # 3: its knocker, players by position
S_WINNER = 34  # 3: its winner, players by position
S_POINTS = 37  # its points / target
SCALARS = 38
OBSERVATION_SIZE = SCALAR_OFFSET + SCALARS

_PHASES = (Phase.OFFER, Phase.DRAW, Phase.DISCARD, Phase.OVER)
_OUTCOMES = (Outcome.KNOCK, Outcome.GIN, Outcome.BIG_GIN, Outcome.UNDERCUT, Outcome.DRAW)
_KIND_STOCK, _KIND_DISCARD, _KIND_KNOCK = MoveKind.STOCK, MoveKind.DISCARD, MoveKind.KNOCK
_KIND_PASS = MoveKind.PASS
_OWN_TAKEN, _OTHER_TAKEN = PLANE_OWN_TAKEN * 52, PLANE_OTHER_TAKEN * 52
_OWN_DISCARDS, _OTHER_DISCARDS = PLANE_OWN_DISCARDS * 52, PLANE_OTHER_DISCARDS * 52
_OWN_PASSED, _OTHER_PASSED = PLANE_OWN_PASSED * 52, PLANE_OTHER_PASSED * 52
_PILE_ORDER = (np.arange(1, 53, dtype=np.float32) / 52).astype(np.float32)
_OBS_HIGH = 1e9  # scores over the target are not capped

Episode = Literal["hand", "game"]
_RENDER_MODES = ("human", "ansi")


def encode_observation(
    view: GameView,
    rules: Rules,
    entry: Entry | None,
    advising: bool,
    to_decide: bool,
    out: npt.NDArray[np.float32],
) -> None:
    """Write one player's observation into ``out`` (``OBSERVATION_SIZE`` zeros) from what the
    core lets that player see: ``view`` (``Game.view``, with the sitter's advice to a captain),
    ``entry`` (the game's last finished hand, or ``None`` before the first), whether the player
    is asked for advice (the three-player sitter) and whether it is the agent to act. The
    environment and ``gin-policy`` both observe through this function."""
    hand: HandView = view.hand
    planes = out[:ADVICE_OFFSET].reshape(CARD_PLANES, 52)
    scalars = out[SCALAR_OFFSET:]
    seat = hand.seat
    # The flat offsets (plane * 52 + card index) of the card planes' ones, set at once.
    ones = [PLANE_HAND * 52 + card.index for card in hand.cards]
    pile_indexes = [card.index for card in hand.pile]
    if pile_indexes:
        ones += [PLANE_PILE * 52 + i for i in pile_indexes]
        ones.append(PLANE_PILE_TOP * 52 + pile_indexes[-1])
        planes[PLANE_PILE_ORDER, pile_indexes] = _PILE_ORDER[: len(pile_indexes)]
    upcard = hand.upcard
    if upcard is not None:
        ones.append(PLANE_UPCARD * 52 + upcard.index)
    # The history as the seat saw it; the pile is followed to know which top a player left.
    pile: list[int] = [upcard.index] if upcard is not None else []
    turns = 0
    for turn in hand.history:
        own = turn.seat == seat
        kind = turn.move.kind
        if kind is _KIND_STOCK:
            turns += 1
            if pile:
                ones.append((_OWN_PASSED if own else _OTHER_PASSED) + pile[-1])
        elif kind is _KIND_DISCARD or kind is _KIND_KNOCK:
            index = turn.move.card.index  # type: ignore[union-attr]
            ones.append((_OWN_DISCARDS if own else _OTHER_DISCARDS) + index)
            pile.append(index)
        elif kind is _KIND_PASS:
            if pile:
                ones.append((_OWN_PASSED if own else _OTHER_PASSED) + pile[-1])
        elif turn.card is not None:  # take, pile: a card from the pile, seen by every seat
            turns += 1
            ones.append((_OWN_TAKEN if own else _OTHER_TAKEN) + turn.card.index)
            if pile:
                pile.pop()
    out[ones] = 1.0
    advice = view.advice
    if advice is not None:  # a knock's declared melds are not shown: the action has none
        out[ADVICE_OFFSET + _ACTION_OF[Move(advice.kind, advice.card)]] = 1.0

    players = rules.players
    me = view.player
    by_position = {(me + i) % players: i for i in range(players)}
    scalars[S_PHASE + _PHASES.index(hand.phase)] = 1.0
    scalars[S_ADVISING] = float(advising)
    scalars[S_TO_DECIDE] = float(to_decide)
    scalars[S_DEALER] = float(hand.dealer == seat)
    scalars[S_STOCK] = hand.stock / 31
    scalars[S_KNOCK_LIMIT] = hand.knock_limit / 10
    scalars[S_TURNS] = turns / rules.turn_cap
    if view.roles is not None:
        scalars[S_ROLE + ("box", "captain", "sitter").index(str(view.roles.role_of(me)))] = 1.0
    for column, totals in enumerate(view.totals):
        for player, total in enumerate(totals):
            scalars[S_SCORES + 3 * column + by_position[player]] = total / rules.target
        scalars[S_CLOSED + column] = float(view.closed[column])
    scalars[S_HAND_NUMBER] = view.hand_number / rules.hand_cap
    if entry is not None:
        result = entry.result
        scalars[S_OUTCOME + _OUTCOMES.index(result.outcome)] = 1.0
        if result.knocker is not None:
            scalars[S_KNOCKER + by_position[entry.seats[result.knocker]]] = 1.0
        if entry.winner is not None:
            scalars[S_WINNER + by_position[entry.winner]] = 1.0
        scalars[S_POINTS] = result.points / rules.target
        for meld in result.knocker_melds:
            for card in meld.cards:
                planes[PLANE_KNOCKER_MELDS, card.index] = 1.0
        for card in result.knocker_deadwood:
            planes[PLANE_KNOCKER_DEADWOOD, card.index] = 1.0
        if result.defender is not None:
            for layoff in result.defender.layoffs:
                planes[PLANE_LAYOFFS, layoff.card.index] = 1.0
            for meld in result.defender.melds:
                for card in meld.cards:
                    planes[PLANE_DEFENDER_MELDS, card.index] = 1.0
            for card in result.defender.deadwood_cards:
                planes[PLANE_DEFENDER_DEADWOOD, card.index] = 1.0


# -- the environment ----------------------------------------------------------------------
def env(
    variant: str = "standard",
    rules: Rules | None = None,
    episode: Episode = "hand",
    render_mode: str | None = None,
) -> Any:
    """The environment with PettingZoo's standard wrappers (as its classic games have them):
    an illegal action ends the episode with -1 for the player who made it."""
    wrapped: Any = raw_env(variant=variant, rules=rules, episode=episode, render_mode=render_mode)
    wrapped = wrappers.TerminateIllegalWrapper(wrapped, illegal_reward=-1)
    wrapped = wrappers.AssertOutOfBoundsWrapper(wrapped)
    return wrappers.OrderEnforcingWrapper(wrapped)


class raw_env(AECEnv, EzPickle):  # type: ignore[misc]
    """Gin rummy as a PettingZoo AEC environment (see the module and docs/ENV.md)."""

    metadata = {  # noqa: RUF012 - PettingZoo reads it as a plain class attribute
        "render_modes": list(_RENDER_MODES),
        "name": "ginproto_gin_rummy_v0",
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(
        self,
        variant: str = "standard",
        rules: Rules | None = None,
        episode: Episode = "hand",
        render_mode: str | None = None,
    ) -> None:
        EzPickle.__init__(self, variant, rules, episode, render_mode)
        super().__init__()
        if rules is None:
            rules = Rules(variant=Variant(variant))
        elif rules.variant is not Variant(variant) and variant != "standard":
            raise ValueError(f"rules are for {rules.variant}, not {variant}")
        if episode not in ("hand", "game"):
            raise ValueError(f"episode must be 'hand' or 'game', not {episode!r}")
        if render_mode is not None and render_mode not in _RENDER_MODES:
            raise ValueError(f"render_mode must be one of human, ansi or None, not {render_mode!r}")
        self.rules = rules
        self.episode: Episode = episode
        self.render_mode = render_mode
        self.possible_agents = [f"player_{p}" for p in range(rules.players)]
        self.agents = self.possible_agents[:]
        self.action_spaces = {a: spaces.Discrete(NUM_ACTIONS) for a in self.possible_agents}
        self.observation_spaces = {
            a: spaces.Dict(
                {
                    "observation": spaces.Box(
                        0.0, _OBS_HIGH, shape=(OBSERVATION_SIZE,), dtype=np.float32
                    ),
                    "action_mask": spaces.Box(0, 1, shape=(NUM_ACTIONS,), dtype=np.int8),
                }
            )
            for a in self.possible_agents
        }
        self._base_seed: int | None = None
        self._key = 0
        self._selector = AgentSelector(self.agents)
        self.game: Game | None = None
        self._seed: int = 0
        self._hand: Hand | None = None  # the hand in play, or the one just finished
        self._advice: Move | None = None
        self._advice_due = False
        # Each agent's observation of the current state (the wrappers observe too), emptied
        # at each step and reset.
        self._observed: dict[str, tuple[npt.NDArray[np.float32], npt.NDArray[np.int8]]] = {}

    # -- spaces ---------------------------------------------------------------------------
    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    # -- episodes -------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start an episode. ``seed`` fixes every deal (then each later ``reset()`` without a
        seed plays the next game key of that seed). ``options``: ``deck`` (52 cards, or their
        text) and ``dealer`` (a player number) fix the first hand's deal instead."""
        if seed is not None:
            self._base_seed, self._key = seed, 0
        elif self._base_seed is None:
            self._base_seed, self._key = secrets.randbits(63), 0
        else:
            self._key += 1
        self._observed = {}
        seed_value, key = self._base_seed, self._key
        assert seed_value is not None
        options = options or {}
        rules = self.rules
        if rules.players == 3:
            roles, _ = role_draw(seed_value, key)
            game = Game(rules, 0, roles)
        else:
            dealer = options.get("dealer", first_dealer(seed_value, key))
            game = Game(rules, int(dealer))
        self.game = game
        self._seed = seed_value
        deck = options.get("deck")
        if isinstance(deck, str):
            deck = parse_deck(deck)
        self._deal(tuple(deck) if deck is not None else None)

        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._selector.reinit(self.agents)
        self.agent_selection = self._next_agent()

    def _deal(self, deck: Sequence[Card] | None = None) -> None:
        game = self.game
        assert game is not None
        number = len(game.entries) + 1
        if deck is None:
            deck = hand_deck(self._seed, self._key, number)
        self._hand = game.deal(deck)
        self._advice, self._advice_due = None, game.roles is not None

    def _next_agent(self) -> str:
        """The agent to act: the player to move, or before the three-player captain moves,
        the sitter for advice."""
        game = self.game
        assert game is not None
        mover = game.to_move
        assert mover is not None
        if game.roles is not None and mover == game.roles.captain and self._advice_due:
            return self.possible_agents[game.roles.sitter]
        return self.possible_agents[mover]

    # -- playing --------------------------------------------------------------------------
    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        self._observed = {}
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        assert action is not None
        self._play(agent, action_to_move(int(action)))

    def play(self, move: Move) -> None:
        """Play ``move`` for the agent to act, as ``step`` plays an action's move: for a
        player whose moves are ``Move`` objects (a built-in engine in process), a knock's
        declared melds included. Raises ``IllegalMoveError`` for a move the rules forbid, and
        ``ValueError`` when the episode is over."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            raise ValueError("the episode is over: reset() starts another")
        self._observed = {}
        self._play(agent, move)

    def _play(self, agent: str, move: Move) -> None:
        game, hand = self.game, self._hand
        assert game is not None and hand is not None
        self._cumulative_rewards[agent] = 0.0
        self.rewards = dict.fromkeys(self.agents, 0.0)
        player = self.possible_agents.index(agent)
        if game.roles is not None and player == game.roles.sitter and self._advice_due:
            hand.check(move)  # the sitter's advice must be a move the captain could play
            self._advice, self._advice_due = move, False
        else:
            game.apply(move, player)
            if hand.is_over:
                self._hand_over(game)
            elif game.roles is not None:
                self._advice, self._advice_due = None, True
        self._accumulate_rewards()
        if not any(self.terminations.values()):
            self.agent_selection = self._next_agent()
        else:
            self.agent_selection = self._selector.next()
        if self.render_mode == "human":
            self.render()

    def _hand_over(self, game: Game) -> None:
        entry = game.entries[-1]
        if self.episode == "hand":
            if entry.winner is not None:
                loser = entry.seats[1 - entry.seats.index(entry.winner)]
                self.rewards[self.possible_agents[entry.winner]] = float(entry.result.points)
                self.rewards[self.possible_agents[loser]] = -float(entry.result.points)
            self.terminations = dict.fromkeys(self.agents, True)
        elif game.is_over:
            if game.winner is not None:
                share = 1.0 / (self.rules.players - 1)
                for p, agent in enumerate(self.possible_agents):
                    self.rewards[agent] = 1.0 if p == game.winner else -share
            self.terminations = dict.fromkeys(self.agents, True)
        else:
            self._deal()

    @property
    def advice_due(self) -> bool:
        """Whether the agent to act is the three-player sitter, asked for advice."""
        return self._advice_due

    @property
    def advice(self) -> Move | None:
        """The sitter's advice on the captain's decision to come, once given."""
        return self._advice

    # -- observing ------------------------------------------------------------------------
    def _view(self, player: int) -> GameView:
        """The core's view for ``player``: ``Game.view`` during a hand; after the last hand,
        the finished hand's view with the final scores."""
        game, hand = self.game, self._hand
        assert game is not None and hand is not None
        if game.hand is not None:
            view = game.view(player)
            if self._advice is not None and game.roles is not None and player == game.roles.captain:
                view = dataclasses.replace(view, advice=self._advice)
            return view
        entry = game.entries[-1]
        seat = entry.seats.index(player) if player in entry.seats else 1
        return GameView(
            player=player,
            hand=hand.view(seat),
            seats=entry.seats,
            totals=entry.totals,
            closed=tuple(game.closed),
            hand_number=entry.number,
            roles=entry.roles,
        )

    def observe(self, agent: str) -> dict[str, npt.NDArray[Any]]:
        """The agent's observation and action mask (fresh arrays, the caller's to keep)."""
        cached = self._observed.get(agent)
        if cached is None:
            cached = self._observed[agent] = self._observe(agent)
        return {"observation": cached[0].copy(), "action_mask": cached[1].copy()}

    def _observe(self, agent: str) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int8]]:
        game = self.game
        assert game is not None
        player = self.possible_agents.index(agent)
        acting = agent == self.agent_selection and not self.terminations.get(agent, True)
        observation = np.zeros(OBSERVATION_SIZE, dtype=np.float32)
        entry = game.entries[-1] if game.entries else None
        advising = acting and game.roles is not None and player == game.roles.sitter
        encode_observation(self._view(player), self.rules, entry, advising, acting, observation)
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        if acting and self._hand is not None:
            for move in self._hand.legal_moves():
                mask[_ACTION_OF[move]] = 1
        return observation, mask

    def legal_moves(self) -> list[Move]:
        """The core's legal moves for the agent to act (the moves of the mask)."""
        if self._hand is None or self.terminations.get(self.agent_selection, True):
            return []
        return self._hand.legal_moves()

    # -- showing --------------------------------------------------------------------------
    def render(self) -> str | None:
        if self.render_mode is None:
            return None
        game, hand = self.game, self._hand
        if game is None or hand is None:
            return None
        lines = [f"{self.rules.variant}, hand {len(game.entries) + (game.hand is not None)}"]
        seats = game.seats if game.hand is not None else game.entries[-1].seats
        for seat, player in enumerate(seats):
            lines.append(f"  player_{player}: {format_cards(hand.cards(seat))}")
        top = hand.pile[-1] if hand.pile else None
        lines.append(f"  pile top {top or '-'}, stock {hand.stock_count}, phase {hand.phase}")
        totals = " / ".join(" ".join(str(t) for t in col) for col in game.totals)
        lines.append(f"  scores {totals}; to act: {self.agent_selection}")
        text = "\n".join(lines)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass


def _register() -> None:
    """Register the single-agent Gymnasium environment (``ginproto.gym_env``) by its id."""
    from gymnasium.envs.registration import register, registry

    if "ginproto/GinRummy-v0" not in registry:
        register(id="ginproto/GinRummy-v0", entry_point="ginproto.gym_env:GinRummyEnv")


_register()
