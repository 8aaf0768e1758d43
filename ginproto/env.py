"""A PettingZoo AEC environment over the rules core: ``ginproto.env.env(variant=...)``.

The environment is a thin layer over ``Game`` and ``Hand``. It judges nothing itself: the
legal moves (the action mask) are ``Hand.legal_moves()``, every action is played with
``Game.apply`` (a knock's melds are chosen by the core, the lay-offs and the score too), and
each observation is encoded from what the core lets one player see (``Game.view``, and the
finished hand's ``Entry`` that every player is shown; ``encode_observation`` encodes a whole
view, and the environment follows each hand from there turn by turn, to the same values).
Chance comes from the seed through the table's own functions (``ginproto.table``), so
``reset(seed=s)`` deals what a referee game of seed ``s`` deals.

Needs the optional extra ``env`` (``pip install 'ginproto[env]'``: PettingZoo, Gymnasium,
NumPy); ``import ginproto`` alone never loads them. docs/ENV.md documents the spaces, the
action table and the rewards.
"""

from __future__ import annotations

import dataclasses
import secrets
from array import array
from collections.abc import Iterable, Sequence
from operator import attrgetter
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils import AgentSelector, wrappers

from ginproto.cards import DECK, Card, format_cards, parse_deck
from ginproto.game import Entry, Game, GameView
from ginproto.hand import DEALT_STOCK, Hand, HandView, Outcome, Phase, Turn
from ginproto.moves import Move, MoveKind
from ginproto.rules import Rules, Variant
from ginproto.table import first_dealer, hand_deck, role_draw

