"""A finished tournament folder tampered with by someone who can write to it, and who knows
the formats: each change keeps the records verifying on their own (``ginref replay --verify``
passes), and ``ginref tournament --verify`` (which a resume runs too) must still name the game.

Two tournaments are played once, with the same engines and schedule but another seed: the
second is where the adversary takes whole, self-consistent games from (a deal of their choice).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from helpers import sql

from referee.cli import cli
from referee.results.store import RECORDS_NAME
from referee.scheduling.loader import load_config
from referee.scheduling.tournament import open_tournament, run_tournament

GINREF = str(Path(sys.executable).with_name("ginref"))
SEED, OTHER_SEED = 21, 22
NAMES = ("Simple", "Random")


def _play(folder: Path, seed: int) -> Path:
    folder.mkdir()
    config = folder / "cup.toml"
    config.write_text(
        f'event = "tamper"\nseed = {seed}\ngames = 2\ntc = "inf"\noutput = "out"\n'
        'sandbox = "off"\n[rules]\ntarget = 25\n'
        '[[engines]]\nname = "Simple"\ncommand = "simple"\n'
        '[[engines]]\nname = "Random"\ncommand = "random"\n'
    )
    loaded = load_config(config)
    with open_tournament(loaded, folder / "out", resume=False) as store:
        run_tournament(store, loaded)
    return folder / "out"


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("tamper")
    return _play(base / "honest", SEED), _play(base / "other", OTHER_SEED)


@pytest.fixture
def out(played: tuple[Path, Path], tmp_path: Path) -> Path:
    """A copy of the finished tournament, to tamper with."""
    copy = tmp_path / "out"
    shutil.copytree(played[0], copy)
    return copy


@pytest.fixture
def other(played: tuple[Path, Path]) -> Path:
    return played[1]


def rewrite_records_file(folder: Path) -> None:
    """What a careful adversary does after changing the store: the records file made again
    from the store's records, so that the two agree."""
    rows = sql(folder, "SELECT record FROM results ORDER BY game")
    (folder / RECORDS_NAME).write_text("".join(text for (text,) in rows))


def replace_game(folder: Path, game: int, record: str, source: Path) -> None:
    """Game ``game``'s stored result and record replaced by ``source``'s game of the same
    number (its winner, summary and faults too), with ``record`` as its text."""
    [row] = sql(
        source,
        "SELECT winner, termination, hands, summary FROM results WHERE game = ?",
        game,
    )
    sql(
        folder,
        "UPDATE results SET winner = ?, termination = ?, hands = ?, summary = ?, record = ?"
        " WHERE game = ?",
        *row,
        record,
        game,
    )
    sql(folder, "DELETE FROM faults WHERE game = ?", game)
    for fault in sql(
        source, "SELECT engine, player, kind, detail, hand FROM faults WHERE game = ?", game
    ):
        sql(
            folder,
            "INSERT INTO faults (game, engine, player, kind, detail, hand) VALUES (?,?,?,?,?,?)",
            game,
            *fault,
        )
    rewrite_records_file(folder)


def stored_record(folder: Path, game: int) -> str:
    [(text,)] = sql(folder, "SELECT record FROM results WHERE game = ?", game)
    return str(text)


def verify(out: Path) -> Result:
    return CliRunner().invoke(cli, ["tournament", "--verify", str(out)])


def replay_verifies(path: Path) -> bool:
    done = subprocess.run(
        [GINREF, "replay", "--verify", str(path)], capture_output=True, text=True, check=False
    )
    return done.returncode == 0


def assert_caught(out: Path, line: str) -> None:
    """``--verify`` fails naming the game, and a resume refuses the folder."""
    result = verify(out)
    assert result.exit_code == 1, result.output
    assert line in result.stdout.splitlines(), result.stdout
    resumed = CliRunner().invoke(cli, ["tournament", "--resume", str(out), "-q"])
    assert resumed.exit_code == 1 and "cannot resume" in resumed.output, resumed.output


