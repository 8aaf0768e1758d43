"""The referee's outputs never harm what their paths name, and what it keeps is bounded.

Every output (``--record``, ``--debug-log``, ``--html``, ``--stderr-dir``, a tournament's
folder) is a regular file, or a new one in an existing folder, or (for a folder) a folder: a
device node, a FIFO, a socket, a symbolic link or a folder in place of a file is refused when
the command line is read, before any engine starts, and is left exactly as it was. The device
nodes here are the tests' own, made in ``tmp_path`` (root only: CI runs as root); no test
points an output at a device of the machine's.
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from referee import outputs
from referee.cli import cli
from referee.scheduling.seats import DebugLog

ROOT = Path(__file__).resolve().parents[2]
REFEREE = [sys.executable, "-c", "from referee.cli import main; main()"]
ROOT_ONLY = pytest.mark.skipif(
    os.geteuid() != 0, reason="device nodes (mknod) and small disks (mount) need root"
)

MARKED_ENGINE = """
import os, sys
from engines.random_engine import RandomEngine

open(os.environ["MARK"], "w").close()  # this engine was started
engine = RandomEngine()
for line in sys.stdin:
    if not engine.handle(line, sys.stdout):
        break
"""


def full_device(path: Path) -> Path:
    """A character device node like the machine's /dev/full (1, 7), of the test's own."""
    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 7))
    path.chmod(0o666)  # whatever the umask
    return path


def state(path: Path) -> tuple[object, ...]:
    """What a test checks is unchanged: the type, mode, device, link target, contents."""
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        return ("link", os.readlink(path), state(path.resolve()))
    if stat.S_ISDIR(st.st_mode):
        return ("folder", st.st_mode, sorted((p.name, p.read_bytes()) for p in path.iterdir()))
    if stat.S_ISREG(st.st_mode):
        return ("file", st.st_mode, path.read_bytes())
    return ("other", st.st_mode, st.st_rdev)


@pytest.fixture(scope="module")
def record_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("record") / "games.gin"
    result = CliRunner().invoke(
        cli, ["match", "simple", "random", "--games", "1", "--seed", "2", "-q", "--record",
              str(path)],
    )
    assert result.exit_code == 0, result.output
    return path


def run_with_output(
    tmp_path: Path, command: str, option: str, target: Path, record: Path
) -> tuple[int, str, bool]:
    """Run ``command`` (match, tournament or replay) with ``option target``; its exit code,
    output, and whether any engine was started."""
    mark = tmp_path / "started"
    script = tmp_path / "marked.py"
    script.write_text(MARKED_ENGINE)
    env = ["--env", f"1:PYTHONPATH={ROOT}", "--env", f"1:MARK={mark}"]
    if command == "match":
        args = ["match", f"{sys.executable} {script}", "random", "--games", "1", "--seed", "1",
                "--no-sandbox", "-q", *env, option, str(target)]
    elif command == "tournament":
        config = tmp_path / "cup.toml"
        folder = target if option == "CONFIG's output" else tmp_path / "cup"
        config.write_text(
            f'games = 1\nseed = 1\nsandbox = "off"\noutput = "{folder}"\n'
            f'[[engines]]\nname = "M"\ncommand = ["{sys.executable}", "{script}"]\n'
            f'env = {{ PYTHONPATH = "{ROOT}", MARK = "{mark}" }}\n'
            '[[engines]]\nname = "R"\ncommand = "random"\n'
        )
        given = [] if option == "CONFIG's output" else [option, str(target)]
        args = ["tournament", str(config), "-q", *given]
    else:
        args = ["replay", str(record), option, str(target)]
    result = CliRunner().invoke(cli, args)
    return result.exit_code, result.output, mark.exists()


FILE_OPTIONS = [
    ("match", "--record"), ("match", "--debug-log"), ("match", "--html"),
    ("tournament", "--html"), ("replay", "--html"),
]
FOLDER_OPTIONS = [("match", "--stderr-dir"), ("tournament", "--output"),
                  ("tournament", "--stderr-dir"), ("tournament", "CONFIG's output")]


def make(kind: str, path: Path) -> tuple[Path, str]:
    """A thing of ``kind`` at ``path`` and the words the refusal names it by."""
    if kind == "device":
        return full_device(path), "a character device"
    if kind == "link":
        precious = path.with_name("precious.txt")
        precious.write_bytes(b"keep me\n")
        precious.chmod(0o640)
        path.symlink_to(precious)
        return path, "a symbolic link"
    if kind == "folder":
        path.mkdir()
        (path / "inside.txt").write_bytes(b"keep me too\n")
        return path, "a folder"
    path.write_bytes(b"a file\n")  # "file": where a folder is wanted
    return path, "a regular file, not a folder"


CASES = (
    [pytest.param(c, o, k, marks=ROOT_ONLY if k == "device" else (), id=f"{c}{o}-{k}")
     for c, o in FILE_OPTIONS for k in ("device", "link", "folder")]
    + [pytest.param(c, o, k, marks=ROOT_ONLY if k == "device" else (), id=f"{c}{o}-{k}")
       for c, o in FOLDER_OPTIONS for k in ("device", "link", "file")]
)


@pytest.mark.parametrize(("command", "option", "kind"), CASES)
def test_an_output_path_that_is_not_what_it_should_be_is_left_alone_and_refused(
    tmp_path: Path, record_file: Path, command: str, option: str, kind: str
) -> None:
    target, words = make(kind, tmp_path / "target")
    before = state(target)
    code, out, started = run_with_output(tmp_path, command, option, target, record_file)
    assert state(target) == before  # type, mode, device, link and contents unchanged
    if option == "CONFIG's output":  # the config is refused as it is read
        assert code == 2 and "Invalid value for CONFIG" in out, out
        assert f"output {target} is {words}" in out, out
    else:
        assert code == 2 and f"Invalid value for '{option}" in out, out
        assert f"{target}: {words}" in out, out
    assert not started, "an engine was started before the output path was refused"
    assert "Traceback" not in out and "Rank" not in out


@pytest.mark.parametrize(
    ("command", "option"),
    [("match", "--html"), ("match", "--debug-log"), ("match", "--record"),
     ("tournament", "--html"), ("replay", "--html")],
)
def test_an_output_file_in_a_folder_that_does_not_exist_is_refused_before_game_1(
    tmp_path: Path, record_file: Path, command: str, option: str
) -> None:
    target = tmp_path / "no-such-folder" / "out"
    code, out, started = run_with_output(tmp_path, command, option, target, record_file)
    assert code == 2, out
    assert f"the folder {target.parent} does not exist" in out, out
    assert not started and "Rank" not in out
    assert not target.parent.exists() and not (tmp_path / "cup").exists()


def test_check_file_refuses_every_kind_of_thing_but_a_regular_file(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    sock_path = tmp_path / "sock"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(sock_path))
    regular = tmp_path / "regular"
    regular.write_text("x")
    (tmp_path / "dangling").symlink_to(tmp_path / "nothing")
    refused = {
        fifo: "a FIFO", sock_path: "a socket", tmp_path: "a folder",
        tmp_path / "dangling": "a symbolic link", regular / "sub": "a folder on its path",
        tmp_path / "none" / "x": "does not exist",
    }
    try:
        for path, words in refused.items():
            with pytest.raises(outputs.UnsafeOutput, match=words):
                outputs.check_file(path)
            with pytest.raises(OSError):  # never opened (a FIFO would block the open)
                outputs.open_regular(path, os.O_WRONLY | os.O_CREAT)
        with pytest.raises(outputs.UnsafeOutput, match="a FIFO"):
            outputs.write_file(fifo, b"page")
        assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and stat.S_ISSOCK(os.lstat(sock_path).st_mode)
        outputs.check_file(regular)
        outputs.check_file(tmp_path / "new")
        outputs.write_file(regular, b"page")  # a regular file is replaced whole
        assert regular.read_bytes() == b"page"
    finally:
        sock.close()


@ROOT_ONLY
def test_a_device_node_is_never_opened_for_a_debug_log_or_a_stderr_file(tmp_path: Path) -> None:
    node = full_device(tmp_path / "full")
    with pytest.raises(outputs.UnsafeOutput, match="a character device"):
        DebugLog(node)
    assert stat.S_IMODE(os.lstat(node).st_mode) == 0o666  # not chmodded to 0600


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 64 kB tmpfs (root only), nearly filled: a page of 100 kB cannot be written there."""
    folder = tmp_path / "small"
    folder.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)],
        capture_output=True, check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


