"""The game told in words: one module for ``ginref replay``, ``ginref play`` and the HTML pages.

How a card, a meld and a move are drawn (``Style``: suit symbols and colour on a terminal,
the two-letter text form when piped), how a move, a hand's result and its points are told, and
the table as ``ginref play`` shows it to a person (the pile, the scores, the roles, the
showdown and the end of the game). Every figure comes from the rules core (``ginproto``): this
module only words it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import IO

import click

from ginproto.cards import Card
from ginproto.game import Entry, Game, GameEnd, Roles
from ginproto.hand import HandResult, Outcome, Turn, hand_points
from ginproto.melds import Meld, best_melds
from ginproto.moves import Move, MoveKind
from ginproto.record import Result
from ginproto.rules import Rules
from ginproto.table import Fault
from ginproto.text import plural


@dataclass(frozen=True)
class Style:
    """How to draw cards: with suit symbols, and with colour."""

    symbols: bool
    colour: bool

    @property
    def sep(self) -> str:
        """A separator between facts on one line (plain ASCII when piped)."""
        return " · " if self.symbols else ", "

    def card(self, card: Card) -> str:
        text = card.symbol() if self.symbols else str(card)
        if self.colour and card.suit in (1, 2):
            return click.style(text, fg="red", bold=True)
        if self.colour:
            return click.style(text, bold=True)
        return text

    def cards(self, cards: Iterable[Card]) -> str:
        return " ".join(self.card(c) for c in cards) or "-"

    def meld(self, meld: Meld) -> str:
        return "-".join(self.card(c) for c in meld.cards)

    def melds(self, melds: Iterable[Meld]) -> str:
        return "  ".join(self.meld(m) for m in melds) or "-"

    def move(self, move: Move) -> str:
        if move.card is None and not move.melds:
            return str(move.kind)
        parts = [str(move.kind)]
        if move.card is not None:
            parts.append(self.card(move.card))
        parts += [self.meld(m) for m in move.melds or ()]
        return " ".join(parts)

    def em(self, text: str) -> str:
        return click.style(text, bold=True) if self.colour else text

    def bad(self, text: str) -> str:
        return click.style(text, fg="red", bold=True) if self.colour else text


def choose_style(stream: IO[str], colour: bool | None) -> Style:
    """Symbols and colour on a terminal; plain text when piped. ``NO_COLOR`` turns colour off;
    ``--color``/``--no-color`` (``colour``) decide over both."""
    tty = stream.isatty()
    if colour is None:
        colour = tty and not os.environ.get("NO_COLOR")
    return Style(symbols=tty or colour, colour=colour)


# ---------------------------------------------------------------------------------------------
# A move and a hand's result, as a record shows them (``ginref replay``, the HTML viewer).

HOW_WON = {
    Outcome.KNOCK: "by knocking",
    Outcome.GIN: "with gin",
    Outcome.BIG_GIN: "with big gin",
    Outcome.UNDERCUT: "by an undercut",
}
"""How a hand was won, after "wins"."""


def move_text(move: Move, card: Card | None, style: Style) -> str:
    """A move in the present tense, after the player's name: ``takes 7♥ from the pile``.
    ``card`` is the card drawn (``None`` when it is not known)."""
    s = style
    kind = move.kind
    if kind is MoveKind.TAKE:
        return f"takes the upcard {s.card(card) if card else ''}"
    if kind is MoveKind.PASS:
        return "passes the upcard"
    if kind is MoveKind.STOCK:
        return f"draws from the stock: {s.card(card) if card else '?'}"
    if kind is MoveKind.PILE:
        return f"takes {s.card(card) if card else '?'} from the pile"
    if kind is MoveKind.DISCARD and move.card is not None:
        return f"discards {s.card(move.card)}"
    declared = f", declaring {s.melds(move.melds)}" if move.melds else ""
    if kind is MoveKind.KNOCK and move.card is not None:
        return s.em(f"knocks, discarding {s.card(move.card)}") + declared
    return s.em("goes big gin") + declared


def result_text(item: Result, who: Callable[[int | None], str]) -> str:
    """A hand's result line: ``player 0 (Simple) wins with gin: 37 points``."""
    if item.outcome is Outcome.DRAW:
        return "drawn hand" + (" (the turn cap)" if item.capped else "")
    text = f"{who(item.winner)} wins {HOW_WON[item.outcome]}: {plural(item.points, 'point')}"
    if item.multiplier != 1:
        text += f" (doubled x{item.multiplier})"
    if item.games:
        text += " in game" + ("s " if len(item.games) > 1 else " ")
        text += ", ".join(str(g) for g in item.games)
    return text


