"""Tournaments: config, plan, runs with real engines, kill -9 and resume, standings."""

from __future__ import annotations

import json
import math
import os
import random
import shlex
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ginproto.record import read_games
from ginproto.replay import verify_game
from ginproto.rules import Rules, Variant
from referee.cli import cli
from referee.results.report import GameSummary
from referee.results.standings import TournamentStandings, pairwise
from referee.results.stats import ELO_PER_NAT
from referee.results.store import RECORDS_NAME, STORE_NAME, DirectoryLock, Store, StoreError
from referee.scheduling.backends import JobContext, LocalBackend, play_job
from referee.scheduling.config import ConfigError, diff_settings, pairings
from referee.scheduling.loader import build_config, load_config
from referee.scheduling.plan import job_of, plan
from referee.scheduling.tournament import (
    SettingsChanged,
    open_tournament,
    result_of,
    run_tournament,
    verify_tournament,
)

ROOT = Path(__file__).resolve().parents[2]
GREEDY = str(Path(__file__).resolve().parents[1] / "programs" / "tourney_greedy.py")
EXAMPLE = ROOT / "examples" / "tournament.toml"
REFEREE = [sys.executable, "-c", "from referee.cli import main; main()"]


def engines_toml() -> str:
    """Four engines: two built-ins and the test engine twice, once faulting in hand 2."""
    greedy = json.dumps([sys.executable, GREEDY])
    return f"""
[[engines]]
name = "Simple"
command = "simple"

[[engines]]
name = "Random"
command = "random"
options = {{ Seed = 3 }}

[[engines]]
name = "Greedy"
command = {greedy}

[[engines]]
name = "Faulty"
command = {greedy}
options = {{ IllegalAt = 2 }}
"""


def write_config(folder: Path, body: str = "", **keys: Any) -> Path:
    top = {"event": "test cup", "seed": 11, "games": 2, "tc": "inf", "output": "out", **keys}
    lines = [f"{k} = {json.dumps(v)}" for k, v in top.items()]
    path = folder / "cup.toml"
    path.write_text("\n".join(lines) + "\n" + body + engines_toml())
    return path


def run_api(config_path: Path, directory: Path, **overrides: Any) -> Store:
    config = load_config(config_path, overrides)
    store = open_tournament(config, directory, resume=False)
    run_tournament(store, config)
    return store


def file_games(path: Path) -> list[int]:
    if not path.exists():
        return []
    return [int(r.header("Game") or 0) - 1 for r in read_games(path)]


def without_date(record: str) -> str:
    return "\n".join(line for line in record.splitlines() if not line.startswith("[Date "))


def game_rows(store: Store) -> list[tuple[Any, ...]]:
    """Everything about each finished game that an uninterrupted run must reproduce."""
    return [
        (r.game, r.winner, r.termination, r.hands, r.summary, r.faults, without_date(r.record))
        for r in store.results()
    ]


# ------------------------------------------------------------------------------------------
# The plan


def test_round_robin_pairings_and_balanced_seats() -> None:
    config = build_config({"seed": 5, "games": 4, "engines": [{"command": "simple"}] * 4})
    assert [e.name for e in config.engines] == ["simple", "simple#2", "simple#3", "simple#4"]
    p = plan(config)
    assert p.pairings == ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))
    assert len(p.games) == 24
    assert [g.game for g in p.games] == list(range(24))
    for pairing, group in enumerate(p.pairings):
        games = [g for g in p.games if g.pairing == pairing]
        assert [g.round for g in games] == [0, 1, 2, 3]
        assert Counter(g.seats for g in games) == {group: 2, group[::-1]: 2}
    # Interleaved: the first round of every pairing comes first.
    assert [g.pairing for g in p.games[:6]] == list(range(6))
    # Game r of every pairing is dealt from the same deck key.
    assert {g.key for g in p.games if g.round == 3} == {3}
    for e in range(4):
        seats = Counter(g.seats.index(e) for g in p.games if e in g.seats)
        assert seats == {0: 6, 1: 6}


def test_gauntlet_pairings() -> None:
    config = build_config(
        {"seed": 5, "games": 2, "format": "gauntlet", "engines": [{"command": "simple"}] * 4}
    )
    p = plan(config)
    assert p.pairings == ((0, 1), (0, 2), (0, 3))
    assert len(p.games) == 6
    for group in p.pairings:
        assert {g.seats for g in p.games if set(g.seats) == set(group)} == {group, group[::-1]}


