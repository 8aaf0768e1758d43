"""Broken for ``ginref check``: answers information lines (``handover``...) with a move, and
dies on a line it does not know."""

import sys

from check_base import Bot


class Chatty(Bot):
    def other(self, words: list[str]) -> None:
        if words[0] in ("handover", "gameover", "matchscore", "matchover"):
            self.say("move pass")
        elif words[0] not in ("setoption", "newmatch", "newgame"):
            sys.exit(3)


Chatty().run()
