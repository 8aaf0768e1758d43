"""The formats of a tournament: which engines meet which.

They sit apart from ``referee.tournament``, which checks a config's ``format`` against them, so
that ``ginref tournament --help`` can list them without importing the tournament machinery.
"""

from __future__ import annotations

from typing import Final

FORMATS: Final = ("round-robin", "gauntlet")
