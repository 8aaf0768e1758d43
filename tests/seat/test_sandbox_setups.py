"""Engines set up the ordinary way pass ``ginref check`` in the default sandbox, with nothing
given on the command line: a version manager's shim on PATH, a script directly in /tmp, a
runtime under the user's home started by a wrapper, an engine's own venv and data beside it,
Java, C. An engine that needs a folder the sandbox cannot know of is told which, and the
``--read`` that shows it. /dev/shm holds no more than the disk limit, and an engine that
closes its stdout or stdin is ruled a crash at once, as without the sandbox.

Where bubblewrap (or javac, cc) is missing these tests skip, saying why; under CI=true they
run, and fail instead.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from helpers import killed_by_a_limit

from referee.seat import _sandbox_view as sandbox_view
from referee.seat import sandbox
from referee.seat.process import EngineProcess
from referee.seat.sandbox import Limits, MiB, Policy, support

ROOT = Path(__file__).resolve().parents[2]
ENGINES = ROOT / "tests" / "programs"
GINREF = str(Path(sys.executable).with_name("ginref"))
CI = os.environ.get("CI") == "true"
SYSTEM_PATH = "/usr/bin:/bin"

needs_sandbox = pytest.mark.skipif(
    not support().available and not CI,
    reason=f"the sandbox cannot run here: {support().reason}",
)
pytestmark = needs_sandbox


def _needs(program: str) -> pytest.MarkDecorator:
    return pytest.mark.skipif(
        shutil.which(program) is None and not CI, reason=f"{program} is not installed"
    )


@pytest.fixture(autouse=True)
def _sandbox_in_ci() -> None:
    if CI:
        assert support().available, f"CI must run the sandbox: {support().reason}"


def _minimal_bot() -> str:
    """The SDK-free bot of spec/PROTOCOL.md section 12: it runs on any Python."""
    text = (ROOT / "spec" / "PROTOCOL.md").read_text()
    block = text.split("<!-- minimal-bot:begin -->", 1)[1].split("<!-- minimal-bot:end -->")[0]
    return block.split("```python\n", 1)[1].split("```", 1)[0]


def _check(
    engine: str, cwd: Path, *options: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``ginref check ENGINE`` in the default sandbox, with short timeouts (a failing check
    stops waiting early)."""
    argv = [GINREF, "check", engine, "--move-timeout", "5", "--startup-timeout", "10", *options]
    return subprocess.run(
        argv,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _passes(done: subprocess.CompletedProcess[str]) -> None:
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "all 20 checks passed" in done.stdout, output
    assert "not isolated" not in output


def _venv(path: Path) -> Path:
    """A virtual environment (no pip) of the Python running the tests; its ``python``."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    return path / "bin" / "python"


def _script(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


def _pyenv_like(root: Path) -> Path:
    """A version manager laid out as pyenv is: ``shims/python3`` execs
    ``$PYENV_ROOT/libexec/pyenv exec python3``, which runs the ``python3`` of the version
    ``$PYENV_ROOT/version`` names, in ``versions/`` (here a virtual environment)."""
    _venv(root / "versions" / "3-test")
    (root / "version").write_text("3-test\n")
    _script(
        root / "libexec" / "pyenv",
        '#!/bin/sh\n[ "$1" = exec ] || exit 2\nprogram=$2\nshift 2\n'
        'exec "$PYENV_ROOT/versions/$(cat "$PYENV_ROOT/version")/bin/$program" "$@"\n',
    )
    _script(
        root / "shims" / "python3",
        '#!/usr/bin/env bash\nset -e\nprogram="${0##*/}"\n'
        f'export PYENV_ROOT="{root}"\nexec "{root}/libexec/pyenv" exec "$program" "$@"\n',
    )
    return root / "shims"


def _real_pyenv_shims() -> list[str]:
    root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    shims = root / "shims"
    return [str(shims)] if (shims / "python3").exists() and (root / "libexec").is_dir() else []


# ------------------------------------------------------------------------------ setups


@pytest.mark.parametrize("shims", ["fake", *_real_pyenv_shims()])
def test_a_version_manager_shim_found_by_env(tmp_path: Path, shims: str) -> None:
    """A ``#!/usr/bin/env python3`` bot, where ``python3`` on PATH is a version manager's
    shim (a pyenv-like one made here, and the machine's own pyenv where it has one): the
    shim's root, its ``libexec`` and ``versions``, are shown."""
    if shims == "fake":
        shims = str(_pyenv_like(tmp_path / "pyenv"))
    bot = _script(tmp_path / "bot" / "bot.py", "#!/usr/bin/env python3\n" + _minimal_bot())
    done = _check(str(bot), tmp_path / "bot", env={"PATH": f"{shims}:{SYSTEM_PATH}"})
    _passes(done)


def test_a_script_directly_in_tmp(tmp_path: Path) -> None:
    """``python3 /tmp/bot.py``: the file, named on the command line, is shown by itself in
    the engine's private /tmp."""
    bot = Path("/tmp") / f"ginref-test-bot-{uuid.uuid4().hex}.py"
    bot.write_text(_minimal_bot())
    try:
        _passes(_check(f"{sys.executable} {bot}", tmp_path))
    finally:
        bot.unlink()


@pytest.mark.parametrize("home_word", ["$HOME", "~"])
def test_a_wrapper_starting_a_runtime_under_home(tmp_path: Path, home_word: str) -> None:
    """A wrapper script that starts a Python installed under the user's home (as nvm,
    conda, asdf or a venv there would be), naming it by ``$HOME/...`` or ``~/...``: inside,
    the engine's home leads there too."""
    home = tmp_path / "home"
    _venv(home / ".runtimes" / "bot")
    (tmp_path / "bot").mkdir()
    (tmp_path / "bot" / "bot.py").write_text(_minimal_bot())
    wrapper = _script(
        tmp_path / "bot" / "run.sh",
        f'#!/bin/sh\nexec {home_word}/.runtimes/bot/bin/python "$(dirname "$0")/bot.py"\n',
    )
    (tmp_path / "elsewhere").mkdir()
    _passes(_check(str(wrapper), tmp_path / "elsewhere", env={"HOME": str(home)}))


def test_an_engines_own_venv_and_data_beside_it(tmp_path: Path) -> None:
    python = _venv(tmp_path / "bot" / ".venv")
    (tmp_path / "bot" / "weights.txt").write_text("1 2 3\n")
    (tmp_path / "bot" / "bot.py").write_text(
        "import pathlib\n(pathlib.Path(__file__).parent / 'weights.txt').read_text()\n"
        + _minimal_bot()
    )
    (tmp_path / "elsewhere").mkdir()
    _passes(_check(f"{python} {tmp_path / 'bot' / 'bot.py'}", tmp_path / "elsewhere"))


@_needs("javac")
def test_java(tmp_path: Path) -> None:
    classes = tmp_path / "classes"
    subprocess.run(["javac", "-d", str(classes), str(ENGINES / "Minimal.java")], check=True)
    _passes(_check(f"java -cp {classes} Minimal", tmp_path))


@_needs("cc")
def test_c(tmp_path: Path) -> None:
    binary = tmp_path / "bot" / "minimal"
    binary.parent.mkdir()
    subprocess.run(["cc", "-O", "-o", str(binary), str(ENGINES / "minimal.c")], check=True)
    _passes(_check(str(binary), tmp_path))


# ------------------------------------------------------------------------------ what it hides


def test_a_hidden_folder_is_named_with_the_option_that_shows_it(tmp_path: Path) -> None:
    """A bot that opens a data file its command does not name (here given by a variable):
    the check and the match say that the sandbox hides it, and which ``--read`` (or config
    ``read``) shows it; with that option it passes."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "weights.txt").write_text("1 2 3\n")
    (tmp_path / "bot").mkdir()
    (tmp_path / "bot" / "bot.py").write_text(
        "import os\nopen(os.environ['BOT_DATA']).read()\n" + _minimal_bot()
    )
    engine = f"{sys.executable} bot.py"
    cwd = tmp_path / "bot"
    weights = f"BOT_DATA={data / 'weights.txt'}"
    hint = (
        f"the sandbox hides {data / 'weights.txt'}: to let the engine read it, add"
        f' --read {data} (in a tournament config: read = ["{data}"])'
    )

    refused = _check(engine, cwd, "--env", weights)
    assert refused.returncode == 1
    assert "FAIL handshake" in refused.stdout and hint in refused.stdout, refused.stdout
    match = subprocess.run(
        [GINREF, "match", engine, "random", "--games", "1", "-q", "--env", f"1:{weights}"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert match.returncode == 1 and hint in match.stderr, match.stderr

    _passes(_check(engine, cwd, "--env", weights, "--read", str(data)))


def test_only_a_path_the_sandbox_hides_is_blamed_on_it(tmp_path: Path) -> None:
    """Only a path that exists here but that the sandbox does not show is blamed on it (a
    file, or a program found on the engine's PATH): never one that does not exist on this
    machine, one the engine can read, or one of the referee's own files, covered on purpose."""
    (tmp_path / "bot").mkdir()
    (tmp_path / "bot" / "bot.py").write_text(_minimal_bot())
    (tmp_path / "bot" / "rec.gin").write_text("")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "w.txt").write_text("")
    _script(tmp_path / "tools" / "mytool", "#!/bin/sh\n")  # on PATH, in the host's /tmp
    jail = sandbox.prepare(
        [sys.executable, "bot.py"],
        str(tmp_path / "bot"),
        {"PATH": f"{tmp_path / 'tools'}:{SYSTEM_PATH}"},
        Policy(hidden=(str(tmp_path / "bot" / "rec.gin"),)),
    )
    assert jail is not None
    try:
        def note(path: Path) -> str:
            return jail.blocked_note(f"FileNotFoundError: No such file or directory: '{path}'")

        assert note(tmp_path / "missing.txt") == ""  # not on this machine at all
        assert note(tmp_path / "bot" / "bot.py") == ""  # in its working directory
        assert note(tmp_path / "bot" / "rec.gin") == ""  # the referee's record, covered on purpose
        assert jail.blocked_note(f"{tmp_path / 'data' / 'w.txt'}: Permission denied") == ""
        assert f"--read {tmp_path / 'data'} " in note(tmp_path / "data" / "w.txt")
        # A program its wrapper runs by name, found on its PATH in a folder it does not see.
        shell_said = jail.blocked_note("sh: 1: exec: mytool: not found")
        assert f"the sandbox hides {tmp_path / 'tools' / 'mytool'}: " in shell_said
        assert f"--read {tmp_path / 'tools'} " in shell_said
        assert jail.blocked_note("sh: 1: exec: nosuchtool: not found") == ""
    finally:
        jail.release()


def test_dev_shm_holds_no_more_than_the_disk_limit() -> None:
    script = (
        "import sys; print('ready', flush=True); sys.stdin.readline()\n"
        "open('/dev/shm/big', 'wb').write(b'1' * (2 << 20)); print('wrote', flush=True)\n"
        "sys.stdin.readline()"
    )
    policy = Policy(limits=Limits(disk=MiB), workdir=False)
    reason = killed_by_a_limit(script, policy)
    assert reason.startswith("disk limit 1 MiB: "), reason


# ------------------------------------------------------------------------------ closed pipes


@pytest.mark.parametrize("pipe", ["stdout", "stdin"])
def test_a_closed_pipe_is_a_crash_at_once(tmp_path: Path, pipe: str) -> None:
    """An engine that closes its stdout at a ``go`` (or its stdin after a move) is ruled a
    ``crash``, as without the sandbox, not a ``timeout`` once its move's time is out."""
    engine = f"{sys.executable} {ENGINES / 'closes_pipe.py'} {pipe}"
    done = subprocess.run(
        [GINREF, "match", engine, "random", "--games", "1", "--seed", "1", "--tc", "inf",
         "--move-timeout", "10", "--json", "-q"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {row["name"]: row for row in json.loads(done.stdout)["engines"]}
    assert rows["Closer"]["faults"] == {"crash": 1}, rows["Closer"]


# ------------------------------------------------------------------------------ kept out


_CONNECT = """\
import socket, sys
client = socket.socket(socket.AF_UNIX)
try:
    client.connect(sys.argv[1])
    print("connected", flush=True)
except OSError as exc:
    print("refused:", exc.strerror, flush=True)
"""


def test_a_socket_in_a_folder_it_reads_is_out_of_reach(tmp_path: Path) -> None:
    """A Unix socket in the engine's working directory (an agent's, a server's): a
    read-only view would not stop a ``connect()``, so the sandbox covers it up."""
    listener = socket.socket(socket.AF_UNIX)
    path = tmp_path / "agent.sock"
    listener.bind(str(path))
    listener.listen()
    try:
        process = EngineProcess.start(
            [sys.executable, "-c", _CONNECT, str(path)], cwd=str(tmp_path), sandbox=Policy()
        )
        try:
            said = process.read_line(30)
        finally:
            process.close()
    finally:
        listener.close()
    assert said.startswith("refused"), said


def test_what_a_wrapper_names_is_shown_but_never_a_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The paths a wrapper script names in the user's home are shown, with their installs;
    the user's keys, the home itself and /etc are not, nor a folder of the referee's."""
    home = tmp_path / "home"
    for folder in (".runtimes/node/bin", ".runtimes/node/lib", ".ssh", "data", "out"):
        (home / folder).mkdir(parents=True)
    _script(home / ".runtimes" / "node" / "bin" / "node", "#!/bin/sh\n")
    (home / ".ssh" / "id_ed25519").write_text("key\n")
    (home / "data" / "bot.js").write_text("")
    wrapper = _script(
        tmp_path / "bot" / "run.sh",
        "#!/bin/sh\ncat ~/.ssh/id_ed25519 /etc/shadow $HOME/out/x ~ >/dev/null\n"
        'exec "$HOME/.runtimes/node/bin/node" ${HOME}/data/bot.js\n',
    )
    monkeypatch.setenv("HOME", str(home))
    shown = sandbox_view.inferred(
        [str(wrapper)], str(tmp_path / "bot"), SYSTEM_PATH, hidden=[str(home / "out")]
    )
    assert shown == [str(home / ".runtimes" / "node"), str(home / "data")]
