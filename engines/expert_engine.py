"""The expert engine: reads the pile, guards its discards, and knocks when it pays.

Each decision starts from what this seat can know (``engines.expert.knowledge``): the cards the
opponent took from the pile (known to be in its hand), the ones it passed on or threw away (it
probably holds nothing that melds with them), and the unseen rest, sharpened by sampling whole
hands and keeping those that explain its last discard and its not knocking. On that inference
(``engines.expert.strategy``) it

- takes the upcard or the pile's top card only when the hand it makes is expected to beat a
  draw from the stock one draw later;
- discards the card that leaves the lowest expected deadwood after the next draw, plus the
  plain deadwood (weighed more as the stock runs down), plus a cost for the chance that the
  opponent melds the discard, less a bonus for the chance to be able to knock after the next
  draw (the hand is a race to knock);
- decides a knock by comparing, in the same sampled worlds (``engines.expert.rollout``: each a
  ``Hand`` of the rules core, played by its legal moves and scored by its own scoring), the
  showdown now with the best discard played out to the end of the hand by a fast greedy policy
  for both seats, and with the same discard played out by a seat that waits for gin (a low
  hand that declines to knock often undercuts an opponent who knocks first); it always goes
  gin (big gin when the rules have it). With no budget at all it falls back to a threshold on
  the sampled showdowns alone.

**An opponent that waits for gin** (``camper`` plays so): past its first turns it keeps a far
lower hand than the inference's hands, and undercuts a knock that they would not. The expert
gives the opponent a chance to be such a player (``Params.waiting``, 0.2 for a new opponent),
and from the opponent's ``wait_from``-th discard of a hand on, that share of the knock's value
is scored against hands built as such a player builds them (``Knowledge.patient_hands``); playing
on is valued as before. The chance moves with what the earlier hands of the match showed
(``on_hand_over``): its odds are multiplied by ``wait_odds`` (10) for each hand in which the
opponent held a hand it could have knocked with past its first turns and did not, and divided
by it for each knock without gin past them. Against ``simple`` it falls to 0.01 within two
knocks; against ``camper`` it rises to 0.99.

**Time.** Its effort is counted in work (sampled worlds, sampled hands, candidate moves looked
at two draws deep), never in seconds, so a seed reproduces a game move for move. The option
``Movetime`` (ms, default 20) sets that effort (``effort``); a small ``go movetime`` or a low
game clock caps it (``budget_ms``), so the engine never plays near a timeout.

**Seed.** The option ``Seed`` seeds every random choice together with the position, so the
same seed and position give the same move in process and as a program.
"""

from __future__ import annotations

import dataclasses
import logging
import random
from collections.abc import Sequence
from typing import ClassVar

from engines.expert.knowledge import WAITER_KNOCKING_TURNS, Knowledge
from engines.expert.rollout import Showdown, play_outs, worlds
from engines.expert.search import Table, choose, play_candidates
from engines.expert.strategy import Evaluator, Params
from ginproto.cards import Card
from ginproto.hand import Hand, Outcome, Phase
from ginproto.melds import deadwood
from ginproto.protocol import Go, HandOver, NewMatch
from ginproto.sdk import Engine, GameView, Move, MoveKind, Option
from ginproto.search import DRAW_STOCK, drawn_after_discard

logger = logging.getLogger(__name__)

DEFAULT_MOVETIME = 20
# Units of work per millisecond of budget. A unit is one sampled opponent hand for the knock
# and two hands weighed by ``Knowledge.refine``; 15 units look one more discard two draws deep
# (up to six), and 2.2 units play out one world for the knock (a hand of the rules core, dealt
# by ``ginproto.search.Determinizer``: the showdown, and playing on and playing on for gin as
# one play-out branched where they part). At the default this is about 13 ms of CPU per
# decision on average on the 2-core test machine: the budget is a ceiling on the mean, kept
# far from it.
WORK_PER_MS = 10
MAX_MOVETIME = 60_000
MAX_POSTERIOR = 1200
# Worlds searched per unit of work, with ``Params.search``: each world plays out every candidate
# (up to three, each branched into knocking at once and waiting for gin).
SEARCH_PER_UNIT = 0.04
MAX_SEARCH_WORLDS = 2000
SEARCH_FROM_MS = 100
"""The budget (ms) from which the draw and every discard are searched (``Params.search``): at
100 the search costs about its budget on average (86 ms of CPU a decision, 610 at most); at the
default of 20 it would cost more than the budget (23 ms) and gains nothing measured."""
SEARCH_LIMITS: tuple[int | None, ...] = (None, 0)
"""How this seat plays on in a searched play-out: knocking at once, or waiting for gin."""


