"""Broken for ``ginref check``: knocks whenever it could under a limit of 10, ignoring the
``knocklimit`` field (which Oklahoma lowers)."""

from itertools import combinations

from check_base import Bot

RANKS = "A23456789TJQK"


def value(card: str) -> int:
    return min(RANKS.index(card[0]) + 1, 10)


def is_meld(cards: tuple[str, ...]) -> bool:
    if len({c[0] for c in cards}) == 1:
        return len(cards) <= 4
    ranks = sorted(RANKS.index(c[0]) for c in cards)
    return len({c[1] for c in cards}) == 1 and ranks == list(range(ranks[0], ranks[0] + len(ranks)))


def deadwood(cards: tuple[str, ...]) -> int:
    if not cards:
        return 0
    first, rest = cards[0], cards[1:]
    best = value(first) + deadwood(rest)
    for size in (2, 3, 4, 5, 6, 7, 8, 9):
        for others in combinations(rest, size):
            if is_meld((first, *others)):
                best = min(best, deadwood(tuple(c for c in rest if c not in others)))
    return best


class KnockLimit(Bot):
    def discard(self) -> str:
        cards = self.position["cards"].split(",")
        for card in cards:
            if card != self.taken() and deadwood(tuple(c for c in cards if c != card)) <= 10:
                return f"knock {card}"
        return super().discard()


KnockLimit().run()
