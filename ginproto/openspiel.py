"""OpenSpiel's ``gin_rummy`` seen from this package: its numbers, its parameters, and a hand
as an OpenSpiel action sequence.

OpenSpiel (``pyspiel.load_game("gin_rummy")``) plays one hand as a sequence of integer
actions, with chance as an explicit player: 21 deal actions (ten cards to player 0, ten to
player 1, then the upcard), then the players' actions, each stock draw followed by the chance
action of the card drawn. Its player 0 is always the non-dealer. Actions 0-51 are cards (suit
order ``scdh``, so ``As`` is 0 and ``Kh`` 51), 52 takes the upcard (the pile's top card), 53
draws from the stock, 54 passes, 55 knocks, and 56 + n lays meld number n.

Two uses share one translation of a hand's history into those actions. ``hand_actions``
exports a played hand, whose every card is known, showdown included (``ginref replay
--openspiel``). ``view_actions`` rebuilds from one seat's view alone an action sequence that
leads to a state consistent with what the seat knows: its own cards, the pile, the cards the
opponent took from the pile, and the opponent's discards; the cards it cannot see are dealt
at random from the cards it has not seen. An OpenSpiel bot asked to move in that state so
learns nothing the seat could not know (``engines/openspiel_engine.py``).

Nothing here imports ``pyspiel``. Where OpenSpiel's rules differ from ours, the export names
the difference in each hand it touches; docs/OPENSPIEL.md lists them all. Those rules of
OpenSpiel's that an export must follow to stay replayable (how far layoffs chain, its cap on
upcard draws) are modelled here, apart from our own rules, which live in ``ginproto.hand``
and ``ginproto.melds`` alone.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ginproto.cards import DECK, Card, card_index
from ginproto.game import Game
from ginproto.hand import Hand, HandView, Outcome, Phase, Turn
from ginproto.melds import Meld, MeldKind, best_melds
from ginproto.moves import Move, MoveKind
from ginproto.record import GameRecord
from ginproto.replay import replay_game
from ginproto.rules import Rules, Variant

logger = logging.getLogger(__name__)

DRAW_UPCARD = 52
"""Take the upcard: the first upcard offer's ``take``, or a draw from the pile."""
DRAW_STOCK = 53
PASS = 54
"""Pass the first upcard; in the showdown, end the laying of melds or layoffs; at the wall,
decline to knock."""
KNOCK = 55
MELD_BASE = 56
NUM_MELDS = 185
MAX_KNOCK_CARD = 10
"""OpenSpiel refuses a ``knock_card`` above 10."""
UPCARD_DRAW_CAP = 50
"""OpenSpiel ends a hand, drawn, at the 50th draw of the upcard in its draw phase."""

# The differences an exported hand may carry (docs/OPENSPIEL.md explains each).
EQUAL_COUNT = "equal_count"
CHAINED_LAYOFF = "chained_layoff"
UPCARD_CAP = "upcard_draw_cap"
REPEATED_DISCARD = "repeated_discard"
TURN_CAP = "turn_cap"
BIG_GIN = "big_gin"
SPADE_DOUBLE = "spade_double"
KNOCK_LIMIT = "knock_limit_above_10"
UNFINISHED = "unfinished"


def _os_suit(card: Card) -> int:
    return (card.suit + 1) % 4  # ours: c d h s; OpenSpiel's: s c d h


def card_action(card: Card) -> int:
    """OpenSpiel's number of ``card`` (its deal, discard and layoff action)."""
    return _os_suit(card) * 13 + card.rank


