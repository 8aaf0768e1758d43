"""Where a changed expert decides otherwise than the expert as it is, which move is better?

    python bench/search_decisions.py --set search=true [--movetime 100] [--deals 50] [--worlds 24]

Paired single hands (``bench/expert_hands.py``) measure a change by whole hands: a change that
alters one decision in ten still lets the rest of the hand diverge, and the luck of everything
after it swamps the difference (about ±2.6 points per hand over 100 deals for a search that
changed one decision in ten). This bench measures the decisions themselves. Single hands of the
expert as it is against ``simple`` (or ``camper``) are played from both seats; at each of the
expert's decisions the changed expert is asked too, on the same view. Where they differ, both
moves are played on from the **true** position (the opponent's real cards) in ``--worlds``
worlds that differ only in the order of the stock (the cards no one has seen, shuffled: every
order is as likely as the real one), the same worlds for both moves; each world is played to
the end of the hand by the expert as it is (at ``--play-movetime``) and the opponent. The mean
difference of the two moves' points, over the worlds, is that decision's gain. The hand itself
goes on with the expert's move as it is, so the decisions are the ones it meets.

It prints how many decisions of each kind differed, the mean gain per differing decision with
its 95 % interval (over the decisions), and that gain per hand: the points per hand the changed
expert would gain if every decision after the first change were played as the expert plays it.
Every move is the rules core's (``Hand``, ``Determinizer``); the worlds are dealt by the core.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.expert_hands import (  # noqa: E402
    OPPONENTS,
    TunedExpert,
    add_deal_options,
    deal_ranges,
    parse_changes,
    play_in_pool,
)
from engines.expert_engine import DEFAULT_MOVETIME, ExpertEngine  # noqa: E402
from ginproto.cards import DECK  # noqa: E402
from ginproto.game import GameView  # noqa: E402
from ginproto.hand import Hand, Phase  # noqa: E402
from ginproto.moves import Move  # noqa: E402
from ginproto.rules import Rules  # noqa: E402
from ginproto.sdk import Engine  # noqa: E402
from ginproto.search import Determinizer  # noqa: E402
from ginproto.table import Decision  # noqa: E402

_DECISIONS = {
    Phase.OFFER: Decision.OFFER,
    Phase.DRAW: Decision.DRAW,
    Phase.DISCARD: Decision.DISCARD,
}

Record = tuple[str, float]
"""A differing decision: its kind (``draw`` or ``discard``) and its gain in points."""
Job = tuple[range, str, dict[str, object], int, str, int, int]


def game_view(hand: Hand, seat: int) -> GameView:
    """``seat``'s view of ``hand`` as a single hand's game view (both scores 0)."""
    return GameView(seat, hand.view(seat), (0, 1), ((0, 0),), (False,), 1, None)


def decide(engine: Engine, hand: Hand) -> Move:
    """``engine``'s move for the player to move in ``hand``."""
    mover = hand.to_move
    return engine.decide(game_view(hand, mover), _DECISIONS[hand.phase])


def points(hand: Hand, seat: int) -> int:
    """``seat``'s net points in the finished ``hand``."""
    result = hand.result
    assert result is not None
    if result.winner is None:
        return 0
    return result.points if result.winner == seat else -result.points


def play_on(hand: Hand, players: Sequence[Engine], seat: int) -> int:
    """Play ``hand`` to its end with ``players`` (by seat); ``seat``'s points."""
    while not hand.is_over:
        hand.apply(decide(players[hand.to_move], hand))
    return points(hand, seat)


def true_worlds(hand: Hand, seat: int, count: int, rng: random.Random) -> list[Hand]:
    """``count`` copies of the true position of ``hand`` whose stocks are shuffled (the
    opponent's real cards kept), dealt by the core from ``seat``'s view."""
    dealer = Determinizer(hand.view(seat))
    hidden = dealer.hidden
    theirs = hand.cards(1 - seat)
    known = set(hidden.opponent_known)
    held = [c for c in theirs if c not in known]
    rest = [c for c in hidden.unseen if c not in set(theirs)]
    out = []
    for _ in range(count):
        stock = list(rest)
        rng.shuffle(stock)
        out.append(dealer.deal(held, stock))
    return out


