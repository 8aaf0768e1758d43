"""ginproto: the rules core, protocol codec, game records and engine SDK for Gin Rummy bots."""

from ginproto.cards import DECK, Card, CardError, parse_cards, shuffled_deck

__version__ = "0.1.0"

__all__ = ["DECK", "Card", "CardError", "__version__", "parse_cards", "shuffled_deck"]
