"""Start-up of the ``ginref`` command: the wall time of ``ginref --help`` and of a command's
``--help``, against ``python -c "import click"`` measured in the same run.

Each round runs every command once, one after another, so that a change of load hits them all;
the ratio to ``import click`` is taken within each round, and the figures printed are the
medians over the rounds (and the fastest run, the steadier figure on a busy machine).
``python -c pass`` is printed too: the interpreter's own start. Every command runs with its
compiled bytecode cached, as an installed package's is (in a temporary folder, through
``PYTHONPYCACHEPREFIX``, even where ``PYTHONDONTWRITEBYTECODE`` is set), so that no figure
includes compiling the source.

With ``--other PATH``, a second ``ginref`` (say another checkout's ``.venv/bin/ginref``) is
measured in the same rounds, to compare two versions on equal terms.

Usage: ``python bench/startup.py [--rounds N] [--other PATH]``
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HELPS = (["--help"], ["match", "--help"], ["tournament", "--help"], ["check", "--help"])


def ginref_here() -> list[str]:
    """This checkout's ``ginref``: the script next to the interpreter, else through it."""
    script = Path(sys.executable).parent / "ginref"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from referee.cli import main; main()"]


def wall(argv: Sequence[str], env: dict[str, str]) -> float:
    """Seconds from starting ``argv`` to its exit; it must succeed."""
    started = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, cwd=ROOT, env=env)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=9, help="Rounds (default 9).")
    parser.add_argument("--other", metavar="PATH", help="Another ginref to measure alongside.")
    args = parser.parse_args()
    commands: dict[str, list[str]] = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "python -c 'import click'": [sys.executable, "-c", "import click"],
    }
    ginrefs = {"ginref": ginref_here()}
    if args.other:
        other = shutil.which(args.other) or args.other
        if not os.access(other, os.X_OK):
            sys.exit(f"{args.other}: not an executable")
        ginrefs["other ginref"] = [other]
    for label, argv in ginrefs.items():
        for extra in HELPS:
            commands[f"{label} {' '.join(extra)}"] = [*argv, *extra]
    with tempfile.TemporaryDirectory(prefix="ginref-startup-") as cache:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = cache
        measure(commands, args.rounds, env)


def measure(commands: dict[str, list[str]], rounds: int, env: dict[str, str]) -> None:
    """Run ``commands`` in ``rounds`` rounds and print the figures."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    ratios: dict[str, list[float]] = {name: [] for name in commands}
    for argv in commands.values():
        wall(argv, env)  # a first run, to compile the bytecode and warm the file cache
    for _ in range(rounds):
        this_round = {name: wall(argv, env) for name, argv in commands.items()}
        click_time = this_round["python -c 'import click'"]
        for name, seconds in this_round.items():
            times[name].append(seconds)
            ratios[name].append(seconds / click_time)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{rounds} rounds, load average {load:.2f}; ratio: to import click, same round")
    width = max(len(name) for name in commands)
    print(f"{'command':<{width}}  median ms  fastest ms  ratio (median)")
    for name in commands:
        median = statistics.median(times[name]) * 1000
        fastest = min(times[name]) * 1000
        ratio = statistics.median(ratios[name])
        print(f"{name:<{width}}  {median:9.0f}  {fastest:10.0f}  {ratio:14.2f}")


if __name__ == "__main__":
    main()