def test_odd_games_per_pairing_balance_over_the_pairings() -> None:
    config = build_config({"seed": 5, "games": 1, "engines": [{"command": "simple"}] * 4})
    p = plan(config)
    assert [g.seats for g in p.games] == [(0, 1), (2, 0), (0, 3), (2, 1), (1, 3), (3, 2)]
    for e in range(4):
        seats = Counter(g.seats.index(e) for g in p.games if e in g.seats)
        assert abs(seats[0] - seats[1]) <= 1


def test_duplicate_shares_keys_within_a_pairing() -> None:
    config = build_config(
        {"seed": 5, "games": 4, "duplicate": True, "engines": [{"command": "simple"}] * 3}
    )
    for pairing in range(3):
        games = [g for g in plan(config).games if g.pairing == pairing]
        assert [g.key for g in games] == [0, 0, 1, 1]
        assert games[0].seats == games[1].seats[::-1]


def test_three_handed_groups() -> None:
    assert pairings("round-robin", 4, 3) == [(0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3)]
    assert pairings("gauntlet", 4, 3) == [(0, 1, 2), (0, 1, 3), (0, 2, 3)]
    config = build_config(
        {"seed": 1, "games": 3, "variant": "threehanded", "engines": [{"command": "simple"}] * 4}
    )
    p = plan(config)
    assert len(p.games) == 12
    for e in range(4):
        assert Counter(g.seats.index(e) for g in p.games if e in g.seats) == {0: 3, 1: 3, 2: 3}


# ------------------------------------------------------------------------------------------
# The config


def test_example_config_loads() -> None:
    config = load_config(EXAMPLE)
    assert config.format == "round-robin"
    assert config.names == ("Simple", "Simple (fast clock)", "Random")
    assert config.output == str(EXAMPLE.parent / "tournament-results")
    specs = config.specs()
    assert specs[1].control is not None and specs[1].control.base == 10
    assert specs[0].control is None
    assert specs[2].options == (("Seed", "7"),)
    settings = config.settings()
    assert settings["rules"]["gin_bonus"] == "25"
    # The canonical settings are a config themselves, and give the same settings back.
    assert build_config(settings).settings() == settings


def test_default_names() -> None:
    config = build_config(
        {
            "seed": 1,
            "engines": [
                {"command": "simple"},
                {"command": "simple"},
                {"command": f"{sys.executable} -u {GREEDY}"},
                {"command": [sys.executable, "-m", "engines.random_engine"]},
                {"command": [sys.executable], "name": "tourney_greedy"},
            ],
        }
    )
    assert config.names == (
        "simple",
        "simple#2",
        "tourney_greedy#2",
        "random_engine",
        "tourney_greedy",
    )


def test_command_line_overrides_the_file(tmp_path: Path) -> None:
    path = write_config(tmp_path, games=4, concurrency=1)
    config = load_config(
        path, {"games": 6, "rules": {"gin_bonus": "20"}, "concurrency": 3, "output": "x"}
    )
    assert config.games == 6 and config.concurrency == 3
    assert config.rules.gin_bonus == 20 and config.rules.undercut_bonus == 10
    assert config.output == os.path.abspath("x")
    assert config.seed == 11


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("games = \n", "not valid TOML: Invalid value (at line 1, column 9)"),
        ("gmaes = 3\n", "unknown key 'gmaes' (did you mean 'games'?)"),
        ('games = "3"\n', "games must be a whole number, not '3'"),
        ("games = 0\n", "games (per pairing) must be at least 1"),
        ("duplicate = 1\n", "duplicate must be true or false, not 1"),
        ('format = "swiss"\n', "format must be one of round-robin, gauntlet, not 'swiss'"),
        ('variant = "poker"\n', "variant must be one of"),
        ("[rules]\ngin_bonsu = 3\n", "unknown rule 'gin_bonsu'"),
        ('tc = "fast"\n', "tc: time control must be BASE+INC"),
        ("duplicate = true\ngames = 3\n", "must be a multiple of 2"),
        ('[[engines]]\nname = "A"\n', "engines[1] (A): command is missing"),
        ('[[engines]]\ncommand = "no-such-bot --x"\n', "cannot find the program 'no-such-bot'"),
        ('[[engines]]\ncommand = "simple"\nspeed = 3\n', "engines[1] (simple): unknown key"),
        ('[[engines]]\ncommand = "simple"\ncwd = "nowhere"\n', "is not a directory"),
        ('[[engines]]\ncommand = "simple"\noptions = { A = [1] }\n', "options.A must be"),
        (
            '[[engines]]\nname = "A"\ncommand = "simple"\n[[engines]]\nname = "A"\n'
            'command = "random"\n',
            "engines[1] and engines[2] are both named 'A'",
        ),
        ('[[engines]]\ncommand = "simple"\n', "needs at least 2 engines"),
        (
            'variant = "threehanded"\n[[engines]]\ncommand = "simple"\n[[engines]]\n'
            'command = "random"\n',
            "a round-robin of threehanded needs at least 3 engines",
        ),
    ],
)
def test_bad_configs(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    if "[[engines]]" not in text and "games = \n" not in text:
        text += '[[engines]]\ncommand = "simple"\n[[engines]]\ncommand = "random"\n'
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert message in str(info.value)
    assert str(info.value).startswith(f"{path}: ")
    result = CliRunner().invoke(cli, ["tournament", str(path), "--output", str(tmp_path / "o")])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "o").exists()


