"""Tests for ginproto.melds: named rule cases, regressions, and cross-checks against the naive
solver in tests/naive_solver.py on many seeded random and adversarial hands."""

from __future__ import annotations

import inspect
import random
from collections.abc import Iterable, Sequence

import naive_solver as naive
import pytest
from helpers import thorough
from hypothesis import given, settings
from hypothesis import strategies as st

from ginproto.cards import DECK, Card, parse_cards
from ginproto.layoffs import best_layoffs, knocker_arrangement, layable_count
from ginproto.melds import (
    Arrangement,
    DefenderResult,
    Layoff,
    Meld,
    MeldError,
    MeldKind,
    best_melds,
    cards_mask,
    check_declared,
    deadwood,
    discard_deadwoods,
    is_big_gin,
    is_meld,
    knock_options,
    mask_best_discard,
    mask_deadwood,
    mask_least_discard,
    optimal_arrangements,
)


def cards(text: str) -> list[Card]:
    return list(parse_cards(text))


def meld(text: str) -> Meld:
    return Meld.from_str(text)


def random_hands(seed: int, count: int, size: int, pool: Sequence[Card] = DECK) -> list[list[Card]]:
    rng = random.Random(seed)
    return [rng.sample(pool, size) for _ in range(count)]


def dense_hands(seed: int, count: int, sizes: Sequence[int]) -> list[list[Card]]:
    """Hands drawn from a narrow window of ranks, or from two suits: many overlapping melds."""
    rng = random.Random(seed)
    hands = []
    for _ in range(count):
        if rng.random() < 0.5:
            low = rng.randint(0, 8)
            pool = [c for c in DECK if low <= c.rank < low + rng.randint(4, 5)]
        else:
            suits = rng.sample(range(4), 2)
            pool = [c for c in DECK if c.suit in suits]
        size = rng.choice(sizes)
        hands.append(rng.sample(pool, min(size, len(pool))))
    return hands


# A hand-built list of awkward hands: four-card sets across runs, long runs, many ties.
ADVERSARIAL = [
    "7c 7d 7h 7s 5s 6s 8s 9s 5h 6h",
    "7c 7d 7h 7s 5s 6s 8s 9s 5h 6h 8h",
    "As 2s 3s 4s 5s 6s 7s 8s 9s Ts",
    "As 2s 3s 4s 5s 6s 7s 8s 9s Ts Js",
    "5c 6c 7c 5d 6d 7d 5h 6h 7h 5s 6s",
    "4c 5c 6c 7c 4d 5d 6d 7d 5h 6h 7h",
    "4c 5c 6c 7c 8c 4d 5d 6d 7d 8d 5h",
    "Ac 2c 3c Ad 2d 3d Ah 2h 3h As",
    "Jc Qc Kc Jd Qd Kd Jh Qh Kh Js Qs",
    "Qc Kc Ac 2c Qd Kd Ad Qh Kh Ah Qs",
    "6h 7h 8h 7c 7d 9h Th Jh 7s 6c 6d",
    "3s 4s 5s 6s 3h 3d 6h 6d 4c 5c 3c",
    "8c 8d 8h 8s 9s Ts 7s 6s 9h Th Jh",
    "2c 3c 4c 5c 6c 7c 8c 9c Tc Jc Qc",
    "Tc Td Th Ts Jc Jd Jh Js Qc Qd Qh",
    "9c 9d 9h Tc Th Jc Jh Qc Qh Kc Kh",
]


# -- Melds -----------------------------------------------------------------------------------


def test_set_of_three_and_four() -> None:
    three = Meld.of(cards("7h 7c 7s"))
    four = Meld.of(cards("7h 7c 7s 7d"))
    assert three.kind is MeldKind.SET and four.kind is MeldKind.SET
    assert str(three) == "7c-7h-7s"  # sets in suit order
    assert str(four) == "7c-7d-7h-7s"
    assert is_meld(cards("Kc Kd Kh")) and is_meld(cards("Kc Kd Kh Ks"))
    assert not is_meld(cards("Kc Kd"))