@pytest.mark.parametrize("command", ["match", "tournament"])
def test_an_output_that_fails_at_the_end_still_leaves_the_standings_printed(
    tmp_path: Path, small_disk: Path, command: str
) -> None:
    page = small_disk / "report.html"
    record = tmp_path / "games.gin"
    if command == "match":
        args = ["match", "simple", "random", "--games", "2", "--seed", "1", "-q",
                "--record", str(record), "--html", str(page)]
    else:
        config = tmp_path / "cup.toml"
        config.write_text(
            f'games = 2\nseed = 1\noutput = "{tmp_path / "cup"}"\n'
            '[[engines]]\nname = "S"\ncommand = "simple"\n'
            '[[engines]]\nname = "R"\ncommand = "random"\n'
        )
        args = ["tournament", str(config), "-q", "--html", str(page)]
        record = tmp_path / "cup" / "games.gin"
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1, result.output
    assert f"cannot write {page}: No space left on device" in result.output, result.output
    rows = [x.split() for x in result.output.splitlines() if x[:1].isdigit() and "%" in x]
    assert [row[2] for row in rows] == ["2", "2"], result.output  # the standings: 2 games
    assert record.read_text().count("[Game ") == 2  # the other output is written
    assert not page.exists() and not list(small_disk.glob(".*.tmp"))  # no half page left
    assert "Traceback" not in result.output


