"""Defaults and choices of settings that ``ginref``'s options show in their help.

They are defined here, apart from the modules that use them (``referee.clock``,
``referee.tournament``), so that declaring the options, which is all that ``ginref --help`` and
a command's ``--help`` do, imports none of the machinery: not the protocol nor the rules engine
that the clock's limits come from, nor the tournament's store.
"""

from __future__ import annotations

from typing import Final

DEFAULT_MARGIN: Final = 0.1
"""Seconds of grace on every time limit unless ``--time-margin`` says otherwise."""

FORMATS: Final = ("round-robin", "gauntlet")
"""The formats of a tournament: every engine against every other, or the first against each."""