def action_card(action: int) -> Card:
    """The card of OpenSpiel's card action ``action`` (0-51)."""
    if not 0 <= action < 52:
        raise ValueError(f"{action} is no card action")
    return Card.from_index((action // 13 + 3) % 4 * 13 + action % 13)


def meld_number(meld: Meld) -> int:
    """OpenSpiel's number (0-184) of a meld of at most five cards."""
    cards = meld.cards
    if meld.kind is MeldKind.SET:
        rank = cards[0].rank
        if len(cards) == 4:
            return rank * 5 + 4
        missing = ({0, 1, 2, 3} - {_os_suit(c) for c in cards}).pop()
        return rank * 5 + missing
    low = cards[0]
    offsets = {3: (65, 11), 4: (109, 10), 5: (149, 9)}
    if len(cards) not in offsets:
        raise ValueError(f"OpenSpiel has no meld of {len(cards)} cards: {meld}")
    base, per_suit = offsets[len(cards)]
    return base + _os_suit(low) * per_suit + low.rank


def _all_melds() -> dict[int, Meld]:
    melds: list[Meld] = []
    for rank in range(13):
        same = [c for c in DECK if c.rank == rank]
        melds.append(Meld.of(same))
        melds.extend(Meld.of([c for c in same if c != out]) for out in same)
    for suit in range(4):
        for size in (3, 4, 5):
            for low in range(13 - size + 1):
                melds.append(Meld.of(Card.from_index(suit * 13 + low + i) for i in range(size)))
    return {meld_number(m): m for m in melds}


_MELDS = _all_melds()
assert sorted(_MELDS) == list(range(NUM_MELDS))


def action_meld(action: int) -> Meld:
    """The meld that OpenSpiel's meld action ``action`` (56-240) lays."""
    try:
        return _MELDS[action - MELD_BASE]
    except KeyError:
        raise ValueError(f"{action} is no meld action") from None


def split_meld(meld: Meld) -> tuple[Meld, ...]:
    """``meld`` as OpenSpiel melds, which have at most five cards: a longer run is cut into
    runs of three to five cards, as even as can be."""
    cards = meld.cards
    if len(cards) <= 5:
        return (meld,)
    pieces = -(-len(cards) // 5)
    out: list[Meld] = []
    start = 0
    for i in range(pieces):
        size = len(cards[start:]) // (pieces - i)
        out.append(Meld.of(cards[start : start + size]))
        start += size
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Params:
    """OpenSpiel's game parameters for one hand (``pyspiel.load_game("gin_rummy", ...)``)."""

    oklahoma: bool = False
    knock_card: int = 10
    gin_bonus: int = 25
    undercut_bonus: int = 10

    def as_dict(self) -> dict[str, Any]:
        return {
            "gin_bonus": self.gin_bonus,
            "knock_card": self.knock_card,
            "oklahoma": self.oklahoma,
            "undercut_bonus": self.undercut_bonus,
        }

    @property
    def game_string(self) -> str:
        """The game as ``pyspiel.load_game`` reads it: ``gin_rummy(gin_bonus=25,...)``."""
        params = ",".join(
            f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in self.as_dict().items()
        )
        return f"gin_rummy({params})"


def params_for(rules: Rules, upcard: Card) -> tuple[Params, list[str]]:
    """OpenSpiel's parameters for a hand under ``rules`` whose first upcard is ``upcard``,
    and the differences that remain (``KNOCK_LIMIT`` when our limit is above OpenSpiel's
    highest, 10, which is then used).

    Oklahoma maps to OpenSpiel's ``oklahoma``, except under an ace upcard when our ace limit
    is not OpenSpiel's 0: that hand is given OpenSpiel's standard game with our limit as its
    ``knock_card``, so the limit is the same on both sides.
    """
    limit = rules.knock_limit_for(upcard)
    notes: list[str] = []
    if limit > MAX_KNOCK_CARD:
        notes.append(KNOCK_LIMIT)
    oklahoma = rules.variant is Variant.OKLAHOMA and (upcard.rank != 0 or limit == 0)
    params = Params(
        oklahoma=oklahoma,
        knock_card=MAX_KNOCK_CARD if oklahoma else min(limit, MAX_KNOCK_CARD),
        gin_bonus=rules.gin_bonus,
        undercut_bonus=rules.undercut_bonus,
    )
    return params, notes


def openspiel_player(seat: int, dealer: int) -> int:
    """OpenSpiel's player number of hand seat ``seat``: 0 for the non-dealer."""
    return 0 if seat != dealer else 1


# ---------------------------------------------------------------------------------------------
# A history as actions.


@dataclass(slots=True)
class _Actions:
    actions: list[int] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    terminal: bool = False  # OpenSpiel's hand ended before ours


def _deal(first: Iterable[Card], second: Iterable[Card], upcard: Card) -> list[int]:
    """The 21 chance actions of a deal: OpenSpiel player 0's ten cards, player 1's, the upcard."""
    return (
        sorted(card_action(c) for c in first)
        + sorted(card_action(c) for c in second)
        + [card_action(upcard)]
    )


def _play(turns: Sequence[Turn], out: _Actions) -> None:
    """The players' actions (and the stock draws' chance actions) of ``turns``, every card
    known. Stops where OpenSpiel's hand ends before ours, noting why."""
    upcard_draws = 0
    repeated = False  # the last discard was the card its player had just taken
    taken: Card | None = None
    for turn in turns:
        kind = turn.move.kind
        if kind is MoveKind.TAKE:
            out.actions.append(DRAW_UPCARD)
        elif kind is MoveKind.PASS:
            out.actions.append(PASS)
        elif kind is MoveKind.STOCK:
            assert turn.card is not None, "every stock draw's card must be known"
            out.actions += [DRAW_STOCK, card_action(turn.card)]
        elif kind is MoveKind.PILE:
            out.actions.append(DRAW_UPCARD)
            upcard_draws += 1
            if upcard_draws == UPCARD_DRAW_CAP:
                out.notes.append(UPCARD_CAP)
                out.terminal = True
                return
        elif kind is MoveKind.DISCARD:
            assert turn.move.card is not None
            out.actions.append(card_action(turn.move.card))
            again = turn.move.card == taken
            if again and repeated:
                out.notes.append(REPEATED_DISCARD)
                out.terminal = True
                return
            repeated = again
        else:
            return  # a knock: the showdown is the caller's
        taken = turn.card if kind in (MoveKind.TAKE, MoveKind.PILE) else None


# ---------------------------------------------------------------------------------------------
# Export: a played hand.


@dataclass(frozen=True, slots=True)
class HandExport:
    """One hand as OpenSpiel actions. ``players`` are the hand seats of OpenSpiel's players 0
    and 1; ``returns`` are the points our rules gave, as OpenSpiel's zero-sum returns (the
    winner's points, and their negation for the loser); ``differences`` name the documented
    differences that make OpenSpiel's play or score of this hand differ from ours."""

    params: Params
    players: tuple[int, int]
    actions: tuple[int, ...]
    returns: tuple[int, int]
    differences: tuple[str, ...]


def hand_actions(hand: Hand) -> HandExport:
    """A played (or cut-short) hand as an OpenSpiel action sequence, showdown included."""
    deck = hand.deck
    params, notes = params_for(hand.rules, hand.upcard)
    out = _Actions(actions=_deal(deck[0:20:2], deck[1:20:2], deck[20]), notes=notes)
    history = hand.history
    _play(history, out)
    players = (1 - hand.dealer, hand.dealer)
    result = hand.result
    returns = (0, 0)
    if result is not None and result.winner is not None:
        sign = 1 if players[0] == result.winner else -1
        returns = (sign * result.points, -sign * result.points)
    if result is None:
        out.notes.append(UNFINISHED)
    elif not out.terminal:
        if result.multiplier != 1:
            out.notes.append(SPADE_DOUBLE)
        if result.outcome is Outcome.DRAW:
            if result.capped:
                out.notes.append(TURN_CAP)
            else:
                out.actions.append(PASS)  # at the wall: do not knock
        else:
            _showdown(hand, history[-1], out)
    return HandExport(params, players, tuple(out.actions), returns, tuple(dict.fromkeys(out.notes)))


def _showdown(hand: Hand, last: Turn, out: _Actions) -> None:
    result = hand.result
    assert result is not None and result.knocker is not None and result.defender is not None
    knocker_melds = [piece for m in result.knocker_melds for piece in split_meld(m)]
    if last.move.kind is MoveKind.BIG_GIN:
        out.notes.append(BIG_GIN)
        eleven = [*result.hands[result.knocker]]
        discard = next(c for c in eleven if best_melds([x for x in eleven if x != c]).deadwood == 0)
        knocker_melds = [
            piece
            for m in best_melds([x for x in eleven if x != discard]).melds
            for piece in split_meld(m)
        ]
    else:
        assert last.move.card is not None
        discard = last.move.card
    out.actions += [KNOCK, card_action(discard)]
    out.actions += [MELD_BASE + meld_number(m) for m in knocker_melds]
    out.actions.append(PASS)
    defender = result.defender
    gin = result.outcome in (Outcome.GIN, Outcome.BIG_GIN)
    if not gin:
        laid: list[Card] = []
        for layoff in defender.layoffs:
            if _openspiel_takes_layoff(knocker_melds, laid, layoff.card):
                laid.append(layoff.card)
                out.actions.append(card_action(layoff.card))
            elif CHAINED_LAYOFF not in out.notes:
                out.notes.append(CHAINED_LAYOFF)
        out.actions.append(PASS)
    out.actions += [MELD_BASE + meld_number(p) for m in defender.melds for p in split_meld(m)]
    out.actions.append(PASS)
    if result.outcome is Outcome.UNDERCUT and result.knocker_deadwood_value == defender.deadwood:
        out.notes.append(EQUAL_COUNT)


def _openspiel_takes_layoff(melds: Sequence[Meld], laid: Sequence[Card], card: Card) -> bool:
    """Whether OpenSpiel lets ``card`` be laid off after ``laid``: onto a set of three, its
    fourth card; onto a run, the card next to either end, where a run's ends are extended
    only by the cards laid off next to the run as the knocker laid it (so on ``5s-6s-7s``
    the ``8s`` and then the ``9s``, but not then the ``Ts``). OpenSpiel's rule, not ours."""
    for meld in melds:
        cards = meld.cards
        if meld.kind is MeldKind.SET:
            if len(cards) == 3 and card.rank == cards[0].rank:
                return True
            continue
        suit, low, high = cards[0].suit, cards[0].rank, cards[-1].rank
        if card.suit != suit:
            continue
        ends = {low - 1, high + 1}
        for c in laid:
            if c.suit == suit and c.rank in ends:
                low, high = min(low, c.rank), max(high, c.rank)
        if card.rank in (low - 1, high + 1) and 0 <= card.rank < 13:
            return True
    return False


# ---------------------------------------------------------------------------------------------
# A seat's view as a consistent OpenSpiel history.


@dataclass(frozen=True, slots=True)
class ViewState:
    """An OpenSpiel history consistent with one seat's view: load ``params``, apply
    ``actions``, and the state is at the seat's decision, OpenSpiel's ``player`` to move,
    unless ``terminal`` (OpenSpiel's hand ended earlier: ``notes`` says why)."""

    params: Params
    player: int
    actions: tuple[int, ...]
    terminal: bool
    notes: tuple[str, ...]


def view_actions(view: HandView, rng: random.Random) -> ViewState:
    """An action sequence leading to a state consistent with ``view``, with every card the
    seat cannot see dealt from the cards it has not seen, drawn with ``rng``.

    The seat's own cards are traced back to its deal. The opponent's discards that it did
    not take from the pile are put in the deal or the stock draws it held at the time, the
    earliest first, so every move of the history stays legal; its cards still unknown are
    drawn at random. Raises ``ValueError`` on a view of a finished hand.
    """
    if view.phase is Phase.OVER:
        raise ValueError("the hand is over")
    me, opp = view.seat, 1 - view.seat
    history = view.history
    # The seat's deal: its cards now, with its draws taken back and its discards returned.
    mine = set(view.cards)
    for turn in reversed(history):
        if turn.seat != me:
            continue
        if turn.move.kind is MoveKind.DISCARD and turn.move.card is not None:
            mine.add(turn.move.card)
        elif turn.card is not None:
            mine.discard(turn.card)
    # The opponent: known cards, and slots (its deal, its stock draws) of unknown cards.
    seen: set[Card] = set(mine) | set(view.pile)
    seen.update(t.card for t in history if t.card is not None)
    seen.update(t.move.card for t in history if t.move.card is not None)
    known: set[Card] = set()
    held: list[int] = list(range(10))  # slot numbers: 0-9 its deal, 10 + i its i-th turn
    filled: dict[int, Card] = {}
    for i, turn in enumerate(history):
        if turn.seat != opp:
            continue
        kind = turn.move.kind
        if kind in (MoveKind.TAKE, MoveKind.PILE) and turn.card is not None:
            known.add(turn.card)
        elif kind is MoveKind.STOCK:
            held.append(10 + i)
        elif kind is MoveKind.DISCARD and turn.move.card is not None:
            card = turn.move.card
            if card in known:
                known.remove(card)
            else:
                filled[held.pop(0)] = card
    unseen = sorted(set(DECK) - seen, key=card_index)
    for slot, card in zip(held, rng.sample(unseen, len(held)), strict=True):
        filled[slot] = card
    deal_opp = [filled[s] for s in range(10)]
    turns = [
        Turn(t.seat, t.move, filled[10 + i])
        if t.seat == opp and t.move.kind is MoveKind.STOCK
        else t
        for i, t in enumerate(history)
    ]
    upcard = view.upcard
    assert upcard is not None
    first, second = (mine, deal_opp) if me != view.dealer else (deal_opp, mine)
    params, notes = params_for(view.rules, upcard)
    out = _Actions(actions=_deal(first, second, upcard), notes=notes)
    _play(turns, out)
    return ViewState(
        params,
        openspiel_player(me, view.dealer),
        tuple(out.actions),
        out.terminal,
        tuple(out.notes),
    )


def move_of(action: int, phase: Phase) -> Move:
    """Our move for OpenSpiel's action ``action`` at a decision of ``phase`` (a knock's
    discard and melds are separate OpenSpiel actions: see ``Move.knock``)."""
    if phase is Phase.OFFER:
        if action == DRAW_UPCARD:
            return Move.take()
        if action == PASS:
            return Move.pass_()
    elif phase is Phase.DRAW:
        if action == DRAW_UPCARD:
            return Move.pile()
        if action == DRAW_STOCK:
            return Move.stock()
    elif phase is Phase.DISCARD and 0 <= action < 52:
        return Move.discard(action_card(action))
    raise ValueError(f"OpenSpiel action {action} is no move at a {phase} decision")


# ---------------------------------------------------------------------------------------------
# Export: every hand of a record.


def record_hands(record: GameRecord) -> list[tuple[Hand, tuple[int, int]]]:
    """Every hand of ``record``, replayed through the rules, with the player numbers of its
    seats 0 and 1. Raises ``ReplayError`` where the record breaks a rule."""
    hands: list[tuple[Hand, tuple[int, int]]] = []

    def on_event(_item: object, game: Game | None) -> None:
        hand = game.hand if game is not None else None
        if hand is not None and (not hands or hands[-1][0] is not hand):
            assert game is not None
            hands.append((hand, (game.seats[0], game.seats[1])))

    replay_game(record, on_event)
    return hands


def export_hands(record: GameRecord, number: int) -> list[dict[str, Any]]:
    """The objects of ``ginref replay --openspiel``, one per hand of game ``number``, each
    written as one JSON line (docs/OPENSPIEL.md).

    Each has ``game`` and ``hand`` (numbered from 1), ``game_string`` (for
    ``pyspiel.load_game``), ``players`` (the player numbers of OpenSpiel's players 0 and 1),
    ``actions`` (from the first deal action), ``returns`` (our points, as OpenSpiel's returns
    for its players 0 and 1) and ``differences``. Raises ``ReplayError`` where the record
    breaks a rule.
    """
    out: list[dict[str, Any]] = []
    for i, (hand, seats) in enumerate(record_hands(record), start=1):
        export = hand_actions(hand)
        out.append(
            {
                "game": number,
                "hand": i,
                "game_string": export.params.game_string,
                "players": [seats[export.players[0]], seats[export.players[1]]],
                "actions": list(export.actions),
                "returns": list(export.returns),
                "differences": list(export.differences),
            }
        )
    return out