def test_cli_usage_errors(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["tournament"])
    assert result.exit_code == 2 and "give a CONFIG file, or --resume DIR" in result.output
    result = runner.invoke(cli, ["tournament", str(tmp_path / "none.toml")])
    assert result.exit_code == 2 and "none.toml: no such file" in result.output
    path = write_config(tmp_path)
    path.write_text(path.read_text().replace('output = "out"\n', ""))
    result = runner.invoke(cli, ["tournament", str(path)])
    assert result.exit_code == 2 and "say where the results go" in result.output
    result = runner.invoke(cli, ["tournament", "--resume", str(tmp_path)])
    assert result.exit_code == 1 and "holds no tournament" in result.output
    result = runner.invoke(cli, ["tournament", str(path), "-d", "o", "--rule", "gin_bonus"])
    assert result.exit_code == 2 and "expected NAME=VALUE" in result.output


def test_every_option_has_help() -> None:
    from referee.cli.tournament import tournament

    for param in tournament.params:
        if param.param_type_name == "option":
            assert getattr(param, "help", None), param.name


def test_diff_settings_names_each_change() -> None:
    old = build_config(
        {"seed": 1, "engines": [{"command": "simple"}, {"command": "random", "name": "R"}]}
    ).settings()
    new = build_config(
        {
            "seed": 2,
            "games": 4,
            "rules": {"gin_bonus": 20},
            "engines": [
                {"command": "simple"},
                {"command": "random", "name": "R", "options": {"Seed": 9}, "tc": "5+0.1"},
            ],
        }
    ).settings()
    assert diff_settings(old, new) == [
        "engine 2 (R) options: {} -> {Seed=9}",
        'engine 2 (R) time control: (none) -> "5+0.1"',
        "games per pairing: 2 -> 4",
        "rule gin_bonus: 25 -> 20",
        "seed: 1 -> 2",
    ]
    assert diff_settings(old, old) == []
    fewer = build_config({"seed": 1, "engines": [{"command": "simple"}] * 2}).settings()
    assert diff_settings(old, fewer) == ["engines: simple, R -> simple, simple#2"]