__all__ = [
    "ACTIONS",
    "GYM_ENV_ID",
    "NUM_ACTIONS",
    "OBSERVATION_SIZE",
    "action_to_move",
    "encode_observation",
    "env",
    "legal_mask",
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
# The core hands out shared move instances (``Move.discard`` and the like): looked up by
# identity, a legal move needs no hashing. (An id found here is that very move: ``ACTIONS``
# keeps them all alive.)
_ACTION_OF_ID: dict[int, int] = {id(move): action for action, move in enumerate(ACTIONS)}


def _advice_action(advice: Move) -> int:
    """The action shown for the sitter's advice: a knock's declared melds are not shown (the
    action has none)."""
    action = _ACTION_OF_ID.get(id(advice))
    return _ACTION_OF[Move(advice.kind, advice.card)] if action is None else action


def legal_mask(moves: Iterable[Move]) -> bytearray:
    """The action mask of ``moves`` (the core's legal moves, knocks without melds): one byte
    per action, 1 for each move's action. The environment and ``gin-policy`` both mask with
    it."""
    mask = bytearray(NUM_ACTIONS)
    action_of = _ACTION_OF_ID.get
    for move in moves:
        action = action_of(id(move))
        mask[_ACTION_OF[move] if action is None else action] = 1
    return mask


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
S_STOCK = 7  # cards left in the stock / DEALT_STOCK (31)
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
_OVER = Phase.OVER
_OUTCOMES = (Outcome.KNOCK, Outcome.GIN, Outcome.BIG_GIN, Outcome.UNDERCUT, Outcome.DRAW)
_KIND_STOCK, _KIND_DISCARD, _KIND_KNOCK = MoveKind.STOCK, MoveKind.DISCARD, MoveKind.KNOCK
_KIND_PASS = MoveKind.PASS
_OWN_TAKEN, _OTHER_TAKEN = PLANE_OWN_TAKEN * 52, PLANE_OTHER_TAKEN * 52
_OWN_DISCARDS, _OTHER_DISCARDS = PLANE_OWN_DISCARDS * 52, PLANE_OTHER_DISCARDS * 52
_OWN_PASSED, _OTHER_PASSED = PLANE_OWN_PASSED * 52, PLANE_OTHER_PASSED * 52
_PILE_ORDER = (np.arange(1, 53, dtype=np.float32) / 52).astype(np.float32)
_PILE_ORDER_VALUES: list[float] = _PILE_ORDER.tolist()  # the same float32 values
# Flat offsets: of each plane's card 0, and of each single scalar.
_HAND_AT, _PILE_AT = PLANE_HAND * 52, PLANE_PILE * 52
_TOP_AT, _ORDER_AT = PLANE_PILE_TOP * 52, PLANE_PILE_ORDER * 52
_PHASE_AT, _ADVISING_AT = SCALAR_OFFSET + S_PHASE, SCALAR_OFFSET + S_ADVISING
_TO_DECIDE_AT, _DEALER_AT = SCALAR_OFFSET + S_TO_DECIDE, SCALAR_OFFSET + S_DEALER
_STOCK_AT, _KNOCK_LIMIT_AT = SCALAR_OFFSET + S_STOCK, SCALAR_OFFSET + S_KNOCK_LIMIT
_TURNS_AT = SCALAR_OFFSET + S_TURNS
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
    seat = hand.seat
    # Every value is gathered in plain lists and written in two NumPy operations (three with
    # the pile's order): the flat offsets of the ones, then the other offsets and their values.
    ones = [_HAND_AT + card.index for card in hand.cards]
    pile_indexes = [card.index for card in hand.pile]
    if pile_indexes:
        ones += [_PILE_AT + i for i in pile_indexes]
        ones.append(_TOP_AT + pile_indexes[-1])
        out[[_ORDER_AT + i for i in pile_indexes]] = _PILE_ORDER[: len(pile_indexes)]
    upcard = hand.upcard
    if upcard is not None:
        ones.append(PLANE_UPCARD * 52 + upcard.index)
    # The history as the seat saw it; the pile is followed to know which top a player left.
    pile: list[int] = [upcard.index] if upcard is not None else []
    for turn in hand.history:
        own = turn.seat == seat
        kind = turn.move.kind
        if kind is _KIND_STOCK:
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
            ones.append((_OWN_TAKEN if own else _OTHER_TAKEN) + turn.card.index)
            if pile:
                pile.pop()
    if view.advice is not None:
        ones.append(ADVICE_OFFSET + _advice_action(view.advice))

    ones.append(_PHASE_AT + _PHASES.index(hand.phase))
    at = [_ADVISING_AT, _TO_DECIDE_AT, _DEALER_AT, _STOCK_AT, _KNOCK_LIMIT_AT, _TURNS_AT]
    values = [
        float(advising),
        float(to_decide),
        float(hand.dealer == seat),
        hand.stock / DEALT_STOCK,
        hand.knock_limit / 10,
        hand.turns / rules.turn_cap,
    ]
    if view.roles is not None:
        role = ("box", "captain", "sitter").index(str(view.roles.role_of(view.player)))
        ones.append(SCALAR_OFFSET + S_ROLE + role)
    _encode_game(view, rules, entry, ones, at, values)
    out[ones] = 1.0
    out[at] = values


_GAME_PLANES = slice(PLANE_KNOCKER_MELDS * 52, CARD_PLANES * 52)
_GAME_SCALARS = slice(SCALAR_OFFSET + S_SCORES, OBSERVATION_SIZE)


def _encode_game(
    view: GameView,
    rules: Rules,
    entry: Entry | None,
    ones: list[int],
    at: list[int],
    values: list[float],
) -> None:
    """``encode_observation``'s part for the game: the scores, the closed games, the hand
    number and the last finished hand (``entry``), the values of ``_GAME_PLANES`` and
    ``_GAME_SCALARS``: the flat offsets of its ones added to ``ones``, the other offsets and
    their values to ``at`` and ``values``."""
    players = rules.players
    me = view.player
    by_position = {(me + i) % players: i for i in range(players)}
    for column, totals in enumerate(view.totals):
        for player, total in enumerate(totals):
            at.append(SCALAR_OFFSET + S_SCORES + 3 * column + by_position[player])
            values.append(total / rules.target)
        at.append(SCALAR_OFFSET + S_CLOSED + column)
        values.append(float(view.closed[column]))
    at.append(SCALAR_OFFSET + S_HAND_NUMBER)
    values.append(view.hand_number / rules.hand_cap)
    if entry is not None:
        result = entry.result
        ones.append(SCALAR_OFFSET + S_OUTCOME + _OUTCOMES.index(result.outcome))
        if result.knocker is not None:
            ones.append(SCALAR_OFFSET + S_KNOCKER + by_position[entry.seats[result.knocker]])
        if entry.winner is not None:
            ones.append(SCALAR_OFFSET + S_WINNER + by_position[entry.winner])
        at.append(SCALAR_OFFSET + S_POINTS)
        values.append(result.points / rules.target)
        ones += [
            PLANE_KNOCKER_MELDS * 52 + card.index
            for meld in result.knocker_melds
            for card in meld.cards
        ]
        ones += [PLANE_KNOCKER_DEADWOOD * 52 + card.index for card in result.knocker_deadwood]
        defender = result.defender
        if defender is not None:
            ones += [PLANE_LAYOFFS * 52 + layoff.card.index for layoff in defender.layoffs]
            ones += [
                PLANE_DEFENDER_MELDS * 52 + card.index
                for meld in defender.melds
                for card in meld.cards
            ]
            ones += [PLANE_DEFENDER_DEADWOOD * 52 + card.index for card in defender.deadwood_cards]


# -- following a hand ---------------------------------------------------------------------
_KIND_TAKE, _KIND_PILE = MoveKind.TAKE, MoveKind.PILE


class _Tracker:
    """One player's observation of the hand in play, kept up to date turn by turn.

    The hand's first observation is ``encode_observation``'s, from the core's view; after that,
    only what the turns its seat has seen since (``Hand.seen_turns``) change is written, instead
    of encoding the whole view again on every step. A test checks, along random play of every
    variant, that each observation equals ``encode_observation``'s. ``to_decide``, ``advising``
    and the advice stay zero here: they depend on who acts, and ``observe`` sets them on its
    copy.

    The values are a C float array (``values``), written item by item at a fraction of the
    cost of NumPy's scalar writes; ``array`` is the NumPy view of the same memory."""

    __slots__ = ("array", "finished", "hand", "phase", "pile", "seat", "seen", "turn_cap", "values")

    def __init__(self) -> None:
        self.values = array("f", bytes(4 * OBSERVATION_SIZE))
        self.array: npt.NDArray[np.float32] = np.frombuffer(self.values, dtype=np.float32)
        self.hand: Hand | None = None  # the hand the array shows
        self.seat = 0  # the seat observed
        self.seen = 0  # the seat's turns already written
        self.pile: list[int] = []  # the discard pile's card indexes, as of those turns
        self.phase = 0  # the phase written, by index in _PHASES
        self.turn_cap = 1
        self.finished = False  # whether the array shows the hand's end (``finish``)

    def start(self, game: Game, player: int) -> None:
        """Encode ``player``'s view of the hand just dealt."""
        view = game.view(player)
        hand = view.hand
        array = self.array
        array.fill(0.0)
        entry = game.entries[-1] if game.entries else None
        encode_observation(view, game.rules, entry, False, False, array)
        self.hand = game.hand
        self.seat, self.seen = hand.seat, len(hand.history)
        self.pile = [card.index for card in hand.pile]
        self.phase = _PHASES.index(hand.phase)
        self.turn_cap = game.rules.turn_cap
        self.finished = False

    def finish(self, hand: Hand, view: GameView, rules: Rules, entry: Entry) -> None:
        """Show the end of ``hand`` (the one followed) as ``view`` sees it: its last turns, and
        the game's part encoded again, with the final scores and the showdown (``entry``)."""
        self.update(hand)
        array = self.array
        array[_GAME_PLANES] = 0.0
        array[_GAME_SCALARS] = 0.0
        ones: list[int] = []
        at: list[int] = []
        values: list[float] = []
        _encode_game(view, rules, entry, ones, at, values)
        array[ones] = 1.0
        array[at] = values
        self.finished = True

    def update(self, hand: Hand) -> None:
        """Write the turns the seat has seen since the last update (the planes of the hand, the
        pile and the history as ``encode_observation`` reads them) and the scalars they move."""
        turns: list[Turn] = hand.seen_turns(self.seat, self.seen)
        if not turns:
            return
        self.seen += len(turns)
        values, seat, pile = self.values, self.seat, self.pile
        for turn in turns:
            own = turn.seat == seat
            kind = turn.move.kind
            if kind is _KIND_STOCK:
                if pile:
                    values[(_OWN_PASSED if own else _OTHER_PASSED) + pile[-1]] = 1.0
                if own:
                    values[_HAND_AT + turn.card.index] = 1.0  # type: ignore[union-attr]
            elif kind is _KIND_DISCARD or kind is _KIND_KNOCK:
                index = turn.move.card.index  # type: ignore[union-attr]
                values[(_OWN_DISCARDS if own else _OTHER_DISCARDS) + index] = 1.0
                if own:
                    values[_HAND_AT + index] = 0.0
                if pile:
                    values[_TOP_AT + pile[-1]] = 0.0
                values[_ORDER_AT + index] = _PILE_ORDER_VALUES[len(pile)]
                pile.append(index)
                values[_PILE_AT + index] = values[_TOP_AT + index] = 1.0
            elif kind is _KIND_PASS:
                if pile:
                    values[(_OWN_PASSED if own else _OTHER_PASSED) + pile[-1]] = 1.0
            elif kind is _KIND_TAKE or kind is _KIND_PILE:  # the top of the pile, seen by all
                index = turn.card.index  # type: ignore[union-attr]
                values[(_OWN_TAKEN if own else _OTHER_TAKEN) + index] = 1.0
                if own:
                    values[_HAND_AT + index] = 1.0
                pile.pop()
                values[_PILE_AT + index] = values[_TOP_AT + index] = values[_ORDER_AT + index] = 0.0
                if pile:
                    values[_TOP_AT + pile[-1]] = 1.0
        values[_PHASE_AT + self.phase] = 0.0
        self.phase = _PHASES.index(hand.phase)
        values[_PHASE_AT + self.phase] = 1.0
        values[_STOCK_AT] = hand.stock_count / DEALT_STOCK
        values[_TURNS_AT] = hand.turns / self.turn_cap


# -- the wrappers ---------------------------------------------------------------------------
class _ActionSpace(spaces.Discrete):
    """``Discrete(NUM_ACTIONS)`` whose ``contains`` answers a plain ``int`` at once, as
    ``Discrete.contains`` does after asking NumPy for the int64 range and casting (about as dear
    as a whole step of the core; ``AssertOutOfBoundsWrapper`` asks it on every step)."""

    def contains(self, x: Any) -> bool:
        if type(x) is int:
            return 0 <= x < NUM_ACTIONS
        return bool(super().contains(x))


_STATE: tuple[str, ...] = ("agents", "agent_selection", "rewards", "_cumulative_rewards")
_STATE += ("terminations", "truncations", "infos")


def _reads_state_directly(cls: type[Any]) -> type[Any]:
    """Give a wrapper class a property for each of the raw environment's state attributes
    (``_STATE``), reading it from ``self._raw`` (the raw environment) at once.

    PettingZoo's wrappers have none of these attributes: each read fails, and
    ``BaseWrapper.__getattr__`` passes it to the wrapped environment, the next wrapper, where
    it fails again, and so on down (about 1 µs a wrapper; a step of the wrapped environment
    makes dozens of such reads). They hold nothing of their own under these names, so the
    raw environment's attribute is what that chain returns. Without ``self._raw`` (or without
    the attribute), the property fails and ``__getattr__`` answers as before."""
    for name in _STATE:
        setattr(cls, name, property(attrgetter(f"_raw.{name}")))
    return cls


@_reads_state_directly
class _TerminateIllegalWrapper(wrappers.TerminateIllegalWrapper):  # type: ignore[misc]
    """PettingZoo's ``TerminateIllegalWrapper``, reading the raw environment's state directly."""

    def __init__(self, env: Any, illegal_reward: float) -> None:
        self._raw = env.unwrapped
        super().__init__(env, illegal_reward)


@_reads_state_directly
class _AssertOutOfBoundsWrapper(wrappers.AssertOutOfBoundsWrapper):  # type: ignore[misc]
    """PettingZoo's ``AssertOutOfBoundsWrapper``, reading the raw environment's state directly."""

    def __init__(self, env: Any) -> None:
        self._raw = env.unwrapped
        super().__init__(env)

    def action_space(self, agent: str) -> spaces.Space[Any]:
        """The raw environment's (no wrapper changes the spaces), asked at once: ``step``
        checks every action against it."""
        return self._raw.action_space(agent)  # type: ignore[no-any-return]


@_reads_state_directly
class _OrderEnforcingWrapper(wrappers.OrderEnforcingWrapper):  # type: ignore[misc]
    """PettingZoo's ``OrderEnforcingWrapper``, reading the raw environment's state directly
    once reset: ``self._raw`` is set only then, so before, every read goes to
    ``OrderEnforcingWrapper.__getattr__`` and fails as PettingZoo's does."""

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self._raw = self.env.unwrapped
        super().reset(seed=seed, options=options)

    def __str__(self) -> str:
        return str(self.env)


# -- the environment ----------------------------------------------------------------------
def env(
    variant: str = "standard",
    rules: Rules | None = None,
    episode: Episode = "hand",
    render_mode: str | None = None,
) -> Any:
    """The environment with PettingZoo's standard wrappers (as its classic games have them):
    an illegal action ends the episode with -1 for the player who made it. (Each wrapper is a
    subclass of PettingZoo's that reads the raw environment's state directly, and behaves the
    same.)"""
    wrapped: Any = raw_env(variant=variant, rules=rules, episode=episode, render_mode=render_mode)
    wrapped = _TerminateIllegalWrapper(wrapped, illegal_reward=-1)
    wrapped = _AssertOutOfBoundsWrapper(wrapped)
    return _OrderEnforcingWrapper(wrapped)


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
        self._player_of = {agent: p for p, agent in enumerate(self.possible_agents)}
        self.agents = self.possible_agents[:]
        self.action_spaces = {a: _ActionSpace(NUM_ACTIONS) for a in self.possible_agents}
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
        # Each player's observation of the hand in play, brought up to date when observed.
        self._trackers = [_Tracker() for _ in range(rules.players)]
        # The action mask of the agent to act, made once a step (the wrappers observe too).
        self._mask: bytearray | None = None
        # Each agent's observation of a finished game or hand, made once, emptied at each step.
        self._observed: dict[str, npt.NDArray[np.float32]] = {}

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
        self._mask = None
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
        if self.terminations[agent] or self.truncations[agent]:
            self._mask = None
            self._observed = {}
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
        self._play(agent, move)

    def _play(self, agent: str, move: Move) -> None:
        self._mask = None  # what was observed is of the state before the move
        if self._observed:
            self._observed = {}
        game, hand = self.game, self._hand
        assert game is not None and hand is not None
        self._cumulative_rewards[agent] = 0.0
        player = self._player_of[agent]
        roles = game.roles
        ended = False
        if roles is not None and player == roles.sitter and self._advice_due:
            hand.check(move)  # the sitter's advice must be a move the captain could play
            self._advice, self._advice_due = move, False
        else:
            game.apply(move, player)
            if hand.phase is _OVER:
                ended = self._hand_over(game)
            elif roles is not None:
                self._advice, self._advice_due = None, True
        # Rewards are all zero until the step that ends the episode (``_hand_over``), so
        # neither they nor the cumulative rewards change before it.
        if ended:
            self.agent_selection = self._selector.next()
        else:
            self.agent_selection = self._next_agent()
        if self.render_mode == "human":
            self.render()

    def _hand_over(self, game: Game) -> bool:
        """Score the hand just ended; whether the episode ends with it (else deal the next)."""
        entry = game.entries[-1]
        rewards = self.rewards = dict.fromkeys(self.agents, 0.0)
        if self.episode == "hand":
            if entry.winner is not None:
                loser = entry.seats[1 - entry.seats.index(entry.winner)]
                rewards[self.possible_agents[entry.winner]] = float(entry.result.points)
                rewards[self.possible_agents[loser]] = -float(entry.result.points)
        elif game.is_over:
            if game.winner is not None:
                share = 1.0 / (self.rules.players - 1)
                for p, agent in enumerate(self.possible_agents):
                    rewards[agent] = 1.0 if p == game.winner else -share
        else:
            self._deal()
            return False
        self.terminations = dict.fromkeys(self.agents, True)
        self._accumulate_rewards()
        return True

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
        """The agent's observation and action mask (fresh arrays, the caller's to keep): as
        ``encode_observation`` encodes the core's view (``_view``), and 1 in the mask for each
        of the core's legal moves if the agent is to act."""
        game, hand = self.game, self._hand
        assert game is not None and hand is not None
        player = self._player_of[agent]
        acting = agent == self.agent_selection and not self.terminations.get(agent, True)
        roles = game.roles
        tracker = self._trackers[player]
        if game.hand is None:  # the game or the episode's hand is over: no one acts
            if tracker.hand is hand:  # followed to the end
                if not tracker.finished:
                    tracker.finish(hand, self._view(player), self.rules, game.entries[-1])
                observation = tracker.array.copy()
            else:  # never observed during the hand: encoded from the whole view, once
                cached = self._observed.get(agent)
                if cached is None:
                    cached = self._observed[agent] = np.zeros(OBSERVATION_SIZE, np.float32)
                    entry = game.entries[-1]
                    advising = acting and roles is not None and player == roles.sitter
                    encode_observation(
                        self._view(player), self.rules, entry, advising, acting, cached
                    )
                observation = cached.copy()
        else:
            if tracker.hand is hand:
                tracker.update(hand)
            else:
                tracker.start(game, player)
            observation = tracker.array.copy()
            if acting:
                observation[_TO_DECIDE_AT] = 1.0
                if roles is not None and player == roles.sitter:
                    observation[_ADVISING_AT] = 1.0
            if self._advice is not None and roles is not None and player == roles.captain:
                observation[ADVICE_OFFSET + _advice_action(self._advice)] = 1.0
        if not acting:
            return {"observation": observation, "action_mask": np.zeros(NUM_ACTIONS, np.int8)}
        mask = self._mask
        if mask is None:
            mask = self._mask = legal_mask(hand.legal_moves())
        # A NumPy array over a copy of the mask's bytes: the caller's alone.
        return {"observation": observation, "action_mask": np.frombuffer(mask.copy(), np.int8)}

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


GYM_ENV_ID = "ginproto/GinRummy-v0"
"""The id of the single-agent Gymnasium environment that ``import ginproto.env`` registers."""


def _register() -> None:
    """Register the single-agent Gymnasium environment (``ginproto.gym_env``) by its id."""
    from gymnasium.envs.registration import register, registry

    if GYM_ENV_ID not in registry:
        register(id=GYM_ENV_ID, entry_point="ginproto.gym_env:GinRummyEnv")


_register()
