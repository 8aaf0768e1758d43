"""From a played game to its record: ``record_from_log(log, engines, ...)``.

The events of a hand (``entry_events``), a turn (``turn_event``) and the game's end
(``end_event``) are built here; the replayer (``ginproto.replay``) builds its expected lines with
the same functions, so the record and the check of it cannot disagree on a format.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from ginproto.game import Entry, Game
from ginproto.hand import Hand, HandResult, Outcome, Turn
from ginproto.record.model import (
    Advice,
    Cut,
    Deal,
    End,
    EngineInfo,
    Event,
    FaultLine,
    GameRecord,
    HandStart,
    Header,
    Item,
    LayOff,
    Play,
    RecordWriteError,
    Result,
    Show,
    Totals,
    _opt,
)
from ginproto.rules import Rules
from ginproto.table import GameLog

log = logging.getLogger(__name__)

# ---------------------------------------------------------------------------------------------
# From a played game to its record. The replayer builds its expected lines with the same
# functions, so the record and the check of it cannot disagree on a format.


def entry_events(entry: Entry, rules: Rules) -> list[Event]:
    """The lines after a hand's last move: the showdown, the result, the totals."""
    result = entry.result
    seats = entry.seats
    events: list[Event] = []
    if result.knocker is not None and result.defender is not None:
        knocker, defender = seats[result.knocker], seats[1 - result.knocker]
        events.append(
            Show(
                "knocker",
                knocker,
                result.knocker_melds,
                result.knocker_deadwood,
                result.knocker_deadwood_value,
            )
        )
        d = result.defender
        events.extend(
            LayOff(defender, lay.card, result.knocker_melds[lay.meld]) for lay in d.layoffs
        )
        events.append(Show("defender", defender, d.melds, d.deadwood_cards, d.deadwood))
    events.append(_result_event(entry, result, rules))
    events.append(Totals(entry.totals))
    return events


def _result_event(entry: Entry, result: HandResult, rules: Rules) -> Result:
    if result.outcome is Outcome.DRAW:
        return Result(Outcome.DRAW, capped=result.capped)
    games = tuple(g + 1 for g in entry.games) if rules.games > 1 else ()
    return Result(result.outcome, entry.winner, result.points, result.multiplier, games=games)


def end_event(game: Game) -> End:
    """The ``end`` line of a finished game."""
    assert game.end is not None, "the game is not over"
    scores = tuple(game.final_scores(g) for g in range(game.rules.games))
    winners = tuple(game.game_winners) if game.rules.games > 1 else ()
    return End(game.end, game.winner, scores, winners)


def turn_event(player: int, turn: Turn) -> Play:
    return Play(player, turn.move, turn.card)


def record_from_log(
    log: GameLog,
    engines: Sequence[EngineInfo],
    *,
    event: str = "",
    site: str = "",
    date: str = "",
    referee: str = "",
    extra: Sequence[tuple[str, str]] = (),
) -> GameRecord:
    """The record of a game played by ``ginproto.table.play_game``.

    ``engines`` describe the players by number; ``date`` is ``YYYY.MM.DD`` as in PGN;
    ``referee`` defaults to this ginproto's version; ``extra`` headers go before the result.
    """
    from ginproto.version import __version__

    rules = log.rules
    if len(engines) != rules.players:
        raise RecordWriteError(f"{rules.variant} needs {rules.players} engines, not {len(engines)}")
    items: list[Item] = [
        Header("Event", event),
        Header("Site", site),
        Header("Date", date),
        Header("Referee", referee or f"ginproto {__version__}"),
        Header("Variant", str(rules.variant)),
    ]
    params = rules.to_params()
    items += [Header(f"Rule.{k}", v) for k, v in params.items() if k != "variant"]
    items += [Header("Seed", str(log.seed)), Header("Key", str(log.key))]
    for p, info in enumerate(engines):
        items += [
            Header(f"Player{p}", info.name),
            Header(f"Player{p}.Version", info.version),
            Header(f"Player{p}.Command", info.command),
        ]
        if info.latency:  # a remote engine's
            items.append(Header(f"Player{p}.Latency", info.latency))
        for key, value in info.options:
            if "=" in key:
                raise RecordWriteError(f"an option name must not contain '=': {key!r}")
            items.append(Header(f"Player{p}.Option", f"{key}={value}"))
    items += [Header(k, v) for k, v in extra]
    game = log.game
    items += [
        Header("Winner", _opt(game.winner)),
        Header("Termination", str(game.end)),
    ]
    if log.role_cards:
        items.append(Cut(log.role_cards))
    for hand in log.hands:
        # The knock limit follows from the deal (its upcard); the record states it for people.
        limit = Hand(rules, hand.deck, 0).knock_limit
        items.append(HandStart(hand.number, hand.dealer, limit, hand.roles))
        items.append(Deal(hand.deck))
        for step in hand.steps:
            if step.advice is not None and hand.roles is not None:
                items.append(Advice(hand.roles.sitter, step.advice))
            items.append(turn_event(step.player, step.turn))
        if hand.advice is not None and hand.roles is not None:
            items.append(Advice(hand.roles.sitter, hand.advice))  # before the captain's fault
        if hand.entry is not None:
            items += entry_events(hand.entry, rules)
    if log.fault is not None:
        items.append(FaultLine(log.fault.player, log.fault.kind, log.fault.detail))
    items.append(end_event(game))
    return GameRecord(items)
