"""Planted bugs: how many realistic mistakes in the newest code the test suite catches.

A developer script, not a test (pytest collects none of it). Each bug below is a small, exact
edit a real developer could make (an off-by-one, a wrong comparison, a dropped check, a flag
removed, a wrong default, swapped arguments, a missing fsync or commit, a missed case), three
for each of ten areas: the sandbox, the store's integrity check, the Dask backend, the Python
API, the HTML model, the store, the tournament, the clock, the statistics and the expert
engine. The script plants one bug at a time in the working tree, runs the test files of its
area::

    CI=true python -m pytest -x -q -n 0 -p no:cacheprovider FILES

(``CI=true``, so that the slow tests count too), and always restores the file (``finally``),
its modification time included. A bug is *caught* when that run fails (or hangs past
``TIMEOUT``), *missed* when it passes. It prints each bug's verdict and the share caught.

Only the files of the bug's area run, so the share is a lower bound of what the whole suite
catches: a test elsewhere may catch a bug too.

Before anything, every bug's ``old`` snippet must occur exactly once in its file, so that the
script fails loudly, naming the bug, when the code moves; and the target files must have no
uncommitted changes (they are rewritten in place). Usage::

    .venv/bin/python dev/planted_bugs.py               # every bug
    .venv/bin/python dev/planted_bugs.py --bug store-1 # one (the option repeats)
    .venv/bin/python dev/planted_bugs.py --list        # the bugs, without running
    .venv/bin/python dev/planted_bugs.py --json out.json
    .venv/bin/python dev/planted_bugs.py --bug store-2 --tests tests/referee/test_store.py

Run it alone on the machine's cores: it runs real engines, sandboxes, browsers and Dask
clusters, one bug after another.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 1800  # seconds for one bug's run: a hang is a failure, so the bug is caught


@dataclass(frozen=True)
class Bug:
    id: str
    file: str  # relative to the repository's root
    old: str  # occurs exactly once in the file
    new: str  # the bug
    why: str  # what a developer might get wrong
    tests: tuple[str, ...]  # the area's test files, the likeliest to catch it first


SANDBOX = (
    "tests/seat/test_sandbox_flags.py",
    "tests/seat/test_sandbox_hidden.py",
    "tests/seat/test_sandbox_limits.py",
    "tests/seat/test_sandbox_home.py",
    "tests/seat/test_sandbox_setups.py",
    "tests/seat/test_sandbox.py",
    "tests/seat/test_sandbox_cpu.py",
)
INTEGRITY = (
    "tests/referee/test_integrity_tamper.py",
    "tests/referee/test_integrity.py",
)
DASK = (
    "tests/referee/test_dask_late_worker.py",
    "tests/referee/test_dask_plugin.py",
    "tests/referee/test_dask.py",
)
API = ("tests/referee/test_api.py", "tests/referee/test_api_promises.py")
HTML = ("tests/views/test_html_model.py", "tests/views/test_html.py")
STORE = (
    "tests/referee/test_store.py",
    "tests/referee/test_store_durable.py",
    "tests/referee/test_tournament.py",
)
TOURNAMENT = (
    "tests/referee/test_tournament_promises.py",
    "tests/referee/test_schedule.py",
    "tests/referee/test_tournament.py",
)
CLOCK = (
    "tests/seat/test_clock_edges.py",
    "tests/seat/test_clock_arithmetic.py",
    "tests/seat/test_clock.py",
    "tests/seat/test_clock_games.py",
    "tests/seat/test_engine_player.py",
)
STATS = (
    "tests/referee/test_stats.py",
    "tests/referee/test_stats_bounds.py",
    "tests/referee/test_stats_messages.py",
    "tests/referee/test_elo_mle.py",
    "tests/referee/test_standings_values.py",
    "tests/referee/test_stats_sprt_match.py",
    "tests/referee/test_match.py",
)
EXPERT = (
    "tests/engines/test_expert_options.py",
    "tests/engines/test_expert_play.py",
    "tests/engines/test_expert.py",
)


def first(preferred: str, files: tuple[str, ...]) -> tuple[str, ...]:
    """The area's files with ``preferred`` run first."""
    return (preferred, *(f for f in files if f != preferred))


