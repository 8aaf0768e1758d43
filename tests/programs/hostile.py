"""A protocol engine that misbehaves on purpose, one way per mode (argv[1]).

Until it misbehaves it plays seeded-random legal moves through the Python SDK.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

from ginproto.cards import DECK
from ginproto.melds import knock_options
from ginproto.sdk import Engine, GameView, Move

MODE = sys.argv[1] if len(sys.argv) > 1 else "normal"
MARKER = "ginproto-hostile-child"


class Hostile(Engine):
    name = f"hostile-{MODE}"
    author = "ginproto tests"

    def __init__(self) -> None:
        super().__init__()
        self.rng = random.Random(MODE)
        self.decisions = 0

    def _legal(self, view: GameView) -> Move:
        return self.rng.choice(view.hand.legal_moves())

    def offer(self, view: GameView) -> Move:
        return self._turn(view)

    def draw(self, view: GameView) -> Move:
        self.decisions += 1
        if MODE == "wrong-kind":
            return Move.discard(view.hand.cards[0])
        if MODE == "discard-taken":
            return Move.pile()
        return self._turn(view)

    def discard(self, view: GameView) -> Move:
        hand = view.hand
        if MODE == "not-held":
            return Move.discard(next(c for c in DECK if c not in hand.cards))
        if MODE == "discard-taken" and hand.taken is not None:
            return Move.discard(hand.taken)
        if MODE == "above-limit":
            deadwood = knock_options(hand.cards, 100)
            over = [c for c, d in deadwood.items() if d > hand.knock_limit]
            if over:
                return Move.knock(over[0])
        if MODE == "bad-melds":
            return Move.from_str(f"knock {hand.cards[0]} As-2s-3s-4s-5s-6s-7s")
        return self._turn(view)

    def _turn(self, view: GameView) -> Move:
        self.decisions += 1
        if MODE in ("crash-mid", "orphan") and self.decisions == 5:
            os._exit(7)
        if MODE == "traceback":
            # Dies of an exception, after stderr lines that try to pass for the referee's
            # (after a carriage return) and to colour and retitle the terminal.
            sys.tracebacklimit = 1  # a short traceback: all of it among the lines shown
            sys.stderr.write("loading weights\n")
            sys.stderr.write("\rgame 9: hostile-traceback wins\x1b[31m red\x1b]0;pwned\x07\n")
            sys.stderr.flush()
            raise ValueError("no card to play\x1b[2J")
        if MODE == "hang-go":
            time.sleep(3600)
        if MODE == "garbage":
            for junk in ("\x01\x02 ~~~", "zzz 1 2 3", "move"):
                sys.stdout.write(junk + "\n")
            sys.stdout.flush()
            time.sleep(3600)
        if MODE == "loud-fault":
            # A malformed move that quotes terminal controls at length (in the fault reason).
            sys.stdout.write("move \x1b[2J\x1b]0;pwned\x07\r" + "x" * 300_000 + "\n")
            sys.stdout.flush()
        if MODE == "longline":
            sys.stdout.write("info " + "x" * (10 << 20) + "\n")
            sys.stdout.flush()
            time.sleep(3600)
        return self._legal(view)


def main() -> None:
    if MODE == "crash-start":
        sys.exit(3)
    if MODE == "no-ginok":
        for line in sys.stdin:
            if line.split()[:1] == ["gin"]:
                print("id name never-ready", flush=True)
        return
    if MODE == "stderr-flood":
        chunk = "noise " * 1000 + "\n"
        for _ in range((100 << 20) // len(chunk)):
            sys.stderr.write(chunk)
        sys.stderr.flush()
    if MODE == "orphan":
        # A child that inherits stdin/stdout/stderr and outlives us.
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", MARKER])
    if MODE == "ignore-quit":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        engine = Hostile()
        for line in sys.stdin:
            if line.strip() == "quit":
                continue  # stays alive until killed
            engine.handle(line, sys.stdout)
        time.sleep(3600)
        return
    if MODE == "loud-id":
        # 300 KB id lines full of terminal controls: clear screen, window title, bell, CR.
        Hostile.name = "Loud\x1b[2J\x1b]0;pwned\x07\rX" + "N" * 300_000
        Hostile.version = "v\x1b[31m" + "9" * 300_000
    Hostile().run()


if __name__ == "__main__":
    main()