def a_lost_game(out: Path, engine: int) -> int:
    """A game that ``engine`` lost."""
    rows = sql(out, "SELECT game FROM results WHERE winner IS NOT NULL AND winner != ?", engine)
    assert rows, "the engine lost no game"
    return int(rows[0][0])


def test_the_untouched_folder_verifies(out: Path, other: Path) -> None:
    assert verify(out).exit_code == 0
    assert verify(other).exit_code == 0


def test_a_game_replaced_by_one_from_a_chosen_deal_is_caught(out: Path, other: Path) -> None:
    """The adversary replaces a game by one dealt from another seed (a game they chose, a
    win for their engine, say), with the [Seed] header set back to the stored one: every
    move of it is legal, every score right, but its deals are not the ones the seed gives."""
    game = 0
    record = stored_record(other, game).replace(f'[Seed "{OTHER_SEED}"]', f'[Seed "{SEED}"]')
    assert record != stored_record(other, game)
    replace_game(out, game, record, other)
    assert replay_verifies(out / RECORDS_NAME)  # the records alone do not tell
    result = verify(out)
    assert result.exit_code == 1, result.output
    said = [line for line in result.stdout.splitlines() if line.startswith(f"game {game + 1}: ")]
    assert said, result.stdout
    assert all("its record's" in line and "seed" in line for line in said), said
    assert_caught(out, said[0])


@pytest.mark.parametrize(("header", "value"), [("Seed", "99"), ("Key", "7")])
def test_a_changed_seed_or_key_header_is_caught(out: Path, header: str, value: str) -> None:
    """The record's [Seed] or [Key] header changed, in the store and the records file alike:
    whoever replays the game from its header gets other deals than were played."""
    game = 1
    record = stored_record(out, game)
    [(seed, key)] = sql(out, "SELECT seed, key FROM games WHERE game = ?", game)
    stored = {"Seed": str(seed), "Key": str(key)}[header]
    assert f'[{header} "{stored}"]' in record
    tampered = record.replace(f'[{header} "{stored}"]', f'[{header} "{value}"]')
    sql(out, "UPDATE results SET record = ? WHERE game = ?", tampered, game)
    rewrite_records_file(out)
    assert replay_verifies(out / RECORDS_NAME)
    assert_caught(
        out,
        f"game {game + 1}: its record's [{header}] is {value!r}, but the store schedules"
        f" {stored!r}",
    )


def test_a_game_re_dealt_in_the_store_schedule_is_caught(out: Path, other: Path) -> None:
    """The adversary goes further: the other seed's game whole, its header untouched, and the
    store's schedule changed to that seed, so that record, result and schedule all agree. The
    stored settings still give the tournament's seed."""
    game = 0
    replace_game(out, game, stored_record(other, game), other)
    sql(out, "UPDATE games SET seed = ? WHERE game = ?", str(OTHER_SEED), game)
    assert replay_verifies(out / RECORDS_NAME)
    [(key,)] = sql(out, "SELECT key FROM games WHERE game = ?", game)
    seats = ", ".join(NAMES)  # game 1 seats the engines in config order
    assert_caught(
        out,
        f"game {game + 1}: the store schedules it with seed '{OTHER_SEED}', key {key}, seats"
        f" {seats}, but its settings give seed '{SEED}', key {key}, seats {seats}",
    )


def delete_game(out: Path, game: int) -> None:
    """Remove ``game`` from the store (schedule, result, faults) and from the records file,
    which still verifies; the integrity check must name the missing game."""
    sql(out, "DELETE FROM faults WHERE game = ?", game)
    sql(out, "DELETE FROM results WHERE game = ?", game)
    sql(out, "DELETE FROM games WHERE game = ?", game)
    rewrite_records_file(out)
    assert replay_verifies(out / RECORDS_NAME)
    assert_caught(
        out, f"game {game + 1}: its settings schedule it, but the store holds no such game"
    )


