"""Wall time per decision of a remote engine (``remote:NAME``, through ``gin-connect`` on
loopback) against the same engine run locally, measured in the same run.

The decisions are those of one game of random play (seed 1), asked of the built-in simple
engine as a seat asks them (``position`` and ``go``, then the ``move``): once of a local
process, once of the same engine behind ``gin-connect`` and a `Listener` on 127.0.0.1, in
alternating rounds so that a change of load hits both. Printed: the median time per decision
of each, and their ratio (the fastest round too, the steadier figure on a busy machine). The
difference is what the WebSocket relay costs a move: two messages, two event loops, the
client's pipe to its engine.

Usage: ``python bench/remote.py [--rounds N]``
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

from engines import BUILTIN
from ginproto.game import Entry, Game, GameView
from ginproto.moves import Move
from ginproto.rules import Rules
from ginproto.table import Decision, Fault, play_game
from referee.seat.clock import TimeControl
from referee.seat.player import EnginePlayer, EngineSpec
from referee.seat.remote import Listener

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "bench-token-0123456789"


class _Recorder:
    """A random player that keeps every view it is shown, with its decision."""

    def __init__(self, seed: int, seen: list[tuple[int, GameView, Decision]], me: int) -> None:
        self.rng = random.Random(seed)
        self.seen = seen
        self.me = me

    def decide(self, view: GameView, decision: Decision) -> Move:
        self.seen.append((self.me, view, decision))
        return self.rng.choice(view.hand.legal_moves())

    def hand_over(self, player: int, entry: Entry) -> None:
        pass

    def game_over(self, player: int, game: Game, fault: Fault | None) -> None:
        pass


def decisions() -> list[tuple[int, GameView, Decision]]:
    seen: list[tuple[int, GameView, Decision]] = []
    rules = Rules()
    play_game(rules, [_Recorder(1, seen, 0), _Recorder(2, seen, 1)], seed=1)
    return seen


def per_decision(player: EnginePlayer, asked: list[tuple[int, GameView, Decision]]) -> float:
    """Seconds per decision, over ``asked`` (each of the two seats' views in turn)."""
    player.new_game(1, 0, Rules())
    player.decide(asked[0][1], asked[0][2])  # the engine is ready: its start is not timed
    started = time.perf_counter()
    for _, view, decision in asked:
        player.decide(view, decision)
    return (time.perf_counter() - started) / len(asked)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds
    asked = [d for d in decisions() if d[0] == 0]
    control = TimeControl.parse("inf", move=30.0)
    with Listener({"bench": TOKEN}) as listener:
        client = subprocess.Popen(
            [sys.executable, "-m", "ginproto.connect", listener.url, "--token", TOKEN, "--",
             *BUILTIN["simple"]],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            listener.wait_for(["bench"], 30)
            local = EnginePlayer(EngineSpec.parse("simple"), control)
            remote = EnginePlayer(EngineSpec.parse("remote:bench"), control)
            times: dict[str, list[float]] = {"local": [], "remote": []}
            try:
                for _ in range(rounds):
                    times["local"].append(per_decision(local, asked))
                    times["remote"].append(per_decision(remote, asked))
            finally:
                local.close()
                remote.close()
        finally:
            client.kill()
            client.wait()
        latency = listener.latency("bench")
    print(f"{len(asked)} decisions a round, {rounds} rounds")
    for name, values in times.items():
        print(
            f"{name:7} {statistics.median(values) * 1e3:7.3f} ms per decision (median),"
            f" {min(values) * 1e3:7.3f} ms (fastest round)"
        )
    ratio = statistics.median(times["remote"]) / statistics.median(times["local"])
    fastest = min(times["remote"]) / min(times["local"])
    print(f"remote / local: {ratio:.2f} (median), {fastest:.2f} (fastest rounds)")
    if latency is not None:
        print(f"loopback {latency}")


if __name__ == "__main__":
    main()
