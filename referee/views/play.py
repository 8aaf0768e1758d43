"""``ginref play``: a person against engines at the terminal, through the same referee.

The person is one more ``ginproto.table.Player``, in a two-player game against one engine or
in the three-player game with two (in the box, as captain, or sitting out to advise the
captain, as the roles come round). ``HumanPlayer.decide`` shows the person's view of the
table and reads typed commands until one of them is a legal move (or, sitting out, legal
advice), which it returns to ``play_game`` like any engine's answer. So every rule is the rules
core's, the engines play exactly as in a match, and the game is recorded like any other and
replays with ``ginref replay``. Whether a typed move is legal is always
``HandView.legal_moves()``'s answer, and a knock's declared melds ``check_declared``'s; this
module only puts into words why a move is not allowed. The command itself (its options, the
engines' start and the record) is ``referee.cli.play``.

Leaving early forfeits the game: ``quit`` (once confirmed), the end of input (Ctrl-D) and Ctrl-C
all raise ``PlayerFault(FaultKind.RESIGN, ...)``, with the reason in its detail; the record
keeps it, and ``HumanPlayer.left`` says how the person left (the command's exit status). A
first Ctrl-C while an engine is thinking takes effect at the person's next decision (the
engine's answer is awaited, so the game stays whole); a second one abandons the game at once,
unrecorded.

Cards are drawn by ``referee.views.narration.Style``: suit symbols and colour on a terminal, their
two-letter text form with ``NO_COLOR`` or when the output is not a terminal. Commands always
name cards in the text form, since that is what is typed.
"""

from __future__ import annotations

import contextlib
import enum
import logging
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from types import FrameType
from typing import IO

from ginproto.cards import SUIT_SYMBOLS, SUITS, Card, CardError
from ginproto.game import Entry, Game, GameView
from ginproto.hand import HandView, Phase, Turn
from ginproto.melds import (
    MeldError,
    best_melds,
    check_declared,
    discard_deadwoods,
    knock_options,
)
from ginproto.moves import Move, MoveError, MoveKind
from ginproto.rules import Rules, Variant
from ginproto.table import (
    Decision,
    Fault,
    FaultKind,
    HandLog,
    PlayerFault,
    Step,
)
from referee.views.narration import (
    PILE_ORDER,
    Pending,
    Style,
    deadwood_text,
    describe_turns,
    game_result,
    group_text,
    pile_text,
    roles_text,
    scores_text,
    showdown,
)

log = logging.getLogger(__name__)

# ---------------------------------------------------------------------------------------------
# Reading what the person types.


class Command(enum.Enum):
    """A typed command that is not a move."""

    HELP = "help"
    QUIT = "quit"
    SHOW = "show"
    DISCARDS = "discards"  # the whole discard pile
    ADVICE = "advice"  # play the sitter's advice (the three-player captain)
    NOTHING = "nothing"  # an empty line


@dataclass(frozen=True, slots=True)
class Refusal:
    """Typed text that is no legal move now, and why, in words for the person."""

    reason: str


Action = Move | Command | Refusal

_HELP = {"help", "?", "h", "commands"}
_QUIT = {"quit", "q", "exit", "resign"}
_SHOW = {"show", "table", "hand", "look", "l"}
_DISCARDS = {"discards", "show discards", "show pile", "whole pile"}
_ADVICE = {"advice", "a", "follow", "advised"}
_TAKE = {"take", "t", "y", "yes"}
_PASS = {"pass", "n", "no"}
_STOCK = {"s", "stock", "draw", "draw stock"}
_PILE = {"p", "pile", "d", "discard pile", "dp", "draw pile", "take pile"}
_DISCARD = {"discard", "d"}
_KNOCK = {"knock", "k"}
_GIN = {"gin", "knock gin"}
_BIG_GIN = {"biggin", "big gin"}
_SYMBOL_SUIT = dict(zip(SUIT_SYMBOLS, SUITS, strict=True))


def parse_card(token: str) -> Card:
    """A card as a person types it: ``7h``, ``7H``, ``th``, ``10h`` or ``7♥``.

    Raises ``CardError`` saying how a card is typed.
    """
    text = "".join(_SYMBOL_SUIT.get(ch, ch) for ch in token.strip())
    if len(text) == 3 and text.startswith("10"):
        text = "T" + text[2:]
    if len(text) == 2:
        with contextlib.suppress(CardError):
            return Card.from_str(text[0].upper() + text[1].lower())
    raise CardError(
        f"{token!r} is not a card: type a rank (A 2 3 4 5 6 7 8 9 T J Q K) and a suit"
        " (c d h s), e.g. 7h, Td, Qs, Ac"
    )