def test_run_ace_low() -> None:
    assert is_meld(cards("As 2s 3s"))
    assert Meld.of(cards("3s As 2s")).cards == tuple(cards("As 2s 3s"))
    assert Meld.of(cards("3s As 2s")).kind is MeldKind.RUN
    assert not is_meld(cards("Qs Ks As"))
    assert not is_meld(cards("Ks As 2s"))
    assert is_meld(cards("Js Qs Ks"))
    assert is_meld(cards("As 2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks"))


@pytest.mark.parametrize(
    "text",
    [
        "",
        "5s",
        "5s 6s",
        "5s 6s 8s",
        "5s 6s 7h",
        "5s 5s 6s 7s",
        "7c 7d 8c",
        "7c 7d 7h 7c",
        "Qs Ks As",
        "Ks As 2s",
    ],
)
def test_meld_of_rejects_non_melds(text: str) -> None:
    with pytest.raises(MeldError):
        Meld.of(cards(text))
    assert not is_meld(cards(text))


@pytest.mark.parametrize("text", ["", "5s-6s", "5s-6s-7x", "5s--6s-7s", "5s 6s 7s", "5s-6s-8s"])
def test_meld_from_str_rejects_bad_text(text: str) -> None:
    with pytest.raises(MeldError):
        Meld.from_str(text)


def test_meld_error_is_a_value_error() -> None:
    assert issubclass(MeldError, ValueError)


def all_possible_melds() -> list[Meld]:
    found = []
    for rank in range(13):
        column = [c for c in DECK if c.rank == rank]
        found.append(Meld.of(column))
        found.extend(Meld.of([c for c in column if c is not left]) for left in column)
    for suit in range(4):
        row = [c for c in DECK if c.suit == suit]
        for start in range(13):
            for stop in range(start + 3, 14):
                found.append(Meld.of(row[start:stop]))
    return found


def test_meld_text_round_trip() -> None:
    melds = all_possible_melds()
    assert len(melds) == 13 * 5 + 4 * 66
    for m in melds:
        assert Meld.from_str(str(m)) == m
        assert eval(repr(m), {"Meld": Meld}) == m
        assert Meld.of(reversed(m.cards)) == m
        assert hash(Meld.of(reversed(m.cards))) == hash(m)
    assert str(meld("7s-5s-6s")) == "5s-6s-7s"
    assert repr(meld("5s-6s-7s")) == "Meld.from_str('5s-6s-7s')"
    assert meld(" Th-Jh-Qh ") == Meld.of(cards("Qh Jh Th"))


def test_meld_constructor_validates_and_canonicalises() -> None:
    assert Meld(tuple(cards("7s 5s 6s"))).cards == tuple(cards("5s 6s 7s"))
    with pytest.raises(MeldError):
        Meld(tuple(cards("5s 6s 8s")))


def test_meld_extended() -> None:
    assert meld("7c-7d-7h").extended(Card.from_str("7s")) == meld("7c-7d-7h-7s")
    assert meld("7c-7d-7h-7s").extended(Card.from_str("8s")) is None
    assert meld("5s-6s-7s").extended(Card.from_str("8s")) == meld("5s-6s-7s-8s")
    assert meld("5s-6s-7s").extended(Card.from_str("4s")) == meld("4s-5s-6s-7s")
    assert meld("5s-6s-7s").extended(Card.from_str("9s")) is None
    assert meld("5s-6s-7s").extended(Card.from_str("8h")) is None
    assert meld("5s-6s-7s").extended(Card.from_str("6s")) is None
    assert meld("Js-Qs-Ks").extended(Card.from_str("As")) is None
    assert meld("As-2s-3s").extended(Card.from_str("Ks")) is None


# -- Deadwood ---------------------------------------------------------------------------------


def test_card_in_at_most_one_meld() -> None:
    # 7h could finish the set or the run, not both.
    hand = cards("7c 7d 7h 8h 9h")
    assert deadwood(hand) == 14  # run 7h-8h-9h, 7c 7d left (the set would leave 8h 9h = 17)
    assert best_melds(hand).melds == (meld("7h-8h-9h"),)
    assert deadwood(cards("5h 6h 7h 7c 7d")) == 11  # set of 7s, 5h 6h left
    # A four-card set overlapping a run: 7s goes to the run, the set keeps three.
    assert deadwood(cards("7c 7d 7h 7s 8s 9s")) == 0
    assert best_melds(cards("7c 7d 7h 7s 8s 9s")).melds == (meld("7c-7d-7h"), meld("7s-8s-9s"))


