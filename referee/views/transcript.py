"""The annotated protocol transcript in spec/PROTOCOL.md, generated from a real game.

The game is played by the referee's own ``EnginePlayer`` against two built-in engine
processes, from a fixed seed, without a game clock (so every line is reproducible), and
every line that crosses a pipe is written down in order. The first time each kind of line
appears, a ``#`` comment says what it is. ``tests/protocol/test_spec.py`` regenerates the transcript
and fails if the spec's copy differs, so the spec cannot drift from the code.

``python -m referee.views.transcript`` prints it; ``--write`` updates spec/PROTOCOL.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ginproto import protocol as proto
from ginproto.rules import Rules
from ginproto.table import play_game
from referee.seat.clock import TimeControl
from referee.seat.player import EnginePlayer, EngineSpec
from referee.seat.process import LineHook

SEED = 107
ENGINES = ("simple", "random")
BEGIN, END = "<!-- transcript:begin -->", "<!-- transcript:end -->"
SPEC = Path(__file__).resolve().parents[2] / "spec" / "PROTOCOL.md"

NOTES: dict[str, str] = {
    proto.GIN: "The handshake: the referee names its protocol version.",
    proto.ID: "The engine introduces itself...",
    proto.OPTION: "...declares its options...",
    proto.GINOK: "...and ends the handshake.",
    proto.ISREADY: "A ping; the engine answers readyok as soon as it can, at any time.",
    proto.NEWMATCH: "A match starts.",
    proto.NEWGAME: "Game 1 starts; this engine is player N, under these rules.",
    proto.POSITION: (
        "Before every decision: everything this seat may know. The opponent's stock draws"
        " show no card (e.g. 1:stock)."
    ),
    proto.GO: "Decide now: offer (take or pass the upcard), draw, discard, or advice.",
    proto.MOVE: "The engine's one reply to go.",
    proto.HANDOVER: "The hand is over: both hands, melds, layoffs, deadwood, points, totals.",
    proto.GAMEOVER: "The game is over: how it ended, the winner, the final scores.",
    proto.MATCHSCORE: "The match so far, from this engine's side.",
    proto.MATCHOVER: "The match is over.",
    proto.QUIT: "The engine must exit now.",
}


def transcript(seed: int = SEED, engines: tuple[str, str] = ENGINES) -> str:
    """Play one standard game and return the annotated transcript."""
    lines: list[str] = []
    seen: set[str] = set()
    labels = [f"{name}{i}" for i, name in enumerate(engines)]

    def hook_for(label: str) -> LineHook:
        def on_line(direction: str, line: str) -> None:
            if direction not in ("to", "from"):
                return
            word = line.split(maxsplit=1)[0] if line.strip() else ""
            if word in NOTES and word not in seen:
                seen.add(word)
                lines.append(f"# {NOTES[word]}")
            arrow = f"referee > {label}" if direction == "to" else f"{label} > referee"
            lines.append(f"{arrow}: {line}")

        return on_line

    control = TimeControl(base=None, increment=0.0, move=10.0)
    players = [
        EnginePlayer(EngineSpec.parse(name), control, on_line=hook_for(label))
        for name, label in zip(engines, labels, strict=True)
    ]
    rules = Rules()
    try:
        for p, player in enumerate(players):
            player.new_game(1, p, rules)
        play_game(rules, players, seed, 0)
        for player in players:
            player.finish_match()
    finally:
        for player in players:
            player.close()
    head = (
        f"# One standard game, seed {seed}: {labels[0]} (the built-in {engines[0]} engine) is"
        f" player 0, {labels[1]} ({engines[1]}) player 1.\n"
        "# 'referee > X' is a line the referee sends to engine X; 'X > referee' one X sends.\n"
    )
    return head + "\n".join(lines) + "\n"


def spec_section(text: str) -> str:
    """The part of spec/PROTOCOL.md between the transcript markers."""
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    return text[start:end]


def render(body: str) -> str:
    return f"\n```text\n{body}```\n"


def main() -> None:
    parser = argparse.ArgumentParser(description="Print or write the protocol transcript.")
    parser.add_argument("--write", action="store_true", help="update spec/PROTOCOL.md")
    args = parser.parse_args()
    body = render(transcript())
    if not args.write:
        sys.stdout.write(body)
        return
    text = SPEC.read_text()
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    SPEC.write_text(text[:start] + body + text[end:])


if __name__ == "__main__":
    main()
