"""Broken for ``ginref check``: ignores ``quit`` and keeps running."""

from check_base import Bot


class NoQuit(Bot):
    def quit(self) -> None:
        pass


NoQuit().run()
