"""``gin-policy``: a trained policy plays in the referee, as a protocol engine.

``gin-policy FILE.py:FUNCTION`` (or ``gin-policy package.module:FUNCTION``) loads a function
``act(observation) -> int`` and answers every decision with it. The function receives what the
PettingZoo environment (``ginproto.env``) gives that seat at that point: the dict
``{"observation": float32 array, "action_mask": int8 array}``, made by the environment's own
encoder (``encode_observation``) from the position the referee sends, the last finished hand
of the game (its showdown) and, for the three-player sitter, the advice flag. It returns an
action number (``ginproto.env.ACTIONS``; a NumPy integer will do), which is played as that
move.

Faults are the policy's, as any engine's: an action outside the mask is played anyway (the
referee rules it illegal), a number with no move (outside ``0..108``) or a value that is no
integer is answered with a move line the referee cannot read (malformed), and an exception in
the function ends the program with its traceback on stderr (a crash). Whatever the function
prints goes to stderr, never to the referee. docs/ENV.md has the whole contract.

Needs the optional extra ``env`` (NumPy): ``pip install 'ginproto[env]'``.
"""

from __future__ import annotations

import importlib
import importlib.util
import operator
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, ClassVar, NoReturn, TextIO

import click

from ginproto.game import Entry, GameView
from ginproto.moves import Move
from ginproto.protocol import HandOver, NewGame
from ginproto.sdk import Engine
from ginproto.table import Decision, FaultKind, PlayerFault

try:
    import numpy as np

    from ginproto.env import (
        NUM_ACTIONS,
        OBSERVATION_SIZE,
        action_to_move,
        encode_observation,
        legal_mask,
    )
except ImportError as exc:  # the env extra is not installed: main says so
    _MISSING: ImportError | None = exc
else:
    _MISSING = None

__all__ = ["Act", "PolicyEngine", "PolicyError", "load_policy", "main", "policy_engine"]

PROG = "gin-policy"

Act = Callable[[dict[str, Any]], Any]
"""The policy: the observation dict of the acting seat -> an action number."""


class PolicyError(Exception):
    """A policy that cannot be loaded: a bad spec, a missing file or function, an error in
    the user's module. The message is one line, for the user."""


# -- loading ------------------------------------------------------------------------------
def load_policy(spec: str) -> tuple[Act, str]:
    """The function a spec names (``FILE.py:FUNCTION`` or ``package.module:FUNCTION``) and
    the engine name to give it (``mybot:act``). ``PolicyError`` if it cannot be had."""
    target, colon, function = spec.rpartition(":")
    if not colon or not target or not function:
        raise PolicyError(
            f"{spec!r} names no function: write FILE.py:FUNCTION or package.module:FUNCTION"
        )
    if not function.isidentifier():
        raise PolicyError(f"{function!r} in {spec!r} is not a Python function name")
    if _is_file(target):
        module = _load_file(target)
        label = os.path.splitext(os.path.basename(target))[0]
    else:
        module = _load_module(target)
        label = target
    value = getattr(module, function, None)
    if value is None:
        defined = sorted(
            name
            for name, item in vars(module).items()
            if callable(item)
            and not name.startswith("_")
            and getattr(item, "__module__", None) == module.__name__
        )
        known = f" (it defines: {', '.join(defined[:8])})" if defined else ""
        raise PolicyError(f"{target} has no function {function!r}{known}")
    if not callable(value):
        raise PolicyError(f"{target}:{function} is a {type(value).__name__}, not a function")
    act: Act = value
    return act, f"{label}:{function}"


def _is_file(target: str) -> bool:
    return target.endswith(".py") or os.sep in target or os.path.isfile(target)


