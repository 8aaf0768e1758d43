"""Broken for ``ginref check``: answers a draw decision with ``take``, an offer's move."""

from check_base import Bot


class OutOfTurn(Bot):
    def draw(self) -> str:
        return "take"


OutOfTurn().run()
