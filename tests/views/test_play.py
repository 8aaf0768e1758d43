"""``ginref play``: a person against an engine, or with two in the game for three players,
typed at a real terminal (pexpect).

The games are played by ``Typist``, a scripted person that reads the screen as a person would
(the hand line, the knock offer, the prompt) and types commands. The same typist also plays
in process (``HumanPlayer`` with a scripted reader against the SDK engines, which play exactly
as the engine programs do). So the seeds pinned below were found offline (``python
tests/views/test_play.py`` searches again), and a quick in-process test says what each seed is for
before the terminal tests rely on it.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pexpect  # type: ignore[import-untyped]
import pytest
from click.testing import CliRunner, Result
from helpers import make_deck

from engines.random_engine import RandomEngine
from engines.simple_engine import SimpleEngine, improves
from ginproto.cards import RANKS, Card, CardError, parse_cards
from ginproto.hand import Hand, HandView
from ginproto.melds import Meld, best_melds, discard_deadwoods
from ginproto.moves import Move
from ginproto.record import EngineInfo, loads, record_from_log, write_game
from ginproto.replay import verify_game
from ginproto.rules import Rules, Variant
from ginproto.sdk import Engine
from ginproto.table import GameLog, Player, PlayerFault, play_game, role_draw
from referee.views.narration import pile_text
from referee.views.play import (
    Command,
    HumanPlayer,
    Refusal,
    interpret,
    knock_hint,
    parse_card,
    play_style,
)

ROOT = Path(__file__).resolve().parents[2]
GINREF = str(ROOT / ".venv" / "bin" / "ginref")
CARD = r"[A2-9TJQK][cdhs]"
PROMPT = r"((?:advise )?(?:take/pass|draw|discard)|Press Enter for hand \d+|resign\? \(y/n\))> "


# ---------------------------------------------------------------------------------------------
# The scripted person.


@dataclass
class Typist:
    """Reads the screen and types, like a person who plays the simple engine's strategy.

    ``knock``: ``"best"`` knocks as soon as it can (gin by typing ``gin``), ``"gin"`` knocks
    only for gin. ``script`` maps ``(prompt word, n)``, the n-th decision
    of that kind (``("discard", 1)``), to lines typed there before the typist decides, each
    answered by the prompt again. ``probe_taken`` tries once to discard a card just taken
    from the pile. ``declare``: each knock (not gin) declares its melds, typed in lower case;
    the first is tried twice with bad melds before. ``seen`` lists the typist's takes,
    passes, knocks and gins.
    """

    knock: str = "best"
    declare: bool = False
    script: dict[tuple[str, int], list[str]] = field(default_factory=dict)
    probe_taken: bool = False
    seen: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    screen: str = ""  # what was shown since the typist last decided
    queue: list[str] = field(default_factory=list)

    def answer(self, screen: str, prompt: str) -> str:
        if not self.screen and not self.queue:  # a new decision, not a prompt asked again
            kind = prompt.split("> ")[0].split(" ")[0]
            self.counts[kind] = self.counts.get(kind, 0) + 1
            self.queue += self.script.pop((kind, self.counts[kind]), [])
        self.screen += screen
        if self.queue:
            return self.queue.pop(0)
        taken = re.search(rf"You took (?:the upcard )?({CARD})", self.screen)
        if self.probe_taken and taken and prompt.startswith("discard"):
            self.probe_taken = False
            return taken.group(1)
        line = self.decide(self.screen, prompt)
        self.screen = ""
        return line

    def decide(self, screen: str, prompt: str) -> str:
        prompt = prompt.removeprefix("advise ")  # the sitter advises as if it were captain
        if prompt.startswith("Press Enter"):
            return ""
        if prompt.startswith("resign"):
            return "y"
        cards = hand_on(screen)
        if prompt.startswith("take/pass"):
            up = Card.from_str(_find(rf"The upcard ({CARD}) is offered", screen))
            move = "take" if improves(cards, up) else "pass"
            self.seen.append(move)
            return move
        if prompt.startswith("draw"):
            if "Both passed the upcard" in screen:
                return "s"
            top = Card.from_str(_find(rf"p to take ({CARD}) from the discard pile", screen))
            return "p" if improves(cards, top) else "s"
        if "You can go gin" in screen and self.knock in ("best", "gin"):
            self.seen.append("gin")
            return "gin"
        offer = re.search(rf"You can knock: knock ({CARD}) \(deadwood (\d+)\)", screen)
        if offer and self.knock == "best":
            self.seen.append("knock")
            return self.knock_line(Card.from_str(offer.group(1)), cards)
        # The card just taken, by the person or (when advising) by the captain.
        taken = re.findall(rf"(?:You|\S+) took (?:the upcard )?({CARD})", screen)
        after = discard_deadwoods(cards)
        allowed = [c for c in after if not (taken and str(c) == taken[-1])]
        card = min(allowed, key=lambda c: (after[c], -c.value, -c.index))
        return str(card)


    def knock_line(self, card: Card, cards: tuple[Card, ...]) -> str:
        if not self.declare:
            return f"knock {card}"
        rest = [c for c in cards if c != card]
        melds = " ".join(str(m).lower() for m in best_melds(rest).melds)
        good = f"knock {str(card).lower()} {melds}"
        if "bad melds" in self.seen:
            return good
        self.seen.append("bad melds")
        absent = next(r for r in RANKS if all(c.rank != RANKS.index(r) for c in cards))
        self.queue += [f"knock {card} {melds.split()[0][:5]}", good]  # two cards: no meld
        return f"knock {card} {absent}c-{absent}d-{absent}h"  # cards not held


def hand_on(screen: str) -> tuple[Card, ...]:
    """The cards of the last ``Your hand`` line on the screen (the sitter: ``Simple's hand``)."""
    line = re.findall(r"^  (?:Your|\S+'s) hand  (.*)$", screen, re.MULTILINE)[-1]
    return parse_cards(" ".join(re.findall(CARD, line.split("deadwood")[0])))


def _find(pattern: str, text: str) -> str:
    found = re.findall(pattern, text)
    assert found, f"{pattern!r} not on the screen:\n{text}"
    return str(found[-1])


# ---------------------------------------------------------------------------------------------
# Playing: in process (fast, for the seed search and checks) and at a terminal.


def play_in_process(
    seed: int | str,
    engines: Engine | Sequence[Engine],
    typist: Typist,
    rules: Rules | None = None,
    me: int = 0,
) -> tuple[GameLog, str]:
    """The typist against ``engines`` (one, or two in the three-player game) through
    ``HumanPlayer``, as ``ginref play`` does it."""
    others: list[Engine] = [engines] if isinstance(engines, Engine) else list(engines)
    rules = rules or Rules()
    out = io.StringIO()
    mark = 0

    def read(prompt: str) -> str:
        nonlocal mark
        screen = out.getvalue()[mark:]
        out.write(prompt)
        line = typist.answer(screen, prompt)
        out.write(line + "\n")
        mark = len(out.getvalue())
        return line

    names = [e.name for e in others]
    if len(set(names)) < len(names):  # numbered as ``ginref play`` numbers them
        names = [names[0], f"{names[1]}#2"]
    names.insert(me, "human")
    human = HumanPlayer(me, rules, names, play_style(out, False), out, read)
    players: list[Player] = list(others)
    players.insert(me, human)
    log = play_game(rules, players, seed, 0, on_step=human.on_step)
    return log, out.getvalue()


def play_terminal(args: list[str], typist: Typist, timeout: float = 20) -> tuple[str, int]:
    """Run ``ginref play ARGS`` at a terminal and let the typist play until it exits."""
    env = {**os.environ, "NO_COLOR": "1"}
    child = pexpect.spawn(
        GINREF, args, env=env, encoding="utf-8", timeout=timeout, dimensions=(60, 200)
    )
    child.delaybeforesend = None
    parts = []
    try:
        while child.expect([PROMPT, pexpect.EOF]) == 0:
            screen = child.before.replace("\r\n", "\n")
            parts += [screen, child.after]
            child.sendline(typist.answer(screen, child.after))
        parts.append(child.before.replace("\r\n", "\n"))
    finally:
        child.close(force=True)
    return "".join(parts), child.exitstatus


def run_ginref(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [GINREF, *args], capture_output=True, text=True, timeout=60, check=False
    )


def verify(record: Path) -> str:
    done = run_ginref("replay", "--verify", str(record))
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def showdowns(transcript: str) -> list[str]:
    """Each hand's showdown block, from its title to its score line."""
    return re.findall(r"── Hand \d+: showdown ──\n(?:  .*\n)*", transcript)


# ---------------------------------------------------------------------------------------------
# The pinned seeds (found with ``python tests/views/test_play.py``), checked in process first.

SIMPLE_SEED = 1  # against simple: takes, passes, knocks, a gin, undercuts; the person wins
RANDOM_SEED = 397  # against random, knocking only for gin: two drawn hands, then two gins
DECLARE_SEED = 2  # against simple, to 20, knocks declaring melds: knocks; the person wins
THREE_SEED = 17  # with simple and random, to 20, first in the box: each role; the person wins
THREE_RULES = Rules(variant=Variant.THREEHANDED, target=20)


def three_player_game(seed: int, typist: Typist, role: str = "box") -> tuple[GameLog, str, int]:
    """The typist with simple and random, to 20, first in ``role`` (as ``--role`` seats it)."""
    me = int(getattr(role_draw(seed, 0)[0], role))
    log, text = play_in_process(seed, [SimpleEngine(), RandomEngine()], typist, THREE_RULES, me)
    return log, text, me


def situations(log: GameLog, me: int = 0) -> set[str]:
    found = set()
    for hand in log.hands:
        if hand.entry is None:
            continue
        result = hand.entry.result
        if result.knocker is None:
            found.add(str(result.outcome))
        else:
            who = "me" if hand.entry.seats[result.knocker] == me else "engine"
            found.add(f"{result.outcome}-by-{who}")
    if log.winner is not None:
        found.add("won" if log.winner == me else "lost")
    return found


def test_the_pinned_seeds_still_give_their_situations() -> None:
    typist = Typist()
    log, _ = play_in_process(SIMPLE_SEED, SimpleEngine(), typist)
    assert {"take", "pass", "knock", "gin"} <= set(typist.seen)
    assert {"knock-by-me", "gin-by-me", "undercut-by-engine", "won"} <= situations(log)
    typist = Typist(knock="gin")
    log, _ = play_in_process(RANDOM_SEED, RandomEngine(), typist)
    assert {"take", "pass", "gin"} <= set(typist.seen)
    assert {"draw", "gin-by-me", "won"} <= situations(log)
    typist = Typist(declare=True)
    log, _ = play_in_process(DECLARE_SEED, SimpleEngine(), typist, Rules(target=20))
    assert {"knock", "bad melds", "won"} <= set(typist.seen) | situations(log)
    log, _, me = three_player_game(THREE_SEED, Typist())
    roles = {str(hand.roles.role_of(me)) for hand in log.hands if hand.roles is not None}
    assert roles == {"box", "captain", "sitter"} and log.winner == me


# ---------------------------------------------------------------------------------------------
# Whole games at a terminal.


def test_a_whole_game_against_simple(tmp_path: Path) -> None:
    record = tmp_path / "game.gin"
    typist = Typist(
        probe_taken=True,
        script={
            ("take/pass", 1): ["s", "p", "7h", "xyzzy"],
            ("draw", 1): ["p", "pass", "Ks"],
            ("discard", 1): ["9z", "As", "10c", "knock Ks", "knock", "gin", "help", "show"],
            ("draw", 6): ["discards"],
        },
    )
    text, status = play_terminal(
        ["play", "simple", "--seed", str(SIMPLE_SEED), "--record", str(record)], typist
    )
    assert status == 0, text
    # Illegal or mistyped input is explained, and the game goes on.
    for refusal in [
        "First the upcard 5c is offered to you: type take or pass.",
        "'p' could mean pass or pile: type take to take 5c, or pass.",
        "You discard after you draw. First take the upcard 5c, or pass.",
        "I don't understand 'xyzzy'. Type take or pass.",
        "Both players passed the upcard, so the first draw is from the stock: type s.",
        "You cannot pass now: draw from the stock (s) or the discard pile (p).",
        "First draw a card: s (stock) or p (discard pile); then discard.",
        "'9z' is not a card",
        "You don't hold As.",
        "You don't hold Tc.",
        "You cannot knock with Ks: that leaves deadwood 75, above the knock limit 10."
        " No discard lets you knock yet.",
        "Knock with which card? You cannot knock now.",
        "No discard leaves you gin (no deadwood).",
        "Commands (then Enter):",
        "You just took Jc from the discard pile, so you may not discard it this turn.",
    ]:
        assert refusal in text
    assert text.count("Discards   5c  (1 card, top last)") == 3  # twice, and after 'show'
    # The person's own discards and knocks are echoed.
    assert re.search(rf"discard> ({CARD})\nYou discarded \1\.\n", text)
    assert re.search(rf"discard> knock ({CARD})\nYou knocked, discarding \1\.\n", text)
    # The whole discard pile on request, top last, where the table shows its top six.
    assert "  discards          show the whole discard pile (top last)" in text  # in the help
    piles = re.search(
        r"  Discards   \.\.\. (.*)  \((\d+) cards, top last\)\n"
        r"(?:(?!  Discards).*\n)*?draw> discards\n"  # the same decision
        r"  Discards   (.*)  \((\d+) cards, top last\)\n",
        text,
    )
    assert piles is not None, text
    top, whole = piles.group(1).split(), piles.group(3).split()
    assert piles.group(2) == piles.group(4) == str(len(whole))
    assert len(whole) > 6 and whole[-6:] == top
    # The first upcard, passed and taken.
    assert "take/pass> pass\n" in text
    assert re.search(rf"take/pass> take\n+You took the upcard {CARD}\.", text)
    # A knock offered and typed, and a gin.
    assert re.search(rf"You can knock: knock {CARD} \(deadwood \d+\)", text)
    assert re.search(rf"discard> knock {CARD}\n", text)
    assert re.search(r"You can go gin: type gin", text)
    assert "discard> gin\n" in text
    shows = showdowns(text)
    gin = next(s for s in shows if "You win the hand with gin" in s)
    assert re.search(r"You +go gin +\[.*no deadwood", gin)
    # Undercuts: the knocker's deadwood at least the defender's, and the bonus of 10.
    undercuts = [s for s in shows if "by undercutting" in s]
    assert undercuts
    for block in undercuts:
        k = _find(r"knocks? .* = (\d+)\n", block)
        d = _find(r"defends? .*(?:= (\d+)|no deadwood)\n", block) or "0"
        assert "You defends" not in block and "You knocks" not in block
        points = re.search(r"Simple: (\d+) - (\d+) \+ 10 undercut bonus = (\d+) points", block)
        assert points is not None, block
        assert points.group(1, 2) == (k, d) and int(k) >= int(d)
        assert int(points.group(3)) == int(k) - int(d) + 10
    # The end, the winner, and the record.
    assert "══ Game over ══" in text
    assert "You win the game!" in text
    final = re.search(r"Final score: You (\d+) · Simple (\d+)", text)
    assert final is not None and int(final.group(1)) >= 100
    assert f"Recorded in {record}" in text
    assert "all verified" in verify(record)
    body = record.read_text()
    assert '[Player0 "human"]' in body and '[Player1 "Simple"]' in body
    assert "result undercut winner 0" in body and "\nfault" not in body
    # The person is just another seat: the same seed played in process gives the same game.
    log, _ = play_in_process(SIMPLE_SEED, SimpleEngine(), Typist())
    moves = [f"{s.player} {s.turn.move}" for h in log.hands for s in h.steps]
    played = r"^([01] (?:take|pass|stock|pile|discard \w\w|knock \w\w))"
    assert re.findall(played, body, re.MULTILINE) == moves


def test_a_whole_game_against_random_with_drawn_hands(tmp_path: Path) -> None:
    record = tmp_path / "game.gin"
    typist = Typist(knock="gin")
    text, status = play_terminal(
        ["play", "random", "--seed", str(RANDOM_SEED), "--record", str(record)], typist
    )
    assert status == 0, text
    shows = showdowns(text)
    drawn = [s for s in shows if "Drawn hand" in s]
    assert len(drawn) == 2
    for block in drawn:
        assert "Drawn hand: only two cards are left in the stock." in block
        assert "No score; Random deals again." in block
        assert re.search(r"\n  You +\S", block) and re.search(r"\n  Random +\S", block)
    # The same dealer deals again, and the scores did not move.
    assert text.count("── Hand 3 · Random deals") == 1
    assert re.search(r"Drawn hand.*\n  Score      You 0 · Random 0", text)
    assert "discard> gin\n" in text and "You win the hand with gin" in text
    assert "You win the game!" in text
    assert "all verified" in verify(record)
    assert record.read_text().count("result draw\n") == 2


# ---------------------------------------------------------------------------------------------
# Leaving early: a forfeit, recorded.


def start(args: list[str]) -> pexpect.spawn:
    env = {**os.environ, "NO_COLOR": "1"}
    child = pexpect.spawn(GINREF, args, env=env, encoding="utf-8", timeout=20)
    child.delaybeforesend = None
    return child


def finish(child: pexpect.spawn) -> str:
    child.expect(pexpect.EOF)
    text = str(child.before).replace("\r\n", "\n")
    child.close()
    return text


def test_quit_asks_first_then_forfeits_and_is_recorded(tmp_path: Path) -> None:
    record = tmp_path / "game.gin"
    child = start(["play", "simple", "--seed", "5", "--record", str(record)])
    child.expect("take/pass> ")
    child.sendline("quit")
    child.expect(r"Resign this game\? .*\n.*resign\? \(y/n\)> ")
    child.sendline("n")
    child.expect("Not resigned: play on.")
    child.expect("take/pass> ")
    child.sendline("pass")
    child.expect(PROMPT)
    child.sendline("q")
    child.expect(r"resign\? \(y/n\)> ")
    child.sendline("y")
    text = finish(child)
    assert child.exitstatus == 0
    assert "You forfeit the game: the player resigned." in text
    assert "Simple wins the game." in text
    body = record.read_text()
    assert 'fault 0 resign "the player resigned"' in body
    assert "end forfeit winner 1" in body
    assert "all verified" in verify(record)


def test_end_of_input_forfeits_and_is_recorded(tmp_path: Path) -> None:
    record = tmp_path / "game.gin"
    child = start(["play", "random", "--second", "--seed", "5", "--record", str(record)])
    child.expect("You are player 1, against Random")
    child.expect(PROMPT)
    child.sendeof()
    text = finish(child)
    assert child.exitstatus == 1  # recorded, but not a game played out
    assert "You forfeit the game: the player's input ended (end of file)." in text
    body = record.read_text()
    assert '[Player1 "human"]' in body and '[Player0 "Random"]' in body
    assert "fault 1 resign" in body and "end forfeit winner 0" in body
    assert "all verified" in verify(record)


def test_ctrl_c_forfeits_records_and_closes_the_engine(tmp_path: Path) -> None:
    record = tmp_path / "game.gin"
    pid_file = tmp_path / "engine.pid"
    engine = f"/bin/sh -c 'echo $$ > {pid_file}; exec {sys.executable} -m engines.simple_engine'"
    # Bare, so that the engine can write its pid (as the referee sees it) into this folder.
    child = start(["play", engine, "--seed", "5", "--record", str(record), "--no-sandbox"])
    child.expect(PROMPT)
    pid = int(pid_file.read_text())
    assert Path(f"/proc/{pid}").exists()
    child.sendintr()
    text = finish(child)
    assert child.exitstatus == 130  # 128 + SIGINT, as for any command stopped by Ctrl-C
    assert "You forfeit the game: the player interrupted the game (Ctrl-C)." in text
    assert "fault 0 resign" in record.read_text()
    assert "all verified" in verify(record)
    assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()


def test_an_engine_that_faults_forfeits_to_the_person(tmp_path: Path) -> None:
    bot = tmp_path / "wrong_card.py"
    bot.write_text(
        "from ginproto.sdk import Engine, Move\n"
        "from ginproto.cards import Card\n"
        "class Wrong(Engine):\n"
        "    name = 'Wrong'\n"
        "    def offer(self, view): return Move.pass_()\n"
        "    def draw(self, view): return Move.stock()\n"
        "    def discard(self, view):\n"
        "        return Move.discard(next(c for c in map(Card.from_index, range(52))"
        " if c not in view.hand.cards))\n"
        "Wrong().run()\n"
    )
    record = tmp_path / "game.gin"
    typist = Typist()
    text, status = play_terminal(
        ["play", f"{sys.executable} {bot}", "--seed", "2", "--record", str(record)], typist
    )
    assert status == 0, text
    assert re.search(r"Wrong forfeits the game \(illegal\): discard \w\w: .* not in", text)
    assert "You win the game!" in text
    assert "fault 1 illegal" in record.read_text()
    assert "all verified" in verify(record)


# ---------------------------------------------------------------------------------------------
# The game for three players: the person in the box, as captain and sitting out.

THREE = ["--rule", "target=20"]


def test_three_players_the_person_takes_every_role(tmp_path: Path) -> None:
    record = tmp_path / "game.gin"
    args = ["play", "simple", "random", "--role", "box", "--seed", str(THREE_SEED), *THREE]
    text, status = play_terminal([*args, "--record", str(record)], Typist())
    assert status == 0, text
    assert "Gin for three players to 20" in text
    # In the box, against the captain.
    assert re.search(
        r"You are in the box, against \w+ \(captain\); \w+ sits out and advises\.", text
    )
    # Sitting out: the captain's hand is shown, and each move typed is advice.
    assert re.search(r"You sit out this hand: you see the hand of \w+ \(captain\) and advise", text)
    assert re.search(r"^  (Simple|Random)'s hand  \[", text, re.MULTILINE)
    assert re.search(r"advise (take/pass|draw|discard)> ", text)
    assert re.search(r"(Simple|Random) \S.* \((as you advised|you advised .+)\)\.\n", text)
    # As captain: the sitter's advice before each decision.
    assert re.search(
        r"You are captain, against \w+ in the box; \w+ sits out and advises you\.", text
    )
    assert re.search(r"\n\w+ \(sitting out\) advises: \S.* \(type advice to play it\)\.\n", text)
    assert "══ Game over ══" in text and "You win the game!" in text
    assert "all verified" in verify(record)
    body = record.read_text()
    log, _, me = three_player_game(THREE_SEED, Typist())
    assert re.search(rf"^{me} advise ", body, re.MULTILINE)  # the person's advice, recorded
    # The same game as the one loop plays in process, with the person one more player.
    moves = [f"{s.player} {s.turn.move}" for h in log.hands for s in h.steps]
    played = r"^([012] (?:take|pass|stock|pile|discard \w\w|knock \w\w))"
    assert re.findall(played, body, re.MULTILINE) == moves


def test_sitting_out_the_person_sees_the_captains_hand_and_not_the_box() -> None:
    log, text, me = three_player_game(THREE_SEED, Typist())
    hand = next(h for h in log.hands if h.roles is not None and h.roles.sitter == me)
    assert hand.roles is not None
    others = [p for p in range(3) if p != me]
    names = {others[0]: "Simple", others[1]: "Random"}
    box, captain = names[hand.roles.box], names[hand.roles.captain]
    begin = text.index(f"── Hand {hand.number} ·")
    block = text[begin : text.index(f"── Hand {hand.number}: showdown", begin)]
    assert f"the hand of {captain} (captain) and advise it against {box} in the box" in block
    # The captain is the non-dealer: the first, third, ... cards of the deal.
    assert set(hand_on(block[: block.index("advise take/pass> ")])) == set(hand.deck[0:20:2])
    for step in hand.steps:
        if step.turn.move.kind.value != "stock":
            continue
        if step.player == hand.roles.box:  # the box's draws stay face down
            assert f"{box} drew from the stock" in block
            assert f"{box} drew {step.turn.card} from the stock" not in block
        else:  # the captain's hand is the one the sitter sees
            assert f"{captain} drew {step.turn.card} from the stock" in block


def test_as_captain_the_sitters_advice_is_shown_and_can_be_played(tmp_path: Path) -> None:
    record = tmp_path / "game.gin"
    child = start(
        ["play", "random", "random", "--role", "captain", "--seed", "3", *THREE,
         "--record", str(record)]
    )
    child.expect(r"You are captain, against Random in the box; Random#2 sits out and advises")
    child.expect(r"Random#2 \(sitting out\) advises: (take|pass) \(type advice to play it\)\.")
    advice = child.match.group(1)
    child.expect("take/pass> ")
    child.sendline("help")
    child.expect(r"advice, a +play the sitter's advice")
    child.expect("take/pass> ")
    child.sendline("advice")
    child.expect(r"You (took the upcard|passed the upcard)")
    assert child.match.group(1).startswith("took" if advice == "take" else "passed")
    child.expect(PROMPT)
    child.sendline("quit")
    child.expect(r"resign\? \(y/n\)> ")
    child.sendline("y")
    text = finish(child)
    assert child.exitstatus == 0, text
    assert "You forfeit the game: the player resigned." in text
    roles, _ = role_draw(3, 0)
    body = record.read_text()
    assert re.search(rf"^{roles.sitter} advise {advice}\n{roles.captain} {advice}\b", body, re.M)
    assert f"fault {roles.captain} resign" in body
    assert "all verified" in verify(record)


def test_sitting_out_the_person_advises_and_the_end_of_input_exits_1(tmp_path: Path) -> None:
    record = tmp_path / "game.gin"
    # One engine program plays both other seats.
    child = start(
        ["play", "random", "--variant", "threehanded", "--role", "sitter", "--seed", "3",
         *THREE, "--record", str(record)]
    )
    child.expect(r"You are player (\d), with Random \(player \d\), Random#2 \(player \d\)\.")
    me = int(child.match.group(1))
    child.expect(r"You sit out this hand: you see the hand of (\S+) \(captain\) and advise it")
    captain = child.match.group(1)
    child.expect(rf"Your advice to {captain}, the captain, who decides")
    child.expect(rf"The upcard {CARD} is offered to {captain}: take or pass\?")
    child.expect(r"advise take/pass> ")
    child.sendline("xyzzy")  # no advice: refused, and asked again
    child.expect(r"I don't understand 'xyzzy'\. Type take or pass\.")
    child.expect(r"advise take/pass> ")
    child.sendline("take")
    child.expect(rf"{captain} (took the upcard {CARD}|passed the upcard) \(")
    child.expect(PROMPT)
    child.sendeof()
    text = finish(child)
    assert child.exitstatus == 1, text
    assert "You forfeit the game: the player's input ended (end of file)." in text
    body = record.read_text()
    assert re.search(rf"^{me} advise take\n", body, re.MULTILINE)
    assert f"fault {me} resign" in body
    assert "all verified" in verify(record)


# ---------------------------------------------------------------------------------------------
# Knocks that declare melds, read by the move grammar and checked by the rules.


def test_a_knock_declaring_melds_is_played_and_bad_ones_are_refused(tmp_path: Path) -> None:
    record = tmp_path / "game.gin"
    typist = Typist(declare=True)
    text, status = play_terminal(
        ["play", "simple", "--seed", str(DECLARE_SEED), "--rule", "target=20",
         "--record", str(record)],
        typist,
    )
    assert status == 0, text
    assert "Traceback" not in text and "forfeit" not in text
    # The bad declarations: each refused with the reason, and the prompt again.
    assert re.search(
        rf"discard> knock {CARD} (\w)c-\1d-\1h\nYou cannot declare those melds: declared meld"
        rf" \1c-\1d-\1h uses \1c, which is not in the hand\. Type knock {CARD} alone for the"
        r" best ones\.\ndiscard> ",
        text,
    )
    assert re.search(
        r"\nNot a meld: \S+ \(a meld has at least 3 cards\)\. Declare runs and sets, e\.g\."
        r" knock 6c 3h-4h-5h Td-Th-Ts\.\ndiscard> ",
        text,
    )
    # The knocks as typed (in lower case), echoed, shown down and recorded as declared.
    knocks = re.findall(
        r"discard> knock (\S\S) ((?:\S+-\S+ ?)+)\nYou knocked, discarding (\S\S), declaring"
        r" (.*)\.\n",
        text,
    )
    assert knocks
    body = record.read_text()
    for card, typed, discarded, declared in knocks:
        melds = [Meld(tuple(parse_card(c) for c in m.split("-"))) for m in typed.split()]
        assert discarded == str(parse_card(card))
        assert declared == " ".join(f"[{' '.join(map(str, m.cards))}]" for m in melds)
        assert re.search(rf"You +knock +{re.escape(declared)}   ", text)
        assert re.search(rf"^0 knock {discarded} {' '.join(map(str, melds))}$", body, re.M)
    assert "all verified" in verify(record)


# ---------------------------------------------------------------------------------------------
# The variants, in process: Oklahoma's knock limit and Hollywood's three games.


def verifies(log: GameLog, me: int = 0) -> bool:
    """Whether the game's record, written as ``ginref play`` writes it, verifies."""
    engines = [EngineInfo("human"), EngineInfo("Simple")]
    record = record_from_log(log, engines if me == 0 else engines[::-1], event="ginref play")
    return verify_game(loads(write_game(record))[0]) == []


def test_oklahoma_shows_each_hands_knock_limit_from_its_upcard() -> None:
    rules = Rules(variant=Variant.OKLAHOMA, target=40, spade_double=True)
    log, text = play_in_process(3, SimpleEngine(), Typist(), rules, me=1)
    titles = re.findall(rf"── Hand (\d+) · .* knock limit (\d+) \(the upcard ({CARD})\)", text)
    assert len(titles) == len(log.hands)
    for (number, limit, upcard), hand in zip(titles, log.hands, strict=True):
        assert int(number) == hand.number and Card.from_str(upcard) == hand.deck[20]
        assert int(limit) == rules.knock_limit_for(hand.deck[20])
    assert re.search(r"x2: a spade upcard", text)
    assert re.search(r"\(\d+ - \d+\) x 2 = \d+ points", text)
    assert verifies(log, me=1)


def test_hollywood_shows_all_three_games() -> None:
    rules = Rules(variant=Variant.HOLLYWOOD, target=30)
    log, text = play_in_process(1, SimpleEngine(), Typist(), rules)
    assert re.search(
        r"Score      game 1: You \d+ · Simple \d+ \| game 2: You \d+ · Simple \d+"
        r" \| game 3: You \d+ · Simple \d+",
        text,
    )
    assert re.search(r"points, in games (1, )?2 and 3\.", text)
    assert re.search(r"Score      game 1 \(over\): You \d+ · Simple \d+ \| game 2: ", text)
    assert re.search(r"  Game 1: You \d+ · Simple \d+ \(won by Simple\)", text)
    assert re.search(r"  Game 2: You \d+ · Simple \d+ \(won by You\)", text)
    assert re.search(r"  Game 3: You \d+ · Simple \d+ \(won by You\)", text)
    assert "You win the series, 2 games to 1!" in text
    assert verifies(log)


# ---------------------------------------------------------------------------------------------
# Reading what is typed, on hands set up to order.


def view_of(moves: str, non_dealer: str, dealer: str, upcard: str, stock: str = "") -> HandView:
    """The view of the player to move after ``moves`` from a deal arranged with make_deck."""
    hand = Hand(Rules(), make_deck(non_dealer, dealer, upcard, stock), 0)
    for move in [m for m in moves.split(",") if m.strip()]:
        hand.apply(Move.from_str(move.strip()))
    return hand.view(hand.to_move)


PLAIN = play_style(io.StringIO(), False)
NON_DEALER = "As 2s 3s 7c 7d 7h 9c 9d 4c Kd"
DEALER = "2c 3c 5d 6d 8h Jh Qc Qs Ks 5h"


@pytest.mark.parametrize("typed", ["Kd", "kd", "KD", "discard kd", "d Kd", "K♦"])
def test_a_card_can_be_typed_in_several_ways(typed: str) -> None:
    view = view_of("take", NON_DEALER, DEALER, "9h")
    assert interpret(typed, view, PLAIN) == Move.discard(Card.from_str("Kd"))


def test_ten_is_typed_t_or_10() -> None:
    view = view_of("take", "As 2s 3s 7c 7d 7h 9c 9d 4c Td", DEALER, "9h")
    assert interpret("10d", view, PLAIN) == interpret("td", view, PLAIN) == Move.discard(
        Card.from_str("Td")
    )


def test_knocks_are_offered_and_checked_by_the_rules() -> None:
    view = view_of("take", NON_DEALER, DEALER, "9h")
    # 11 cards: As-2s-3s, 7c-7d-7h, 9c-9d-9h; 4c and Kd left over.
    assert knock_hint(view) == "You can knock: knock Kd (deadwood 4), knock 4c (deadwood 10)."
    assert interpret("knock kd", view, PLAIN) == Move.knock(Card.from_str("Kd"))
    refusal = interpret("knock 9c", view, PLAIN)
    assert isinstance(refusal, Refusal)
    assert refusal.reason.startswith("You cannot knock with 9c: that leaves deadwood 32, above")
    refusal = interpret("gin", view, PLAIN)
    assert isinstance(refusal, Refusal) and "No discard leaves you gin" in refusal.reason


def test_gin_knocks_with_the_discard_that_leaves_no_deadwood() -> None:
    # Taking 9h makes 9c-9d-9h-9s; then discarding Kd leaves no deadwood.
    view = view_of("take", "As 2s 3s 7c 7d 7h 9c 9d 9s Kd", DEALER, "9h")
    assert knock_hint(view) == "You can go gin: type gin (knock Kd)."
    assert interpret("gin", view, PLAIN) == Move.knock(Card.from_str("Kd"))


def test_big_gin_is_offered_when_the_rules_allow_it() -> None:
    deck = make_deck("As 2s 3s 4s 7c 7d 7h 9c 9d 9s", DEALER, "9h")
    hand = Hand(Rules(big_gin=True), deck, 0)
    hand.apply(Move.take())
    view = hand.view(hand.to_move)
    assert knock_hint(view) == "You have big gin: type biggin."
    assert interpret("big gin", view, PLAIN) == Move.big_gin()


def test_the_rules_refusals_are_explained() -> None:
    view = view_of("pass, pass", NON_DEALER, DEALER, "9h")
    assert interpret("p", view, PLAIN) == Refusal(
        "Both players passed the upcard, so the first draw is from the stock: type s."
    )
    assert interpret("s", view, PLAIN) == Move.stock()
    view = view_of("take", NON_DEALER, DEALER, "9h")
    assert interpret("9h", view, PLAIN) == Refusal(
        "You just took 9h from the discard pile, so you may not discard it this turn."
    )
    assert interpret("knock 9h", view, PLAIN) == Refusal(
        "You just took 9h from the discard pile, so you may not discard it this turn."
    )
    assert interpret("5h", view, PLAIN) == Refusal("You don't hold 5h.")
    assert interpret("biggin", view, PLAIN) == Refusal("Big gin is not played under these rules.")
    assert interpret("", view, PLAIN) is Command.NOTHING
    assert interpret("?", view, PLAIN) is Command.HELP
    assert interpret("Quit", view, PLAIN) is Command.QUIT


def test_a_knock_can_declare_melds_checked_by_the_rules() -> None:
    view = view_of("take", NON_DEALER, DEALER, "9h")
    # 11 cards: As-2s-3s, 7c-7d-7h, 9c-9d-9h; 4c and Kd left over.
    declared = Move.from_str("knock Kd As-2s-3s 7c-7d-7h 9c-9d-9h")
    assert interpret("knock kd as-2s-3s 7c-7d-7h 9c-9d-9h", view, PLAIN) == declared
    assert interpret("k Kd 2S-3s-AS 7♣-7d-7h 9c-9d-9h", view, PLAIN) == declared
    assert interpret("knock Kd As-2s-3s 7c-7d-7h", view, PLAIN) == Refusal(
        "With those melds, knocking with Kd leaves deadwood 4c 9c 9d 9h = 31, above the knock"
        " limit 10. Declare more melds, or type knock Kd alone for the best ones."
    )
    assert interpret("knock Kd As-2s-3s-4s", view, PLAIN) == Refusal(
        "You cannot declare those melds: declared meld As-2s-3s-4s uses 4s, which is not in"
        " the hand. Type knock Kd alone for the best ones."
    )
    refusal = interpret("knock Kd 7c-7d-7h-Kd", view, PLAIN)
    assert isinstance(refusal, Refusal) and refusal.reason.startswith("Not a meld: 7c-7d-7h-Kd")
    refusal = interpret("knock Kd 7c7d7h", view, PLAIN)
    assert isinstance(refusal, Refusal)
    assert refusal.reason.startswith("'7c7d7h' is not a card")
    assert "A meld is its cards joined by -, e.g. knock 6c 3h-4h-5h Td-Th-Ts." in refusal.reason
    assert interpret("knock 9h As-2s-3s 7c-7d-7h", view, PLAIN) == Refusal(
        "You just took 9h from the discard pile, so you may not discard it this turn."
    )
    view = view_of("take", "As 2s 3s 7c 7d 6h 9c Td 4c Kd", DEALER, "9h")
    refusal = interpret("knock Kd As-2s-3s", view, PLAIN)  # no knock at all from this hand
    assert isinstance(refusal, Refusal) and refusal.reason.startswith("You cannot knock with Kd")


def test_the_discard_pile_is_worded_top_last_in_the_terminal_the_viewer_and_the_spec() -> None:
    pile = parse_cards("5c Ks Jc Qs Kh Qh 8h")
    assert pile_text(pile, PLAIN) == "... Ks Jc Qs Kh Qh 8h  (7 cards, top last)"
    assert pile_text(pile, PLAIN, shown=None) == "5c Ks Jc Qs Kh Qh 8h  (7 cards, top last)"
    assert pile_text(pile[:1], PLAIN) == "5c  (1 card, top last)"
    viewer = (ROOT / "referee" / "views" / "html" / "assets" / "viewer.js").read_text()
    assert "', top last)'" in viewer
    protocol = (ROOT / "spec" / "PROTOCOL.md").read_text()
    (row,) = [line for line in protocol.splitlines() if line.startswith("| `pile` |")]
    assert "top last" in row
    for text in (viewer, protocol):
        assert "top first" not in text


@pytest.mark.parametrize("typed", ["s", "p", "take", "pass"])
def test_after_drawing_only_a_discard_or_knock_is_accepted(typed: str) -> None:
    view = view_of("take", NON_DEALER, DEALER, "9h")
    action = interpret(typed, view, PLAIN)
    assert action == Refusal("You have drawn already: now discard a card (e.g. 7h) or knock.")


def test_a_mistyped_card_says_how_cards_are_typed() -> None:
    with pytest.raises(CardError, match="type a rank"):
        parse_card("1h")
    assert parse_card("7♥") == Card.from_str("7h")


# ---------------------------------------------------------------------------------------------
# The command line.


def cli_run(*args: str, stdin: str = "") -> Result:
    from referee.cli import cli

    return CliRunner().invoke(cli, ["play", *args], input=stdin)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["simple", "--variant", "three"], "Invalid value for '--variant'"),
        (["simple", "random", "--variant", "oklahoma"], "oklahoma is played against one engine"),
        (["simple", "random", "--rule", "variant=standard"], "standard is played against one"),
        (["simple", "--role", "box"], "--role is for the three-player game"),
        (["simple", "--player", "2"], "standard has players 0 to 1"),
        (["simple", "--second", "--player", "1"], "give only one of --first/--second and"),
        (["simple", "random", "--role", "dealer"], "Invalid value for '--role'"),
        (["simple", "--rule", "nonsense=1"], "unknown rule 'nonsense'"),
        (["simple", "--rule", "target"], "expected NAME=VALUE"),
        (["simple", "--tc", "fast"], "time control must be BASE+INC"),
        (["simple", "-o", "Seed"], "expected [N:]NAME=VALUE"),
        (["simple", "--name", " "], "your name must not be empty"),
        ([], "Missing argument 'ENGINE'"),
    ],
)
def test_bad_arguments_are_usage_errors(args: list[str], message: str) -> None:
    result = cli_run(*args)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output


