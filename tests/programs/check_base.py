"""A minimal conforming engine (spec/PROTOCOL.md, section 12) for the ``ginref check`` tests.

Each ``check_*.py`` engine subclasses ``Bot`` and breaks exactly one thing; run as a script,
this one passes every check. It never knocks, which the protocol allows.
"""

from __future__ import annotations

import sys


class Bot:
    name = "CheckBase"

    def __init__(self) -> None:
        self.position: dict[str, str] = {}

    def say(self, *lines: str) -> None:
        for line in lines:
            sys.stdout.write(line + "\n")
        sys.stdout.flush()

    # -- what the broken engines override --------------------------------------------------
    def handshake(self) -> None:
        self.say(f"id name {self.name}", "id author ginproto tests", "ginok protocol 1")

    def taken(self) -> str | None:
        last = self.position["history"].split(",")[-1].split(":")
        return last[2] if len(last) > 2 and last[1] in ("take", "pile") else None

    def offer(self) -> str:
        return "pass"

    def draw(self) -> str:
        return "stock"

    def discard(self) -> str:
        taken = self.taken()
        card = next(c for c in self.position["cards"].split(",") if c != taken)
        return f"discard {card}"

    def answer(self, decision: str) -> None:
        phase = self.position["phase"]  # for "go advice" too: the captain's phase
        move = {"offer": self.offer, "draw": self.draw}.get(phase, self.discard)()
        self.say(f"move {move}")

    def other(self, words: list[str]) -> None:
        """Every other line: information and unknown lines need no answer."""

    def quit(self) -> None:
        sys.exit(0)

    # -- the loop --------------------------------------------------------------------------
    def run(self) -> None:
        for line in sys.stdin:
            words = line.split()
            if not words:
                continue
            if words[0] == "gin":
                self.handshake()
            elif words[0] == "isready":
                self.say("readyok")
            elif words[0] == "position":
                fields = [w for w in words[1:] if "=" not in w]
                self.position = dict(zip(fields[0::2], fields[1::2], strict=False))
            elif words[0] == "go":
                self.answer(words[1])
            elif words[0] == "quit":
                self.quit()
            else:
                self.other(words)


if __name__ == "__main__":
    Bot().run()
