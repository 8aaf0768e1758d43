"""An OpenSpiel ``gin_rummy`` bot as an engine: any ``pyspiel.Bot``, or a Python policy that
takes an OpenSpiel state and returns an action.

Before each decision the engine rebuilds an OpenSpiel state from the ``position`` alone
(``ginproto.openspiel.view_actions``): its own cards, the pile, the cards the opponent took
from the pile and its discards are the real ones, and the cards the seat cannot see are dealt
at random from those it has not seen, so the bot learns nothing the seat could not know. The
rules map to OpenSpiel's parameters (``oklahoma``, ``knock_card``, ``gin_bonus``,
``undercut_bonus``). The bot's action becomes our move: take or pass, stock or pile, a discard,
or a knock with the discard and the melds the bot lays. A move our rules forbid (OpenSpiel
lets the card just taken be discarded) is replaced by the nearest legal one: the same kind of
move with the least deadwood left, the highest card first; so is a decision in a state that
OpenSpiel has already ended (its cap of 50 upcard draws). Each replacement is logged and sent
as an ``info`` line. docs/OPENSPIEL.md lists every rule that differs.

Run it as ``ginref match "openspiel:simple" simple`` (OpenSpiel's ``SimpleGinRummyBot``), or
``python -m engines.openspiel_engine BOT`` (or ``gin-openspiel BOT``) where BOT is ``simple``,
``random`` (OpenSpiel's uniform random bot) or ``MODULE:FUNCTION`` (``FILE.py:FUNCTION``), a
function ``f(game, player, seed)`` that returns a ``pyspiel.Bot`` or a callable
``policy(state) -> action`` (``examples/openspiel_policy.py``). In Python, subclass
``OpenSpielEngine`` and override ``make_bot``. Option ``Seed`` seeds the cards dealt to fill
the unknown and the bot's own seed: a given seed plays a given position the same way.

It needs ``pyspiel``: ``pip install 'ginproto[openspiel]'``.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import logging
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ginproto import openspiel as osp
from ginproto.cards import card_index
from ginproto.hand import HandView, Phase
from ginproto.melds import Meld, MeldError, check_declared, deadwood
from ginproto.sdk import Engine, GameView, Move, MoveKind, Option

logger = logging.getLogger(__name__)

Policy = Callable[[Any], int]
"""A policy: an OpenSpiel state (the bot's player to move) -> an OpenSpiel action."""

BotFactory = Callable[[Any, int, int], Any]
"""``f(game, player, seed)`` -> a ``pyspiel.Bot`` or a ``Policy``."""


def _pyspiel() -> Any:
    import pyspiel

    return pyspiel


_SIMPLE_BOTS: dict[tuple[str, int], Any] = {}


def simple_bot(game: Any, player: int, seed: int) -> Any:
    """OpenSpiel's ``SimpleGinRummyBot`` (deterministic: the seed is not used). One bot per
    game and player is kept and restarted before each decision."""
    key = (str(game), player)
    bot = _SIMPLE_BOTS.get(key)
    if bot is None:
        bot = _pyspiel().make_simple_gin_rummy_bot(game.get_parameters(), player)
        _SIMPLE_BOTS[key] = bot
    bot.restart()
    return bot


def random_bot(game: Any, player: int, seed: int) -> Any:
    """OpenSpiel's uniform random bot."""
    return _pyspiel().make_uniform_random_bot(player, seed)


BOTS: dict[str, tuple[str, BotFactory]] = {
    "simple": ("OpenSpiel Simple", simple_bot),
    "random": ("OpenSpiel Random", random_bot),
}
"""The bots known by name: name -> (engine name, factory)."""


def _policy(bot: Any) -> Policy:
    step = getattr(bot, "step", None)
    if step is not None:
        return step  # type: ignore[no-any-return]
    if callable(bot):
        return bot  # type: ignore[no-any-return]
    raise TypeError(f"{bot!r} is neither a pyspiel.Bot nor a policy")


class OpenSpielEngine(Engine):
    """An engine that asks an OpenSpiel bot. Pass a factory, or override ``make_bot``."""

    name = "OpenSpiel"
    author = "OpenSpiel bot through ginproto"
    options = (Option.spin("Seed", default=0, min=0, max=2**31 - 1),)

    def __init__(self, factory: BotFactory | None = None, name: str | None = None) -> None:
        super().__init__()
        self._factory = factory
        if name is not None:
            self.name = name  # type: ignore[misc]
        self._games: dict[str, tuple[Any, Any]] = {}

    def make_bot(self, game: Any, player: int, seed: int) -> Any:
        """The bot (or policy) that plays OpenSpiel ``player`` in ``game`` for one decision."""
        if self._factory is None:
            raise NotImplementedError("pass a bot factory or override make_bot()")
        return self._factory(game, player, seed)

    # -- the decisions ---------------------------------------------------------------------
    def offer(self, view: GameView) -> Move:
        return self._act(view.hand)

    def draw(self, view: GameView) -> Move:
        return self._act(view.hand)

    def discard(self, view: GameView) -> Move:
        return self._act(view.hand)

    def _game(self, params: osp.Params) -> tuple[Any, Any]:
        """The OpenSpiel game for ``params`` and its initial state, loaded once: a decision
        clones the state (a new initial state costs OpenSpiel about 150 times a clone)."""
        text = params.game_string
        loaded = self._games.get(text)
        if loaded is None:
            game = _pyspiel().load_game("gin_rummy", params.as_dict())
            loaded = self._games[text] = (game, game.new_initial_state())
        return loaded

    def _act(self, hand: HandView) -> Move:
        move = self.ask(hand)
        if move is None:
            return self._replace(hand, None, "OpenSpiel has ended this hand")
        reason = _illegal(hand, move)
        if reason is not None:
            return self._replace(hand, move, reason)
        return move

    def ask(self, hand: HandView) -> Move | None:
        """The bot's move in a state rebuilt from ``hand``, before any check against our
        rules; ``None`` if OpenSpiel's hand would already be over (its upcard draw cap)."""
        seed = int(self.option("Seed"))
        rng = random.Random(f"{seed}|{len(hand.history)}|{' '.join(map(str, hand.cards))}")
        rebuilt = osp.view_actions(hand, rng)
        if rebuilt.terminal:
            logger.info("OpenSpiel's hand is over: %s", ", ".join(rebuilt.notes))
            return None
        game, initial = self._game(rebuilt.params)
        state = initial.clone()
        for action in rebuilt.actions:
            state.apply_action(action)
        if state.current_player() != rebuilt.player:
            raise RuntimeError(
                f"the rebuilt state has player {state.current_player()} to move,"
                f" not {rebuilt.player}"
            )
        policy = _policy(self.make_bot(game, rebuilt.player, rng.randrange(2**31)))
        return bot_move(state, policy, hand.phase)

    def _replace(self, hand: HandView, move: Move | None, reason: str) -> Move:
        nearest = nearest_legal(hand, move)
        text = f"playing {nearest} instead of {move}: {reason}" if move else f"{reason}: {nearest}"
        logger.warning("%s", text)
        self.info(text)
        return nearest


def bot_move(state: Any, policy: Policy, phase: Phase) -> Move:
    """The move ``policy`` chooses in OpenSpiel ``state`` (its player to move), at a decision
    of ``phase``. A knock is followed through OpenSpiel's knock (the bot's discard, then its
    melds), which changes ``state``."""
    action = int(policy(state))
    if phase is not Phase.DISCARD or action != osp.KNOCK:
        return osp.move_of(action, phase)
    state.apply_action(osp.KNOCK)
    discard = int(policy(state))
    state.apply_action(discard)
    melds: list[Meld] = []
    while True:
        action = int(policy(state))
        if action == osp.PASS:
            break
        melds.append(osp.action_meld(action))
        state.apply_action(action)
    return Move.knock(osp.action_card(discard), tuple(melds))


def _illegal(hand: HandView, move: Move) -> str | None:
    """Why ``move`` is not legal for ``hand`` under our rules, or ``None``."""
    plain = Move.knock(move.card) if move.kind is MoveKind.KNOCK and move.card else move
    if plain not in hand.legal_moves():
        if move.card is not None and move.card == hand.taken:
            return f"{move.card} was just taken from the pile"
        return "our rules do not allow it"
    if move.kind is MoveKind.KNOCK and move.melds is not None:
        rest = [c for c in hand.cards if c != move.card]
        try:
            dw = check_declared(rest, move.melds).deadwood
        except MeldError as exc:
            return f"bad melds: {exc}"
        if dw > hand.knock_limit:
            return f"the melds leave {dw}, above the knock limit {hand.knock_limit}"
    return None


def nearest_legal(hand: HandView, move: Move | None) -> Move:
    """The legal move nearest ``move``: the same kind of move (a knock, else a discard) with
    the least deadwood left, the highest card first; with no move to follow (``None``), a
    pass or a stock draw, or a knock if one is legal, else a discard."""
    legal = hand.legal_moves()
    if hand.phase is Phase.OFFER:
        return move if move in legal else Move.pass_()
    if hand.phase is Phase.DRAW:
        return move if move in legal else Move.stock()
    want = MoveKind.KNOCK if move is None or move.kind is MoveKind.KNOCK else MoveKind.DISCARD
    choices = [m for m in legal if m.kind is want] or [
        m for m in legal if m.kind is MoveKind.DISCARD
    ]

    def key(m: Move) -> tuple[int, int, int]:
        card = m.card
        assert card is not None
        return (deadwood(c for c in hand.cards if c != card), -card.value, -card_index(card))

    return min(choices, key=key)


def _load_factory(spec: str) -> tuple[str, BotFactory]:
    if spec in BOTS:
        return BOTS[spec]
    module, sep, attr = spec.partition(":")
    if not sep or not module or not attr:
        raise SystemExit(
            f"unknown bot {spec!r}: give {', '.join(BOTS)}, MODULE:FUNCTION or FILE.py:FUNCTION"
        )
    try:
        if module.endswith(".py"):
            found = importlib.util.spec_from_file_location(Path(module).stem, module)
            if found is None or found.loader is None:
                raise ImportError(f"cannot load {module}")
            loaded = importlib.util.module_from_spec(found)
            found.loader.exec_module(loaded)
        else:
            loaded = importlib.import_module(module)
        factory = getattr(loaded, attr)
    except (ImportError, AttributeError, OSError) as exc:
        raise SystemExit(f"cannot load the bot {spec!r}: {exc}") from None
    return f"OpenSpiel {spec}", factory


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m engines.openspiel_engine",
        description="An OpenSpiel gin_rummy bot as a ginproto engine.",
    )
    parser.add_argument(
        "bot", nargs="?", default="simple", help="simple, random, or MODULE:FUNCTION"
    )
    parser.add_argument("--name", help="the engine's name (id name)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    try:
        _pyspiel()
    except ImportError:
        sys.exit("the OpenSpiel engine needs pyspiel: pip install 'ginproto[openspiel]'")
    name, factory = _load_factory(args.bot)
    OpenSpielEngine(factory, args.name or name).run()


if __name__ == "__main__":
    main()