@ROOT_ONLY
@pytest.mark.parametrize(
    "args", [["stats", "RECORD"], ["stats", "RECORD", "--json"], ["replay", "--json", "RECORD"],
             ["--help"]],
    ids=["stats", "stats-json", "replay-json", "help"],
)
def test_standard_output_on_a_full_device_is_a_message_not_a_traceback(
    tmp_path: Path, record_file: Path, args: list[str]
) -> None:
    node = full_device(tmp_path / "full")
    with open(node, "wb") as out:  # written in place, as a shell's ">" does
        done = subprocess.run(
            [*REFEREE, *(str(record_file) if a == "RECORD" else a for a in args)],
            stdout=out, stderr=subprocess.PIPE, text=True, timeout=60, cwd=ROOT,
        )
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip().endswith(
        "Error: cannot write the standard output: No space left on device"
    ), done.stderr
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr


# -- the debug log of an engine that floods info lines ------------------------------------------
FLOOD_ENGINE = """
import sys
from engines.simple_engine import SimpleEngine

engine = SimpleEngine()
line = "info " + "x" * 3000 + "\\n"
for text in sys.stdin:
    if text.startswith("go "):
        sys.stdout.write(line * 1500)  # 4.5 MB before every decision
    if not engine.handle(text, sys.stdout):
        break
"""


def test_an_info_flood_keeps_the_debug_log_bounded(tmp_path: Path) -> None:
    """An engine writes 4.5 MB of info lines before each move; the debug log keeps at most
    1 MiB of its lines a game (``referee.scheduling.seats.ENGINE_LOG_LIMIT``, as the README says),
    then only the line before each of the referee's (its move) after a marker saying how many
    were left out."""
    script = tmp_path / "flood.py"
    script.write_text(FLOOD_ENGINE)
    log = tmp_path / "debug.log"
    result = CliRunner().invoke(
        cli,
        ["match", f"{sys.executable} {script}", "simple", "--games", "1", "--seed", "4",
         "--rule", "target=10", "--tc", "inf", "--env", f"1:PYTHONPATH={ROOT}",
         "--name", "1=Flood", "--debug-log", str(log), "-q"],
    )
    assert result.exit_code == 0, result.output
    lines = log.read_text().splitlines()
    flood = [x for x in lines if " Flood < " in x]
    decisions = sum(" Flood > go " in x for x in lines)
    assert decisions >= 2
    kept_info = sum(len(x) for x in flood if " Flood < info " in x)
    assert kept_info <= (1 << 20) + 2100, kept_info  # a bound, not 3 MB a decision
    markers = [i for i, x in enumerate(lines) if "Flood < [referee: " in x and "left out" in x]
    assert len(markers) >= decisions - 1
    for i in markers:  # after each marker, the move the referee read
        assert " Flood < move " in lines[i + 1], lines[i + 1][:200]


def test_the_debug_log_limit_is_per_engine_and_per_game(tmp_path: Path) -> None:
    log = DebugLog(tmp_path / "debug.log", engine_limit=10_000)
    flood, quiet = log.hook("w", "Flood"), log.hook("w", "Quiet")
    for game in (1, 2):
        flood("to", "go")
        for _ in range(1000):
            flood("from", "info " + "x" * 100)
        flood("from", "move stock")
        quiet("to", "go")
        quiet("from", "move pass")
        log.flush("w", f"game {game}")
    text = (tmp_path / "debug.log").read_text()
    assert len(text) < 2 * 12_000  # not 2 x 105 kB
    for game in text.split("# game ")[1:]:
        info = sum(" Flood < info " in x for x in game.splitlines())
        assert 80 <= info <= 100, info  # each game has its own limit
        assert "Flood < [referee: " in game and " Flood < move stock" in game
        assert " Quiet < move pass" in game and game.count(" > go") == 2