def test_minimal_deadwood() -> None:
    assert deadwood([]) == 0
    assert deadwood(cards("Kh")) == 10
    assert deadwood(cards("As 2s 3s")) == 0
    assert deadwood(cards("As 2s 3s Kc Kd")) == 20
    assert deadwood(cards("As 2s 3s Kc Kd Kh")) == 0
    assert deadwood(cards("Qs Ks As 2c")) == 23  # no wrap-around
    assert deadwood(cards("Jc Qc Kc Jd Qd Kd Jh Qh Kh 2s")) == 2
    assert deadwood(DECK) == 0
    assert deadwood(cards("Ac 2c Ad 2d")) == 6
    assert deadwood([c for c in DECK if c.rank < 2]) == 0  # two sets
    with pytest.raises(ValueError):
        deadwood(cards("As As 2s"))


def test_best_melds_prefers_whole_melds() -> None:
    arrangement = best_melds(cards("As 2s 3s 4s 5s 6s Kc"))
    assert arrangement.melds == (meld("As-2s-3s-4s-5s-6s"),)
    assert arrangement.deadwood_cards == (Card.from_str("Kc"),)
    assert arrangement.deadwood == 10
    assert str(arrangement) == "As-2s-3s-4s-5s-6s | Kc"


def test_optimal_arrangements_lists_every_tie() -> None:
    options = optimal_arrangements(cards("As 2s 3s 4s 5s 6s Kc"))
    texts = [str(a) for a in options]
    assert texts == ["As-2s-3s-4s-5s-6s | Kc", "As-2s-3s 4s-5s-6s | Kc"]
    options = optimal_arrangements(cards("7c 7d 7h 6h 8h"))
    assert {str(a) for a in options} == {"7c-7d-7h | 6h 8h", "6h-7h-8h | 7c 7d"}
    assert optimal_arrangements([]) == [Arrangement((), ())]


def test_oklahoma_regression() -> None:
    """7s 8s 9s 7d 8d 9d 9h Ac 2c 3c, drawing 7h, under a knock limit of 7 (a 7 upcard)."""
    hand = cards("7s 8s 9s 7d 8d 9d 9h Ac 2c 3c 7h")
    options = knock_options(hand, 7)
    nine = Card.from_str("9h")
    # Discard 9h: Ac-2c-3c 7d-8d-9d 7s-8s-9s, 7h left = 7.
    assert options[nine] == 7
    assert naive.deadwood(set(hand) - {nine}) == 7
    assert options == naive.knock_options(hand, 7)
    assert discard_deadwoods(hand) == naive.discard_deadwoods(hand)
    assert discard_deadwoods(hand)[Card.from_str("7h")] == 9
    assert knock_options(hand, 6) == {}


def test_knock_options_and_discard_deadwoods() -> None:
    hand = cards("As 2s 3s 4s 5s 6s 7s 8s 9s Ts Kc")
    table = discard_deadwoods(hand)
    assert set(table) == set(hand)
    assert table[Card.from_str("Kc")] == 0
    assert table[Card.from_str("As")] == 10
    assert table[Card.from_str("4s")] == 10  # A-2-3 and 5-T stay melds
    assert knock_options(hand, 0) == {Card.from_str("Kc"): 0}
    no_melds = cards("As 3s 5s 7s 9s Jc Kd 2h 4h 6h 8h")
    assert knock_options(no_melds, 10) == {}
    assert discard_deadwoods(no_melds) == {c: 65 - c.value for c in no_melds}


def test_is_big_gin() -> None:
    assert is_big_gin(cards("As 2s 3s 4s 5s 6s 7s 8s 9s Ts Js"))
    assert is_big_gin(cards("Tc Td Th Ts Jc Jd Jh Js Qc Qd Qh"))
    assert not is_big_gin(cards("As 2s 3s 4s 5s 6s 7s 8s 9s Ts"))  # 10 cards: plain gin
    assert not is_big_gin(cards("As 2s 3s 4s 5s 6s 7s 8s 9s Ts Kc"))