def test_an_engine_that_does_not_start_is_a_clear_error() -> None:
    result = cli_run(f"{sys.executable} {ROOT / 'tests' / 'programs' / 'crash.py'}")
    assert result.exit_code == 1
    assert "cannot be used" in result.output and "Traceback" not in result.output
    assert "cannot load weights" in result.output  # the tail of its stderr


def test_an_option_the_engine_does_not_declare_is_refused() -> None:
    result = cli_run("random", "-o", "Sed=1", stdin="quit\ny\n")
    assert result.exit_code == 1, result.output
    assert "-o Sed: the engine declares no such option (declared: Seed)" in result.output
    assert "You are player" not in result.output


def test_env_and_time_margin_are_accepted_and_checked() -> None:
    result = cli_run("random", "--env", "X=1", "--time-margin", "0.2", stdin="quit\ny\n")
    assert result.exit_code == 0, result.output
    for args in (["--env", "X"], ["--time-margin", "nan"], ["--timemargin", "-1"]):
        result = cli_run("random", *args)
        assert result.exit_code == 2, (args, result.output)
        assert "Traceback" not in result.output


def test_plain_text_when_not_a_terminal_and_colour_when_asked() -> None:
    plain = cli_run("random", "--seed", "4", stdin="quit\ny\n")
    assert plain.exit_code == 0, plain.output
    assert "\x1b[" not in plain.output and not set("♣♦♥♠") & set(plain.output)
    assert "Not recorded (use --record FILE" in plain.output
    coloured = cli_run("random", "--seed", "4", "--color", stdin="quit\ny\n")
    assert "\x1b[" in coloured.output and set("♣♦♥♠") & set(coloured.output)


