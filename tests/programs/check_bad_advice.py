"""Broken for ``ginref check``: as the sitter it always advises ``stock``, whatever the
captain's decision."""

from check_base import Bot


class BadAdvice(Bot):
    def answer(self, decision: str) -> None:
        if decision == "advice":
            self.say("move stock")
        else:
            super().answer(decision)


BadAdvice().run()
