"""Broken for ``ginref check``: answers every offer with two move lines."""

from check_base import Bot


class Double(Bot):
    def offer(self) -> str:
        return "pass\nmove take"


Double().run()
