"""Defaults and choices of settings that ``ginref``'s options show in their help.

They are defined here, apart from the modules that use them (``referee.seat.clock``,
``referee.scheduling``), so that declaring the options, which is all that ``ginref --help`` and
a command's ``--help`` do, imports none of the machinery: not the protocol nor the rules engine
that the clock's limits come from, nor the tournament's store (whose file names are here).
"""

from __future__ import annotations

from typing import Final

DEFAULT_MARGIN: Final = 0.1
"""Seconds of grace on every time limit unless ``--time-margin`` says otherwise."""

FORMATS: Final = ("round-robin", "gauntlet")
"""The formats of a tournament: every engine against every other, or the first against each."""

STORE_NAME: Final = "tournament.sqlite"
RECORDS_NAME: Final = "games.gin"
LOCK_NAME: Final = ".lock"

FOLDER_FILES: Final = tuple(
    [LOCK_NAME, RECORDS_NAME, RECORDS_NAME + ".new"]
    + [STORE_NAME + end for end in ("", "-wal", "-shm", "-journal", ".new", ".new-journal")]
)
"""The files a tournament writes, replaces or removes in its folder: where one exists it must
be a regular file (``referee.outputs.check_folder``), so that no device or link is
harmed."""