def test_a_lost_game_deleted_from_the_folder_is_caught(out: Path) -> None:
    """A game its engine lost, removed from the store (schedule and result) and from the
    records file: the standings would count one loss fewer."""
    game = a_lost_game(out, engine=1)
    delete_game(out, game)
    assert f"{out}: the store and its records disagree (1 difference)" in verify(out).output


@pytest.mark.parametrize("where", ["appended", "instead of another"])
def test_a_records_file_holding_a_game_twice_is_caught(out: Path, where: str) -> None:
    """A won game copied again into the records file, at its end or in the place of another
    game: a count from the records file would give its winner one win more."""
    path = out / RECORDS_NAME
    rows = sql(out, "SELECT record FROM results ORDER BY game")
    first = rows[0][0]
    texts = [first, *(r[0] for r in rows[1:])]
    texts = [*texts, first] if where == "appended" else [first, first, *texts[2:]]
    path.write_text("".join(texts))
    assert replay_verifies(path)
    assert_caught(out, f"game 1: {RECORDS_NAME} holds it twice")


def test_a_forged_game_added_to_the_records_file_is_caught(out: Path, other: Path) -> None:
    """A game that was never played, appended to the records file under a number the
    schedule does not have, and once more with no number at all."""
    path = out / RECORDS_NAME
    honest = path.read_text()
    forged = stored_record(other, 0).replace('[Game "1"]', '[Game "9"]')
    path.write_text(honest + forged)
    assert replay_verifies(path)
    result = verify(out)
    assert result.exit_code == 1, result.output
    assert "game 9: games.gin holds it (line" in result.stdout, result.stdout
    assert f"{out}: the store and its records disagree (1 difference)" in result.output
    path.write_text(honest + forged.replace('[Game "9"]\n', ""))
    result = verify(out)
    assert result.exit_code == 1, result.output
    assert "games.gin holds a game at line" in result.stdout, result.stdout
    assert "with no Game header" in result.stdout


def test_the_last_game_deleted_from_the_folder_is_caught(out: Path) -> None:
    """The schedule's last game removed from the store and the records file: the stored
    schedule is then one game short at its end, where no gap shows."""
    [(last,)] = sql(out, "SELECT MAX(game) FROM games")
    delete_game(out, last)


def test_a_game_cut_short_before_the_last_one_is_caught(out: Path) -> None:
    """An interrupted append can only cut the records file's last game: a game cut short
    with whole games after it is an edit, not an interruption (it hides the game's end)."""
    rows = sql(out, "SELECT record FROM results ORDER BY game")
    first, *rest = (str(text) for (text,) in rows)
    assert rest, "the tournament has one game only"
    cut = first[: first.rindex("\nend ") + 1]  # without its end line
    (out / RECORDS_NAME).write_text(cut + "".join(rest))
    result = verify(out)
    assert result.exit_code == 1, result.output
    assert any(line.startswith("game 1: ") for line in result.stdout.splitlines()), result.stdout
    assert "was cut off by an interrupted append" not in result.stdout


def test_a_record_naming_the_engines_the_other_way_round_is_caught(out: Path) -> None:
    """Game 1's record, in the store and in the records file, with its Player headers
    swapped: every move still verifies, but the record now credits each engine with the
    other's play."""
    lines = stored_record(out, 0).splitlines(keepends=True)
    at = [i for p in (0, 1) for i, line in enumerate(lines) if line.startswith(f"[Player{p} ")]
    names = [lines[i].split(" ", 1)[1] for i in at]  # '"Simple"]\n'
    assert names[0] != names[1]
    lines[at[0]], lines[at[1]] = f"[Player0 {names[1]}", f"[Player1 {names[0]}"
    sql(out, "UPDATE results SET record = ? WHERE game = 0", "".join(lines))
    rewrite_records_file(out)
    assert replay_verifies(out / RECORDS_NAME)
    shown = [name.strip()[:-1] for name in names]  # '"Simple"'
    assert_caught(
        out,
        f"game 1: its record's [Player0] is '{shown[1][1:-1]}', but the store schedules"
        f" '{shown[0][1:-1]}'",
    )
