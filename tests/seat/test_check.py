"""``ginref check``: the sample engines pass the whole battery, and each deliberately broken
engine in tests/programs/check_*.py fails the check named for what it breaks."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from referee.cli import cli
from referee.seat.check import CHECKS, run_checks
from referee.seat.player import EngineSpec

ENGINES = Path(__file__).parents[1] / "programs"
NAMES = [name for name, _ in CHECKS]
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def command(script: str) -> str:
    return shlex.join([sys.executable, str(ENGINES / f"check_{script}.py")])


def check(engine: str, *args: str) -> tuple[int, dict[str, str], str]:
    """Run ``ginref check``: the exit code, each check's output line by name, and the output."""
    result = CliRunner().invoke(cli, ["check", engine, *args])
    lines: dict[str, str] = {}
    for line in result.output.splitlines():
        verdict, _, rest = line.partition(" ")
        if verdict in ("PASS", "FAIL"):
            name = rest.split(":")[0].split(" ")[0]
            lines[name] = line
    return result.exit_code, lines, result.output


def failed(lines: dict[str, str]) -> set[str]:
    return {name for name, line in lines.items() if line.startswith("FAIL")}


@pytest.mark.parametrize("engine", ["random", "simple", "expert", "camper", "js-simple"])
def test_every_sample_engine_passes(engine: str) -> None:
    if engine == "js-simple" and shutil.which("node") is None:
        if IN_CI:
            pytest.fail("node is not installed, and CI must exercise the js-simple engine")
        pytest.skip("node is not installed")
    code, lines, output = check(engine)
    assert code == 0, output
    assert list(lines) == NAMES
    assert not failed(lines), output
    assert lines["knock"].startswith("PASS knock (it knocked") or engine == "random"


def test_the_minimal_bot_of_the_spec_passes() -> None:
    code, lines, output = check(command("base"), "--move-timeout", "2")
    assert code == 0 and not failed(lines) and list(lines) == NAMES, output


# (engine script, the check it must fail, words of the reason, every check that fails or None)
BROKEN = [
    ("no_ginok", "handshake", "no ginok within", {"handshake"}),
    ("wrong_card", "discard", "is not in the player's hand", None),
    ("out_of_turn", "draw", "take is not allowed now", {
        "isready-in-play", "draw", "draw-stock-only", "stock-three", "hollywood", "advice"}),
    ("malformed", "discard", "malformed", None),
    ("taken", "pile-card", "just taken from the discard pile", {"pile-card", "advice"}),
    ("knock_limit", "oklahoma", "above the knock limit 3", {"oklahoma"}),
    ("bad_advice", "advice", "stock is not allowed now", {"advice"}),
    ("no_quit", "quit", "still running", {"quit"}),
    ("chatty", "information", "'move pass' after the information lines", {
        "unknown-lines", "information"}),
    ("double", "offer-non-dealer", "sent 'move take' after 'move pass'", None),
]


@pytest.mark.parametrize(
    ("script", "name", "reason", "all_failed"), BROKEN, ids=[b[0] for b in BROKEN]
)
def test_broken_engine_fails_the_named_check(
    script: str, name: str, reason: str, all_failed: set[str] | None
) -> None:
    startup = "1" if script == "no_ginok" else "5"
    code, lines, output = check(
        command(script), "--move-timeout", "1", "--startup-timeout", startup
    )
    assert code == 1, output
    # An engine that does not complete its handshake stops the battery at its first line.
    assert list(lines) == (["handshake"] if script == "no_ginok" else NAMES), output
    assert lines[name].startswith(f"FAIL {name}: ") and reason in lines[name], output
    if all_failed is not None:
        assert failed(lines) == all_failed, output
    if script != "no_ginok":
        assert {"handshake", "isready"}.isdisjoint(failed(lines)), output


def test_a_silent_engine_times_out_but_the_rest_is_judged() -> None:
    started = time.monotonic()
    # No margin past each decision's limit: every decision times out all the same, sooner.
    code, lines, output = check(command("silent"), "--move-timeout", "0.2", "--time-margin", "0")
    assert code == 1
    assert "timeout" in lines["offer-non-dealer"] and "FAIL" in lines["discard"], output
    decisions = {"offer-non-dealer", "offer-dealer", "draw", "discard", "advice", "information"}
    assert decisions <= failed(lines)
    assert {"handshake", "options", "isready", "quit"}.isdisjoint(failed(lines)), output
    # A guard against a check that hangs on a silent engine, not a measure of speed: about
    # 7 s with the machine busy with two matches, 37 s once at lowest priority under them.
    assert time.monotonic() - started < 120


def test_verbose_shows_the_lines_of_failing_checks_only() -> None:
    code, _, output = check(command("knock_limit"), "--verbose")
    assert code == 1
    head, _, tail = output.partition("FAIL oklahoma: ")
    assert "    > " not in head  # the passing checks before it show nothing
    shown = [line for line in tail.splitlines() if line.startswith("    ")]
    assert any(line.startswith("    > go discard") for line in shown)
    assert any(line.startswith("    < move knock Kd") for line in shown)