def test_check_declared() -> None:
    hand = cards("7c 7d 7h 7s 8s 9s 2c 3c 4c Kd")
    arrangement = check_declared(hand, [meld("7s-8s-9s"), meld("7c-7d-7h"), meld("2c-3c-4c")])
    assert arrangement.melds == (meld("2c-3c-4c"), meld("7c-7d-7h"), meld("7s-8s-9s"))
    assert arrangement.deadwood_cards == (Card.from_str("Kd"),)
    # A worse declaration is still a legal arrangement.
    worse = check_declared(hand, [meld("7c-7d-7h-7s")])
    assert worse.deadwood == 8 + 9 + 2 + 3 + 4 + 10
    assert check_declared(set(hand), []).deadwood == sum(c.value for c in hand)
    with pytest.raises(MeldError, match="more than one meld"):
        check_declared(hand, [meld("7c-7d-7h-7s"), meld("7s-8s-9s")])
    with pytest.raises(MeldError, match="not in the hand"):
        check_declared(hand, [meld("Tc-Jc-Qc")])
    with pytest.raises(MeldError, match="twice"):
        check_declared([*hand, hand[0]], [])


# -- Layoffs ----------------------------------------------------------------------------------


def check_defender(
    knocker_melds: Sequence[Meld], defender: Iterable[Card], result: DefenderResult
) -> None:
    """The result is a legal showdown: own melds valid and disjoint, every layoff fits when it is
    laid, every card accounted for once, and the deadwood is the naive least."""
    hand = list(defender)
    used: list[Card] = []
    for m in result.melds:
        assert naive.is_meld(m.cards)
        used.extend(m.cards)
    grown = [list(m.cards) for m in knocker_melds]
    for layoff in result.layoffs:
        assert naive.is_meld([*grown[layoff.meld], layoff.card]), layoff
        grown[layoff.meld].append(layoff.card)
        used.append(layoff.card)
    used.extend(result.deadwood_cards)
    assert sorted(used) == sorted(hand)
    assert list(result.deadwood_cards) == sorted(result.deadwood_cards)
    assert result.deadwood == sum(c.value for c in result.deadwood_cards)
    assert result.deadwood == naive.layoff_deadwood([m.cards for m in knocker_melds], hand)


def test_chained_layoffs() -> None:
    knocker = [meld("5s-6s-7s")]
    defender = cards("8s 9s Ts Kc Qd 2h")
    result = best_layoffs(knocker, defender)
    assert result.layoffs == tuple(Layoff(Card.from_str(t), 0) for t in ("8s", "9s", "Ts"))
    assert result.melds == ()
    assert result.deadwood == 22
    check_defender(knocker, defender, result)
    # Both ends, outward: 4s before 3s, 8s before 9s.
    result = best_layoffs(knocker, cards("3s 4s 8s 9s Kc"))
    assert [str(x.card) for x in result.layoffs] == ["4s", "3s", "8s", "9s"]
    assert result.deadwood_cards == (Card.from_str("Kc"),)
    # 9s without 8s cannot be laid off.
    assert best_layoffs(knocker, cards("9s Kc")).layoffs == ()
    assert layable_count(knocker, cards("8s 9s")) == 2
    assert layable_count(knocker, cards("9s")) == 0
    assert layable_count(knocker, cards("3s 4s Ts")) == 2


def test_layoff_onto_set() -> None:
    knocker = [meld("7c-7d-7h"), meld("9c-9d-9h-9s")]
    result = best_layoffs(knocker, cards("7s 8s Kd"))
    assert result.layoffs == (Layoff(Card.from_str("7s"), 0),)
    assert result.deadwood == 18
    assert layable_count(knocker, DECK) == 1  # only 7s: a four-card set takes nothing
    # The melds' own cards never count, even when adjacent runs would seem to take them.
    assert layable_count([meld("2s-3s-4s"), meld("5s-6s-7s")], DECK) == 7  # As, and 8s to Ks


