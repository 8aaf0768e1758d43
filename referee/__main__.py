"""``ginref``, and ``python -m referee``: the console entry point.

It imports the command line (``referee.cli``) under its own Ctrl-C handling, so that an
interrupt while the program is still loading ends it as an interrupt does everywhere else in
``ginref``: a line on standard error and exit 130, never a traceback. Python 3.11 wraps an
interrupt that comes while a class is being made (a dataclass's ``__set_name__``, as a module
loads) in a ``RuntimeError`` caused by it: that is an interrupt too.
"""

from __future__ import annotations

import sys


def _interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` is a Ctrl-C, or an error that a Ctrl-C caused."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, KeyboardInterrupt):
            return True
        seen = seen.__cause__
    return False


def _exit_interrupted() -> None:
    sys.stderr.write("\nInterrupted.\n")
    raise SystemExit(130) from None


def main() -> None:
    try:
        from referee.cli import main as run
    except (KeyboardInterrupt, RuntimeError) as exc:
        if not _interrupted(exc):
            raise
        _exit_interrupted()
    try:
        run()
    except (KeyboardInterrupt, RuntimeError) as exc:  # one that came as the command ended
        if not _interrupted(exc):
            raise
        _exit_interrupted()


if __name__ == "__main__":
    main()
