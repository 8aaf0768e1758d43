"""Broken for ``ginref check``: discards a card it does not hold."""

from check_base import Bot

DECK = [r + s for s in "cdhs" for r in "A23456789TJQK"]


class WrongCard(Bot):
    def discard(self) -> str:
        held = set(self.position["cards"].split(",")) | set(self.position["pile"].split(","))
        return "discard " + next(c for c in DECK if c not in held)


WrongCard().run()
