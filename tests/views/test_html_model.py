"""What the replay viewer shows of a game (``referee.views.html.model``), as a spectator follows it
position by position: every card in exactly one place (a hand, the pile or the unseen stock),
each move visible in the position it leads to, and a stock draw shown to the other seat
without its card. Checked on games of every variant, from the model's data alone (no browser).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ginproto.game import GameView
from ginproto.hand import Outcome
from ginproto.moves import Move, MoveKind
from ginproto.record import Advice, GameRecord, Play, Result
from ginproto.rules import Rules, Variant
from ginproto.simulate import RandomPlayer, play_one
from ginproto.table import Decision
from referee.views.html.model import game_data

SUITS = {"c": "♣", "d": "♦", "h": "♥", "s": "♠"}


def cards(text: str) -> list[str]:
    """The two-letter cards of a hand's ``melds|deadwood`` text, or of the pile's text."""
    flat = text.replace("|", "").replace(" ", "")
    return [flat[i : i + 2] for i in range(0, len(flat), 2)]


def shown(card: str) -> str:
    """A card as the viewer's move text writes it: ``3♦``."""
    return card[0] + SUITS[card[1]]


@pytest.fixture(scope="module", params=list(Variant))
def hands(request: pytest.FixtureRequest) -> list[dict[str, Any]]:
    """The hands of a few games of random play in the variant (knocking when it may); in the
    three-player game the two seats of a hand are played by changing players."""
    rules = Rules(variant=request.param, target=40)
    out: list[dict[str, Any]] = []
    for seed in range(3):
        players = [RandomPlayer(name, knocks=True) for name in "abc"[: rules.players]]
        _, record = play_one(rules, players, f"model-{seed}", seed, site="s", date="2026.01.01")
        out += game_data(record, seed + 1)["hands"]
    assert out
    return out


def positions(hands: list[dict[str, Any]]) -> Iterator[tuple[dict[str, Any], int, dict[str, Any]]]:
    """Each hand, a position's index in it, and the position."""
    for hand in hands:
        for i, pos in enumerate(hand["pos"]):
            yield hand, i, pos


def test_every_card_is_in_one_place_only(hands: list[dict[str, Any]]) -> None:
    for _, i, pos in positions(hands):
        seen = cards(pos["h"][0]) + cards(pos["h"][1]) + cards(pos["pile"])
        assert len(seen) == len(set(seen)), (i, pos)
        assert len(seen) + pos["st"] == 52, (i, pos)


def test_the_deal_shows_ten_cards_each_and_the_upcard(hands: list[dict[str, Any]]) -> None:
    for hand in hands:
        deal = hand["pos"][0]
        assert "mv" not in deal
        assert [len(cards(h)) for h in deal["h"]] == [10, 10]
        assert deal["pile"] == hand["upcard"]
        assert deal["st"] == 31


def test_each_move_is_what_the_next_position_shows(hands: list[dict[str, Any]]) -> None:
    checked = 0
    for hand, i, pos in positions(hands):
        move = pos.get("mv")
        if move is None:
            continue
        before = hand["pos"][i - 1]
        assert before["to"] == move["p"], (i, before, move)  # the one whose turn it was
        seat = hand["seats"].index(move["p"])
        held, had = cards(pos["h"][seat]), cards(before["h"][seat])
        other = 1 - seat
        assert pos["h"][other] == before["h"][other]  # the other hand stays as it was
        if "c" in move:  # a card drawn or taken: now in the mover's hand, not before
            assert move["c"] in held and move["c"] not in had, (i, move)
            if move["k"] == "stock":
                assert pos["st"] == before["st"] - 1
            else:
                assert before["pile"].endswith(move["c"]) and pos["pile"] == before["pile"][:-2]
        if move["k"] == "discard":
            assert pos["pile"] == before["pile"] + move["d"], (i, move)
            assert move["d"] in had and move["d"] not in held
        checked += 1
    assert checked


def test_a_stock_draw_is_shown_to_the_other_seat_without_its_card(
    hands: list[dict[str, Any]],
) -> None:
    draws = [pos["mv"] for _, _, pos in positions(hands) if pos.get("mv", {}).get("k") == "stock"]
    assert draws
    for move in draws:
        card = move["c"]
        assert shown(card) in move["t"]  # the seat that drew sees it
        assert shown(card) not in move["th"] and card not in move["th"], move
        assert not any(s in move["th"] for s in SUITS.values()), move


def _plays(record: GameRecord) -> list[tuple[str, str | None]]:
    """Each move of the record, with the sitter's advice given for it (or None)."""
    out: list[tuple[str, str | None]] = []
    advice: str | None = None
    for item in record.events:
        if isinstance(item, Advice):
            advice = str(item.move)
        elif isinstance(item, Play):
            out.append((str(item.move), advice))
            advice = None
    return out


def test_the_sitters_advice_is_shown_on_the_move_it_was_given_for_only() -> None:
    """In the three-player game the sitter advises the captain, never the box: a spectator
    sees each piece of advice on the captain's move it was for, and none on the box's."""
    rules = Rules(variant=Variant.THREEHANDED, target=40)
    players = [RandomPlayer(name, knocks=True) for name in "abc"]
    _, record = play_one(rules, players, "advice", 0, site="s", date="2026.01.01")
    plays = _plays(record)
    assert any(a is None for _, a in plays) and any(a is not None for _, a in plays)
    moves = [p["mv"] for h in game_data(record, 1)["hands"] for p in h["pos"] if "mv" in p]
    assert len(moves) == len(plays)
    for move, (_, advice) in zip(moves, plays, strict=True):
        assert ("adv" in move) == (advice is not None), (move, advice)


class _NeverKnocks(RandomPlayer):
    """A random player that never knocks nor goes gin: its hands are drawn."""

    def decide(self, view: GameView, decision: Decision) -> Move:
        moves = [m for m in view.hand.legal_moves() if m.kind not in _ENDS]
        return self._rng.choice(moves)


_ENDS = {MoveKind.KNOCK, MoveKind.BIG_GIN}


@pytest.mark.parametrize("turn_cap", [4, 100])
def test_a_drawn_hand_says_how_it_was_drawn(turn_cap: int) -> None:
    """A hand no one knocks in is drawn by the turn cap or by the stock running down to two
    cards; the viewer says which, as the record does."""
    rules = Rules(target=40, turn_cap=turn_cap, hand_cap=3)
    _, record = play_one(
        rules, [_NeverKnocks("a"), _NeverKnocks("b")], "drawn", 0, site="s", date="2026.01.01"
    )
    results = [i for i in record.events if isinstance(i, Result)]
    shown = [h["result"] for h in game_data(record, 1)["hands"] if "result" in h]
    assert len(results) == len(shown) == 3
    for result, hand in zip(results, shown, strict=True):
        assert result.outcome is Outcome.DRAW and result.capped is (turn_cap == 4)
        assert hand["how"] == ("the turn cap" if result.capped else "two cards left in the stock")