def interpret(text: str, hand: HandView, style: Style) -> Action:
    """What the typed ``text`` asks for, for the seat whose view ``hand`` is, to move now.

    A ``Move`` returned is always one of ``hand.legal_moves()``; anything else the person
    typed becomes a ``Refusal`` that says why, or a ``Command``.
    """
    words = text.strip().lower().replace(",", " ").split()
    joined = " ".join(words)
    if not words:
        return Command.NOTHING
    if joined in _HELP:
        return Command.HELP
    if joined in _QUIT:
        return Command.QUIT
    if joined in _SHOW:
        return Command.SHOW
    if joined in _DISCARDS:
        return Command.DISCARDS
    if joined in _ADVICE:
        return Command.ADVICE
    if hand.phase is Phase.OFFER:
        action = _offer(joined, words, hand, style)
    elif hand.phase is Phase.DRAW:
        action = _draw(joined, words, hand, style)
    elif hand.phase is Phase.DISCARD:
        action = _discard(joined, words, hand, style)
    else:
        action = Refusal("The hand is over.")
    if isinstance(action, Move) and action.melds is not None:
        problem = declared_problem(action, hand, style)
        return action if problem is None else Refusal(problem)
    if isinstance(action, Move) and action not in hand.legal_moves():
        return Refusal(explain(action, hand, style))
    return action


def _looks_like_card(word: str) -> bool:
    try:
        parse_card(word)
    except CardError:
        return False
    return True


def _offer(joined: str, words: list[str], hand: HandView, style: Style) -> Action:
    up = style.card(hand.pile[-1])
    if joined in _TAKE:
        return Move.take()
    if joined in _PASS:
        return Move.pass_()
    if joined == "p":
        return Refusal(f"'p' could mean pass or pile: type take to take {up}, or pass.")
    if joined in _STOCK or joined in _PILE:
        return Refusal(f"First the upcard {up} is offered to you: type take or pass.")
    if words[0] in _DISCARD | _KNOCK | _GIN or _looks_like_card(words[0]):
        return Refusal(f"You discard after you draw. First take the upcard {up}, or pass.")
    return _unknown(joined, "Type take or pass.")


def _draw(joined: str, words: list[str], hand: HandView, style: Style) -> Action:
    if joined in _STOCK:
        return Move.stock()
    if joined in _PILE or joined in _TAKE:
        return Move.pile()
    if joined in _PASS:
        return Refusal("You cannot pass now: draw from the stock (s) or the discard pile (p).")
    if words[0] in _DISCARD | _KNOCK | _GIN or _looks_like_card(words[0]):
        return Refusal("First draw a card: s (stock) or p (discard pile); then discard.")
    return _unknown(joined, "Type s for the stock or p for the discard pile.")


def _discard(joined: str, words: list[str], hand: HandView, style: Style) -> Action:
    if joined in _STOCK or joined in _PILE or joined in _TAKE or joined in _PASS:
        return Refusal("You have drawn already: now discard a card (e.g. 7h) or knock.")
    if joined in _GIN:
        return _gin(hand, style)
    if joined in _BIG_GIN:
        return Move.big_gin()
    head, rest = words[0], words[1:]
    if head in _KNOCK and not rest:
        return Refusal(
            "Knock with which card? " + (knock_hint(hand) or "You cannot knock now.")
        )
    if head in _KNOCK and len(rest) > 1:
        return _declared_knock(rest)
    if head in _DISCARD | _KNOCK:
        if len(rest) != 1:
            return Refusal(f"Type {head} and one card, e.g. {head} 7h.")
        head_card = rest[0]
    elif len(words) == 1:
        head_card = head
    else:
        return _unknown(joined, "Type a card to discard (e.g. 7h), or knock CARD.")
    try:
        card = parse_card(head_card)
    except CardError as exc:
        if len(words) == 1 and not any(ch.isdigit() for ch in head):
            return _unknown(joined, "Type a card to discard (e.g. 7h), or knock CARD.")
        return Refusal(str(exc))
    return Move.knock(card) if head in _KNOCK else Move.discard(card)


_MELD_EXAMPLE = "knock 6c 3h-4h-5h Td-Th-Ts"