def test_ctrl_c_while_the_engine_thinks_forfeits_at_the_next_decision() -> None:
    human = HumanPlayer(0, Rules(), ["human", "Simple"], PLAIN, io.StringIO(), read=lambda _: "s")
    human.interrupt()  # not reading: noted for the next decision
    with pytest.raises(PlayerFault, match="interrupted"):
        human.ask("draw> ")
    with pytest.raises(KeyboardInterrupt):  # a second Ctrl-C abandons the game at once
        human.interrupt()


if __name__ == "__main__":
    # The seed search: print the seeds whose games show what the terminal tests need.
    wanted = {"take", "pass", "knock", "gin", "knock-by-me", "gin-by-me", "won"}
    for seed in range(1000):
        typist = Typist()
        log, _ = play_in_process(seed, SimpleEngine(), typist)
        found = situations(log) | set(typist.seen)
        if wanted <= found and any(s.startswith("undercut") for s in found):
            print("simple", seed, sorted(found))
    for seed in range(1000):
        typist = Typist(knock="gin")
        log, _ = play_in_process(seed, RandomEngine(), typist)
        found = situations(log) | set(typist.seen)
        if {"take", "pass", "draw", "gin-by-me", "won"} <= found:
            print("random", seed, sorted(found))
    for seed in range(100):
        typist = Typist(declare=True)
        log, _ = play_in_process(seed, SimpleEngine(), typist, Rules(target=20))
        if {"knock", "bad melds", "won"} <= set(typist.seen) | situations(log):
            print("declare", seed, len(log.hands), "hands")
    for seed in range(100):
        log, _, me = three_player_game(seed, Typist())
        roles = {str(h.roles.role_of(me)) for h in log.hands if h.roles is not None}
        if len(roles) == 3 and log.winner == me:
            print("three", seed, len(log.hands), "hands")


def test_the_showdown_conjugates_for_you_and_for_the_engine() -> None:
    """'You defend' and 'Simple defends', never 'You defends' (nor 'You knocks')."""
    _log, text = play_in_process(1, SimpleEngine(), Typist(), Rules(target=60))
    blocks = showdowns(text)
    assert any(re.search(r"^  Simple +knocks ", b, re.M) for b in blocks)
    assert any(re.search(r"^  You +defend ", b, re.M) for b in blocks)
    for block in blocks:
        assert not re.search(r"You +(defends|knocks|goes|lays)\b", block), block
        assert not re.search(r"Simple +(defend|knock|go) ", block), block