def test_breaking_own_meld_to_lay_off() -> None:
    # Alone, the defender's best is the run 8d-9d-Td (8c 8s Kc left, 26). Against the knocker's
    # tens it breaks that run: Td goes onto Tc-Th-Ts, 8c-8d-8s is melded, 9d Kc left (19).
    knocker = [meld("Tc-Th-Ts")]
    defender = cards("8c 8d 8s 9d Td Kc")
    assert best_melds(defender).melds == (meld("8d-9d-Td"),)
    result = best_layoffs(knocker, defender)
    assert result.melds == (meld("8c-8d-8s"),)
    assert result.layoffs == (Layoff(Card.from_str("Td"), 0),)
    assert result.deadwood == 19
    check_defender(knocker, defender, result)
    # A four-card set gives one card up to start a chain: 8h then 9h onto 5h-6h-7h.
    knocker = [meld("5h-6h-7h")]
    defender = cards("8c 8d 8h 8s 9h")
    assert best_melds(defender).deadwood == 9
    result = best_layoffs(knocker, defender)
    assert result.melds == (meld("8c-8d-8s"),)
    assert [str(x.card) for x in result.layoffs] == ["8h", "9h"]
    assert result.deadwood == 0
    check_defender(knocker, defender, result)


def test_two_runs_of_one_suit() -> None:
    knocker = [meld("2s-3s-4s"), meld("8s-9s-Ts")]
    defender = cards("As 5s 7s Js Qs Kd")
    result = best_layoffs(knocker, defender)
    assert [(str(x.card), x.meld) for x in result.layoffs] == [
        ("As", 0),
        ("5s", 0),
        ("7s", 1),
        ("Js", 1),
        ("Qs", 1),
    ]
    assert result.deadwood == 10
    check_defender(knocker, defender, result)
    # The gap between the runs is filled from both sides.
    defender = cards("5s 6s 7s")
    assert layable_count(knocker, defender) == 3
    assert best_layoffs(knocker, defender).deadwood == 0


def test_card_fitting_a_set_and_a_run() -> None:
    # 8s fits the set of 8s and the run; only on the run can 9s follow it.
    knocker = [meld("8c-8d-8h"), meld("5s-6s-7s")]
    defender = cards("8s 9s Kd")
    result = best_layoffs(knocker, defender)
    assert result.layoffs == (Layoff(Card.from_str("8s"), 1), Layoff(Card.from_str("9s"), 1))
    assert result.deadwood == 10
    assert layable_count(knocker, cards("8s 9s")) == 2
    check_defender(knocker, defender, result)


def test_no_layoffs_after_gin() -> None:
    defender = cards("8s 9s Ts Kc")
    result = best_layoffs((), defender)
    assert result.layoffs == ()
    assert result.melds == (meld("8s-9s-Ts"),)
    assert result.deadwood == 10
    hand = cards("As 2s 3s 4s 5s 6s Kc 7d 8d 9d")
    assert best_layoffs((), hand).melds == best_melds(hand).melds


def test_knocker_arrangement_tie_break() -> None:
    # Set 7c-7d-7h and run 6h-7h-8h leave the same deadwood (22). The set exposes only 7s;
    # the run exposes chains of hearts at both ends.
    hand = cards("7c 7d 7h 6h 8h Ac 2c 3c 4d 4s")
    assert len(optimal_arrangements(hand)) == 2
    unseen = [c for c in DECK if c not in hand]
    chosen = knocker_arrangement(hand, unseen)
    assert meld("7c-7d-7h") in chosen.melds
    assert chosen.deadwood == 22
    # When 5h and 9h are known (say, in the discard pile) the run exposes nothing, the set 7s.
    seen = cards("5h 9h")
    unseen = [c for c in DECK if c not in hand and c not in seen]
    chosen = knocker_arrangement(hand, unseen)
    assert meld("6h-7h-8h") in chosen.melds
    # The choice depends only on what the knocker cannot see: the same unseen cards give the
    # same answer wherever they are (stock or the defender's hand), and the defender's hand is
    # no argument at all.
    assert list(inspect.signature(knocker_arrangement).parameters) == ["cards", "unseen"]
    assert knocker_arrangement(hand, reversed(unseen)) == chosen
    # Cards of the knocker's own hand passed as unseen are ignored.
    assert knocker_arrangement(hand, [*unseen, *hand]) == chosen


