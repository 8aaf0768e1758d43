"""Determinized play-outs: the value of a move measured by playing the rest of the hand.

A **world** is one guess at everything this seat cannot see: the opponent's hidden cards (drawn
from ``Knowledge.samples``) and the order of the stock (the other unseen cards, shuffled). Each
world is a real ``ginproto.hand.Hand`` at the decision's position, dealt by the rules core's
``ginproto.search.Determinizer`` from this seat's view. In a world the hand is played to its
end with ``Hand.legal_moves`` and ``Hand.apply`` by a fast, greedy policy for both seats: take
the pile's top card when it lowers the hand's deadwood, otherwise draw from the stock; discard
the card that leaves the least deadwood; knock as soon as the rules allow it (big gin when
they allow that). This seat may also be played as one who waits for a lower hand
(``my_limit``; 0: gin): the value of declining a knock.

Every rule (what is legal, when the hand is drawn, how a showdown is scored, under the game's
``Rules``: the knock limit, the turn cap, the spade double, big gin, the bonuses) is the core's:
this module holds the policy only. A showdown with hands this seat chooses is scored by
``ginproto.search.score_showdown`` (``Showdown``).

Every candidate move of a decision is played out in the **same** worlds, so the luck of the
draw cancels out of the comparison (common random numbers), and the engine picks the move with
the best mean. The number of worlds is the engine's effort, counted in work, not in seconds.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from ginproto.cards import DECK, Card
from ginproto.hand import Hand, HandView, Phase
from ginproto.layoffs import knocker_arrangement
from ginproto.melds import Arrangement, mask_best_discard, mask_deadwood
from ginproto.moves import Move
from ginproto.search import Determinizer, score_showdown

__all__ = ["Showdown", "play_out", "play_outs", "points", "worlds"]

_STOCK, _PILE, _TAKE, _PASS = Move.stock(), Move.pile(), Move.take(), Move.pass_()
_BIG_GIN = Move.big_gin()
_DRAW, _DISCARD, _OFFER = Phase.DRAW, Phase.DISCARD, Phase.OFFER

# The policy's discards depend on the cards alone, and play-outs of one decision meet the same
# hands again (the candidates share their worlds): kept in a plain dict of ints, emptied when
# full (the garbage collector never scans it).
_DISCARDS: dict[int, tuple[int, int]] = {}
_DISCARDS_LIMIT = 400_000


def _best_discard(hand: int, banned: int) -> tuple[int, int]:
    """``mask_best_discard(hand, banned)``, cached."""
    key = hand << 6 | (banned + 1)
    found = _DISCARDS.get(key)
    if found is None:
        if len(_DISCARDS) >= _DISCARDS_LIMIT:
            _DISCARDS.clear()
        found = _DISCARDS[key] = mask_best_discard(hand, banned)
    return found


def points(hand: Hand, seat: int) -> int:
    """The points ``seat`` won in the finished ``hand`` (negative: lost; 0: drawn)."""
    result = hand.result
    assert result is not None, "the hand is not over"
    if result.winner is None:
        return 0
    return result.points if result.winner == seat else -result.points


@dataclass(frozen=True)
class Showdown:
    """A knock of this seat with its ``kept`` cards, arranged as the referee would arrange them
    (``knocker_arrangement`` over the cards it cannot see), scored against any opponent hand
    by the core's ``score_showdown`` under the hand's rules."""

    view: HandView
    kept: tuple[Card, ...]
    arrangement: Arrangement

    @classmethod
    def of(cls, view: HandView, kept: Sequence[Card], hidden: Sequence[Card]) -> Showdown:
        """The knock of ``view``'s seat keeping ``kept``; ``hidden``: the cards it cannot see
        (the unseen ones and those it knows the opponent holds)."""
        cards = tuple(kept)
        return cls(view, cards, knocker_arrangement(cards, hidden))

    def points(self, opponent: Sequence[Card]) -> int:
        """The points this seat wins (negative: loses) knocking against ``opponent``."""
        view = self.view
        seat = view.seat
        theirs = tuple(opponent)
        hands = (self.kept, theirs) if seat == 0 else (theirs, self.kept)
        upcard = view.upcard
        assert upcard is not None
        result = score_showdown(view.rules, upcard, seat, hands, self.arrangement)
        return result.points if result.winner == seat else -result.points


def play_out(world: Hand, seat: int, my_limit: int | None = None) -> int:
    """Play ``world`` to its end by the greedy policy for both seats and return ``seat``'s
    points (negative: lost; 0: drawn). ``world`` is played on, so pass a copy that may be
    used up (``Hand.clone``). ``my_limit``: the most deadwood ``seat`` knocks with (``None``:
    whatever the rules allow, as the opponent; 0: gin only)."""
    return play_outs(world, seat, (my_limit,))[0]


def play_outs(world: Hand, seat: int, limits: Sequence[int | None]) -> list[int]:
    """``play_out`` of ``world`` for each of ``limits`` at once (``seat``'s points for each).

    The play-outs differ only in when ``seat`` knocks, and the policy's draws and discards do
    not depend on it: they are one play-out, by the seat that knocks least, until a knock
    the others would make; each of those is played on a copy there. ``world`` is played on."""
    open_ = dict(enumerate(limits))  # the play-outs not ended yet, by index
    values = [0] * len(limits)
    # Each seat's deadwood after its last discard, as the policy's yardstick for the pile.
    dws = [mask_deadwood(world.mask(0)), mask_deadwood(world.mask(1))]
    while True:
        phase = world.phase
        mover = world.to_move
        if phase is _DISCARD:
            # The core is asked about the moves the policy considers, one at a time: cheaper
            # than listing every legal move (which works out every knock).
            if world.is_legal(_BIG_GIN):
                world.apply(_BIG_GIN)
                return _finish(world, seat, values, open_)
            taken = world.taken
            banned = -1
            if taken is not None and not world.is_legal(Move.discard(taken)):
                banned = taken.index
            card, dw = _best_discard(world.mask(mover), banned)
            knock = Move.knock(DECK[card])
            if world.is_legal(knock):
                if mover != seat:
                    world.apply(knock)
                    return _finish(world, seat, values, open_)
                eager = [i for i, limit in open_.items() if limit is None or dw <= limit]
                if eager:
                    if len(eager) == len(open_):
                        world.apply(knock)
                        return _finish(world, seat, values, open_)
                    branch = world.clone()
                    branch.apply(knock)
                    for i in eager:
                        values[i] = points(branch, seat)
                        del open_[i]
            world.apply(Move.discard(DECK[card]))
            dws[mover] = dw
        elif phase is _DRAW or phase is _OFFER:
            legal = world.legal_moves()
            take = _PILE if phase is _DRAW else _TAKE
            if any(move is take for move in legal):
                top = world.pile[-1]
                mask = world.mask(mover) | 1 << top.index
                if _best_discard(mask, top.index)[1] < dws[mover]:
                    world.apply(take)
                    continue
            world.apply(_STOCK if phase is _DRAW else _PASS)
        else:
            return _finish(world, seat, values, open_)


def _finish(world: Hand, seat: int, values: list[int], open_: dict[int, int | None]) -> list[int]:
    """``values`` with the finished ``world``'s points for the play-outs still open."""
    final = points(world, seat)
    for i in open_:
        values[i] = final
    return values


def worlds(
    view: HandView,
    opponent_hands: Sequence[Sequence[Card]],
    rng: random.Random,
) -> list[Hand]:
    """One world per sampled opponent hand (its known cards and hidden ones): the rest of the
    unseen cards, shuffled by ``rng``, are the stock, and the core deals the hand
    (``Determinizer``)."""
    dealer = Determinizer(view)
    hidden = dealer.hidden
    known = set(hidden.opponent_known)
    out: list[Hand] = []
    for opponent in opponent_hands:
        held = set(opponent)
        stock = [c for c in hidden.unseen if c not in held]
        rng.shuffle(stock)
        out.append(dealer.deal([c for c in opponent if c not in known], stock))
    return out
