"""Secrets and integrity: random seeds, private files, torn appends, and a store that is checked
against its records."""

from __future__ import annotations

import io
import json
import os
import random
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result
from helpers import sql

from ginproto.record import (
    RecordReader,
    TruncatedRecordError,
    append_game,
    write_game,
)
from ginproto.replay import verify_game
from ginproto.rules import Rules
from ginproto.simulate import RandomPlayer, play_one
from ginproto.table import hand_deck
from referee.cli import cli
from referee.cli.options import parse_seed, seed_value
from referee.results.store import RECORDS_NAME, STORE_NAME, RecordsFile, Store
from referee.scheduling.loader import load_config
from referee.scheduling.tournament import (
    StoreDiffers,
    open_tournament,
    run_tournament,
    stored_config,
    verify_tournament,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def long_game() -> str:
    """One game of many hands: its text spans many pages, so a kill can land mid-write."""
    rules = Rules(target=300)
    players = [RandomPlayer("a", knocks=True), RandomPlayer("b", knocks=True)]
    _, record = play_one(rules, players, "torn", 1, event="t", site="s", date="2026.01.01")
    text = write_game(record)
    assert not verify_game(record)
    return text


# -- a record survives a kill -9 in the middle of an append ---------------------------------

# The appender skips fsync: it guards against a machine crash, not a process kill (the page
# cache outlives the process), and without it nearly every kill lands in the middle of a write.
APPENDER = """
import os, sys
from ginproto.record import append_game
os.fsync = lambda fd: None
path, source = sys.argv[1], sys.argv[2]
text = open(source, encoding="utf-8").read()
append_game(path, text)
print("ready", flush=True)
while True:
    append_game(path, text)
"""


def _check_file(path: Path, text: str) -> tuple[int, bool]:
    """The file is whole games and at most the start of one more, which the reader reports as
    torn; return (whole games, torn)."""
    data, game = path.read_bytes(), text.encode()
    whole = len(data) // len(game)
    rest = data[whole * len(game) :]
    assert data[: whole * len(game)] == game * whole
    assert game.startswith(rest)
    if rest:
        [torn] = RecordReader(io.BytesIO(rest))
        assert any(isinstance(e, TruncatedRecordError) for e in torn.errors), torn.errors
    return whole, bool(rest)


def test_a_kill_during_appends_leaves_whole_games_and_the_next_append_is_clean(
    tmp_path: Path, long_game: str
) -> None:
    source = tmp_path / "game.gin"
    source.write_text(long_game)
    rng = random.Random(11)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    trials, torn_seen = 0, 0
    deadline = time.monotonic() + 30
    while trials < 12 and time.monotonic() < deadline:
        trials += 1
        path = tmp_path / "run.gin"
        path.unlink(missing_ok=True)
        proc = subprocess.Popen(
            [sys.executable, "-c", APPENDER, str(path), str(source)],
            stdout=subprocess.PIPE,
            env=env,
        )
        try:
            assert proc.stdout is not None
            assert proc.stdout.readline() == b"ready\n"
            time.sleep(rng.uniform(0.0, 0.005))
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
        whole, torn = _check_file(path, long_game)
        torn_seen += torn
        assert whole >= 1
        append_game(path, long_game)
        assert path.read_bytes() == long_game.encode() * (whole + 1)  # games that verify
    assert trials >= 3
    print(f"{trials} kills, {torn_seen} left a torn game, every one cut off by the next append")


# -- random seeds ----------------------------------------------------------------------------

REFEREE = [sys.executable, "-c", "from referee.cli import main; main()"]
PROBE = str(Path(__file__).resolve().parents[1] / "programs" / "secrets_probe.py")
GREEDY = str(Path(__file__).resolve().parents[1] / "programs" / "tourney_greedy.py")


def test_a_random_seed_carries_128_bits() -> None:
    seeds = [parse_seed(None) for _ in range(4)]
    assert all(isinstance(s, int) and 100 < s.bit_length() <= 128 for s in seeds), seeds
    assert len(set(seeds)) == 4
    runner = CliRunner()
    # A knocking engine, so that the game (dealt from a seed no test chooses) is short.
    result = runner.invoke(cli, ["match", "simple", "random", "--games", "1", "--json", "-q"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["seed"].bit_length() > 100


def test_a_tournament_without_a_seed_gets_a_128_bit_one(tmp_path: Path) -> None:
    config = tmp_path / "cup.toml"
    config.write_text(
        'games = 1\ntc = "inf"\noutput = "out"\n'
        '[[engines]]\ncommand = "random"\n[[engines]]\ncommand = "simple"\n'
    )
    result = CliRunner().invoke(cli, ["tournament", str(config), "--json", "-q"])
    assert result.exit_code == 0, result.output
    seed = json.loads(result.stdout)["tournament"]["seed"]
    assert seed.bit_length() > 100
    with Store.open(tmp_path / "out") as store:
        assert store.settings["seed"] == seed
        [record] = [text for _, text in store.records()]
    assert f'[Seed "{seed}"]' in record


def test_every_bit_of_a_seed_counts() -> None:
    high = (1 << 127) | 12345
    variants = [high, high ^ (1 << 127), high ^ (1 << 100), high ^ (1 << 64), high ^ (1 << 32)]
    decks = {hand_deck(seed, 0, 1) for seed in variants}
    assert len(decks) == len(variants)
    assert hand_deck(high, 0, 1) == hand_deck(str(high), 0, 1)  # as --seed reads it back


def test_seeds_given_by_the_user_still_work() -> None:
    assert seed_value("2024") == 2024
    assert seed_value(str(1 << 127)) == 1 << 127
    assert seed_value("spring cup") == "spring cup"
    assert seed_value("²") == "²"  # a digit to str.isdigit, but not to int()
    assert seed_value("9" * 256) == int("9" * 256)
    with pytest.raises(click.BadParameter, match="at most 256"):  # a seed has 256 at most
        seed_value("9" * 5000)


@pytest.mark.parametrize("seed", [str((1 << 127) + 3), "spring cup"])
def test_the_same_seed_gives_byte_identical_records(tmp_path: Path, seed: str) -> None:
    records = []
    for run in ("a", "b"):
        path = tmp_path / f"{run}.gin"
        args = ["match", "random", "simple", "--games", "2", "--seed", seed, "--record", str(path)]
        result = CliRunner().invoke(cli, [*args, "--rule", "target=50", "-q"])
        assert result.exit_code == 0, result.output
        records.append(path.read_bytes())
    assert records[0] == records[1]
    assert f'[Seed "{seed}"]'.encode() in records[0]


# -- files are their owner's alone -----------------------------------------------------------


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.usefixtures("umask_022")
def test_match_files_are_created_owner_only(tmp_path: Path) -> None:
    record, debug, errors = tmp_path / "games.gin", tmp_path / "debug.log", tmp_path / "err"
    args = ["match", "random", "simple", "--games", "2", "--record", str(record)]
    args += ["--debug-log", str(debug), "--stderr-dir", str(errors), "-q"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    stderr_files = list(errors.iterdir())
    assert stderr_files
    for path in [record, debug, *stderr_files]:
        assert mode(path) == 0o600, path


@pytest.mark.usefixtures("umask_022")
def test_tournament_files_are_created_owner_only(tmp_path: Path) -> None:
    config = tmp_path / "cup.toml"
    config.write_text(
        'seed = 5\ngames = 2\ntc = "inf"\noutput = "out"\n'
        '[[engines]]\ncommand = "random"\n[[engines]]\ncommand = "simple"\n'
    )
    result = CliRunner().invoke(cli, ["tournament", str(config), "-q"])
    assert result.exit_code == 0, result.output
    out = tmp_path / "out"
    with Store.open(out) as store:
        store.set_run_options({"concurrency": 1})  # a write: the WAL files exist now
        wal = [out / (STORE_NAME + "-wal"), out / (STORE_NAME + "-shm")]
        assert all(p.exists() for p in wal)
        for path in [out / STORE_NAME, *wal, out / RECORDS_NAME]:
            assert mode(path) == 0o600, path
        (out / RECORDS_NAME).unlink()
        RecordsFile(store).reconcile()  # written again from the store
        assert mode(out / RECORDS_NAME) == 0o600


# -- nothing of the referee's reaches an engine ----------------------------------------------


def probe_reports(folder: Path) -> list[dict[str, Any]]:
    reports = []
    for path in folder.iterdir():
        for line in path.read_text().splitlines():
            if line.startswith("{"):
                reports.append(json.loads(line))
    return reports


def check_probes(folder: Path, tmp_path: Path, seed: str) -> None:
    reports = probe_reports(folder)
    assert reports
    for seen in reports:
        assert seed not in json.dumps(seen["argv"]) and seed not in json.dumps(seen["env"])
        assert "GIN_SEED_PROBE" not in seen["env"]  # the referee's environment stays behind
        assert set(seen["fds"]) >= {"0", "1", "2"}
        for fd, target in seen["fds"].items():
            assert str(tmp_path) not in target, (fd, target)
            assert target.startswith(("pipe:", "/dev/null", "/proc/")), (fd, target)


PROBE_ENV = {**os.environ, "PYTHONPATH": str(ROOT), "GIN_SEED_PROBE": "visible"}


def test_an_engine_in_a_match_inherits_no_seed_and_no_descriptor(tmp_path: Path) -> None:
    seed = str((1 << 127) + 987654321)
    probe = shlex.join([sys.executable, PROBE])
    errors = tmp_path / "err"
    args = [*REFEREE, "match", probe, "simple", "--games", "4", "--concurrency", "2"]
    args += ["--rule", "target=20"]
    args += ["--seed", seed, "--record", str(tmp_path / "g.gin")]
    args += ["--debug-log", str(tmp_path / "d.log"), "--stderr-dir", str(errors), "-q"]
    done = subprocess.run(args, env=PROBE_ENV, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    check_probes(errors, tmp_path, seed)


def test_an_engine_in_a_tournament_inherits_no_seed_and_no_descriptor(tmp_path: Path) -> None:
    seed = str((1 << 127) + 123456789)
    config = tmp_path / "cup.toml"
    config.write_text(
        f'seed = "{seed}"\ngames = 2\ntc = "inf"\noutput = "out"\n'
        f"[[engines]]\ncommand = {json.dumps([sys.executable, PROBE])}\n"
        '[[engines]]\ncommand = "simple"\n'
    )
    errors = tmp_path / "err"
    args = [*REFEREE, "tournament", str(config), "--concurrency", "2", "--rule", "target=20"]
    args += ["--stderr-dir", str(errors), "-q"]
    done = subprocess.run(args, env=PROBE_ENV, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    check_probes(errors, tmp_path, seed)


# -- the store is checked against the records ------------------------------------------------


def cup(folder: Path, games: int = 2) -> Path:
    greedy = json.dumps([sys.executable, GREEDY])
    config = folder / "cup.toml"
    config.write_text(
        f'event = "integrity"\nseed = 21\ngames = {games}\ntc = "inf"\noutput = "out"\n'
        '[[engines]]\nname = "Simple"\ncommand = "simple"\n'
        '[[engines]]\nname = "Random"\ncommand = "random"\n'
        f'[[engines]]\nname = "Faulty"\ncommand = {greedy}\noptions = {{ IllegalAt = 2 }}\n'
    )
    return config


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished round-robin of three engines, one of which forfeits."""
    folder = tmp_path_factory.mktemp("cup")
    config = load_config(cup(folder))
    with open_tournament(config, folder / "out", resume=False) as store:
        run_tournament(store, config)
    return folder / "out"


@pytest.fixture
def out(played: Path, tmp_path: Path) -> Path:
    """A copy of the finished tournament to tamper with."""
    copy = tmp_path / "out"
    shutil.copytree(played, copy)
    return copy


def verify(out: Path) -> Result:
    return CliRunner().invoke(cli, ["tournament", "--verify", str(out)])


def resume(out: Path) -> Result:
    return CliRunner().invoke(cli, ["tournament", "--resume", str(out), "-q"])


def test_an_untouched_store_verifies(out: Path) -> None:
    result = verify(out)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        f"{out}: 6 stored games, 6 in the records file: every stored result is the one its"
        " record gives"
    ]
    assert resume(out).exit_code == 0


def test_verify_needs_a_stored_tournament(out: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["tournament", "x.toml", "--verify", str(out)])
    assert result.exit_code == 2 and "give no CONFIG nor --resume" in result.output
    result = CliRunner().invoke(cli, ["tournament", "--verify", str(tmp_path / "none")])
    assert result.exit_code == 1 and "holds no tournament" in result.output


def test_a_loss_turned_into_a_win_in_the_store_is_caught(out: Path) -> None:
    [(game, winner, lineup)] = sql(
        out,
        "SELECT game, winner, json_extract(summary, '$.lineup') FROM results"
        " WHERE winner IS NOT NULL ORDER BY game LIMIT 1",
    )
    loser = next(e for e in json.loads(lineup) if e != winner)
    sql(
        out,
        "UPDATE results SET winner = ?, summary = json_set(summary, '$.winner', ?) WHERE game = ?",
        loser,
        loser,
        game,
    )
    result = verify(out)
    assert result.exit_code == 1
    names = ["Simple", "Random", "Faulty"]
    assert (
        f"game {game + 1}: the store gives the win to {names[loser]!r}, but its record gives it"
        f" to {names[winner]!r}"
    ) in result.stdout
    assert f"{out}: 1 of 6 stored games differs from its record" in result.output
    before = (out / RECORDS_NAME).read_bytes()
    refused = resume(out)
    assert refused.exit_code == 1
    assert f"cannot resume {out}: 1 of 6 stored games differ" in refused.output
    assert f"game {game + 1}: the store gives the win" in refused.output
    assert (out / RECORDS_NAME).read_bytes() == before  # not "repaired" from the store
    with pytest.raises(StoreDiffers) as info:
        open_tournament(stored_config(Store.open(out)), out, resume=True)
    assert info.value.games == [game]


def test_a_changed_score_in_the_records_file_is_caught(out: Path) -> None:
    path = out / RECORDS_NAME
    lines = path.read_text().split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("totals ") and "/" not in line)
    first, second = lines[at].split()[1:3]
    lines[at] = f"totals {second} {first}" if first != second else f"totals {first} 1{second}"
    path.write_text("\n".join(lines))
    result = verify(out)
    assert result.exit_code == 1
    assert f"games.gin:{at + 1} says {lines[at]!r}" in result.stdout
    assert "wrong totals line" in result.stdout
    refused = resume(out)
    assert refused.exit_code == 1 and "cannot resume" in refused.output


def test_a_changed_move_in_the_stored_record_is_caught(out: Path) -> None:
    [(game, record)] = sql(out, "SELECT game, record FROM results ORDER BY game LIMIT 1")
    lines = record.split("\n")
    # A player's second discard of a hand, changed to their first: a card no longer held.
    first: dict[str, str] = {}
    for at, line in enumerate(lines):
        words = line.split()
        if line.startswith("hand "):
            first = {}
        elif len(words) == 3 and words[1] == "discard":
            if words[0] in first:
                lines[at] = f"{words[0]} discard {first[words[0]]}"
                break
            first[words[0]] = words[2]
    else:
        pytest.fail("no player discarded twice in a hand")
    sql(out, "UPDATE results SET record = ? WHERE game = ?", "\n".join(lines), game)
    result = verify(out)
    assert result.exit_code == 1
    assert f"game {game + 1}: the store's record does not verify: line {at + 1}" in result.stdout
    assert resume(out).exit_code == 1


def test_a_removed_fault_is_caught(out: Path) -> None:
    [(game,)] = sql(out, "SELECT game FROM faults ORDER BY game LIMIT 1")
    sql(out, "DELETE FROM faults WHERE game = ?", game)
    result = verify(out)
    assert result.exit_code == 1
    assert f"game {game + 1}: the store's faults (none) are not its record's (Faulty" in (
        result.stdout
    )


def test_what_an_interrupted_run_leaves_is_not_a_difference(out: Path) -> None:
    path = out / RECORDS_NAME
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 300])  # a torn last game
    result = verify(out)
    assert result.exit_code == 0, result.output
    assert "was cut off by an interrupted append" in result.stderr
    last = data.rindex(b"%ginrec")
    path.write_bytes(data[:last])  # the last game not yet appended
    result = verify(out)
    assert result.exit_code == 0, result.output
    assert "1 stored game is not in games.gin yet" in result.stderr
    assert resume(out).exit_code == 0
    assert path.read_bytes() == data


@pytest.mark.parametrize("variant", ["threehanded", "hollywood"])
def test_every_variant_verifies_faults_included(tmp_path: Path, variant: str) -> None:
    games = 3 if variant == "threehanded" else 2
    config = load_config(cup(tmp_path, games), {"variant": variant, "rules": {"target": "60"}})
    with open_tournament(config, tmp_path / "out", resume=False) as store:
        run_tournament(store, config)
        report = verify_tournament(store)
        assert any(r.faults and r.faults[0].hand for r in store.results())
    assert report.ok, report.differences
    pairings = {"threehanded": 1, "hollywood": 3}[variant]  # of three engines
    assert report.stored == report.in_file == pairings * games