def test_engine_options() -> None:
    code, lines, output = check("random", "-o", "Seed=5")
    assert code == 0, output
    code, lines, output = check("random", "-o", "Nope=1")
    assert code == 1 and "no such option" in lines["options"], output
    code, lines, output = check("random", "-o", "Seed=-3")
    assert code == 1 and lines["options"].startswith("FAIL options: -o Seed=-3"), output


@pytest.mark.parametrize(
    "args", [[], ["random", "-o", "Seed"], ["random", "--move-timeout", "0"], ["  "]]
)
def test_bad_usage_exits_2(args: list[str]) -> None:
    result = CliRunner().invoke(cli, ["check", *args])
    assert result.exit_code == 2, result.output


def test_an_engine_that_cannot_start_fails_the_handshake() -> None:
    code, lines, output = check("/nonexistent/engine --flag")
    assert code == 1
    assert lines["handshake"].startswith("FAIL handshake: cannot start"), output
    assert "quit" not in lines, output  # the checks that need a running engine are not run


@pytest.mark.parametrize(
    ("script", "shown"),
    [
        ("exit 0", "exited with code 0"),
        ("echo 'fatal: no model' >&2; exit 3", "fatal: no model"),
        ("exec 0<&-; echo 'closed my input' >&2; exit 0", "closed my input"),
    ],
)
def test_an_engine_that_exits_at_once_fails_the_handshake_without_a_traceback(
    script: str, shown: str
) -> None:
    engine = shlex.join(["sh", "-c", script])
    for _ in range(3):  # whether the engine is gone before or after the gin line is sent
        result = CliRunner().invoke(cli, ["check", engine])
        assert result.exception is None or isinstance(result.exception, SystemExit)
        assert result.exit_code == 1, result.output
        assert "Traceback" not in result.output
        _, lines, output = check(engine)
        assert lines["handshake"].startswith("FAIL handshake:"), output
        assert shown in lines["handshake"] or "Broken pipe" in lines["handshake"], output
        assert "quit" not in lines, output
        assert output.splitlines()[-1].startswith("0 of 20 checks passed; the other 19"), output


def test_check_passes_env_and_time_margin_to_the_engine(tmp_path: Path) -> None:
    """An engine that starts only with its variable set; --time-margin is accepted."""
    script = tmp_path / "needs_env.sh"
    script.write_text(
        '#!/bin/sh\n[ "$GIN_MODEL" = small ] || { echo "GIN_MODEL unset" >&2; exit 2; }\n'
        f'exec {shlex.quote(sys.executable)} -m engines.random_engine\n'
    )
    script.chmod(0o755)
    root = str(Path(__file__).resolve().parents[2])
    code, lines, output = check(str(script), "--env", f"PYTHONPATH={root}")
    assert code == 1 and "GIN_MODEL unset" in lines["handshake"], output
    code, lines, output = check(
        str(script), "--env", "GIN_MODEL=small", "--env", f"PYTHONPATH={root}",
        "--time-margin", "0.05",
        # the script starts the referee's interpreter, wherever it is installed
        "--read", sys.prefix, "--read", sys.base_prefix,
    )
    assert code == 0, output


def test_run_checks_returns_results_and_leaves_no_process() -> None:
    results = run_checks(EngineSpec.parse(command("no_quit")), move_timeout=1.0, quit_grace=0.2)
    assert [r.name for r in results] == NAMES
    assert [r.name for r in results if not r.ok] == ["quit"]
    assert all(r.lines for r in results)  # each check's own transcript
    assert results[-1].lines[-1] == "> quit"
    time.sleep(0.1)
    assert not running("check_no_quit.py")


def running(marker: str) -> list[str]:
    """The pids of live processes whose command line contains ``marker``."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state != "Z":
            found.append(pid)
    return found


def test_an_engine_that_dies_within_a_check_fails_it_however_fast_it_dies(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The chatty engine exits on the unknown line of ``unknown-lines``. Whether it is already
    gone when the check sends its next line (a busy machine) or not, the check fails: the
    battery never starts a fresh engine in the middle of a check to carry on with."""
    from referee.seat import check as battery

    send = battery._Session.send

    def send_then_wait(session: battery._Session, line: str) -> None:
        send(session, line)
        if line == battery._UNKNOWN_LINE:  # the engine's death, before the next line
            deadline = time.monotonic() + 30
            while session.player.alive and time.monotonic() < deadline:
                time.sleep(0.01)
            assert not session.player.alive

    monkeypatch.setattr(battery._Session, "send", send_then_wait)
    results = {r.name: r for r in run_checks(EngineSpec.parse(command("chatty")), 1.0, 5.0)}
    assert not results["unknown-lines"].ok
    assert "exited" in results["unknown-lines"].detail, results["unknown-lines"].detail
    assert results["information"].detail.startswith("sent 'move pass' after the information")
