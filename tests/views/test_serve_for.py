"""``--serve-for SECONDS``: the live page of ``--serve`` stays up that long after the run, then
the command exits as it would without ``--serve``; 0 ends it with the run (for scripts).

Every process a test starts dies with it (its own session, killed with its group at the end,
and with the test run if that dies).
"""

from __future__ import annotations

import contextlib
import ctypes
import http.client
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from referee.cli import cli

ROOT = Path(__file__).resolve().parents[2]
GINREF = [sys.executable, "-c", "import sys; from referee.__main__ import main; sys.exit(main())"]
MATCH = ["match", "random", "simple", "--games", "2", "--seed", "5", "--tc", "inf",
         "--rule", "target=1", "--no-sandbox", "--serve", "127.0.0.1:0"]
URL_LINE = re.compile(r"Live page: (http://\S+)")
STAYS = "stays up"


def _child_setup() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Any]:
    started: list[subprocess.Popen[bytes]] = []

    def run(*args: str) -> tuple[subprocess.Popen[bytes], Path]:
        err = tmp_path / f"stderr-{len(started)}"
        with err.open("wb") as e:
            process = subprocess.Popen(
                [*GINREF, *args], cwd=tmp_path, stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=e,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
                start_new_session=True, preexec_fn=_child_setup,
            )
        started.append(process)
        return process, err

    try:
        yield run
    finally:
        for p in started:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def _state(url: str) -> dict[str, Any]:
    host, port = url[len("http://"):].rstrip("/").rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        conn.request("GET", "/state")
        data: dict[str, Any] = json.loads(conn.getresponse().read())
        return data
    finally:
        conn.close()


def test_serve_for_zero_ends_the_command_with_the_run(start: Any) -> None:
    """A script's ``--serve 0 --serve-for 0``: the page is served during the run, and the
    command ends with it, exit 0, without waiting for a Ctrl-C."""
    process, err = start(*MATCH, "--serve-for", "0")
    assert process.wait(timeout=60) == 0, err.read_text()
    text = err.read_text()
    assert URL_LINE.search(text), text
    assert STAYS not in text, text


def test_serve_for_keeps_the_page_up_then_exits_0(start: Any, tmp_path: Path) -> None:
    """``--serve-for 3``: after the last game the page still answers with the final state,
    and the command then exits 0 by itself."""
    toml = tmp_path / "cup.toml"
    toml.write_text(
        'games = 2\nseed = 11\ntc = "inf"\nsandbox = "off"\noutput = "cup"\n[rules]\ntarget = 1\n'
        '[[engines]]\nname = "Random"\ncommand = "random"\n'
        '[[engines]]\nname = "Simple"\ncommand = "simple"\n'
    )
    process, err = start("tournament", str(toml), "--serve", "127.0.0.1:0", "--serve-for", "3")
    deadline = time.monotonic() + 60
    while STAYS not in (text := err.read_text()):
        assert process.poll() is None, text
        assert time.monotonic() < deadline, text
        time.sleep(0.05)
    url = URL_LINE.search(text)
    assert url is not None, text
    state = _state(url.group(1))
    assert state["over"] and state["played"] == 2
    assert process.poll() is None, "the page stays up for the seconds asked"
    assert process.wait(timeout=60) == 0, err.read_text()


def test_ctrl_c_during_serve_for_ends_at_once_with_130(start: Any) -> None:
    process, err = start(*MATCH, "--serve-for", "600")
    deadline = time.monotonic() + 60
    while STAYS not in (text := err.read_text()):
        assert process.poll() is None, text
        assert time.monotonic() < deadline, text
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=10) == 130, err.read_text()


@pytest.mark.parametrize("command", [["match", "random", "simple"], ["tournament", "x.toml"]])
def test_serve_for_needs_serve(command: list[str]) -> None:
    result = CliRunner().invoke(cli, [*command, "--serve-for", "5"])
    assert result.exit_code == 2, result.output
    assert "--serve-for" in result.output and "--serve too" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("value", ["-1", "nan", "inf", "soon"])
def test_serve_for_refuses_what_is_not_a_duration(value: str) -> None:
    result = CliRunner().invoke(
        cli, ["match", "random", "simple", "--serve", "0", "--serve-for", value]
    )
    assert result.exit_code == 2, result.output
    assert "--serve-for" in result.output
