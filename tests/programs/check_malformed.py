"""Broken for ``ginref check``: a discard names no card (``move discard``)."""

from check_base import Bot


class Malformed(Bot):
    def discard(self) -> str:
        return "discard"


Malformed().run()