# ------------------------------------------------------------------------------------------
# Real runs


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A round-robin of four engines, 2 games per pairing, played once without a break."""
    folder = tmp_path_factory.mktemp("baseline")
    config = write_config(folder, concurrency=2)
    run_api(config, folder / "out").close()
    return folder


def test_round_robin_of_four_engines(baseline: Path) -> None:
    out = baseline / "out"
    with Store.open(out) as store:
        assert store.counts() == (12, 12)
        assert store.names == ["Simple", "Random", "Greedy", "Faulty"]
        games = store.games()
        by_pairing = Counter(tuple(sorted(g.seats)) for g in games)
        assert by_pairing == {p: 2 for p in [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]}
        for e in range(4):
            assert Counter(g.seats.index(e) for g in games if e in g.seats) == {0: 3, 1: 3}
        results = list(store.results())
        faults = [f for r in results for f in r.faults]
        assert faults and all(f.engine == 3 and f.kind == "illegal" for f in faults)
        assert all(f.hand == 2 for f in faults)
        standings = TournamentStandings.from_store(store)
        rows = {r["name"]: r for r in standings.rows()}
        assert rows["Faulty"]["faults"] == {"illegal": len(faults)}
        assert sum(r["games"] for r in rows.values()) == 24
        records = list(read_games(out / RECORDS_NAME))
        assert [r.header("Game") for r in records] == [str(i) for i in range(1, 13)]
        assert (out / RECORDS_NAME).read_text() == "".join(t for _, t in store.records())
        for record in records:
            assert record.errors == [] and verify_game(record) == []
            assert record.header("Event") == "test cup"


def test_the_job_is_pure(baseline: Path) -> None:
    """One stored game, played again alone with fresh engines, gives the same result."""
    config = load_config(baseline / "cup.toml")
    context = JobContext.of(config)
    with Store.open(baseline / "out") as store:
        stored = next(r for r in store.results() if r.game == 2)
        game = store.games()[2]
    again = result_of(play_job(context, job_of(game, config.rules)), config.event)
    assert (again.winner, again.summary, again.faults) == (
        stored.winner,
        stored.summary,
        stored.faults,
    )
    assert without_date(again.record) == without_date(stored.record)
    [local] = LocalBackend().run([job_of(game, config.rules)], context.seats)
    assert result_of(local, config.event).summary == stored.summary


def test_gauntlet_from_the_command_line(tmp_path: Path) -> None:
    path = write_config(tmp_path, format="gauntlet", games=4)
    result = CliRunner().invoke(
        cli, ["tournament", str(path), "--games", "2", "--concurrency", "2", "--json"]
    )
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    t = out["tournament"]
    assert (t["format"], t["played"], t["scheduled"], t["complete"]) == ("gauntlet", 6, 6, True)
    assert t["games_per_pairing"] == 2
    games = {e["name"]: e["games"] for e in out["engines"]}
    assert games == {"Simple": 6, "Random": 2, "Greedy": 2, "Faulty": 2}
    assert set(out["cross_table"]["Simple"]) == {"Random", "Greedy", "Faulty"}
    assert "Greedy" not in out["cross_table"]["Random"]
    with Store.open(tmp_path / "out") as store:
        for g in store.games():
            assert 0 in g.seats
        assert Counter(g.seats[0] == 0 for g in store.games()) == {True: 3, False: 3}


def test_resume_refuses_changed_settings(baseline: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    config = baseline / "cup.toml"
    out = str(baseline / "out")
    result = runner.invoke(cli, ["tournament", str(config), "--resume", out, "--games", "3"])
    assert result.exit_code == 1
    assert "the settings changed" in result.output
    assert "games per pairing: 2 -> 3" in result.output
    changed = tmp_path / "cup.toml"
    changed.write_text(config.read_text().replace("IllegalAt = 2", "IllegalAt = 3"))
    result = runner.invoke(cli, ["tournament", str(changed), "--resume", out])
    assert result.exit_code == 1
    assert "engine 4 (Faulty) options: {IllegalAt=2} -> {IllegalAt=3}" in result.output
    result = runner.invoke(cli, ["tournament", "--resume", out, "--rule", "gin_bonus=30"])
    assert result.exit_code == 1 and "rule gin_bonus: 25 -> 30" in result.output
    # The API says the same.
    with pytest.raises(SettingsChanged) as info:
        open_tournament(load_config(changed), out, resume=True)
    assert info.value.changes == ["engine 4 (Faulty) options: {IllegalAt=2} -> {IllegalAt=3}"]
    # A new tournament in the same place is refused too.
    result = runner.invoke(cli, ["tournament", str(config)])
    assert result.exit_code == 1 and "already holds a tournament (12 of 12" in result.output


def test_resume_of_a_finished_tournament_and_its_standings(baseline: Path) -> None:
    out = baseline / "out"
    before = (out / RECORDS_NAME).read_bytes()
    result = CliRunner().invoke(
        cli, ["tournament", "--resume", str(out), "--concurrency", "1", "-q"]
    )
    assert result.exit_code == 0, result.output
    assert "test cup: 12 of 12 games played" in result.output
    assert "Cross-table" in result.output
    assert (out / RECORDS_NAME).read_bytes() == before
    with Store.open(out) as store:
        assert store.run_options["concurrency"] == 1


def test_a_lost_records_file_is_rebuilt_on_resume(baseline: Path, tmp_path: Path) -> None:
    out = baseline / "out"
    copy = tmp_path / "copy"
    copy.mkdir()
    source = sqlite3.connect(out / STORE_NAME)
    target = sqlite3.connect(copy / STORE_NAME)
    source.backup(target)
    source.close()
    target.close()
    result = CliRunner().invoke(cli, ["tournament", "--resume", str(copy), "-q"])
    assert result.exit_code == 0, result.output
    assert (copy / RECORDS_NAME).read_bytes() == (out / RECORDS_NAME).read_bytes()


def test_a_busy_directory_is_refused(baseline: Path) -> None:
    with DirectoryLock(baseline / "out"):
        result = CliRunner().invoke(cli, ["tournament", "--resume", str(baseline / "out")])
    assert result.exit_code == 1 and "in use by another ginref" in result.output


def check_consistent(out: Path) -> list[int]:
    """After a kill: the store is sound and the records file is never ahead of it."""
    with Store.open(out) as store:
        assert store.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        done = [g.game for g in store.games("done")]
        assert [r.game for r in store.results()] == done
        report = verify_tournament(store)  # what a kill leaves is no difference
        assert report.ok, report.differences
    in_file = file_games(out / RECORDS_NAME)
    assert in_file in (done, done[:-1]), (in_file, done)
    return done


def done_count(out: Path) -> int:
    """The games the store holds, for the kill loop's progress. The referee being started,
    killed and resumed may hold the store locked for a moment (a recovery after ``kill -9``):
    the count is read again then."""
    if not Store.exists(out):
        return 0
    for _ in range(100):
        try:
            with Store.open(out) as store:
                return store.counts()[0]
        except StoreError as exc:
            if "locked" not in str(exc):
                raise
            time.sleep(0.05)
    raise AssertionError(f"{out}: the store stayed locked")


@pytest.mark.slow
def test_kill_9_and_resume_gives_the_uninterrupted_results(tmp_path: Path) -> None:
    """SIGKILL at random points: after a random number of further games (none included) and a
    random delay, so the kill lands in start-up, mid-game, or between a commit and the append
    to the records file. Resume each time, and compare with the uninterrupted run."""
    config = write_config(tmp_path, concurrency=2, games=4)
    run_api(config, tmp_path / "whole").close()
    out = tmp_path / "out"
    seed = int(os.environ.get("KILL_SEED", random.randrange(10**6)))
    rng = random.Random(seed)  # a failure names its seed: rerun with KILL_SEED=...
    start = [*REFEREE, "tournament", str(config), "-q"]
    resume = [*REFEREE, "tournament", "--resume", str(out), "-q"]
    kills, progress = 0, []
    for _ in range(40):
        command = resume if Store.exists(out) else start
        target = done_count(out) + rng.choice([0, 1, 1, 2, 2, 3])
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if kills < 6:
            deadline = time.monotonic() + 60
            while proc.poll() is None and done_count(out) < target < 24:
                assert time.monotonic() < deadline
                time.sleep(0.005)
            time.sleep(rng.uniform(0.0, 0.15))
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                proc.communicate()
                kills += 1
                if Store.exists(out):
                    progress.append(len(check_consistent(out)))
                continue
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, (seed, err.decode())
        break
    assert kills >= 3, ("the test should interrupt the tournament several times", seed)
    assert progress == sorted(progress), seed
    done = check_consistent(out)
    assert done == list(range(24)), seed
    with Store.open(out) as store, Store.open(tmp_path / "whole") as whole:
        assert store.counts() == (24, 24)
        assert game_rows(store) == game_rows(whole)
        assert [g.seats for g in store.games()] == [g.seats for g in whole.games()]
        text = (out / RECORDS_NAME).read_text()
        assert text == "".join(t for _, t in store.records())
    assert file_games(out / RECORDS_NAME) == list(range(24))


def test_interrupt_stops_after_the_games_in_progress(tmp_path: Path) -> None:
    config = write_config(tmp_path, concurrency=1, games=4)
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [*REFEREE, "tournament", str(config), "-q"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if Store.exists(out):
            with Store.open(out) as store:
                if store.counts()[0] >= 1:
                    break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr  # Ctrl-C, as in every command
    assert "Stopping after the games in progress" in stderr
    assert "Resume with: ginref tournament --resume" in stderr
    assert "Traceback" not in stderr
    assert "games played" in stdout  # the standings so far
    done = check_consistent(out)
    assert done == file_games(out / RECORDS_NAME)
    assert 1 <= len(done) < 24


# ------------------------------------------------------------------------------------------
# Standings, against figures worked out by hand


def summary(
    a: int,
    b: int,
    winner: int | None,
    hands: list[tuple[int | None, int]],
    fault: tuple[int, str] | None = None,
) -> GameSummary:
    return GameSummary((a, b), 0, winner, fault, tuple(hands), tuple((a, b) for _ in hands))


def fixed_results() -> TournamentStandings:
    """A beats B 3-1 and C 3-1; B and C win one each and draw two. One of A's wins over B is a
    forfeit (B, illegal) with no hand finished. Every other game has one hand, won by the
    game's winner for 20 points (a drawn game: one drawn hand)."""
    s = TournamentStandings(["A", "B", "C"])
    games = [
        (0, 1, 0),
        (1, 0, 0),
        (0, 1, 0),
        (1, 0, 1),
        (0, 2, 0),
        (2, 0, 0),
        (0, 2, 0),
        (2, 0, 2),
        (1, 2, 1),
        (2, 1, 2),
        (1, 2, None),
        (2, 1, None),
    ]
    for n, (a, b, w) in enumerate(games):
        if n == 2:
            s.add(summary(a, b, w, [], fault=(1, "illegal")))
        else:
            s.add(summary(a, b, w, [(w, 0 if w is None else 20)]))
    return s


