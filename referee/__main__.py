"""``ginref``, and ``python -m referee``: the console entry point.

It imports the command line (``referee.cli``) under its own Ctrl-C handling, so that an
interrupt while the program is still loading ends it as an interrupt does everywhere else in
``ginref``: a line on standard error and exit 130, never a traceback.
"""

from __future__ import annotations

import sys


def main() -> None:
    try:
        from referee.cli import main as run
    except KeyboardInterrupt:
        sys.stderr.write("\nInterrupted.\n")
        raise SystemExit(130) from None
    try:
        run()
    except KeyboardInterrupt:  # one that came as the command ended
        sys.stderr.write("\nInterrupted.\n")
        raise SystemExit(130) from None


if __name__ == "__main__":
    main()