def _load_file(target: str) -> ModuleType:
    path = os.path.abspath(target)
    if not os.path.exists(path):
        raise PolicyError(f"no file {target}")
    if not os.path.isfile(path):
        raise PolicyError(f"{target} is not a file")
    stem = os.path.splitext(os.path.basename(path))[0]
    name = stem if stem.isidentifier() and stem not in sys.modules else "_gin_policy_module"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise PolicyError(f"cannot load {target} as Python")
    module = importlib.util.module_from_spec(spec)
    # Its folder first on the path, so that it imports the modules beside it.
    sys.path.insert(0, os.path.dirname(path))
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:
        raise PolicyError(f"cannot load {target}: {_brief(exc)}") from None
    return module


def _load_module(target: str) -> ModuleType:
    if not all(part.isidentifier() for part in target.split(".")):
        raise PolicyError(
            f"{target!r} is neither a .py file nor a module name (package.module)"
        )
    # A console script's path starts at its own folder: the working directory's modules too.
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing and (target == missing or target.startswith(missing + ".")):
            raise PolicyError(
                f"no module named {missing!r} (run from the folder that holds it, or install"
                " it)"
            ) from None
        raise PolicyError(f"cannot import {target}: {_brief(exc)}") from None
    except (Exception, SystemExit) as exc:
        raise PolicyError(f"cannot import {target}: {_brief(exc)}") from None


def _brief(exc: BaseException) -> str:
    """The user's error in one line: its type and message, and where in the user's code it
    was raised (the deepest frame outside the import machinery)."""
    text = f"{type(exc).__name__}: {exc}".splitlines()[0] if str(exc) else type(exc).__name__
    if isinstance(exc, SyntaxError):
        return text  # its message already says the file and line
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if "importlib" not in f.filename and f.filename != __file__
    ]
    if frames:
        text += f" ({os.path.basename(frames[-1].filename)}, line {frames[-1].lineno})"
    return text


# -- the engine ---------------------------------------------------------------------------
class _Unplayable(Exception):
    """The function answered something that is no move: answered with an unreadable move
    line (``move <word>``), which the referee rules malformed."""

    def __init__(self, message: str, word: str) -> None:
        super().__init__(message)
        self.word = word


class PolicyEngine(Engine):
    """An engine that answers every decision with ``act`` (see the module)."""

    name: ClassVar[str] = "policy"
    author: ClassVar[str] = PROG

    def __init__(self, act: Act, function: str = "act") -> None:
        super().__init__()
        self.act = act
        self.function = function
        self.entry: Entry | None = None
        """The game's last finished hand, shown in the observation's showdown planes."""

    def on_new_game(self, message: NewGame) -> None:
        self.entry = None

    def on_hand_over(self, message: HandOver) -> None:
        self.entry = message.entry

    def offer(self, view: GameView) -> Move:
        return self._play(view, advising=False)

    def draw(self, view: GameView) -> Move:
        return self._play(view, advising=False)

    def discard(self, view: GameView) -> Move:
        return self._play(view, advising=False)

    def advise(self, view: GameView) -> Move:
        return self._play(view, advising=True)

    def observe(self, view: GameView, advising: bool) -> dict[str, Any]:
        """The environment's observation of the seat to decide (fresh arrays)."""
        observation = np.zeros(OBSERVATION_SIZE, dtype=np.float32)
        encode_observation(view, view.hand.rules, self.entry, advising, True, observation)
        mask = np.frombuffer(legal_mask(view.hand.legal_moves()), np.int8)
        return {"observation": observation, "action_mask": mask}

    def _play(self, view: GameView, advising: bool) -> Move:
        value = self.act(self.observe(view, advising))
        if isinstance(value, bool):
            raise _Unplayable(f"{self.function} returned {value}, not an action number", "bool")
        try:
            action = operator.index(value)
        except TypeError:
            shown = repr(value)[:60]
            raise _Unplayable(
                f"{self.function} returned {shown} ({type(value).__name__}), not an action"
                " number",
                "not-an-action",
            ) from None
        if not 0 <= action < NUM_ACTIONS:
            raise _Unplayable(
                f"{self.function} returned {action}: no action (actions are 0 to"
                f" {NUM_ACTIONS - 1})",
                f"action-{action}",
            )
        return action_to_move(action)

    # An answer that is no move is ruled as the policy's malformed reply: in process, ...
    def decide(self, view: GameView, decision: Decision) -> Move:
        try:
            return super().decide(view, decision)
        except PlayerFault as fault:
            cause = fault.__cause__
            if isinstance(cause, _Unplayable):
                raise PlayerFault(FaultKind.MALFORMED, str(cause)) from None
            raise

    # ... and over the protocol, with a move line the referee cannot read.
    def handle(self, line: str, stdout: TextIO) -> bool:
        try:
            return super().handle(line, stdout)
        except _Unplayable as unplayable:
            print(f"{PROG}: {unplayable}", file=sys.stderr, flush=True)
            stdout.write(f"move {unplayable.word}\n")
            stdout.flush()
            return True