# ---------------------------------------------------------------------------------------------
# The table as ``ginref play`` shows it to a person.


def group_text(cards: Sequence[Card], style: Style) -> str:
    """A hand sorted and grouped into its best melds, then the deadwood and its value."""
    arrangement = best_melds(cards)
    parts = [bracket(m.cards, style) for m in arrangement.melds]
    if arrangement.deadwood_cards:
        parts.append(style.cards(sorted(arrangement.deadwood_cards)))
    return "  ".join(parts) + f"   deadwood {arrangement.deadwood}"


def bracket(cards: Sequence[Card], style: Style) -> str:
    return "[" + style.cards(cards) + "]"


def deadwood_text(cards: Sequence[Card], value: int, style: Style) -> str:
    """``deadwood 9♣ K♦ = 19``, or ``no deadwood``."""
    if not cards:
        return "no deadwood"
    return f"deadwood {style.cards(cards)} = {value}"


def meld_list(melds: Sequence[Meld], style: Style) -> str:
    return " ".join(bracket(m.cards, style) for m in melds) or "no melds"


Pending = tuple[int, Turn, Move | None]
"""A move played and not yet shown: the player, the turn as this person may see it, and the
advice this person gave for it (as the sitter), if any."""


def roles_text(roles: Roles, me: int, names: Sequence[str]) -> str:
    """Who plays whom in a three-player hand, from the person's side."""
    box, captain, sitter = (names[p] for p in (roles.box, roles.captain, roles.sitter))
    if me == roles.box:
        return f"You are in the box, against {captain} (captain); {sitter} sits out and advises."
    if me == roles.captain:
        return f"You are captain, against {box} in the box; {sitter} sits out and advises you."
    return (
        f"You sit out this hand: you see the hand of {captain} (captain) and advise it"
        f" against {box} in the box."
    )


def pile_text(pile: Sequence[Card], style: Style, shown: int | None = 6) -> str:
    """The discard pile, top last: ``... 4♥ K♦ 9♣  (7 cards, top last)``; the top ``shown``
    cards, or with ``None`` all of them."""
    if not pile:
        return "empty"
    cards = pile if shown is None else pile[-shown:]
    more = "... " if len(cards) < len(pile) else ""
    count = plural(len(pile), "card")
    return f"{more}{style.cards(cards)}  ({count}, {PILE_ORDER})"


PILE_ORDER = "top last"
"""How the discard pile is listed, worded alike here, in the replay viewer and in
spec/PROTOCOL.md: from the bottom card to the top one, which is the card that may be drawn."""


def scores_text(
    totals: Sequence[Sequence[int]], closed: Sequence[bool], names: Sequence[str]
) -> str:
    """``You 34 · Simple 12``; Hollywood: each of the three games, marked when closed."""

    def column(col: Sequence[int]) -> str:
        return " · ".join(f"{names[p]} {v}" for p, v in enumerate(col))

    if len(totals) == 1:
        return column(totals[0])
    parts = []
    for g, col in enumerate(totals):
        done = " (over)" if g < len(closed) and closed[g] else ""
        parts.append(f"game {g + 1}{done}: {column(col)}")
    return " | ".join(parts)


