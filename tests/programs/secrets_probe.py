"""Test engine that tells, on stderr, what it was handed: its command line, its environment and
the files behind its open descriptors (one JSON line, at start). Then it plays random moves."""

import contextlib
import json
import os
import random
import sys

from ginproto.sdk import Engine, GameView, Move


def _descriptors() -> dict[str, str]:
    out = {}
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            out[fd] = os.readlink(f"/proc/self/fd/{fd}")
    return out


class Probe(Engine):
    name = "Probe"
    author = "ginproto tests"

    def offer(self, view: GameView) -> Move:
        return random.choice(view.hand.legal_moves())

    def draw(self, view: GameView) -> Move:
        return random.choice(view.hand.legal_moves())

    def discard(self, view: GameView) -> Move:
        return random.choice(view.hand.legal_moves())


if __name__ == "__main__":
    seen = {"argv": sys.argv, "env": dict(os.environ), "fds": _descriptors()}
    sys.stderr.write(json.dumps(seen) + "\n")
    sys.stderr.flush()
    Probe().run()
