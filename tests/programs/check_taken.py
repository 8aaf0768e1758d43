"""Broken for ``ginref check``: discards its highest card, even the one just taken."""

from check_base import Bot

RANKS = "A23456789TJQK"


class Taken(Bot):
    def discard(self) -> str:
        cards = self.position["cards"].split(",")
        return "discard " + max(cards, key=lambda c: min(RANKS.index(c[0]) + 1, 10))


Taken().run()