def budget_ms(movetime: int, go: Go) -> float:
    """The milliseconds one decision may use: the ``Movetime`` option, capped at a tenth of
    the referee's per-move limit and a fiftieth of the game clock left (plus the increment)."""
    budget = float(movetime)
    if go.movetime is not None:
        budget = min(budget, go.movetime / 10)
    if go.time is not None:
        budget = min(budget, go.time / 50 + (go.inc or 0) / 2)
    return max(0.0, budget)


def effort(budget: float) -> Params:
    """The work a decision does for a budget in milliseconds: more sampled opponent hands and
    played-out worlds for the knock, more discards looked at two draws deep, and more hands
    weighed to sharpen the inference (two per unit, up to ``MAX_POSTERIOR``); from
    ``SEARCH_FROM_MS``, the draw and every discard searched in more worlds."""
    work = budget * WORK_PER_MS
    return Params(
        knock_samples=int(min(400, 12 + work)),
        deep_discards=int(min(6, work // 15)),
        worlds=int(min(1000, work * 0.45)),
        posterior=int(min(MAX_POSTERIOR, work * 2)),
        search=budget >= SEARCH_FROM_MS,
        search_worlds=int(min(MAX_SEARCH_WORLDS, work * SEARCH_PER_UNIT)),
    )


class ExpertEngine(Engine):
    """Opponent modelling, expected-deadwood discards and sampled knock decisions."""

    name = "Expert"
    author = "ginproto"
    options: ClassVar[tuple[Option, ...]] = (
        Option.spin("Seed", default=0, min=0, max=2**31 - 1),
        Option.spin("Movetime", default=DEFAULT_MOVETIME, min=0, max=MAX_MOVETIME),
    )

    def __init__(self) -> None:
        super().__init__()
        # What the hands of this match showed of the opponents: how many times one held a hand
        # that could have knocked, past its early turns, and did not knock with it, less how
        # many times one knocked without gin past them.
        self._shown_waiting = 0
        # The hand of the last decision: its game view, the opponent's discards and the knock
        # limit then.
        self._last: tuple[GameView, int, int] | None = None

    def on_new_match(self, message: NewMatch) -> None:
        self._shown_waiting = 0
        self._last = None

    def on_hand_over(self, message: HandOver) -> None:
        """Remember whether the opponent showed itself waiting for gin or knocking (only when
        this seat played the hand and decided in it)."""
        entry, last = message.entry, self._last
        self._last = None
        if last is None or message.player not in entry.seats:
            return
        view, discards, limit = last
        if view.hand_number != entry.number or view.seats != entry.seats:
            return
        if discards < WAITER_KNOCKING_TURNS:
            return
        mine = entry.seats.index(message.player)
        result = entry.result
        if result.knocker == 1 - mine:
            if result.outcome in (Outcome.KNOCK, Outcome.UNDERCUT):
                self._shown_waiting -= 1
            return
        held = result.hands[1 - mine] if result.hands else ()
        if held and deadwood(held) <= limit:
            self._shown_waiting += 1

    def waiting_prior(self, params: Params) -> float:
        """The chance that the opponent waits for gin: ``Params.waiting``, its odds multiplied
        by ``wait_odds`` for each hand of the match that showed it waiting and divided by it
        for each that showed it knocking."""
        prior = params.waiting
        if prior <= 0 or prior >= 1:
            return max(0.0, min(1.0, prior))
        odds = prior / (1 - prior) * params.wait_odds ** max(-20, min(20, self._shown_waiting))
        return min(0.99, max(0.01, odds / (1 + odds)))

    def params_for(self, budget: float) -> Params:
        """The parameters of a decision with ``budget`` milliseconds: ``effort``'s. A subclass
        may change them (``bench/expert_hands.py`` compares such variants)."""
        return effort(budget)

    def _evaluator(self, view: GameView) -> Evaluator:
        hand = view.hand
        key = (
            int(self.option("Seed")),
            view.player,
            view.hand_number,
            len(hand.history),
            *(c.index for c in hand.cards),
        )
        params = self.params_for(budget_ms(int(self.option("Movetime")), self.go))
        rng = random.Random(hash(key))
        knowledge = Knowledge.of(hand)
        self._last = (view, len(knowledge.discarded), hand.knock_limit)
        if params.waiting > 0:
            params = dataclasses.replace(params, waiting=self.waiting_prior(params))
        if params.posterior:
            knowledge.refine(
                rng,
                params.posterior,
                beta=params.sample_beta,
                limit=hand.knock_limit,
                declined=params.declined,
                regret=params.regret,
                keep=params.keep,
            )
        return Evaluator(knowledge, params, rng, hand.knock_limit)

    # -- the first upcard and the draw ----------------------------------------------------
    def offer(self, view: GameView) -> Move:
        return Move.take() if self._wants_top(view) else Move.pass_()

    def draw(self, view: GameView) -> Move:
        if view.hand.stock_only:
            return Move.stock()
        return Move.pile() if self._wants_top(view) else Move.stock()

    def _wants_top(self, view: GameView) -> bool:
        hand = view.hand
        if not hand.pile:
            return False
        top = hand.pile[-1]
        evaluator = self._evaluator(view)
        wants = evaluator.take_gain(hand.cards, top) > evaluator.params.take_margin
        params = evaluator.params
        if not params.search or params.search_worlds <= 0:
            return wants
        # Taking and drawing from the stock (or passing the upcard), played out in the same
        # worlds; the evaluation's choice stands unless the other is clearly better.
        offer = hand.phase is Phase.OFFER
        roots = [Move.take(), Move.pass_()] if offer else [Move.pile(), Move.stock()]
        legal = hand.legal_moves()
        if not all(root in legal for root in roots):
            return wants
        table = self._play(view, evaluator, roots)
        return choose(table, 0 if wants else 1, params.search_z) == 0

    # -- discard or knock -----------------------------------------------------------------
    def discard(self, view: GameView) -> Move:
        hand = view.hand
        legal = hand.legal_moves()
        if any(m.kind is MoveKind.BIG_GIN for m in legal):
            return Move.big_gin()
        allowed = [m.card for m in legal if m.kind is MoveKind.DISCARD and m.card is not None]
        knocks = {m.card for m in legal if m.kind is MoveKind.KNOCK and m.card is not None}
        evaluator = self._evaluator(view)
        params = evaluator.params
        if params.search and params.search_worlds > 0:
            return self._search_every(view, evaluator, allowed, knocks)
        if params.worlds > 0:
            return self._search(view, evaluator, allowed, knocks)
        if knocks:
            move = self._knock(view, evaluator, knocks)
            if move is not None:
                return move
        scores = evaluator.discard_scores(hand.cards, allowed)
        card = min(scores, key=lambda c: (scores[c], -c.value, -c.index))
        return Move.discard(card)

    @staticmethod
    def _worlds(view: GameView, evaluator: Evaluator, count: int | None = None) -> list[Hand]:
        """The sampled worlds of a decision (``count``, else ``Params.worlds``): opponent hands
        from the inference, each with the rest of the unseen cards shuffled into a stock, dealt
        as hands by the rules core."""
        hands = evaluator.opponent_hands(evaluator.params.worlds if count is None else count)
        return worlds(view.hand, hands, evaluator.rng)

    def _play(self, view: GameView, evaluator: Evaluator, roots: list[Move]) -> Table:
        """Each of ``roots`` played out in the decision's ``Params.search_worlds`` worlds, by
        a seat that then knocks at once and by one that waits for gin
        (``engines.expert.search``)."""
        count = evaluator.params.search_worlds
        return play_candidates(
            self._worlds(view, evaluator, count), view.hand.seat, roots, SEARCH_LIMITS
        )

    @staticmethod
    def _options(
        evaluator: Evaluator,
        cards: Sequence[Card],
        allowed: list[Card],
        knocks: set[Card],
        count: int,
    ) -> tuple[list[Card], Card | None, bool]:
        """The ``count`` best discards by the evaluation, the best knock (None: none is
        legal) and whether that knock is gin."""
        scores = evaluator.discard_scores(cards, allowed)
        ranked = sorted(scores, key=lambda c: (scores[c], -c.value, -c.index))
        if not knocks:
            return ranked[:count], None, False
        after = evaluator.after_discards(cards)
        knock = min(knocks, key=lambda c: (after[c], -c.value, -c.index))
        return ranked[:count], knock, after[knock] == 0

    def _search_every(
        self, view: GameView, evaluator: Evaluator, allowed: list[Card], knocks: set[Card]
    ) -> Move:
        """The discard searched (``Params.search``): the best few discards by the evaluation,
        each played out in the same worlds, the evaluation's first kept unless another is
        clearly better (``engines.expert.search.choose``); a knock is then taken when its
        showdown in those worlds is worth at least the chosen discard played on (in its better
        way: knocking at once or waiting for gin). Gin is always taken."""
        hand = view.hand
        params = evaluator.params
        candidates, knock, gin = self._options(
            evaluator, hand.cards, allowed, knocks, max(1, params.search_candidates)
        )
        if gin and knock is not None:
            return Move.knock(knock)
        if len(candidates) == 1 and knock is None:
            return Move.discard(candidates[0])
        # A knock is judged in at least as many worlds as without the search.
        count = params.search_worlds if knock is None else max(params.worlds, params.search_worlds)
        played = self._worlds(view, evaluator, count)
        roots = [Move.discard(card) for card in candidates]
        table = play_candidates(played, hand.seat, roots, SEARCH_LIMITS)
        chosen = choose(table, 0, params.search_z)
        if knock is not None and played:
            showdown = self._showdown(view, evaluator, knock)
            seat = hand.seat
            total = float(sum(showdown.points(world.cards(1 - seat)) for world in played))
            if params.waiting > 0 and len(evaluator.knowledge.discarded) >= params.wait_from:
                total = self._knock_against_waiting(showdown, evaluator, total, len(played))
            if total / len(played) >= table.mean(chosen):
                return Move.knock(knock)
        return Move.discard(candidates[chosen])

    def _search(
        self, view: GameView, evaluator: Evaluator, allowed: list[Card], knocks: set[Card]
    ) -> Move:
        """Compare the best discards (``Params.candidates`` of them, by the evaluation) and the
        best knock by playing each out in the same sampled worlds; with ``hold_for_gin``, a
        knock is also weighed against the best discard played out by a seat that knocks only
        with gin. Played-out discards are compared only when there are several: a few dozen
        worlds are too noisy to rank discards the evaluation already orders, so by default
        only the knock is searched."""
        hand = view.hand
        params = evaluator.params
        candidates, knock, gin = self._options(
            evaluator, hand.cards, allowed, knocks, params.candidates
        )
        if gin and knock is not None:
            return Move.knock(knock)
        if len(candidates) == 1 and knock is None:
            return Move.discard(candidates[0])
        seat = hand.seat
        totals = dict.fromkeys(candidates, 0.0)
        knock_total = 0.0
        # Declining the knock to wait for gin, with the discard the evaluation likes best.
        hold = knock is not None and params.hold_for_gin
        hold_card = candidates[0]
        hold_total = 0.0
        # And, with ``hold_low``, declining it to knock later with that little deadwood.
        low = knock is not None and params.hold_low > 0
        low_total = 0.0
        showdown = None if knock is None else self._showdown(view, evaluator, knock)
        # The best discard played out by a seat that knocks as the rules allow, and, declining
        # the knock, by one that waits for gin and one that knocks with ``hold_low``: one
        # play-out, branched where they part (``play_outs``).
        limits: list[int | None] = [None]
        if hold:
            limits.append(0)
        if low:
            limits.append(params.hold_low)
        for world in self._worlds(view, evaluator):
            for card in candidates:
                values = self._play_on(world, card, seat, limits if card == hold_card else [None])
                totals[card] += values[0]
                if card == hold_card:
                    if hold:
                        hold_total += values[1]
                    if low:
                        low_total += values[-1]
            if showdown is not None:
                knock_total += showdown.points(world.cards(1 - seat))
        if (
            showdown is not None
            and params.waiting > 0
            and len(evaluator.knowledge.discarded) >= params.wait_from
        ):
            knock_total = self._knock_against_waiting(showdown, evaluator, knock_total)
        # Equal totals: the one the evaluation ranks first.
        best = max(candidates, key=lambda c: (totals[c], -candidates.index(c)))
        if low and low_total > max(knock_total, totals[best], hold_total if hold else -1e9):
            return Move.discard(hold_card)
        if hold and hold_total > max(knock_total, totals[best]):
            return Move.discard(hold_card)
        if knock is not None and knock_total >= totals[best]:
            return Move.knock(knock)
        return Move.discard(best)

    @staticmethod
    def _showdown(view: GameView, evaluator: Evaluator, knock: Card) -> Showdown:
        """This seat's knock with ``knock``, to score against the opponent's hands."""
        kept = [c for c in view.hand.cards if c != knock]
        hidden = [*evaluator.knowledge.unseen, *evaluator.knowledge.opponent_known]
        return Showdown.of(view.hand, kept, hidden)

    @staticmethod
    def _knock_against_waiting(
        showdown: Showdown, evaluator: Evaluator, total: float, worlds: int | None = None
    ) -> float:
        """The knock's total over the decision's worlds (``worlds`` of them, else
        ``Params.worlds``), with the share ``Params.waiting`` of it scored instead against
        hands of an opponent that waited for gin (``Evaluator.patient_hands``): such an
        opponent holds far less deadwood than the inference's hands, and undercuts a knock
        that they would not."""
        params = evaluator.params
        played = params.worlds if worlds is None else worlds
        count = max(1, round(played * params.waiting))
        patient = evaluator.patient_hands(count)
        waited = sum(showdown.points(hand) for hand in patient) / count
        share = params.waiting
        return (1 - share) * total + share * waited * played

    @staticmethod
    def _play_on(world: Hand, card: Card, seat: int, limits: list[int | None]) -> list[int]:
        """The play-outs of discarding ``card`` in (a copy of) ``world``, one for each of
        ``limits``: this seat then knocks as the rules allow (None) or only with that much
        deadwood or less (0: gin)."""
        trial = world.clone()
        trial.apply(Move.discard(card))
        return play_outs(trial, seat, limits)

    def _knock(self, view: GameView, evaluator: Evaluator, knocks: set[Card]) -> Move | None:
        hand = view.hand
        after = evaluator.after_discards(hand.cards)
        card = min(knocks, key=lambda c: (after[c], -c.value, -c.index))
        if after[card] == 0:
            return Move.knock(card)
        params = evaluator.params
        value = evaluator.knock_value(self._showdown(view, evaluator, card))
        # A discard now would draw the hand: any positive expectation beats that.
        if drawn_after_discard(hand.rules, hand.stock, hand.turns):
            threshold = 0.0
        elif hand.stock <= DRAW_STOCK + 4:
            threshold = params.knock_late_threshold
        else:
            threshold = params.knock_threshold
        if value > threshold:
            return Move.knock(card)
        return None


def main() -> None:
    """Run the expert engine on stdin/stdout."""
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    ExpertEngine().run()


if __name__ == "__main__":
    main()