BUGS: tuple[Bug, ...] = (
    # ------------------------------------------------------------------ the sandbox
    Bug(
        "sandbox-1",
        "referee/seat/sandbox.py",
        '    out += ["--ro-bind", "/dev/null", "/dev/tty"]'
        "  # the referee's terminal, out of reach\n",
        "",
        "drops the cover of /dev/tty, thinking no descriptor of the terminal is passed anyway",
        first("tests/seat/test_sandbox.py", SANDBOX),
    ),
    Bug(
        "sandbox-2",
        "referee/seat/sandbox.py",
        '        "pids": [("pids.max", limits.processes + 2)],',
        '        "pids": [("pids.max", limits.processes)],',
        "sets the pids cgroup to the process limit itself, forgetting bwrap's own two processes",
        SANDBOX,
    ),
    Bug(
        "sandbox-3",
        "referee/seat/_sandbox_view.py",
        "        folder.count(\"/\") <= 1\n        or inside(home, folder)\n",
        "        folder.count(\"/\") <= 1\n",
        "lets an install's root climb to the user's home (a home with bin/ and lib/ looks like"
        " a prefix), so the whole home, keys included, is shown",
        SANDBOX,
    ),
    # ------------------------------------------------------------------ the store's integrity
    Bug(
        "integrity-1",
        "referee/results/integrity.py",
        "    for n in range(len(expected)):\n        if n not in scheduled:",
        "    for n in range(len(scheduled)):\n        if n not in scheduled:",
        "looks for deleted games over the stored schedule's length, so a deleted last game"
        " goes unnoticed",
        INTEGRITY,
    ),
    Bug(
        "integrity-2",
        "referee/results/integrity.py",
        "        if last and any(isinstance(e, TruncatedRecordError) for e in record.errors):",
        "        if any(isinstance(e, TruncatedRecordError) for e in record.errors):",
        "excuses a torn game anywhere in the records file, not only the last one an interrupted"
        " append leaves",
        INTEGRITY,
    ),
    Bug(
        "integrity-3",
        "referee/results/integrity.py",
        "    for p, engine in enumerate(game.seats):\n"
        '        want[f"Player{p}"] = names[engine]'
        ' if engine < len(names) else f"engine {engine}"\n',
        "",
        "checks the Game, Seed and Key headers but not the Player ones (the result is derived"
        " from the stored seats anyway)",
        INTEGRITY,
    ),
    # ------------------------------------------------------------------ the Dask backend
    Bug(
        "dask-1",
        "referee/cluster/worker.py",
        "        self._fit = self.check is None or self.address in self.checked",
        "        self._fit = True",
        "takes every worker as checked, so one that joins after the check plays without its"
        " engines",
        DASK,
    ),
    Bug(
        "dask-2",
        "referee/cluster/backend.py",
        "                while self.order and self.order[0].index in self.done:\n"
        "                    yield self.done.pop(self.order.popleft().index)\n",
        "                self.order.remove(next(j for j in self.order if j.index == index))\n"
        "                yield self.done.pop(index)\n",
        "yields each game as soon as it finishes, not in job order",
        first("tests/referee/test_dask.py", DASK),
    ),
    Bug(
        "dask-3",
        "referee/cluster/worker.py",
        "            self._closed = True\n            idle, self._idle = self._idle, []\n",
        "            idle, self._idle = self._idle, []\n",
        "closes the idle engines at teardown but does not mark the pool closed, so a game that"
        " ends later puts its engines back, never to be closed",
        first("tests/referee/test_dask_plugin.py", DASK),
    ),
    # ------------------------------------------------------------------ the Python API
    Bug(
        "api-1",
        "referee/settings.py",
        "        return TimeControl.parse(self.tc or DEFAULT_TC, move=move, margin=margin)",
        "        return TimeControl.parse(self.tc or DEFAULT_TC, move=move)",
        "forgets to pass time_margin on to the time control (the default margin is used)",
        API,
    ),
    Bug(
        "api-2",
        "referee/api.py",
        "                hidden = reserve_paths([source], [directory, errors])",
        "                hidden = reserve_paths([], [directory, errors])",
        "hides the output and stderr folders from the engines but not the config file",
        API,
    ),
    Bug(
        "api-3",
        "referee/api.py",
        "        lock = DirectoryLock(directory)\n        lock.acquire()",
        "        lock = DirectoryLock(directory)\n        pass",
        "builds the directory lock but never takes it, so two runs may play one folder",
        API,
    ),
    # ------------------------------------------------------------------ the HTML model
    Bug(
        "html-1",
        "referee/views/html/model.py",
        '            "to": None if over else self.seats[hand.to_move],',
        '            "to": None if over else hand.to_move,',
        "gives the seat to move, not the player sitting there",
        HTML,
    ),
    Bug(
        "html-2",
        "referee/views/html/model.py",
        '                move["follow"] = self.advice.move == item.move\n'
        "                self.advice = None\n",
        '                move["follow"] = self.advice.move == item.move\n',
        "never clears the sitter's advice once shown, so it sticks to every later move",
        HTML,
    ),
    Bug(
        "html-3",
        "referee/views/html/model.py",
        '"the turn cap" if item.capped else "two cards left in the stock"',
        '"two cards left in the stock" if item.capped else "the turn cap"',
        "swaps the two ways a hand is drawn",
        HTML,
    ),
    # ------------------------------------------------------------------ the store
    Bug(
        "store-1",
        "referee/results/store.py",
        "            f.flush()\n"
        "            os.fsync(f.fileno())\n"
        "        os.replace(tmp, self.path)",
        "            f.flush()\n        os.replace(tmp, self.path)",
        "renames the rewritten records file into place without syncing it first",
        STORE,
    ),
    Bug(
        "store-2",
        "referee/results/store.py",
        "        self.last = self.store.last_done()\n        if self._matches():",
        "        if self._matches():",
        "notes the last game in the file only when it rewrites it, so after a resume a game that"
        " fills a gap is appended out of order",
        STORE,
    ),
    Bug(
        "store-3",
        "referee/results/store.py",
        '            db.execute("PRAGMA synchronous=FULL")\n'
        '            db.execute("PRAGMA foreign_keys=ON")',
        '            db.execute("PRAGMA synchronous=NORMAL")\n'
        '            db.execute("PRAGMA foreign_keys=ON")',
        "speeds the store up with synchronous=NORMAL, read to be safe in WAL mode (it is, but"
        " for a power cut: the last commits are lost)",
        STORE,
    ),
    # ------------------------------------------------------------------ the tournament
    Bug(
        "tournament-1",
        "referee/scheduling/config.py",
        '            "move_timeout": self.clock.move_timeout,\n'
        '            "engines": [e.settings() for e in self.engines],',
        '            "engines": [e.settings() for e in self.engines],',
        "takes the move timeout for a run option, like the startup timeout, so a resume may"
        " change it",
        TOURNAMENT,
    ),
    Bug(
        "tournament-2",
        "referee/scheduling/config.py",
        "                move=self.move_timeout if self.move_timeout else move_timeout,\n"
        "                margin=margin,\n",
        "                move=self.move_timeout if self.move_timeout else move_timeout,\n",
        "gives an engine with a time control of its own the default time margin, not the"
        " tournament's",
        TOURNAMENT,
    ),
    Bug(
        "tournament-3",
        "referee/scheduling/tournament.py",
        "            store.commit(result)\n            file.add(result.game, result.record)\n",
        "            file.add(result.game, result.record)\n            store.commit(result)\n",
        "appends a game to the records file before committing it to the store",
        TOURNAMENT,
    ),
    # ------------------------------------------------------------------ the clock
    Bug(
        "clock-1",
        "referee/seat/clock.py",
        "            if self.remaining < -margin:",
        "            if self.remaining <= -margin:",
        "flags a player whose clock is at exactly minus the margin",
        CLOCK,
    ),
    Bug(
        "clock-2",
        "referee/seat/player.py",
        "                ignored.append(line)\n            left = deadline - time.monotonic()\n",
        "                ignored.append(line)\n            left = budget\n",
        "gives a decision its whole budget again after each ignored line",
        first("tests/seat/test_clock.py", CLOCK),
    ),
    Bug(
        "clock-3",
        "referee/seat/player.py",
        "        self.clock = PlayerClock(self.control)\n"
        "        self._pending_game = proto.NewGame(number, player, rules)",
        "        self._pending_game = proto.NewGame(number, player, rules)",
        "keeps an engine's game clock from one game to the next",
        CLOCK,
    ),
    # ------------------------------------------------------------------ the statistics
    Bug(
        "stats-1",
        "referee/results/stats.py",
        "        self.lower = math.log(beta / (1.0 - alpha))\n"
        "        self.upper = math.log((1.0 - beta) / alpha)",
        "        self.lower = math.log(alpha / (1.0 - beta))\n"
        "        self.upper = math.log((1.0 - alpha) / beta)",
        "swaps ALPHA and BETA in Wald's bounds",
        STATS,
    ),
    Bug(
        "stats-2",
        "referee/scheduling/match.py",
        '                    if sprt.state != "continue":',
        '                    if sprt.state == "H1":',
        "stops a match when the SPRT accepts H1 only, never for H0",
        first("tests/referee/test_stats_sprt_match.py", STATS),
    ),
    Bug(
        "stats-3",
        "referee/results/stats.py",
        "        half = _z(confidence) * math.sqrt(self._m2 / (self.n - 1)) / math.sqrt(self.n)",
        "        half = _z(confidence) * math.sqrt(self._m2 / self.n) / math.sqrt(self.n)",
        "takes the population variance (n) for the sample variance (n - 1) in the running mean",
        STATS,
    ),
    # ------------------------------------------------------------------ the expert engine
    Bug(
        "expert-1",
        "engines/expert/knowledge.py",
        "                    if theirs:\n                        known.discard(card)\n",
        "                    if theirs:\n",
        "keeps a card the opponent took as known in its hand after it threw the card back",
        EXPERT,
    ),
    Bug(
        "expert-2",
        "engines/expert_engine.py",
        "        if any(m.kind is MoveKind.BIG_GIN for m in legal):\n"
        "            return Move.big_gin()\n",
        "",
        "forgets big gin among the moves of the discard decision (it knocks for gin instead)",
        EXPERT,
    ),
    Bug(
        "expert-3",
        "engines/expert_engine.py",
        '            int(self.option("Seed")),\n            view.player,',
        "            view.player,",
        "leaves the Seed option out of the random state's key",
        EXPERT,
    ),
)


