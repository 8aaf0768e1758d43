"""One self-contained HTML file: the template, the styles, the scripts and the data, inlined.

A page must open from disk, be e-mailed, be attached to a ticket: so it loads nothing. The
template (``assets/page.html``), the viewer's script and styles, and the vendored Chartist
library (``assets/vendor/chartist``, with its licence) are pasted in, and a Content Security
Policy that allows no network at all makes sure nothing slips out.

The games' data (``referee.views.html.model``) travels one game per ``<script>`` element, as
gzip-compressed JSON in base64: a position repeats most of the one before it, so a page of
hundreds of games stays a few megabytes, and the viewer unpacks a game (with the browser's
own ``DecompressionStream``) only when it is shown, so such a page opens at once.
"""

from __future__ import annotations

import base64
import gzip
import html
import json
import logging
import re
from collections.abc import Sequence
from importlib import resources
from typing import Any

log = logging.getLogger(__name__)

__all__ = ["asset", "fill", "json_script", "render_page"]


def asset(name: str) -> str:
    """The text of a file under ``referee/views/html/assets``."""
    return resources.files("referee.views.html").joinpath("assets", name).read_text("utf-8")


def _script_safe(text: str) -> str:
    """Text that cannot close the ``<script>`` element it sits in."""
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def json_script(element_id: str, value: Any) -> str:
    """``value`` as a ``<script type="application/json">`` element."""
    data = _script_safe(json.dumps(value, separators=(",", ":"), allow_nan=False))
    return f'<script type="application/json" id="{element_id}">{data}</script>'


def _packed(game: dict[str, Any]) -> str:
    data = json.dumps(game, separators=(",", ":"), allow_nan=False).encode("utf-8")
    return base64.b64encode(gzip.compress(data, compresslevel=9, mtime=0)).decode("ascii")


def _summary(game: dict[str, Any]) -> dict[str, Any]:
    """What the game picker and the links need before a game is unpacked."""
    end = game.get("end") or {}
    return {
        "n": game["n"],
        "players": game["players"],
        "variant": game["variant"],
        "hands": [len(h["pos"]) for h in game["hands"]],
        "winner": end.get("winner"),
    }


def fill(template: str, parts: dict[str, str]) -> str:
    """``template`` with each ``{{name}}`` replaced by ``parts[name]``, in one pass, so that no
    inserted text (an engine's or a tournament's name, say) is read as a placeholder."""
    return re.sub(r"\{\{(\w+)\}\}", lambda m: parts[m.group(1)], template)


def render_page(
    title: str, games: Sequence[dict[str, Any]], report: str = "", charts: Any = None
) -> str:
    """The whole page: ``report`` (HTML, trusted) above the viewer of ``games``, and the
    chart specifications ``charts`` that the script draws with Chartist."""
    blobs = "\n".join(
        f'<script type="application/gzip-base64" id="ginproto-game-{g["n"]}">{_packed(g)}'
        "</script>"
        for g in games
    )
    parts = {
        "title": html.escape(title),
        "style": asset("vendor/chartist/chartist.css") + "\n" + asset("viewer.css"),
        "report": report,
        "data": "\n".join(
            [
                json_script("ginproto-index", [_summary(g) for g in games]),
                json_script("ginproto-charts", charts or {}),
                blobs,
            ]
        ),
        "chartist": asset("vendor/chartist/chartist.umd.js"),
        "script": asset("viewer.js"),
        "viewer_hidden": "" if games else " hidden",
    }
    return fill(asset("page.html"), parts)
