"""What the expert's single hands add up to in games, and what a target Elo asks of them.

    python bench/game_model.py [--deals 1000] [--seed gm] [--jobs 2] [--elo 150] [--games 100000]

The README measures the expert in whole games to 100; the changes in docs/EXPERT.md are
measured in single hands. This bench ties the two. It plays single hands (``Rules(target=1)``)
of the expert against ``simple`` in process, both seats of every deal, and keeps each hand's
points with whether the expert dealt it (the other player plays first). It then plays games to
100 drawn from those hands as if they were independent: each hand is drawn from the hands of
the seat the expert has, and the winner of a hand deals the next (RULES.md, "Dealer"; the
model keeps only that rule and the target, and leaves out the hand cap, which games against
``simple`` never reach). If the modelled score agrees with the real one, the hands explain the
games.

Then it asks what the target Elo (``--elo``, +150 by default) would take: the smallest share of
the hands the expert loses that must become hands it wins (each replaced by a won hand of the
same seat, drawn at random) for the modelled games to reach the target score, and the points
per hand that this means.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.expert_hands import (  # noqa: E402
    Fault,
    add_deal_options,
    deal_ranges,
    hand_points,
    play_in_pool,
)
from engines.expert_engine import ExpertEngine  # noqa: E402
from ginproto.rules import Rules  # noqa: E402
from ginproto.table import first_dealer  # noqa: E402
from referee.results.stats import expected_score  # noqa: E402

Hand = tuple[int, bool]
"""A single hand: the expert's net points, and whether the expert dealt it."""

TARGET = Rules().target  # the standard game's, as the README's matches play
SHARE_STEP = 0.005
MAX_SHARE = 1.0


def play_deals(job: tuple[range, str]) -> list[Hand]:
    """Each deal of the range from both seats: the expert's points and whether it dealt."""
    keys, seed = job
    rules = Rules(target=1)
    expert = ExpertEngine()
    return [
        (hand_points(rules, expert, seat, seed, key), first_dealer(seed, key) == seat)
        for key in keys
        for seat in (0, 1)
    ]


def game_score(hands: Sequence[Hand], games: int, seed: int, target: int = TARGET) -> float:
    """The share of ``games`` games to ``target`` the expert wins when each hand is drawn at
    random from ``hands`` of the seat it has, the first dealer at random and the winner of
    each hand dealing the next (after a drawn hand, the same dealer deals again)."""
    by_seat = ([p for p, dealt in hands if not dealt], [p for p, dealt in hands if dealt])
    if not by_seat[0] or not by_seat[1]:
        raise ValueError("the hands must include some the expert dealt and some it did not")
    if any(all(p == 0 for p in seat) for seat in by_seat):
        raise ValueError("every hand of a seat is drawn: a game could never end")
    rng = random.Random(seed)
    wins = 0
    for _ in range(games):
        mine = theirs = 0
        dealt = rng.random() < 0.5
        while mine < target and theirs < target:
            points = rng.choice(by_seat[dealt])
            if points > 0:
                mine += points
                dealt = True
            elif points < 0:
                theirs -= points
                dealt = False
        wins += mine >= target
    return wins / games


def lost_hands_won(hands: Sequence[Hand], share: float, seed: int) -> list[Hand]:
    """``hands`` with ``share`` of the lost hands of each seat replaced by won hands of the
    same seat, drawn at random (the same ones for the same ``seed``)."""
    out: list[Hand] = []
    for dealt in (False, True):
        rng = random.Random(2 * seed + dealt)
        seat = [p for p, d in hands if d == dealt]
        won = [p for p in seat if p > 0]
        lost = [p for p in seat if p < 0]
        turned = round(share * len(lost)) if won else 0
        rest = [p for p in seat if p >= 0] + lost[turned:]
        out += [(p, dealt) for p in rest + rng.choices(won, k=turned)]
    return out


def points_per_hand(hands: Sequence[Hand]) -> float:
    return sum(p for p, _ in hands) / len(hands)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_deal_options(parser, deals=1000, seed="gm")
    parser.add_argument("--elo", type=float, default=150.0, help="the target Elo against simple")
    parser.add_argument("--games", type=int, default=100_000, help="modelled games per figure")
    args = parser.parse_args(argv)
    if args.deals < 1 or args.jobs < 1 or args.games < 1:
        parser.error("--deals, --jobs and --games must be at least 1")
    if not -800 < args.elo < 800:
        parser.error("--elo must be between -800 and +800")
    jobs = [(deals, args.seed) for deals in deal_ranges(args.deals)]
    try:
        hands = play_in_pool(play_deals, jobs, [len(job[0]) for job in jobs], args.jobs)
    except Fault as fault:
        print(f"\ngame_model: a hand ended in a fault, {fault}", file=sys.stderr)
        return 1
    first = [h for h in hands if not h[1]]
    dealt = [h for h in hands if h[1]]
    won = sum(p > 0 for p, _ in hands)
    lost = sum(p < 0 for p, _ in hands)
    print(
        f"{len(hands)} single hands against simple ({args.deals} deals from both seats, "
        f"seed {args.seed!r}): {won} won, {lost} lost, {len(hands) - won - lost} drawn"
    )
    print(f"  points per hand            {points_per_hand(hands):+.3f}")
    print(f"    playing first            {points_per_hand(first):+.3f}")
    print(f"    dealing                  {points_per_hand(dealt):+.3f}")
    try:
        score = game_score(hands, args.games, 0)
    except ValueError as error:
        print(f"game_model: {error}", file=sys.stderr)
        return 1
    wanted = expected_score(args.elo)
    print(f"  modelled games to {TARGET}: {score:.1%} won ({args.games} games)")
    print(f"  the target, {args.elo:+.0f} Elo, is a score of {wanted:.1%}")
    if score >= wanted:
        print("  the modelled games already reach it")
        return 0
    steps = round(MAX_SHARE / SHARE_STEP)
    for step in range(1, steps + 1):
        share = step * SHARE_STEP
        changed = lost_hands_won(hands, share, 1)
        reached = game_score(changed, args.games, 0)
        print(f"\r  {share:.1%} of the lost hands won: {reached:.1%}", end="", file=sys.stderr)
        if reached >= wanted:
            print(file=sys.stderr)
            gain = points_per_hand(changed) - points_per_hand(hands)
            print(
                f"  it needs {share:.1%} of the lost hands won instead: "
                f"{points_per_hand(changed):+.3f} points per hand ({gain:+.3f}), "
                f"modelled score {reached:.1%}"
            )
            return 0
    print(file=sys.stderr)
    why = ""
    if not (any(p > 0 for p, d in hands if d) and any(p > 0 for p, d in hands if not d)):
        why = " (a seat has no won hand to draw from: play more deals)"
    print(f"  not reached even with {MAX_SHARE:.0%} of the lost hands won instead{why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