def describe_turns(
    turns: Sequence[Pending], me: int, names: Sequence[str], style: Style
) -> list[str]:
    """Sentences for moves just played: the others' (a draw joined to the discard after
    it), and the person's own, each as it is played."""
    s = style
    lines: list[str] = []
    draw: str | None = None
    for player, turn, advised in turns:
        mine = player == me
        who = names[player]
        move, kind = turn.move, turn.move.kind
        note = advice_note(advised, move, s)
        if kind is MoveKind.PASS:
            lines.append(f"{who} passed the upcard{note}.")
            continue
        if move.is_draw:
            card = s.card(turn.card) if turn.card is not None else ""
            if kind is MoveKind.TAKE:
                draw = f"{who} took the upcard {card}"
            elif kind is MoveKind.PILE:
                draw = f"{who} took {card} from the discard pile"
            else:
                draw = f"{who} drew {card} from the stock" if card else f"{who} drew from the stock"
            draw += note
            if mine:
                lines.append(draw + ".")
                draw = None
            continue
        if kind is MoveKind.DISCARD and move.card is not None:
            what = f"discarded {s.card(move.card)}"
        elif kind is MoveKind.KNOCK and move.card is not None:
            what = s.em(f"knocked, discarding {s.card(move.card)}")
            if move.melds:
                what += f", declaring {meld_list(move.melds, s)}"
        else:
            what = s.em("went big gin")
        what += note
        lines.append(f"{draw} and {what}." if draw else f"{who} {what}.")
        draw = None
    if draw is not None:
        lines.append(draw + ".")
    return lines


def advice_note(advised: Move | None, move: Move, style: Style) -> str:
    """`` (as you advised)`` or `` (you advised pile)`` after a captain's move, for the
    sitter who advised it; empty otherwise."""
    if advised is None:
        return ""
    if advised == move:
        return " (as you advised)"
    return f" (you advised {style.move(advised)})"


def points_text(result: HandResult, rules: Rules) -> str:
    """How the hand's points came about, e.g. ``19 - 4 = 15 points``: the core's terms
    (``ginproto.hand.hand_points``), put into words."""
    if result.outcome is Outcome.DRAW:
        return "no score"
    k, d = result.knocker_deadwood_value, result.defender_deadwood_value
    _, bonus = hand_points(rules, result.outcome, k, d)
    sum_text = {
        Outcome.KNOCK: f"{d} - {k}",
        Outcome.UNDERCUT: f"{k} - {d} + {bonus} undercut bonus",
        Outcome.GIN: f"{d} + {bonus} gin bonus",
        Outcome.BIG_GIN: f"{d} + {bonus} big gin bonus",
    }[result.outcome]
    if result.multiplier != 1:
        sum_text = f"({sum_text}) x {result.multiplier}"
    return f"{sum_text} = {plural(result.points, 'point')}"