@dataclass
class Outcome:
    bug: Bug
    caught: bool
    detail: str
    seconds: float


def check_snippets(bugs: Sequence[Bug]) -> None:
    """Every ``old`` occurs exactly once; ``SystemExit`` naming each that does not."""
    problems = []
    for bug in bugs:
        path = ROOT / bug.file
        if not path.is_file():
            problems.append(f"{bug.id}: {bug.file} does not exist")
            continue
        count = path.read_text(encoding="utf-8").count(bug.old)
        if count != 1:
            problems.append(f"{bug.id}: its old snippet occurs {count} times in {bug.file}")
        if bug.old == bug.new:
            problems.append(f"{bug.id}: old and new are the same")
    if problems:
        raise SystemExit("the planted bugs no longer fit the code:\n  " + "\n  ".join(problems))


def check_clean(bugs: Sequence[Bug]) -> None:
    """The target files have no uncommitted changes (they are rewritten in place)."""
    files = sorted({b.file for b in bugs})
    done = subprocess.run(
        ["git", "status", "--porcelain", "--", *files],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    if done.stdout.strip():
        raise SystemExit(
            "refusing to plant bugs in files with uncommitted changes:\n" + done.stdout
        )


class Stop(Exception):
    """SIGTERM or SIGHUP: restore the file and stop."""


def _stop(signum: int, frame: FrameType | None) -> None:
    raise Stop(signal.Signals(signum).name)


def run_bug(bug: Bug) -> Outcome:
    path = ROOT / bug.file
    original = path.read_bytes()
    stat = path.stat()
    text = original.decode("utf-8")
    missing = [t for t in bug.tests if not (ROOT / t).is_file()]
    tests = [t for t in bug.tests if t not in missing]
    env = {**os.environ, "CI": "true", "PYTHONDONTWRITEBYTECODE": "1"}
    argv = [sys.executable, "-m", "pytest", "-x", "-q", "-n", "0", "-p", "no:cacheprovider"]
    started = time.monotonic()
    try:
        path.write_text(text.replace(bug.old, bug.new, 1), encoding="utf-8")
        try:
            done = subprocess.run(
                [*argv, *tests],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                timeout=TIMEOUT,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return Outcome(bug, True, f"hung past {TIMEOUT}s", time.monotonic() - started)
    finally:
        path.write_bytes(original)
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    seconds = time.monotonic() - started
    if done.returncode == 0:
        return Outcome(bug, False, "every test passed", seconds)
    failed = [line for line in done.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
    detail = failed[0] if failed else f"pytest exit status {done.returncode}"
    if done.returncode not in (1, 2):
        detail += "\n" + done.stdout[-1500:] + done.stderr[-1500:]
    return Outcome(bug, True, detail, seconds)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bug", action="append", help="run this bug only (repeatable)")
    parser.add_argument("--list", action="store_true", help="list the bugs and stop")
    parser.add_argument("--json", help="write the verdicts to this file as well")
    parser.add_argument(
        "--tests", action="append", help="run this test file instead of the area's (repeatable)"
    )
    args = parser.parse_args(argv)
    ids = [b.id for b in BUGS]
    assert len(set(ids)) == len(ids), "bug ids must differ"
    chosen = list(BUGS)
    if args.bug:
        unknown = [i for i in args.bug if i not in ids]
        if unknown:
            parser.error(f"no such bug: {', '.join(unknown)} (known: {', '.join(ids)})")
        chosen = [b for b in BUGS if b.id in args.bug]
    if args.tests:
        chosen = [dataclasses.replace(b, tests=tuple(args.tests)) for b in chosen]
    check_snippets(BUGS)
    if args.list:
        for bug in chosen:
            print(f"{bug.id:13} {bug.file:28} {bug.why}")
        return 0
    check_clean(chosen)
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _stop)
    outcomes: list[Outcome] = []
    started = time.monotonic()
    try:
        for bug in chosen:
            outcome = run_bug(bug)
            outcomes.append(outcome)
            verdict = "caught" if outcome.caught else "MISSED"
            print(f"{bug.id:13} {verdict:7} {outcome.seconds:6.0f}s  {bug.why}", flush=True)
            if outcome.caught:
                print(f"{'':13} {outcome.detail}", flush=True)
    except (KeyboardInterrupt, Stop) as exc:
        print(f"stopped ({exc or 'interrupted'}); the last bug's file is restored", flush=True)
    caught = sum(o.caught for o in outcomes)
    total = len(outcomes)
    wall = time.monotonic() - started
    share = f"{100 * caught / total:.0f} %" if total else "-"
    print(f"\ncaught {caught} of {total} ({share}) in {wall:.0f}s")
    print("(a lower bound: only each bug's area's test files ran)")
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "wall_seconds": round(wall),
                    "bugs": [
                        {
                            "id": o.bug.id,
                            "caught": o.caught,
                            "seconds": round(o.seconds),
                            "detail": o.detail.splitlines()[0] if o.detail else "",
                        }
                        for o in outcomes
                    ],
                },
                indent=2,
            )
            + "\n"
        )
    return 0 if total == len(chosen) else 1


if __name__ == "__main__":
    sys.exit(main())