def policy_engine(act: Act, name: str, function: str = "act") -> PolicyEngine:
    """A ``PolicyEngine`` for ``act`` (``function``, as messages name it) that says ``name``
    in the handshake (``mybot:act``)."""

    class _Named(PolicyEngine):
        pass

    _Named.name = name
    return _Named(act, function)


# -- the command --------------------------------------------------------------------------
_EPILOG = """\
\b
Examples:
  ginref check "gin-policy /tmp/x/mybot.py:act"
  ginref match "gin-policy mybot.py:act" expert --games 10
  ginref match "gin-policy mypackage.agents:act" simple

Faults are the policy's: an action outside the mask is played anyway (illegal), a number
outside 0..108 or a value that is no integer is answered as a malformed move, and an exception
in the function ends the engine with its traceback on stderr (a crash). Whatever the function
prints goes to stderr. A spec that cannot be used is one line on stderr and exit status 2.
"""


def _refuse(message: str) -> NoReturn:
    """End the command before any handshake: ``message`` as one line on stderr, exit 2."""
    click.echo(f"{PROG}: {message}", err=True)
    raise click.exceptions.Exit(2)


@click.command(
    name=PROG, epilog=_EPILOG, context_settings={"help_option_names": ["-h", "--help"]}
)
@click.argument("spec", metavar="FILE.py:FUNCTION")
@click.option("--name", metavar="NAME", help="The engine's name (default: FILE:FUNCTION).")
def gin_policy(spec: str, name: str | None) -> int:
    """Play a policy function as a protocol engine.

    FILE.py:FUNCTION (or package.module:FUNCTION) names the policy function. gin-policy
    answers the referee's every decision with FUNCTION(observation), the observation the
    PettingZoo environment (ginproto.env) gives that seat at that point: {"observation":
    float32 array, "action_mask": int8 array}. The function returns an action number
    (docs/ENV.md); the engine is named FILE:FUNCTION.
    """
    if _MISSING is not None:
        _refuse(f"needs the 'env' extra (pip install 'ginproto[env]'): {_MISSING}")
    # Anything the user's module prints, as it loads or as it plays, goes to stderr: the
    # referee reads only the protocol on stdout.
    protocol_out = sys.stdout
    sys.stdout = sys.stderr
    try:
        act, label = load_policy(spec)
    except PolicyError as exc:
        _refuse(str(exc))
    engine = policy_engine(act, name or label, label.rpartition(":")[2])
    try:
        engine.run(sys.stdin, protocol_out)
    except Exception:  # the function raised: a crash, with its traceback
        traceback.print_exc()
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """The ``gin-policy`` command (``argv``: its arguments, default the process's); returns
    its exit status. An interrupt (Ctrl-C) ends it with one line and status 130, no
    traceback."""
    try:
        status = gin_policy.main(args=argv, prog_name=PROG, standalone_mode=False)
    except click.ClickException as exc:  # a usage error: click's message, exit 2
        exc.show()
        return exc.exit_code
    except click.exceptions.Abort:  # Ctrl-C
        click.echo(f"{PROG}: interrupted", err=True)
        return 130
    return status if isinstance(status, int) else 0


if __name__ == "__main__":
    sys.exit(main())
