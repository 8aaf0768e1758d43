"""Do the search's play-outs tell the expert's candidates apart as the true position does?

    python bench/search_signal.py [--deals 20] [--search-worlds 100] [--worlds 12]
                                  [--see-cards] [--save FILE]

At each decision of the expert as it is (against ``simple``, single hands, both seats) with two
candidates (taking the pile's top card or drawing from the stock; the evaluation's two best
discards, at a discard where no knock is legal), it measures the second candidate against the
first twice:

- **as the search sees it**: the paired mean difference over ``--search-worlds`` sampled worlds
  (``engines.expert.search.play_candidates``, the search's play-outs, each candidate worth its
  better way to play on), and its standard error;
- **as it is**: both moves played on from the true position (the opponent's real cards) in
  ``--worlds`` worlds that differ only in the stock's order, by the expert as it is (Movetime 5)
  and ``simple`` (``bench/search_decisions.py``'s ``gain``).

It prints the slope of the true difference on the search's, with its 95 % interval (0: the
search sees nothing; 1: it sees the differences at their size), their correlation, and the
mean true difference where the search finds the second candidate better by more than 2 and 3
standard errors, and above the difference at which the fitted line's true difference turns
positive: what an override at that margin would gain. Every decision gives a point, not only
the rare one the search overrides. Each kind of decision is also split at the median of the
evaluation's own margin between the two candidates: where it is least sure and where it is
surest of its first.

``--see-cards`` gives the search the opponent's real cards (its worlds differ only in the
stock's order, drawn apart from the true worlds): what its play-outs see with a perfect
inference, so that what the play-out policy loses and what the inference loses can be told
apart. ``--save FILE`` writes every decision's figures to a file, one JSON object a line, and
``--load FILE`` reports them again without playing.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import random  # noqa: E402

from bench.expert_hands import add_deal_options, deal_ranges, play_in_pool  # noqa: E402
from bench.search_decisions import decide, gain, game_view, true_worlds  # noqa: E402
from engines.expert.search import play_candidates  # noqa: E402
from engines.expert_engine import SEARCH_LIMITS, ExpertEngine  # noqa: E402
from engines.simple_engine import SimpleEngine  # noqa: E402
from ginproto.cards import DECK  # noqa: E402
from ginproto.hand import Hand, Phase  # noqa: E402
from ginproto.moves import Move, MoveKind  # noqa: E402
from ginproto.rules import Rules  # noqa: E402

Point = tuple[str, float, float, float, float]
"""One decision: its kind, the search's difference, its standard error, the true difference,
and the evaluation's own margin between the two candidates (how sure it is of the first)."""
FIELDS = ("kind", "search", "error", "truth", "margin")
"""A ``Point``'s names in the file ``--save`` writes."""
Job = tuple[range, str, int, int, bool]


def candidates(engine: ExpertEngine, hand: Hand, seat: int) -> tuple[list[Move], float] | None:
    """The expert's first and second choice at ``hand`` (``seat`` to move) and the
    evaluation's margin between them (0: a tie), or None."""
    view = game_view(hand, seat)
    legal = hand.legal_moves()
    if hand.phase is Phase.DISCARD:
        if any(m.kind in (MoveKind.KNOCK, MoveKind.BIG_GIN) for m in legal):
            return None
        allowed = [m.card for m in legal if m.kind is MoveKind.DISCARD and m.card is not None]
        evaluator = engine._evaluator(view)
        scores = evaluator.discard_scores(view.hand.cards, allowed)
        ranked = sorted(scores, key=lambda c: (scores[c], -c.value, -c.index))
        if len(ranked) < 2:
            return None
        margin = scores[ranked[1]] - scores[ranked[0]]
        return [Move.discard(ranked[0]), Move.discard(ranked[1])], margin
    first = decide(engine, hand)
    other = {Move.take(): Move.pass_(), Move.pass_(): Move.take(), Move.pile(): Move.stock(),
             Move.stock(): Move.pile()}[first]
    if other not in legal:
        return None
    evaluator = engine._evaluator(view)
    top = hand.pile[-1]
    margin = abs(evaluator.take_gain(view.hand.cards, top) - evaluator.params.take_margin)
    return [first, other], margin


def play_deals(job: Job) -> list[Point]:
    keys, seed, search_worlds, worlds, see_cards = job
    rules = Rules(target=1)
    out: list[Point] = []
    for key in keys:
        for seat in (0, 1):
            base, rival = ExpertEngine(), SimpleEngine()
            player = ExpertEngine()
            player.set_option("Movetime", "5")
            later = [player, SimpleEngine()] if seat == 0 else [SimpleEngine(), player]
            deck = list(DECK)
            random.Random(f"{seed}:{key}").shuffle(deck)
            hand = Hand(rules, deck, dealer=key % 2)
            while not hand.is_over:
                if hand.to_move != seat:
                    hand.apply(decide(rival, hand))
                    continue
                found = candidates(base, hand, seat)
                if found is not None:
                    pair, margin = found
                    view = game_view(hand, seat)
                    evaluator = base._evaluator(view)
                    where = f"{seed}:{key}:{seat}:{len(hand.history)}"
                    if see_cards:
                        played = true_worlds(hand, seat, search_worlds, random.Random(f"s{where}"))
                    else:
                        played = base._worlds(view, evaluator, search_worlds)
                    table = play_candidates(played, seat, pair, SEARCH_LIMITS)
                    diffs = [a - b for a, b in zip(table.row(1), table.row(0), strict=True)]
                    mean = statistics.mean(diffs)
                    se = statistics.stdev(diffs) / math.sqrt(len(diffs))
                    truth = gain(hand, seat, pair[0], pair[1], later, worlds, where)
                    kind = "discard" if hand.phase is Phase.DISCARD else "draw"
                    out.append((kind, mean, se, truth, margin))
                hand.apply(decide(base, hand))
    return out