def test_knocker_arrangement_is_optimal() -> None:
    for hand in dense_hands(17, 300, [10]):
        unseen = [c for c in DECK if c not in hand]
        chosen = knocker_arrangement(hand, unseen)
        assert chosen in optimal_arrangements(hand)
        least = min(layable_count(a.melds, unseen) for a in optimal_arrangements(hand))
        assert layable_count(chosen.melds, unseen) == least


# -- Cross-checks against the naive solver ---------------------------------------------------


@pytest.mark.parametrize("size", [10, 11])
def test_deadwood_matches_naive_on_random_hands(size: int) -> None:
    """100 000 seeded random hands (20 000 in a quick run), half of 10 cards and half of 11
    (one half each)."""
    disagreements = []
    for hand in random_hands(size, thorough(50_000, 10_000), size):
        if deadwood(hand) != naive.deadwood(hand):
            disagreements.append(hand)
    assert disagreements == []


def test_deadwood_matches_naive_on_adversarial_hands() -> None:
    hands = [cards(text) for text in ADVERSARIAL]
    hands += dense_hands(3, 6000, [9, 10, 11, 12])
    hands += random_hands(4, 500, 14) + random_hands(5, 200, 18)
    for hand in hands:
        assert deadwood(hand) == naive.deadwood(hand), hand


def test_large_groups() -> None:
    """Groups beyond 20 cards take the rank sweep instead of enumerating collections."""
    for hand in random_hands(6, 60, 21) + random_hands(7, 30, 26) + dense_hands(8, 60, [21, 24]):
        assert deadwood(hand) == naive.deadwood(hand), hand
    assert deadwood(DECK) == 0
    assert deadwood([c for c in DECK if c.suit < 2 and c.rank % 4 != 3]) == 10 + 10  # two kings


@pytest.mark.slow
def test_discard_deadwoods_matches_naive() -> None:
    hands = random_hands(8, 4000, 11) + dense_hands(9, 1500, [11])
    hands += [cards(t) for t in ADVERSARIAL if len(t.split()) == 11]
    for hand in hands:
        expected = naive.discard_deadwoods(hand)
        assert discard_deadwoods(hand) == expected, hand
        for limit in (0, 7, 10):
            assert knock_options(hand, limit) == {c: d for c, d in expected.items() if d <= limit}


def test_knock_options_consistent_on_many_hands() -> None:
    for hand in random_hands(10, thorough(20_000, 5_000), 11):
        table = discard_deadwoods(hand)
        assert knock_options(hand, 10) == {c: d for c, d in table.items() if d <= 10}
        assert min(table.values()) >= deadwood(hand) - 10


def arrangement_order(a: Arrangement) -> tuple[int, list[list[int]]]:
    """The documented order of optimal_arrangements: fewest melds, then card indexes."""
    return (len(a.melds), [[c.index for c in m.cards] for m in a.melds])


def test_optimal_arrangements_match_naive() -> None:
    hands = [cards(t) for t in ADVERSARIAL]
    hands += dense_hands(11, 1500, [8, 10, 11]) + random_hands(12, 1500, 10)
    # More cards than a hand holds take the memoised search instead of listing collections.
    hands += dense_hands(13, 60, [14, 15]) + random_hands(14, 100, 16)
    for hand in hands:
        ours = {frozenset(frozenset(m.cards) for m in a.melds) for a in optimal_arrangements(hand)}
        assert ours == naive.optimal_arrangements(hand), hand
        options = optimal_arrangements(hand)
        assert options == sorted(options, key=arrangement_order)
        assert best_melds(hand) == options[0]


def test_best_layoffs_matches_naive() -> None:
    rng = random.Random(13)
    for round_ in range(3000):
        if round_ % 3 == 0:
            pool = list(DECK)
        else:
            low = rng.randint(0, 6)
            pool = [c for c in DECK if low <= c.rank <= low + 6]
        rng.shuffle(pool)
        knocker_hand, defender = pool[:10], pool[10:20]
        knocker = best_melds(knocker_hand).melds
        result = best_layoffs(knocker, defender)
        check_defender(knocker, defender, result)
        # The count of layable cards agrees with what the best showdown lays off when the
        # defender keeps no meld of its own.
        if not result.melds:
            assert len(result.layoffs) == layable_count(knocker, defender)