def showdown(
    entry: Entry, me: int, names: Sequence[str], style: Style, rules: Rules
) -> list[str]:
    """The end of a hand: both hands laid out, the layoffs, the outcome and the points.
    ``names`` are the players' display names, ``names[me]`` the person's ("You")."""
    s = style
    result = entry.result

    def who(player: int | None) -> str:
        return "nobody" if player is None else names[player]

    lines = ["", s.em(f"── Hand {entry.number}: showdown ──")]
    if result.outcome is Outcome.DRAW:
        for seat, player in enumerate(entry.seats):
            lines.append(f"  {who(player):<8} {group_text(result.hands[seat], s)}")
        why = (
            "the turn cap was reached"
            if result.capped
            else "only two cards are left in the stock"
        )
        dealer = who(entry.dealer)
        again = "you deal" if entry.dealer == me else f"{dealer} deals"
        lines.append(s.em(f"  Drawn hand: {why}. No score; {again} again."))
    else:
        assert result.knocker is not None and result.defender is not None
        knocker = entry.seats[result.knocker]
        defender = entry.seats[1 - result.knocker]
        d = result.defender
        went = {Outcome.GIN: "go gin", Outcome.BIG_GIN: "go big gin"}.get(result.outcome, "knock")
        knocks = _verb(went, knocker == me)
        defends = _verb("defend", defender == me)
        width = max(8, len(knocks), len(defends))
        lines.append(
            f"  {who(knocker):<8} {knocks:<{width}} {meld_list(result.knocker_melds, s)}"
            f"   {deadwood_text(result.knocker_deadwood, result.knocker_deadwood_value, s)}"
        )
        lay = ""
        if d.layoffs:
            onto: dict[int, list[Card]] = {}
            for x in d.layoffs:
                onto.setdefault(x.meld, []).append(x.card)
            laid = ", ".join(
                f"{s.cards(cards)} on {bracket(result.knocker_melds[m].cards, s)}"
                for m, cards in onto.items()
            )
            lay = f"   {_verb('lay', defender == me)} off {laid}"
        lines.append(
            f"  {who(defender):<8} {defends:<{width}} {meld_list(d.melds, s)}{lay}"
            f"   {deadwood_text(d.deadwood_cards, d.deadwood, s)}"
        )
        winner = who(entry.winner)
        verb = "win" if entry.winner == me else "wins"
        how = HOW_WON[result.outcome]
        if result.outcome is Outcome.UNDERCUT:
            how = f"by undercutting {'you' if knocker == me else who(knocker)}"
        text = f"  {winner} {verb} the hand {how}: {points_text(result, rules)}"
        if len(entry.totals) > 1 and entry.games:
            games = _and([str(g + 1) for g in entry.games])
            text += f", in game{'s' if len(entry.games) > 1 else ''} {games}"
        lines.append(s.em(text + "."))
    lines.append("  Score      " + scores_text(entry.totals, (), names))
    return lines


def game_result(
    game: Game, fault: Fault | None, me: int, names: Sequence[str], style: Style
) -> list[str]:
    """The end of the game: who won and why, and the final scores."""
    s = style

    def who(player: int | None) -> str:
        return "nobody" if player is None else names[player]

    lines = [s.em("══ Game over ══")]
    if fault is not None:
        if fault.player == me:
            lines.append(f"  You forfeit the game: {fault.detail}.")
        else:
            lines.append(
                s.bad(f"  {who(fault.player)} forfeits the game ({fault.kind}): {fault.detail}.")
            )
    elif game.end is GameEnd.HAND_CAP:
        cap = game.rules.hand_cap
        lines.append(f"  The game reached the hand cap ({plural(cap, 'hand')}).")
    def scores(game_number: int) -> str:
        return " · ".join(f"{names[p]} {v}" for p, v in enumerate(game.final_scores(game_number)))

    what = "game"
    if game.rules.games == 1:
        lines.append(f"  Final score: {scores(0)}")
    else:
        for g, winner in enumerate(game.game_winners):
            won = f"won by {who(winner)}" if winner is not None else "not finished"
            lines.append(f"  Game {g + 1}: {scores(g)} ({won})")
        wins = [sum(1 for w in game.game_winners if w == p) for p in range(game.players)]
        most, least = max(wins), min(wins)
        what = f"series, {plural(most, 'game')} to {least}"
        if fault is not None:
            what = "series"
    if game.winner is None:
        lines.append(s.em(f"  The {what} is drawn."))
    elif game.winner == me:
        lines.append(s.em(f"  You win the {what}!"))
    else:
        lines.append(s.em(f"  {who(game.winner)} wins the {what}."))
    return lines


def _verb(phrase: str, you: bool) -> str:
    """``knock`` for you, ``knocks`` for the engine; ``go gin`` and ``goes gin``."""
    if you:
        return phrase
    verb, _, rest = phrase.partition(" ")
    verb = "goes" if verb == "go" else verb + "s"
    return f"{verb} {rest}".rstrip()


def _and(words: Sequence[str]) -> str:
    """``1``, ``1 and 2``, ``1, 2 and 3``."""
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]
