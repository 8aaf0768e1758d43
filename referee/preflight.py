"""``referee.preflight`` is ``referee.engines.preflight``: its old path, which docs/API.md names,
kept.

Importing it gives that very module (``sys.modules``), so its names, its logger and what a
test patches in it are the same.
"""

import sys

from referee.engines import preflight as _module
from referee.engines.preflight import *  # noqa: F403 - the same names, for type checkers

sys.modules[__name__] = _module