def test_standings_by_hand() -> None:
    s = fixed_results()
    rows = {r["name"]: r for r in s.rows()}
    a, b, c = rows["A"], rows["B"], rows["C"]
    assert (a["games"], a["wins"], a["losses"], a["draws"]) == (8, 6, 2, 0)
    assert (b["games"], b["wins"], b["losses"], b["draws"]) == (8, 2, 4, 2)
    assert a["score"] == 0.75 and b["score"] == c["score"] == 0.375
    # Points scored per hand played: A won 5 of its 7 hands (20 points each), B won 2 of 7,
    # C won 2 of 8; a hand lost scores 0 and is not charged.
    assert a["hands"] == 7 and a["points_per_hand"]["mean"] == pytest.approx(100 / 7)
    assert b["hands"] == 7 and b["points_per_hand"]["mean"] == pytest.approx(40 / 7)
    assert c["hands"] == 8 and c["points_per_hand"]["mean"] == pytest.approx(40 / 8)
    assert a["faults"] == {} and b["faults"] == {"illegal": 1} and c["faults"] == {}
    # Elo: A scores 3/4 against B and against C, B and C are even. So R_B = R_C, R_A - R_B = d
    # with 1 / (1 + 10^(-d/400)) = 3/4, d = 400 log10(3); with mean 0, R_A = 2d/3.
    d = 400 * math.log10(3)
    assert a["elo"]["elo"] == pytest.approx(2 * d / 3, abs=1e-6)
    assert b["elo"]["elo"] == pytest.approx(-d / 3, abs=1e-6)
    assert c["elo"]["elo"] == pytest.approx(-d / 3, abs=1e-6)
    # Intervals: the Fisher information is the Laplacian with weights n p (1-p): A-B and A-C
    # 4 * 3/4 * 1/4 = 0.75, B-C 4 * 1/4 = 1. Its eigenvectors (2, -1, -1) (eigenvalue 2.25)
    # and (0, 1, -1) (2.75) give the pseudo-inverse's diagonal: A 4/(6 * 2.25), B and C
    # 1/(6 * 2.25) + 1/(2 * 2.75).
    z = 1.959963984540054
    half_a = z * ELO_PER_NAT * math.sqrt(4 / 13.5)
    half_b = z * ELO_PER_NAT * math.sqrt(1 / 13.5 + 1 / 5.5)
    assert (a["elo"]["hi"] - a["elo"]["lo"]) / 2 == pytest.approx(half_a, rel=1e-6)
    assert (b["elo"]["hi"] - b["elo"]["lo"]) / 2 == pytest.approx(half_b, rel=1e-6)
    assert [r["name"] for r in s.rows()] == ["A", "B", "C"]
    assert [r["rank"] for r in s.rows()] == [1, 2, 3]
    cross = s.cross_table()
    assert cross["A"]["B"] == {"games": 4, "score": 3.0}
    assert cross["B"]["A"] == {"games": 4, "score": 1.0}
    assert cross["B"]["C"] == cross["C"]["B"] == {"games": 4, "score": 2.0}
    out = s.to_json()
    assert out["games"] == 12 and out["elo_prior_draws"] == 0.0
    json.dumps(out, allow_nan=False)
    lines = s.lines()
    assert lines[1].split()[:8] == ["1", "A", "8", "6", "2", "0", "75.0%", "+127"]
    assert lines[1].split()[8] == f"{half_a:.0f}"
    assert lines[1].split()[9] == "+14.29"
    assert "illegal 1" in lines[2]
    assert any(line.split() == ["1", "A", "x", "3/4", "3/4"] for line in lines)
    assert any(line.split() == ["2", "B", "1/4", "x", "2/4"] for line in lines)