def _declared_knock(tokens: Sequence[str]) -> Action:
    """``knock 6c 3h-4h-5h Td-Th-Ts``: each card as a person types it, the move then read by
    ``Move.from_str``, the move grammar of the protocol and the records."""
    try:
        card = str(parse_card(tokens[0]))
        melds = ["-".join(str(parse_card(c)) for c in meld.split("-")) for meld in tokens[1:]]
    except CardError as exc:
        return Refusal(f"{exc}. A meld is its cards joined by -, e.g. {_MELD_EXAMPLE}.")
    try:
        return Move.from_str(" ".join(["knock", card, *melds]))
    except MoveError as exc:
        reason = str(exc)
        reason = reason[:1].upper() + reason[1:]
        return Refusal(f"{reason}. Declare runs and sets, e.g. {_MELD_EXAMPLE}.")


def declared_problem(move: Move, hand: HandView, style: Style) -> str | None:
    """Why a knock declaring melds is not allowed now, or ``None`` if it is. The knock itself
    is ``legal_moves()``'s to allow; the declared melds must be melds of the other ten
    cards (``check_declared``, as the rules core checks them) that leave at most the knock
    limit in deadwood."""
    assert move.card is not None and move.melds is not None
    card = move.card
    if Move.knock(card) not in hand.legal_moves():
        return explain(Move.knock(card), hand, style)
    try:
        arrangement = check_declared([c for c in hand.cards if c != card], move.melds)
    except MeldError as exc:
        return f"You cannot declare those melds: {exc}. Type knock {card} alone for the best ones."
    if arrangement.deadwood > hand.knock_limit:
        left = deadwood_text(arrangement.deadwood_cards, arrangement.deadwood, style)
        return (
            f"With those melds, knocking with {style.card(card)} leaves {left}, above the"
            f" knock limit {hand.knock_limit}. Declare more melds, or type knock {card} alone"
            " for the best ones."
        )
    return None


def _gin(hand: HandView, style: Style) -> Action:
    knocks = knock_choices(hand)
    gins = [c for c, dw in knocks.items() if dw == 0]
    if not gins:
        return Refusal(f"No discard leaves you gin (no deadwood). {knock_hint(hand)}".strip())
    return Move.knock(max(gins, key=lambda c: (c.value, c.index)))


def _unknown(joined: str, hint: str) -> Refusal:
    return Refusal(f"I don't understand {joined!r}. {hint} (help lists the commands.)")


def explain(move: Move, hand: HandView, style: Style) -> str:
    """Why ``move``, which is not among ``hand.legal_moves()``, is not allowed now."""
    kind, card = move.kind, move.card
    if kind is MoveKind.PILE and hand.stock_only:
        return "Both players passed the upcard, so the first draw is from the stock: type s."
    if card is not None and card not in hand.cards:
        return f"You don't hold {style.card(card)}."
    if card is not None and card == hand.taken:
        return (
            f"You just took {style.card(card)} from the discard pile, so you may not discard"
            " it this turn."
        )
    if kind is MoveKind.KNOCK and card is not None:
        left = discard_deadwoods(hand.cards)[card]
        text = (
            f"You cannot knock with {style.card(card)}: that leaves deadwood {left}, above"
            f" the knock limit {hand.knock_limit}."
        )
        return text + " " + (knock_hint(hand) or "No discard lets you knock yet.")
    if kind is MoveKind.BIG_GIN:
        if not hand.rules.big_gin:
            return "Big gin is not played under these rules."
        return "Big gin needs all 11 of your cards in melds."
    return f"'{move}' is not allowed now."


def knock_choices(hand: HandView) -> dict[Card, int]:
    """The legal knocks now: each discard that allows one, with the deadwood it leaves."""
    legal = {m.card for m in hand.legal_moves() if m.kind is MoveKind.KNOCK}
    if not legal:
        return {}
    options = knock_options(hand.cards, hand.knock_limit)
    return {c: dw for c, dw in options.items() if c in legal}


def knock_hint(hand: HandView) -> str:
    """``You can knock: knock 9c (deadwood 6), ...``; empty when no knock is legal."""
    if any(m.kind is MoveKind.BIG_GIN for m in hand.legal_moves()):
        return "You have big gin: type biggin."
    choices = knock_choices(hand)
    if not choices:
        return ""
    ranked = sorted(choices, key=lambda c: (choices[c], -c.value, c.index))
    gin = [c for c in ranked if choices[c] == 0]
    if gin:
        return f"You can go gin: type gin (knock {gin[0]})."
    shown = ", ".join(f"knock {c} (deadwood {choices[c]})" for c in ranked[:3])
    more = f", and {len(ranked) - 3} more" if len(ranked) > 3 else ""
    return f"You can knock: {shown}{more}."


