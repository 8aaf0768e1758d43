"""The same seed gives the same bytes: records and every protocol line, however the games run.

The referee's fast paths (lines read straight from the pipes, position lines built up turn by
turn, replies looked up) must not change a single byte of what engines are sent or what is
recorded. These tests play real engine processes twice with one seed and compare.
"""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from ginproto.rules import Rules, Variant
from referee.cli import cli
from referee.scheduling.match import MatchConfig, run_match
from referee.seat.clock import TimeControl
from referee.seat.player import EngineSpec

STAMP = re.compile(r"^ *\d+\.\d{4} ")
CLOCK = re.compile(r"(> go \w+) time \d+")  # what is left on a clock depends on the machine
WORKER = re.compile(r"\(worker [\d.]+\)")  # a worker is named after its process


def _play(tmp_path: Path, name: str, concurrency: int, rules: Rules, *engines: str) -> Path:
    record = tmp_path / f"{name}.gin"
    result = run_match(
        MatchConfig(
            engines=tuple(EngineSpec.parse(e) for e in engines),
            rules=rules,
            games=3,
            seed="same-seed",
            control=TimeControl(base=60, increment=0.5, move=5.0),
            concurrency=concurrency,
            record=str(record),
            debug_log=str(tmp_path / f"{name}.log"),
        ),
        [f"E{i}" for i in range(len(engines))],
    )
    assert len(result.games) == 3
    return record


def _lines(log: Path) -> list[str]:
    """The protocol lines of a debug log, without their time stamps and clock readings."""
    lines = log.read_text().splitlines()
    return [WORKER.sub("", CLOCK.sub(r"\1", STAMP.sub("", line))) for line in lines]


def test_two_runs_with_one_seed_send_the_same_lines_and_write_the_same_records(
    tmp_path: Path,
) -> None:
    runs = [_play(tmp_path, name, 1, Rules(), "simple", "random") for name in ("a", "b")]
    threaded, again = (path.read_bytes() for path in runs)
    assert threaded == again and threaded.count(b"[Game ") == 3
    first, second = (_lines(path.with_suffix(".log")) for path in runs)
    assert first == second
    assert sum(" > position " in line for line in first) > 50
    # Workers in processes instead of one thread: the same games, byte for byte.
    parallel = _play(tmp_path, "c", 2, Rules(), "simple", "random").read_bytes()
    assert parallel == threaded
    assert CliRunner().invoke(cli, ["replay", "--verify", str(runs[0])]).exit_code == 0


def test_three_players_with_advice_give_the_same_lines_and_records_twice(tmp_path: Path) -> None:
    rules = Rules(variant=Variant.THREEHANDED)
    runs = [_play(tmp_path, name, 1, rules, "simple", "random", "simple") for name in "ab"]
    assert runs[0].read_bytes() == runs[1].read_bytes()
    first, second = (_lines(path.with_suffix(".log")) for path in runs)
    assert first == second
    assert any(" > go advice" in line for line in first)
    assert CliRunner().invoke(cli, ["replay", "--verify", str(runs[0])]).exit_code == 0