def test_a_perfect_record_gets_finite_ratings_from_virtual_draws() -> None:
    s = TournamentStandings(["A", "B", "C"])
    for _ in range(2):
        s.add(summary(0, 1, 0, [(0, 30)]))
        s.add(summary(0, 2, 0, [(0, 30)]))
        s.add(summary(1, 2, 1, [(1, 30)]))
        s.add(summary(2, 1, 1, [(1, 30)]))
    ratings, prior = s.ratings()
    assert prior == 1.0
    assert all(math.isfinite(r.elo) and math.isfinite(r.lo) for r in ratings.values())
    assert ratings[0].elo > ratings[1].elo > ratings[2].elo
    assert s.to_json()["elo_prior_draws"] == 1.0
    assert any("virtual draw" in line for line in s.lines())


def test_engines_without_games_come_last() -> None:
    s = TournamentStandings(["A", "B", "C"])
    s.add(summary(0, 1, 1, [(1, 10)]))
    s.add(summary(1, 0, 0, [(0, 10)]))
    rows = s.rows()
    assert rows[-1]["name"] == "C" and rows[-1]["elo"] is None and rows[-1]["games"] == 0
    assert TournamentStandings(["A", "B"]).rows()[0]["elo"] is None


def test_three_player_games_as_pairs() -> None:
    g = GameSummary((0, 1, 2), 0, 1, None, (), ())
    assert pairwise(g) == [(0, 1, 0.0), (0, 2, 0.5), (1, 2, 1.0)]
    drawn = GameSummary((2, 0, 1), 0, None, None, (), ())
    assert pairwise(drawn) == [(2, 0, 0.5), (2, 1, 0.5), (0, 1, 0.5)]


