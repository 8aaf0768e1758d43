"""The rules core (``ginproto``): cards, melds, the hand, the game, records, search, the
learning environment and OpenSpiel interop."""