# ---------------------------------------------------------------------------------------------
# Drawing the table.


def play_style(stream: IO[str], colour: bool | None) -> Style:
    """Suit symbols and colour on a terminal; the plain text form with ``NO_COLOR`` or when
    ``stream`` is not a terminal. ``--color``/``--no-color`` (``colour``) decide over both."""
    if colour is None:
        colour = stream.isatty() and not os.environ.get("NO_COLOR")
    return Style(symbols=colour, colour=colour)


Reader = Callable[[str], str]
"""Shows a prompt and returns the line typed (without its newline); ``EOFError`` at the end."""


def read_line(prompt: str) -> str:
    """``input``, echoing the line when it comes from a pipe rather than a person typing, so
    that a scripted game reads like one played at the terminal."""
    line = input(prompt)
    if not sys.stdin.isatty():
        sys.stdout.write(line + "\n")
    return line


class Leaving(enum.Enum):
    """How a person left a game before its end, other than by a confirmed ``quit``."""

    INTERRUPT = "interrupt"  # Ctrl-C (or the terminal closed)
    END_OF_INPUT = "end of input"  # Ctrl-D, or the end of a piped script


EXIT_STATUS = {None: 0, Leaving.END_OF_INPUT: 1, Leaving.INTERRUPT: 130}
"""``ginref play``'s exit status by how the person left the game (``None``: at its end, or by
``quit``)."""


