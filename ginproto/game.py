"""Scoring above the hand: one game to the target, or one Hollywood series, as a state machine.

Chance is an explicit input. The caller supplies each hand's 52-card deck (``Game.deal``), the
first dealer of a two-player game, and the roles of a three-player game (``draw_roles`` turns
a seeded card draw into roles). So any game replays exactly from its record.

Scores are kept on a sheet of ``rules.games`` columns: one for the standard, Oklahoma and
three-player games, three for Hollywood. One entry rule serves all of them (RULES.md,
"An exact statement that also covers closed games").
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from ginproto.cards import Card
from ginproto.hand import Hand, HandResult, HandView, IllegalMoveError, Turn, build_frozen
from ginproto.moves import Move
from ginproto.rules import SHUTOUT_DOUBLE, Rules


class GamePhase(enum.Enum):
    DEAL = "deal"  # waiting for the next hand's deck
    PLAY = "play"  # a hand is in progress
    OVER = "over"

    def __str__(self) -> str:
        return self.value


class GameEnd(enum.Enum):
    """Why a game ended."""

    TARGET = "target"  # a player reached the target (in Hollywood: all three games closed)
    HAND_CAP = "handcap"  # rules.hand_cap hands were played; the leader wins, or it is drawn
    FORFEIT = "forfeit"  # a player's fault forfeited it

    def __str__(self) -> str:
        return self.value


class Role(enum.Enum):
    """A player's role in the three-player game."""

    BOX = "box"
    CAPTAIN = "captain"
    SITTER = "sitter"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class Roles:
    """Who is in the box, who is captain, who sits out (player numbers 0-2)."""

    box: int
    captain: int
    sitter: int

    def __post_init__(self) -> None:
        if sorted((self.box, self.captain, self.sitter)) != [0, 1, 2]:
            raise ValueError("roles must name players 0, 1 and 2 once each")

    def role_of(self, player: int) -> Role:
        if player == self.box:
            return Role.BOX
        return Role.CAPTAIN if player == self.captain else Role.SITTER

    def after(self, box_won: bool | None) -> Roles:
        """The roles for the next hand: box wins, box loses, or (``None``) a drawn hand."""
        if box_won is None:
            return self
        if box_won:
            return Roles(self.box, self.sitter, self.captain)
        return Roles(self.captain, self.sitter, self.box)


def draw_roles(cards: Sequence[Card]) -> tuple[Roles, int]:
    """Roles from a draw of cards: each player draws in turn (0, 1, 2); the highest rank is in
    the box, the middle one captain, the lowest sits out. Players tied on rank draw again, in
    player order, from the following cards. Returns the roles and how many cards were used.
    """
    order: list[list[int]] = [[0, 1, 2]]  # groups still to separate, highest first
    pos = 0
    while any(len(group) > 1 for group in order):
        refined: list[list[int]] = []
        for group in order:
            if len(group) == 1:
                refined.append(group)
                continue
            if pos + len(group) > len(cards):
                raise ValueError("not enough cards to draw roles")
            ranks = {p: cards[pos + i].rank for i, p in enumerate(group)}
            pos += len(group)
            for rank in sorted(set(ranks.values()), reverse=True):
                refined.append([p for p in group if ranks[p] == rank])
        order = refined
    box, captain, sitter = (group[0] for group in order)
    return Roles(box, captain, sitter), pos


@dataclass(frozen=True, slots=True)
class Entry:
    """One finished hand as the game scored it."""

    number: int
    dealer: int  # player number
    seats: tuple[int, int]  # player number of hand seat 0 and 1
    result: HandResult
    winner: int | None  # player number
    games: tuple[int, ...]  # the games (0-based columns) the points went into
    totals: tuple[tuple[int, ...], ...]  # totals[game][player] after the hand
    roles: Roles | None = None


@dataclass(frozen=True)
class GameView:
    """What one player may know: the hand view (as its seat, or as the captain's seat for the
    sitter) plus the scores and the roles. (``Game.view`` builds them fast, as ``Hand.view``
    builds ``HandView``.)"""

    player: int
    hand: HandView
    seats: tuple[int, int]
    totals: tuple[tuple[int, ...], ...]
    closed: tuple[bool, ...]
    hand_number: int
    roles: Roles | None
    advice: Move | None = None  # the sitter's advice, shown to the three-player captain