# -- Properties -------------------------------------------------------------------------------

hands_strategy = st.lists(st.sampled_from(DECK), unique=True, min_size=0, max_size=13)


@settings(max_examples=400, deadline=None)
@given(hands_strategy)
def test_best_melds_properties(hand: list[Card]) -> None:
    arrangement = best_melds(hand)
    seen: set[Card] = set()
    for m in arrangement.melds:
        assert is_meld(m.cards) and naive.is_meld(m.cards)
        assert not seen & set(m.cards)
        seen |= set(m.cards)
    assert seen <= set(hand)
    assert set(arrangement.deadwood_cards) == set(hand) - seen
    assert arrangement.deadwood == deadwood(hand)
    assert check_declared(hand, arrangement.melds) == arrangement


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(DECK), unique=True, min_size=11, max_size=11))
def test_discard_deadwoods_property(hand: list[Card]) -> None:
    table = discard_deadwoods(hand)
    assert set(table) == set(hand)
    for card, dw in table.items():
        assert dw == deadwood([c for c in hand if c != card])
    assert is_big_gin(hand) == (deadwood(hand) == 0)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(DECK), unique=True, min_size=3, max_size=5))
def test_meld_validity_property(group: list[Card]) -> None:
    assert is_meld(group) == naive.is_meld(group)
    if is_meld(group):
        m = Meld.of(group)
        assert Meld.from_str(str(m)) == m
        assert set(m.cards) == set(group)


@pytest.mark.parametrize("size", [1, 2, 10, 11, 12, 13, 14])
def test_least_discard_and_mask_deadwood_match_the_naive_solver(size: int) -> None:
    """The search's shortcuts (the least deadwood after a discard without listing every
    discard, the deadwood of a mask) agree with the brute-force solver, on random hands and on
    hands full of overlapping melds."""
    hands = random_hands(31 + size, 150, size) + dense_hands(47 + size, 150, [size])
    rng = random.Random(size)
    for hand in hands:
        after = naive.discard_deadwoods(hand)
        assert mask_least_discard(cards_mask(hand)) == min(after.values())
        assert mask_deadwood(cards_mask(hand)) == naive.deadwood(hand)
        # A card that may not be discarded (just taken from the pile); one not in the hand
        # bans nothing.
        if size > 1:
            banned = rng.choice(hand)
            least = min(dw for card, dw in after.items() if card != banned)
            assert mask_least_discard(cards_mask(hand), banned.index) == least
        outside = rng.choice([c for c in DECK if c not in hand])
        assert mask_least_discard(cards_mask(hand), outside.index) == min(after.values())


@pytest.mark.parametrize("size", [2, 10, 11, 12, 14])
def test_best_discard_matches_the_naive_solver(size: int) -> None:
    """The discard leaving the least deadwood, ties to the higher card and then to the lower
    index, never the banned card (one not in the hand bans nothing)."""
    hands = random_hands(61 + size, 150, size) + dense_hands(67 + size, 150, [size])
    rng = random.Random(size)
    for hand in hands:
        after = naive.discard_deadwoods(hand)
        for banned in (None, rng.choice(hand), rng.choice([c for c in DECK if c not in hand])):
            best = min(
                (c for c in hand if c != banned), key=lambda c: (after[c], -c.value, c.index)
            )
            index = -1 if banned is None else banned.index
            assert mask_best_discard(cards_mask(hand), index) == (best.index, after[best])


def test_least_discard_of_no_cards_is_an_error() -> None:
    with pytest.raises(ValueError, match="no card"):
        mask_least_discard(0)
    card = Card.from_str("7h")
    with pytest.raises(ValueError, match="no card"):
        mask_least_discard(cards_mask([card]), card.index)
    with pytest.raises(ValueError, match="no card"):
        mask_best_discard(cards_mask([card]), card.index)
