"""Determinized play-outs: the value of a move measured by playing the rest of the hand.

A **world** is one guess at everything this seat cannot see: the opponent's hidden cards (drawn
from ``Knowledge.sample``) and the order of the stock (the other unseen cards, shuffled). In a
world the hand is played to its end by a fast, greedy policy for both seats: take the pile's top
card when it lowers the hand's deadwood, otherwise draw from the stock; discard the card that
leaves the least deadwood; knock as soon as the deadwood allows it (gin at zero). The hand's
score for this seat (gin and undercut bonuses included, the undercut scored by the rules core's
``best_layoffs``) is the move's value in that world. This seat may also be played as one who
waits for gin (``my_limit=0``): the value of declining a knock.

Every candidate move of a decision is played out in the **same** worlds, so the luck of the
draw cancels out of the comparison (common random numbers), and the engine picks the move with
the best mean. The number of worlds is the engine's effort, counted in work, not in seconds.

The play-out is a model, not a rule: every deadwood and showdown figure comes from
``ginproto.melds``; the end of the hand (two stock cards left after a discard) mirrors
``ginproto.hand.Hand``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from ginproto.cards import DECK, Card
from ginproto.melds import (
    best_layoffs,
    cards_mask,
    knocker_arrangement,
    mask_best_discard,
    mask_deadwood,
)

__all__ = ["Scoring", "World", "play_out", "showdown", "worlds"]

# A hand ends in a draw when a discard leaves this many cards in the stock (RULES.md).
DRAW_STOCK = 2
# A safety bound on the turns of one play-out.
MAX_TURNS = 60


@dataclass(frozen=True)
class Scoring:
    """The scoring rules a play-out needs, copied from ``Rules`` and the hand."""

    knock_limit: int
    gin_bonus: int
    undercut_bonus: int


@dataclass
class World:
    """One determinization: the opponent's hand and the stock, top card first."""

    opponent: list[Card]
    stock: list[Card]


def showdown(
    knocker: Sequence[Card], defender: Sequence[Card], hidden: Sequence[Card], scoring: Scoring
) -> int:
    """The points the knocker wins (negative: loses) when it knocks with the 10 ``knocker``
    cards against the 10 ``defender`` cards. ``hidden`` are the cards the knocker cannot see
    (the defender's hand and the stock): the referee arranges the knocker's melds by them."""
    arrangement = knocker_arrangement(knocker, hidden)
    k = arrangement.deadwood
    if k == 0:
        return best_layoffs((), defender).deadwood + scoring.gin_bonus
    d = best_layoffs(arrangement.melds, defender).deadwood
    if k < d:
        return d - k
    return -(k - d + scoring.undercut_bonus)


def play_out(
    mine: Sequence[Card],
    world: World,
    top: Card,
    scoring: Scoring,
    opponent_moves: bool = True,
    my_limit: int | None = None,
) -> int:
    """Play the hand to its end in ``world`` and return this seat's points (negative: lost).

    ``mine`` is this seat's 10-card hand after its discard, ``top`` the card on the pile.
    ``opponent_moves`` says who draws next (the opponent, normally). ``my_limit`` is the
    deadwood at which this seat knocks: by default the knock limit, as for the opponent; 0
    plays on for gin. Neither the world nor ``mine`` is changed, so one world
    serves every candidate move. The hands are 52-bit masks (``ginproto.melds``' mask
    functions) until the showdown."""
    hands = [cards_mask(mine), cards_mask(world.opponent)]
    dws = [mask_deadwood(hands[0]), mask_deadwood(hands[1])]
    stock = [c.index for c in world.stock]
    pos = 0
    seat = 1 if opponent_moves else 0
    limits = [scoring.knock_limit if my_limit is None else my_limit, scoring.knock_limit]
    pile = top.index
    for _ in range(MAX_TURNS):
        if len(stock) - pos <= DRAW_STOCK:
            return 0
        hand = hands[seat]
        card, dw = mask_best_discard(hand | 1 << pile, pile)
        if dw < dws[seat]:
            hand |= 1 << pile
        else:
            hand |= 1 << stock[pos]
            pos += 1
            card, dw = mask_best_discard(hand)
        hand &= ~(1 << card)
        hands[seat] = hand
        dws[seat] = dw
        pile = card
        if dw <= limits[seat]:
            knocker, other = _cards(hand), _cards(hands[1 - seat])
            hidden = [*other, *(DECK[i] for i in stock[pos:])]
            points = showdown(knocker, other, hidden, scoring)
            return points if seat == 0 else -points
        seat = 1 - seat
    return 0


def _cards(mask: int) -> list[Card]:
    return [DECK[i] for i in range(52) if mask >> i & 1]


def worlds(
    sample_opponent: list[tuple[Card, ...]],
    unseen: Sequence[Card],
    rng: random.Random,
) -> list[World]:
    """Complete each sampled opponent hand into a world: the rest of ``unseen``, shuffled,
    is the stock."""
    out: list[World] = []
    for opponent in sample_opponent:
        held = set(opponent)
        stock = [c for c in unseen if c not in held]
        rng.shuffle(stock)
        out.append(World(list(opponent), stock))
    return out
