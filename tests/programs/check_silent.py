"""Broken for ``ginref check``: completes the handshake but never answers ``go``."""

from check_base import Bot


class Silent(Bot):
    def answer(self, decision: str) -> None:
        pass


Silent().run()