def test_rules_and_variant_reach_the_plan() -> None:
    config = build_config(
        {
            "seed": 3,
            "variant": "oklahoma",
            "rules": {"spade_double": True},
            "engines": [{"command": "simple"}] * 2,
        }
    )
    assert config.rules == Rules(variant=Variant.OKLAHOMA, spade_double=True)
    assert job_of(plan(config).games[0], config.rules).rules == config.rules


def test_a_new_tournament_never_overwrites_a_records_file(tmp_path: Path) -> None:
    path = write_config(tmp_path)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / RECORDS_NAME).write_text("someone's games")
    result = CliRunner().invoke(cli, ["tournament", str(path)])
    assert result.exit_code == 1 and "already holds a records file" in result.output
    assert (tmp_path / "out" / RECORDS_NAME).read_text() == "someone's games"


def test_store_errors_are_not_tracebacks(tmp_path: Path) -> None:
    path = write_config(tmp_path)
    (tmp_path / "out").write_text("a file where the directory should be")
    result = CliRunner().invoke(cli, ["tournament", str(path)])
    assert result.exit_code == 2, result.output  # the config's output: refused as it is read
    assert "out is a regular file, not a folder" in result.output
    assert "Traceback" not in result.output
    assert isinstance(StoreError("x"), Exception)


# ------------------------------------------------------------------------------------------
# Engines checked before the first game


def two_engine_config(folder: Path, second: str, **keys: Any) -> Path:
    top = {"seed": 11, "games": 2, "tc": "inf", "output": "out", **keys}
    lines = [f"{k} = {json.dumps(v)}" for k, v in top.items()]
    path = folder / "cup.toml"
    path.write_text(
        "\n".join(lines) + '\n[[engines]]\nname = "Simple"\ncommand = "simple"\n' + second
    )
    return path


@pytest.mark.parametrize(
    ("engine", "shown"),
    [
        ('command = ["sh", "-c", "echo no model >&2; exit 3"]', "no model"),
        ('command = "random"\noptions = { Sed = 3 }', "-o Sed: the engine declares no such"
         " option (declared: Seed)"),
    ],
    ids=["fails the handshake", "undeclared option"],
)
def test_an_engine_that_cannot_be_used_stops_the_tournament_before_game_1(
    tmp_path: Path, engine: str, shown: str
) -> None:
    path = two_engine_config(tmp_path, f'[[engines]]\nname = "Bad"\n{engine}\n')
    result = CliRunner().invoke(cli, ["tournament", str(path), "--startup-timeout", "2"])
    assert result.exit_code == 1, result.output
    assert "engine 'Bad'" in result.output and shown in result.output, result.output
    assert "Traceback" not in result.output and "Rank" not in result.output
    assert not Store.exists(str(tmp_path / "out"))  # nothing was started
    # The refused run left nothing behind: the same directory takes the corrected config.
    good = two_engine_config(tmp_path, '[[engines]]\nname = "Bad"\ncommand = "random"\n')
    result = CliRunner().invoke(cli, ["tournament", str(good), "--games", "1", "-q"])
    assert result.exit_code == 0, result.output
    with Store.open(str(tmp_path / "out")) as store:
        assert store.counts() == (1, 1)