def gain(
    hand: Hand,
    seat: int,
    mine: Move,
    theirs: Move,
    players: Sequence[Engine],
    worlds: int,
    key: str,
) -> float:
    """The mean points of ``theirs`` less those of ``mine`` for ``seat``, each played on from
    the same ``worlds`` true worlds of ``hand``."""
    rng = random.Random(key)
    total = 0
    for world in true_worlds(hand, seat, worlds, rng):
        values = []
        for move in (theirs, mine):
            trial = world.clone()
            trial.apply(move)
            values.append(play_on(trial, players, seat))
        total += values[0] - values[1]
    return total / worlds


def play_deals(job: Job) -> list[Record]:
    """The differing decisions of the expert's single hands of ``job``'s deals, both seats."""
    keys, seed, changes, movetime, opponent, worlds, play_movetime = job
    rules = Rules(target=1)
    out: list[Record] = []
    for key in keys:
        for seat in (0, 1):
            base = ExpertEngine()
            tuned = TunedExpert(changes)
            tuned.set_option("Movetime", str(movetime))
            player = ExpertEngine()
            player.set_option("Movetime", str(play_movetime))
            rival = OPPONENTS[opponent]()
            later = [player, OPPONENTS[opponent]()]
            if seat == 1:
                later.reverse()
            deck = list(DECK)
            random.Random(f"{seed}:{key}").shuffle(deck)
            hand = Hand(rules, deck, dealer=key % 2)
            while not hand.is_over:
                mover = hand.to_move
                if mover != seat:
                    hand.apply(decide(rival, hand))
                    continue
                mine = decide(base, hand)
                theirs = decide(tuned, hand)
                if theirs != mine:
                    kind = "discard" if hand.phase is Phase.DISCARD else "draw"
                    where = f"{seed}:{key}:{seat}:{len(hand.history)}"
                    out.append((kind, gain(hand, seat, mine, theirs, later, worlds, where)))
                hand.apply(mine)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_deal_options(parser, deals=50, seed="decisions")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a Params field of the changed expert (repeatable)")
    parser.add_argument("--movetime", type=int, default=DEFAULT_MOVETIME,
                        help="the changed expert's Movetime, in ms")
    parser.add_argument("--opponent", choices=sorted(OPPONENTS), default="simple")
    parser.add_argument("--worlds", type=int, default=24,
                        help="true worlds each differing decision is played on in")
    parser.add_argument("--play-movetime", type=int, default=5,
                        help="the Movetime of the expert that plays the worlds on")
    args = parser.parse_args(argv)
    try:
        changes = parse_changes(args.set)
    except ValueError as error:
        parser.error(str(error))
    if args.deals < 1 or args.jobs < 1 or args.worlds < 1:
        parser.error("--deals, --jobs and --worlds must be at least 1")
    ranges = deal_ranges(args.deals, chunk=5)
    jobs: list[Job] = [
        (r, args.seed, dict(changes), args.movetime, args.opponent, args.worlds,
         args.play_movetime)
        for r in ranges
    ]

    def detail(results: list[Record]) -> str:
        return f"{len(results)} decisions differed"

    records = play_in_pool(play_deals, jobs, [len(r) for r in ranges], args.jobs, detail)
    hands = 2 * args.deals
    label = ", ".join([*args.set, f"Movetime={args.movetime}"])
    print(f"{hands} hands against {args.opponent} (seed {args.seed!r}), the expert with {label}"
          f" against the expert as it is; each differing decision played on in {args.worlds}"
          f" true worlds (the expert at Movetime {args.play_movetime})")
    for kind in ("draw", "discard", "all"):
        gains = [g for k, g in records if kind in ("all", k)]
        if not gains:
            print(f"  {kind:8} no decision differed")
            continue
        mean = statistics.mean(gains)
        half = 1.96 * statistics.stdev(gains) / math.sqrt(len(gains)) if len(gains) > 1 else 0.0
        per_hand = sum(gains) / hands
        print(f"  {kind:8} {len(gains):4} differed ({len(gains) / hands:.2f} per hand):"
              f" {mean:+.3f} ± {half:.3f} points per decision,"
              f" {per_hand:+.3f} ± {half * len(gains) / hands:.3f} per hand")
    return 0


if __name__ == "__main__":
    sys.exit(main())