def overridden(truths: Sequence[float], hands: int) -> str:
    """What overriding the evaluation at the decisions of ``truths`` gains: their count, mean
    true difference, and the sum spread over the ``hands`` (95 % intervals)."""
    if len(truths) < 2:
        return f"{len(truths)} decisions"
    spread = statistics.stdev(truths)
    half = 1.96 * spread / math.sqrt(len(truths))
    per_hand = 1.96 * spread * math.sqrt(len(truths)) / hands
    return (f"{len(truths)} decisions, true difference {statistics.mean(truths):+.2f} ± {half:.2f},"
            f" {sum(truths) / hands:+.2f} ± {per_hand:.2f} per hand")


def report(points: Sequence[Point], label: str, hands: int) -> None:
    if len(points) < 3:
        print(f"  {label}: {len(points)} decisions")
        return
    xs = [p[1] for p in points]
    ys = [p[3] for p in points]
    mx, my = statistics.mean(xs), statistics.mean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    slope = sxy / sxx if sxx > 0 else 0.0
    resid = [y - my - slope * (x - mx) for x, y in zip(xs, ys, strict=True)]
    se = math.sqrt(sum(r * r for r in resid) / (len(xs) - 2) / sxx) if sxx > 0 else math.inf
    corr = statistics.correlation(xs, ys) if sxx > 0 and len(set(ys)) > 1 else 0.0
    print(f"  {label}: {len(points)} decisions; search's difference {mx:+.2f}, true {my:+.2f};"
          f" slope {slope:+.3f} ± {1.96 * se:.3f}, correlation {corr:+.3f}")
    # The override the fitted line calls worth it: the search's difference above the one at
    # which the expected true difference turns positive (fitted on these same decisions).
    if slope > 0:
        even = mx - my / slope
        above = [p[3] for p in points if p[1] > even]
        print(f"    the search's difference above {even:+.2f} (the line's break-even):"
              f" {overridden(above, hands)}")
    for z in (2.0, 3.0):
        sure = [p[3] for p in points if p[1] > z * p[2]]
        print(f"    the search sure of the second by {z:.0f} errors: {overridden(sure, hands)}")


def load(path: Path) -> tuple[int, list[Point], str]:
    """The hands, the decisions and the description that ``--save`` wrote to ``path``."""
    lines = path.read_text().splitlines()
    head = json.loads(lines[0])
    points: list[Point] = []
    for line in lines[1:]:
        row = json.loads(line)
        kind, *numbers = (row[name] for name in FIELDS)
        search, error, truth, margin = (float(x) for x in numbers)
        points.append((str(kind), search, error, truth, margin))
    return int(head["hands"]), points, str(head["about"])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_deal_options(parser, deals=20, seed="signal")
    parser.add_argument("--search-worlds", type=int, default=100)
    parser.add_argument("--worlds", type=int, default=12, help="true worlds per decision")
    parser.add_argument("--see-cards", action="store_true",
                        help="the search's worlds hold the opponent's real cards (only the stock"
                        " is guessed): what its play-outs see with a perfect inference")
    parser.add_argument("--save", type=Path, metavar="FILE",
                        help="also write every decision's figures to FILE, as JSON lines")
    parser.add_argument("--load", type=Path, metavar="FILE",
                        help="report the decisions a --save wrote, instead of playing")
    args = parser.parse_args(argv)
    if args.deals < 1 or args.jobs < 1 or min(args.worlds, args.search_worlds) < 2:
        parser.error("--deals and --jobs must be at least 1, --worlds and --search-worlds 2")
    if args.load is not None:
        try:
            hands, points, about = load(args.load)
        except (OSError, ValueError, KeyError, TypeError) as error:
            parser.error(f"--load: cannot read {args.load}: {error}")
    else:
        ranges = deal_ranges(args.deals, chunk=2)
        jobs: list[Job] = [
            (r, args.seed, args.search_worlds, args.worlds, args.see_cards) for r in ranges
        ]
        points = play_in_pool(play_deals, jobs, [len(r) for r in ranges], args.jobs)
        hands = 2 * args.deals
        about = (
            f"{hands} hands against simple (seed {args.seed!r}): the expert's second candidate"
            f" against its first, the search's {args.search_worlds}"
            f" {'worlds with the real cards' if args.see_cards else 'worlds'} against"
            f" {args.worlds} true worlds"
        )
        if args.save is not None:
            with args.save.open("w") as out:
                out.write(json.dumps({"hands": hands, "about": about}) + "\n")
                for point in points:
                    out.write(json.dumps(dict(zip(FIELDS, point, strict=True))) + "\n")
    print(about)
    for kind in ("draw", "discard"):
        chosen = [p for p in points if p[0] == kind]
        report(chosen, kind, hands)
        if len(chosen) >= 6:
            # Where the evaluation is least sure of its first choice, and where it is surest.
            cut = statistics.median(p[4] for p in chosen)
            label = f"{kind}, the evaluation's margin"
            report([p for p in chosen if p[4] <= cut], f"{label} <= {cut:.2f}", hands)
            report([p for p in chosen if p[4] > cut], f"{label} > {cut:.2f}", hands)
    report(points, "all", hands)
    return 0


if __name__ == "__main__":
    sys.exit(main())