class HumanPlayer:
    """A person at the terminal, as a ``ginproto.table.Player``.

    ``names`` are the display names of all the players, by player number (the person's own
    is shown as "You"). Pass ``on_step`` to ``play_game`` as its ``on_step`` so that the
    person sees what the others did, including the move that ended a hand. Call
    ``interrupt`` from a SIGINT handler (``catch_interrupts`` does).
    """

    def __init__(
        self,
        player: int,
        rules: Rules,
        names: Sequence[str],
        style: Style,
        out: IO[str] | None = None,
        read: Reader = read_line,
        pause: bool = True,
    ) -> None:
        if not 0 <= player < len(names):
            raise ValueError(f"player {player} is not one of the {len(names)} players")
        self.player = player
        self.rules = rules
        self.names = tuple("You" if p == player else n for p, n in enumerate(names))
        self.style = style
        self.out = out if out is not None else sys.stdout
        self.read = read
        self.pause = pause
        self.left: Leaving | None = None  # how the person left, if by Ctrl-C or end of input
        self._pending: list[Pending] = []  # moves not yet shown to the person
        self._hand = 0  # the hand whose header was shown
        self._awaiting_next = False  # a showdown was shown: wait for Enter before going on
        self._reading = False
        self._interrupted = False

    # -- output ---------------------------------------------------------------------------
    def echo(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    # -- input ----------------------------------------------------------------------------
    def interrupt(self) -> None:
        """Ctrl-C: forfeit at once while reading, else at the next decision; a second Ctrl-C
        before that raises ``KeyboardInterrupt`` (the game is abandoned)."""
        if self._reading or self._interrupted:
            raise KeyboardInterrupt
        self._interrupted = True

    def ask(self, prompt: str) -> str:
        """One typed line; ``PlayerFault`` (a forfeit) on Ctrl-C or the end of input."""
        if self._interrupted:
            self.left = Leaving.INTERRUPT
            raise PlayerFault(FaultKind.RESIGN, "the player interrupted the game (Ctrl-C)")
        self.out.flush()
        self._reading = True
        try:
            return self.read(prompt)
        except EOFError:
            self.echo()
            self.left = Leaving.END_OF_INPUT
            raise PlayerFault(FaultKind.RESIGN, "the player's input ended (end of file)") from None
        except KeyboardInterrupt:
            self.echo()
            self.left = Leaving.INTERRUPT
            raise PlayerFault(
                FaultKind.RESIGN, "the player interrupted the game (Ctrl-C)"
            ) from None
        finally:
            self._reading = False

    def confirm_quit(self) -> None:
        """Ask before resigning; ``PlayerFault`` if the person confirms (or input ends)."""
        self.echo("Resign this game? It counts as a loss, and the game is still recorded.")
        try:
            answer = self.ask("resign? (y/n)> ")
        except PlayerFault as fault:
            raise PlayerFault(fault.kind, "the player resigned") from None
        if answer.strip().lower() in ("y", "yes"):
            raise PlayerFault(FaultKind.RESIGN, "the player resigned")
        self.echo("Not resigned: play on.")

    # -- the table's questions ------------------------------------------------------------
    def on_step(self, hand_log: HandLog, step: Step) -> None:
        """Every move as it is played. A stock draw of a hand this person does not see
        arrives without its card, as in this person's view of the hand (the sitter sees the
        captain's), so this player never holds an unseen card. The person's own moves are
        echoed at once."""
        turn = step.turn
        seen = self.player if self.player in hand_log.seats else hand_log.seats[1]
        if step.player != seen and turn.move.kind is MoveKind.STOCK:
            turn = Turn(turn.seat, turn.move, None)
        roles = hand_log.roles
        advised = step.advice if roles is not None and roles.sitter == self.player else None
        self._pending.append((step.player, turn, advised))
        if step.player == self.player:
            self.show_moves()

    def decide(self, view: GameView, decision: Decision) -> Move:
        advising = decision is Decision.ADVICE
        hand = view.hand
        if self._awaiting_next:
            self._awaiting_next = False
            self.wait_for_next(view.hand_number)
        full = hand.phase is not Phase.DISCARD or advising
        if full:
            self.echo()
        if view.hand_number != self._hand:
            self._hand = view.hand_number
            self.echo(self.style.em(self.hand_title(view)))
            if view.roles is not None:
                self.echo(roles_text(view.roles, self.player, self.names))
        self.show_moves()
        self.show_table(view, full=full)
        self.show_advice(view)
        self.echo(self.instructions(view, advising))
        while True:
            text = self.ask(("advise " if advising else "") + self.prompt(hand))
            action = interpret(text, hand, self.style)
            if isinstance(action, Move):
                log.debug("player %s plays %s", view.player, action)
                return action
            if isinstance(action, Refusal):
                self.echo(self.style.bad(action.reason))
            elif action is Command.HELP:
                self.echo(help_text(hand, view.advice is not None, advising))
            elif action is Command.QUIT:
                self.confirm_quit()
            elif action is Command.SHOW:
                self.show_table(view, full=True)
                self.show_advice(view)
                self.echo(self.instructions(view, advising))
            elif action is Command.DISCARDS:
                self.echo("  Discards   " + pile_text(hand.pile, self.style, shown=None))
            elif action is Command.ADVICE:
                if view.advice is not None:
                    return view.advice
                self.echo(
                    self.style.bad(
                        "There is no advice to follow: the sitter advises the captain of the"
                        " three-player game."
                    )
                )

    def wait_for_next(self, number: int) -> None:
        if not self.pause:
            return
        while True:
            text = self.ask(f"Press Enter for hand {number}> ").strip().lower()
            if text in _QUIT:
                self.confirm_quit()
            elif text in _HELP:
                self.echo("Press Enter to see the next hand, or type quit to resign.")
            else:
                return

    def hand_over(self, player: int, entry: Entry) -> None:
        self.show_moves()
        for line in showdown(entry, player, self.names, self.style, self.rules):
            self.echo(line)
        self._awaiting_next = True

    def game_over(self, player: int, game: Game, fault: Fault | None) -> None:
        self._awaiting_next = False
        self.show_moves()
        self.echo()
        for line in game_result(game, fault, player, self.names, self.style):
            self.echo(line)

    # -- pieces of the display ------------------------------------------------------------
    def hand_title(self, view: GameView) -> str:
        hand = view.hand
        dealer = view.seats[hand.dealer]
        deals = "you deal" if dealer == self.player else f"{self.names[dealer]} deals"
        text = f"── Hand {view.hand_number} · {deals} · knock limit {hand.knock_limit}"
        upcard = hand.upcard
        rules = hand.rules
        if rules.variant is Variant.OKLAHOMA and upcard is not None:
            text += f" (the upcard {self.style.card(upcard)})"
        if upcard is not None and rules.multiplier_for(upcard) != 1:
            text += f" · x{rules.multiplier_for(upcard)}: a spade upcard"
        return text + " ──"

    def show_moves(self) -> None:
        for line in describe_turns(self._pending, self.player, self.names, self.style):
            self.echo(line)
        self._pending.clear()

    def show_table(self, view: GameView, full: bool) -> None:
        s = self.style
        hand = view.hand
        if full:
            score = scores_text(view.totals, view.closed, self.names)
            self.echo(f"  Score      {score}   (to {self.rules.target})")
            self.echo(f"  Stock      {hand.stock} cards")
            self.echo("  Discards   " + pile_text(hand.pile, s))
        if self.player in view.seats:
            self.echo("  Your hand  " + group_text(hand.cards, s))
        else:  # the sitter sees the captain's hand
            captain = self.names[view.seats[hand.seat]]
            self.echo(f"  {captain}'s hand  " + group_text(hand.cards, s))

    def show_advice(self, view: GameView) -> None:
        if view.advice is not None and view.roles is not None:
            sitter = self.names[view.roles.sitter]
            self.echo(
                f"{sitter} (sitting out) advises: {self.style.move(view.advice)}"
                " (type advice to play it)."
            )

    def instructions(self, view: GameView, advising: bool = False) -> str:
        """What to type now; ``advising``: the person, sitting out, advises the captain."""
        hand = view.hand
        if not advising:
            return self._instructions(hand, "you")
        captain = self.names[view.seats[hand.seat]]
        lead = f"Your advice to {captain}, the captain, who decides: type a move for this hand."
        return lead + "\n" + self._instructions(hand, captain)

    def _instructions(self, hand: HandView, whom: str) -> str:
        s = self.style
        if hand.phase is Phase.OFFER:
            return f"The upcard {s.card(hand.pile[-1])} is offered to {whom}: take or pass?"
        if hand.phase is Phase.DRAW:
            if hand.stock_only:
                return "Both passed the upcard: draw from the stock (s)."
            top = s.card(hand.pile[-1])
            return f"Draw: s from the stock, or p to take {top} from the discard pile."
        hint = knock_hint(hand)
        arrangement = best_melds(hand.cards)
        shown = [c for m in arrangement.melds for c in m.cards]
        shown += sorted(arrangement.deadwood_cards)
        example = [c for c in shown if c != hand.taken][-1]  # the rightmost card on show
        text = f"Discard a card (type e.g. {example}), or knock CARD."
        return f"{hint}\n{text}" if hint else text

    @staticmethod
    def prompt(hand: HandView) -> str:
        return {Phase.OFFER: "take/pass> ", Phase.DRAW: "draw> "}.get(hand.phase, "discard> ")


def help_text(hand: HandView, advice: bool = False, advising: bool = False) -> str:
    """The commands; ``advice``: the person is a captain with the sitter's advice;
    ``advising``: the person sits out and advises the captain."""
    now = {
        Phase.OFFER: "Now: take or pass the upcard.",
        Phase.DRAW: "Now: draw, s or p.",
        Phase.DISCARD: "Now: discard a card, or knock.",
    }.get(hand.phase, "")
    return "\n".join(
        [
            *(
                ["You sit out this hand: each move you type is your advice to the captain."]
                if advising
                else []
            ),
            "Commands (then Enter):",
            "  take, pass        take or pass the first upcard, when it is offered to you",
            "  s, stock          draw the top card of the stock",
            "  p, pile, d        take the top card of the discard pile",
            "  7h, discard 7h    discard a card: rank A 2-9 T J Q K (10 works too),"
            " suit c d h s",
            f"  knock 7h          discard 7h and knock: at most {hand.knock_limit} deadwood"
            " must be left",
            "  knock 6c 3h-4h-5h Td-Th-Ts",
            "                    knock declaring the melds, each its cards joined by -",
            "  gin               knock with the discard that leaves no deadwood",
            *(["  biggin            all 11 cards in melds: big gin"] if hand.rules.big_gin else []),
            "  show              show the table again",
            f"  discards          show the whole discard pile ({PILE_ORDER})",
            *(["  advice, a         play the sitter's advice"] if advice else []),
            "  help, ?           this help",
            "  quit              resign the game (asks first); the game is still recorded",
            now,
        ]
    )


# ---------------------------------------------------------------------------------------------
# Interrupts, while the command (``referee.cli.play``) plays.


@contextlib.contextmanager
def catch_interrupts(human: HumanPlayer) -> Iterator[None]:
    """Route Ctrl-C (and a closed terminal's SIGHUP) to ``human.interrupt`` while playing."""

    def handler(signum: int, frame: FrameType | None) -> None:
        human.interrupt()

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