def test_env_reaches_the_engine_and_time_margin_is_a_run_option(tmp_path: Path) -> None:
    script = tmp_path / "needs_env.sh"
    script.write_text(
        '#!/bin/sh\n[ "$GIN_MODEL" = small ] || { echo "GIN_MODEL unset" >&2; exit 2; }\n'
        f"exec {shlex.quote(sys.executable)} -m engines.random_engine\n"
    )
    script.chmod(0o755)
    body = f'[[engines]]\nname = "Needy"\ncommand = {json.dumps(str(script))}\n'
    # read: the interpreter the script starts, wherever it lives, for the sandbox
    runtime = [sys.base_prefix]
    path = two_engine_config(
        tmp_path, body + f'env = {{ PYTHONPATH = "{ROOT}" }}\n', read=runtime
    )
    result = CliRunner().invoke(cli, ["tournament", str(path), "-q"])
    assert result.exit_code == 1 and "GIN_MODEL unset" in result.output, result.output
    path = two_engine_config(
        tmp_path,
        body + f'env = {{ PYTHONPATH = "{ROOT}", GIN_MODEL = "small" }}\n',
        time_margin=0.25,
        read=runtime,
    )
    result = CliRunner().invoke(cli, ["tournament", str(path), "-q", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["tournament"]["played"] == 2
    with Store.open(str(tmp_path / "out")) as store:
        assert store.run_options["time_margin"] == 0.25
        assert store.settings["engines"][1]["env"]["GIN_MODEL"] == "small"
    config = load_config(path, {"time_margin": 0.5})
    assert config.control.margin == 0.5 and config.specs()[1].env[0] == ("GIN_MODEL", "small")


@pytest.mark.parametrize("value", ["nan", "inf", "-0.1", '"soon"'])
def test_a_bad_time_margin_is_a_config_error(tmp_path: Path, value: str) -> None:
    path = two_engine_config(tmp_path, '[[engines]]\ncommand = "random"\n')
    path.write_text(f"time_margin = {value}\n" + path.read_text())
    with pytest.raises(ConfigError, match="time_margin"):
        load_config(path)


def test_a_full_disk_for_stderr_stops_the_tournament_and_keeps_its_games(
    tmp_path: Path,
) -> None:
    """The stderr files on a tiny tmpfs (where one can be mounted) that fills up: a failure
    of the referee's, which stops the run, and never a ruling against the engines."""
    folder = tmp_path / "small"
    folder.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)],
        capture_output=True, check=False,
    ) if os.geteuid() == 0 else None
    if mounted is None or mounted.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here")
    try:
        engine = tmp_path / "noisy.py"
        engine.write_text(
            "import sys\nfrom engines.random_engine import RandomEngine\n"
            "engine = RandomEngine()\nfor line in sys.stdin:\n"
            "    if line.startswith('newgame'):\n"
            "        sys.stderr.write('log ' * 2500 + '\\n'); sys.stderr.flush()\n"
            "    if not engine.handle(line, sys.stdout):\n        break\n"
        )
        body = (
            f'[[engines]]\nname = "Noisy"\ncommand = {json.dumps([sys.executable, str(engine)])}'
            f'\nenv = {{ PYTHONPATH = "{ROOT}" }}\n'
        )
        path = two_engine_config(tmp_path, body, games=40)
        result = CliRunner().invoke(
            cli, ["tournament", str(path), "-q", "--stderr-dir", str(folder / "stderr")]
        )
        assert result.exit_code == 1, result.output
        assert "No space left on device" in result.output, result.output
        assert "resume with ginref tournament --resume" in result.output
        with Store.open(str(tmp_path / "out")) as store:
            done, total = store.counts()
            faults = [r.faults for r in store.results()]
        assert 1 <= done < total == 40
        assert all(f == () for f in faults), faults  # no engine was blamed for the disk
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def test_a_resume_checks_the_engines_before_its_next_game(tmp_path: Path) -> None:
    script = tmp_path / "bot.sh"
    script.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -m engines.random_engine\n")
    script.chmod(0o755)
    body = f'[[engines]]\nname = "Bot"\ncommand = {json.dumps(str(script))}\n'
    body += f'env = {{ PYTHONPATH = "{ROOT}" }}\n'
    path = two_engine_config(tmp_path, body)
    config = load_config(path)
    open_tournament(config, tmp_path / "out", resume=False).close()  # stored, none played
    script.write_text("#!/bin/sh\necho 'weights file missing' >&2\nexit 3\n")
    result = CliRunner().invoke(cli, ["tournament", "--resume", str(tmp_path / "out")])
    assert result.exit_code == 1, result.output
    assert "engine 'Bot' cannot be used" in result.output
    assert "weights file missing" in result.output
    with Store.open(str(tmp_path / "out")) as store:
        assert store.counts() == (0, 2)
