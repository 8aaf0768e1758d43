"""Broken for ``ginref check``: says its name but never ``ginok``."""

from check_base import Bot


class NoGinok(Bot):
    def handshake(self) -> None:
        self.say("id name NoGinok")


NoGinok().run()
