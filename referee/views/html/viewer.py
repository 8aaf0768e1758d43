"""``ginref replay FILE --html OUT.html``: a record's games as one page to step through.

Every game is replayed and checked by the rules engine first (``referee.views.html.model``); a
record that does not verify gives no page, but the same error ``ginref replay --verify`` names.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from typing import Any

from ginproto.record import GameRecord
from referee.outputs import write_file
from referee.views.html.model import game_data
from referee.views.html.page import render_page

log = logging.getLogger(__name__)

__all__ = ["games_data", "write_page", "write_replay"]


def games_data(records: Iterable[GameRecord], numbers: Iterable[int] | None = None) -> list[
    dict[str, Any]
]:
    """The viewer's data of each game; ``numbers`` are the games' places in their file
    (default 1, 2, ...). Raises ``RecordError`` at the first game that does not verify."""
    out = []
    numbered = zip(numbers, records, strict=False) if numbers is not None else enumerate(
        records, start=1
    )
    for number, record in numbered:
        out.append(game_data(record, number))
    return out


def write_page(path: str | os.PathLike[str], text: str) -> None:
    """Write a page atomically (a reader never sees half of one), and only as a regular file:
    ``referee.outputs.write_file``, which refuses a device, a link or a folder."""
    write_file(path, text.encode("utf-8"))


def write_replay(
    records: Iterable[GameRecord],
    out_path: str | os.PathLike[str],
    title: str = "ginref replay",
    numbers: Iterable[int] | None = None,
) -> int:
    """Write the viewer page of ``records`` to ``out_path``; return how many games it holds."""
    games = games_data(records, numbers)
    write_page(out_path, render_page(title, games))
    log.info("wrote %s: %d games", out_path, len(games))
    return len(games)