class Game:
    """One game to the target (a whole series of three games in Hollywood)."""

    def __init__(
        self, rules: Rules, first_dealer: int = 0, roles: Roles | None = None
    ) -> None:
        self.rules = rules
        self.players = rules.players
        if self.players == 3:
            if roles is None:
                raise ValueError("the three-player game needs roles (see draw_roles)")
        elif first_dealer not in (0, 1):
            raise ValueError("first_dealer must be player 0 or 1")
        self.roles = roles
        self.dealer = roles.box if roles is not None else first_dealer
        games = rules.games
        self.totals: list[list[int]] = [[0] * self.players for _ in range(games)]
        self.closed: list[bool] = [False] * games
        self.game_winners: list[int | None] = [None] * games
        self._entered: list[set[int]] = [set() for _ in range(self.players)]
        self.entries: list[Entry] = []
        self.hand: Hand | None = None
        self.seats: tuple[int, int] = (0, 1)
        self.phase = GamePhase.DEAL
        self.winner: int | None = None
        self.end: GameEnd | None = None
        self._scores: tuple[tuple[tuple[int, ...], ...], tuple[bool, ...]] | None = None

    def clone(self) -> Game:
        """An independent copy of this game and of its hand in progress (``Hand.clone``), to
        play on without changing this one. The score sheet is copied; the rules, the roles,
        the entries and the results are immutable and shared."""
        other: Game = object.__new__(Game)
        state = self.__dict__.copy()
        state["totals"] = [column.copy() for column in self.totals]
        state["closed"] = self.closed.copy()
        state["game_winners"] = self.game_winners.copy()
        state["_entered"] = [entered.copy() for entered in self._entered]
        state["entries"] = self.entries.copy()
        state["hand"] = None if self.hand is None else self.hand.clone()
        object.__setattr__(other, "__dict__", state)
        return other

    # -- chance ---------------------------------------------------------------------------
    def deal(self, deck: Sequence[Card]) -> Hand:
        """Start the next hand with this deck order."""
        if self.phase is not GamePhase.DEAL:
            raise ValueError(f"cannot deal now: the game is in phase {self.phase}")
        if self.roles is not None:
            # The box deals every hand: hand seat 0 is the box, seat 1 the captain.
            self.seats = (self.roles.box, self.roles.captain)
            dealer_seat = 0
        else:
            self.seats = (0, 1)
            dealer_seat = self.dealer
        self.hand = Hand(self.rules, deck, dealer_seat)
        self._scores = None  # the score sheet as views show it, made again after each hand
        self.phase = GamePhase.PLAY
        return self.hand

    # -- play -----------------------------------------------------------------------------
    @property
    def to_move(self) -> int | None:
        """The player (not seat) to move, or ``None`` when no hand is in progress."""
        if self.phase is not GamePhase.PLAY or self.hand is None:
            return None
        return self.seats[self.hand.to_move]

    def seat_of(self, player: int) -> int | None:
        """The hand seat of ``player``; ``None`` for the three-player sitter."""
        if player in self.seats:
            return self.seats.index(player)
        return None

    def apply(self, move: Move, player: int | None = None) -> Turn:
        """Play ``move`` for the player to move (``player``, if given, must be that player).

        Returns the turn as recorded. When it ends the hand, the hand is scored at once: the
        entry is ``entries[-1]`` and the phase becomes ``DEAL`` or ``OVER``. Raises
        ``IllegalMoveError`` (the state unchanged) if the move is illegal or out of turn.
        """
        if self.phase is not GamePhase.PLAY or self.hand is None:
            raise IllegalMoveError(f"no hand in progress (the game is in phase {self.phase})")
        seat = None if player is None else self.seat_of(player)
        if player is not None and seat is None:
            raise IllegalMoveError(f"out of turn: player {player} sits out this hand")
        turn = self.hand.apply(move, seat)
        if self.hand.result is not None:
            self._score(self.hand.result)
        return turn

    def view(self, player: int) -> GameView:
        """What ``player`` may know now. The sitter gets the captain's view of the hand."""
        if self.hand is None:
            raise ValueError("no hand has been dealt")
        seats = self.seats  # as seat_of, inline: this runs on every decision
        seat = seats.index(player) if player in seats else 1  # the sitter: the captain's hand
        scores = self._scores
        if scores is None:
            scores = self._scores = (
                tuple(tuple(col) for col in self.totals),
                tuple(self.closed),
            )
        return build_frozen(
            GameView,
            {
                "player": player,
                "hand": self.hand.view(seat),
                "seats": self.seats,
                "totals": scores[0],
                "closed": scores[1],
                "hand_number": len(self.entries) + 1,
                "roles": self.roles,
                "advice": None,
            },
        )

    # -- scoring --------------------------------------------------------------------------
    def _score(self, result: HandResult) -> Entry:
        winner = None if result.winner is None else self.seats[result.winner]
        columns: list[int] = []
        if winner is not None:
            columns = self.enter(winner, result.points)
        entry = Entry(
            number=len(self.entries) + 1,
            dealer=self.seats[self.hand.dealer] if self.hand is not None else self.dealer,
            seats=self.seats,
            result=result,
            winner=winner,
            games=tuple(columns),
            totals=tuple(tuple(col) for col in self.totals),
            roles=self.roles,
        )
        self.entries.append(entry)
        self.hand = None
        if all(self.closed):
            self._finish(GameEnd.TARGET, self._leader())
        elif len(self.entries) >= self.rules.hand_cap:
            self._finish(GameEnd.HAND_CAP, self._leader())
        else:
            self.phase = GamePhase.DEAL
            self._next_dealer(winner)
        return entry

    def enter(self, player: int, points: int) -> list[int]:
        """Enter a winning hand's points (RULES.md, Hollywood's exact statement; with one
        game it is simply the running score). Returns the columns that took the points."""
        self._scores = None
        entered = self._entered[player]
        columns = [g for g in range(len(self.totals)) if not self.closed[g] and g in entered]
        for g in range(len(self.totals)):
            if not self.closed[g] and g not in self._entered[player]:
                self._entered[player].add(g)
                columns.append(g)
                break
        columns.sort()
        for g in columns:
            self.totals[g][player] += points
            if self.totals[g][player] >= self.rules.target:
                self.closed[g] = True
                self.game_winners[g] = player
        return columns

    def _next_dealer(self, winner: int | None) -> None:
        if self.roles is not None:
            box_won = None if winner is None else winner == self.roles.box
            self.roles = self.roles.after(box_won)
            self.dealer = self.roles.box
        elif winner is not None:
            self.dealer = winner

    def _leader(self) -> int | None:
        """The player ahead: most games won, then most points over all games; ``None`` if tied."""
        def standing(p: int) -> tuple[int, int]:
            return (
                sum(1 for w in self.game_winners if w == p),
                sum(col[p] for col in self.totals),
            )

        ranked = sorted(range(self.players), key=standing, reverse=True)
        if standing(ranked[0]) == standing(ranked[1]):
            return None
        return ranked[0]

    def _finish(self, end: GameEnd, winner: int | None) -> None:
        self.phase = GamePhase.OVER
        self.hand = None
        self.end = end
        self.winner = winner

    def forfeit(self, player: int) -> int:
        """End the game at once, lost by ``player`` (a fault). Returns the winner: the
        opponent, or in the three-player game the other player with the higher total (on a
        tie, the one seated next after the faulting player)."""
        others = [(player + i) % self.players for i in range(1, self.players)]
        winner = max(others, key=lambda p: (sum(col[p] for col in self.totals), -others.index(p)))
        self._finish(GameEnd.FORFEIT, winner)
        return winner

    # -- reporting ------------------------------------------------------------------------
    @property
    def is_over(self) -> bool:
        return self.phase is GamePhase.OVER

    def hands_won(self, player: int, game: int | None = None) -> int:
        """The hands ``player`` won; with ``game``, only those whose points went into that game
        (a Hollywood hand counts in the games it was entered in, RULES.md)."""
        return sum(
            1 for e in self.entries if e.winner == player and (game is None or game in e.games)
        )

    def final_scores(self, game: int = 0) -> tuple[int, ...]:
        """Each player's final score in one game (column), with the optional game, box and
        shutout bonuses of RULES.md (all off by default). The box bonus counts the hands won
        whose points went into this game, so a Hollywood game a player never entered gives
        that player no box bonus."""
        rules = self.rules
        col = self.totals[game]
        out = []
        for p in range(self.players):
            score = col[p] + rules.box_bonus * self.hands_won(p, game)
            if self.game_winners[game] == p:
                score += rules.game_bonus
                losers_scored = any(col[q] > 0 for q in range(self.players) if q != p)
                if rules.shutout_double and not losers_scored:
                    score *= SHUTOUT_DOUBLE
            out.append(score)
        return tuple(out)
