"""``ginref match`` with remote engines (``remote:NAME``), end to end: a real ``ginref`` listening
on an ephemeral port of 127.0.0.1, real ``gin-connect`` clients relaying the built-in engines.

A match between two remote engines writes the same record as the same engines run locally for
the same seed, but for the engines' commands; a remote engine plays a local one; a client killed
mid-game loses that game by a crash and plays the next once it is back; the refusals (a tokens
file others may read, an engine that never connects, options that cannot go together) are one
line each. Every process a test starts is killed when it ends, and dies with the test run."""

from __future__ import annotations

import ctypes
import json
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import suppress
from pathlib import Path

import pytest

from ginproto.record import read_games

pytest.importorskip("aiohttp")

ROOT = Path(__file__).resolve().parents[2]
GINREF = [sys.executable, "-c", "import sys; from referee.__main__ import main; sys.exit(main())"]
CONNECT = [sys.executable, "-m", "ginproto.connect"]
SIMPLE = [sys.executable, "-m", "engines.simple_engine"]
TOKENS = {"alice": "alice-token-0123456789", "bob": "bob-token-0123456789ab"}
FAST = ["--no-sandbox", "--tc", "inf"]

Start = Callable[..., subprocess.Popen[str]]


def _die_with_the_test() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # a run in the background inherits it ignored
    with suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


@pytest.fixture
def start() -> Iterator[Start]:
    """Start a command in the project's folder, its output read as text; killed at the end."""
    started: list[subprocess.Popen[str]] = []

    def run(argv: list[str], cwd: Path = ROOT) -> subprocess.Popen[str]:
        process = subprocess.Popen(
            argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, preexec_fn=_die_with_the_test,
        )
        started.append(process)
        return process

    yield run
    for process in started:
        with suppress(ProcessLookupError):
            process.kill()
        with suppress(ValueError):
            process.communicate(timeout=10)


@pytest.fixture
def tokens(tmp_path: Path) -> Path:
    path = tmp_path / "tokens.toml"
    path.write_text("".join(f'{name} = "{token}"\n' for name, token in TOKENS.items()))
    path.chmod(0o600)
    return path


def _listening(referee: subprocess.Popen[str]) -> tuple[str, list[str]]:
    """The URL ``ginref`` says it listens on, and the lines of stderr read up to it."""
    assert referee.stderr is not None
    seen: list[str] = []
    while True:
        line = referee.stderr.readline()
        assert line, f"ginref ended before it listened: {seen}"
        seen.append(line.rstrip("\n"))
        if line.startswith("Listening on "):
            return line.split()[2], seen


def _commands_apart(text: str) -> list[str]:
    """A record's lines but its engines' command lines and a remote engine's latency."""
    return [
        line for line in text.splitlines() if ".Command " not in line and ".Latency " not in line
    ]


def _local(tmp_path: Path, engines: list[str], seed: str, games: int) -> str:
    record = tmp_path / "local.gin"
    subprocess.run(
        [*GINREF, "match", *engines, "--seed", seed, "--games", str(games), "--record",
         str(record), "-q", *FAST],
        cwd=ROOT, check=True, capture_output=True, timeout=120, preexec_fn=_die_with_the_test,
    )
    return record.read_text()


def test_two_remote_engines_record_what_the_same_engines_record_locally(
    start: Start, tokens: Path, tmp_path: Path
) -> None:
    record = tmp_path / "remote.gin"
    referee = start([*GINREF, "match", "remote:alice", "remote:bob", "--listen", "127.0.0.1:0",
                     "--tokens", str(tokens), "--seed", "7", "--games", "3", "--record",
                     str(record), *FAST])
    url, _ = _listening(referee)
    assert url.startswith("ws://127.0.0.1:")
    clients = [start([*CONNECT, url, "--token", TOKENS[n], "--", *SIMPLE]) for n in TOKENS]
    out, err = referee.communicate(timeout=120)
    assert referee.returncode == 0, err
    assert "Simple" in out and "Faults" in out
    assert "remote:alice: round trip" in err and "remote:bob: round trip" in err
    for client in clients:  # told bye, each ends of itself
        assert client.wait(20) == 0
        assert "the referee has ended the run" in client.communicate()[1]
    remote = record.read_text()
    local = _local(tmp_path, ["simple", "simple"], "7", 3)
    assert _commands_apart(remote) == _commands_apart(local)
    assert '[Player0.Command "remote:alice"]' in remote
    assert re.search(r'^\[Player0\.Latency "[0-9.]+ [0-9.]+ [0-9]+"\]$', remote, re.M)
    assert [p.latency != "" for p in next(read_games(str(record))).players] == [True, True]
    assert len(list(read_games(str(record)))) == 3


def test_a_remote_engine_plays_a_local_one(start: Start, tokens: Path, tmp_path: Path) -> None:
    record = tmp_path / "mixed.gin"
    referee = start([*GINREF, "match", "remote:bob", "random", "--listen", "127.0.0.1:0",
                     "--tokens", str(tokens), "--seed", "11", "--games", "2", "--record",
                     str(record), "-q", *FAST])
    url, _ = _listening(referee)
    start([*CONNECT, url, "--token", TOKENS["bob"], "--", *SIMPLE])
    _, err = referee.communicate(timeout=120)
    assert referee.returncode == 0, err
    assert _commands_apart(record.read_text()) == _commands_apart(
        _local(tmp_path, ["simple", "random"], "11", 2)
    )


def test_a_client_killed_mid_game_loses_it_by_a_crash_and_plays_on_when_back(
    start: Start, tokens: Path, tmp_path: Path
) -> None:
    referee = start([*GINREF, "match", "remote:alice", "simple", "--listen", "127.0.0.1:0",
                     "--tokens", str(tokens), "--seed", "3", "--games", "2", "--json", *FAST])
    url, _ = _listening(referee)
    cut = [sys.executable, str(ROOT / "tests/programs/cuts_its_relay.py"), str(tmp_path / "cut")]
    client = start([*CONNECT, url, "--token", TOKENS["alice"], "--", *cut])
    deadline = time.monotonic() + 60  # once the engine has cut its relay off, it comes back
    while client.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert client.returncode == -signal.SIGKILL
    start([*CONNECT, url, "--token", TOKENS["alice"], "--", *cut])
    out, err = referee.communicate(timeout=120)
    assert referee.returncode == 0, err
    result = json.loads(out)
    assert result["games"] == 2
    assert [(f["game"], f["engine"], f["kind"]) for f in result["forfeits"]] == [(1, 0, "crash")]
    assert "lost its connection" in result["forfeits"][0]["reason"]
    assert list(result["remote"]) == ["alice"] and result["remote"]["alice"]["drops"] == 1
    (said,) = [line for line in err.splitlines() if line.startswith("remote:alice: ")]
    assert said.endswith("; dropped 1 time during a game")


def test_a_tokens_file_others_may_read_is_refused_before_anything(
    tokens: Path, tmp_path: Path
) -> None:
    tokens.chmod(0o644)
    done = subprocess.run(
        [*GINREF, "match", "remote:alice", "simple", "--tokens", str(tokens), "--listen",
         "127.0.0.1:0", *FAST], cwd=ROOT, capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"Error: the tokens file may be read by others than its owner (mode 0644): chmod 600"
        f" {tokens}"
    ]


def test_an_engine_that_never_connects_is_named(start: Start, tokens: Path) -> None:
    # The wait gives alice's client time to start and connect on a busy machine.
    referee = start([*GINREF, "match", "remote:alice", "remote:bob", "--listen", "127.0.0.1:0",
                     "--tokens", str(tokens), "--remote-wait", "5", *FAST])
    url, _ = _listening(referee)
    start([*CONNECT, url, "--token", TOKENS["alice"], "--", *SIMPLE])
    _, err = referee.communicate(timeout=60)
    assert referee.returncode == 1
    assert err.splitlines()[-1] == (
        f"Error: not connected after 5s: remote:bob (the referee listens on {url})"
    )


def test_an_engine_that_connects_late_plays_every_game(start: Start, tokens: Path) -> None:
    """bob connects three seconds after the referee listens, well within --remote-wait."""
    referee = start([*GINREF, "match", "remote:alice", "remote:bob", "--listen", "127.0.0.1:0",
                     "--tokens", str(tokens), "--remote-wait", "60", "--games", "2", "--json",
                     *FAST])
    url, _ = _listening(referee)
    start([*CONNECT, url, "--token", TOKENS["alice"], "--", *SIMPLE])
    time.sleep(3)
    assert referee.poll() is None  # still waiting for bob
    start([*CONNECT, url, "--token", TOKENS["bob"], "--", *SIMPLE])
    out, err = referee.communicate(timeout=120)
    assert referee.returncode == 0, err
    result = json.loads(out)
    assert result["games"] == 2 and result["forfeits"] == []


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["remote:alice", "simple"], "remote engines need --tokens FILE"),
        (["simple", "simple", "--listen", "9000"], "--listen, --tokens and --tls are for remote"),
        (["remote:alice", "simple", "--tokens", "T", "--dask", "tcp://h:1"], "with --dask"),
        (["remote:alice", "remote:alice", "--tokens", "T"], "one seat of a match"),
    ],
)
def test_options_that_do_not_go_with_remote_engines(
    args: list[str], words: str, tokens: Path
) -> None:
    from click.testing import CliRunner

    from referee.cli import cli

    args = [str(tokens) if a == "T" else a for a in args]
    result = CliRunner().invoke(cli, ["match", *args, *FAST])
    assert result.exit_code == 2, result.output
    assert words in result.output


@pytest.mark.parametrize(
    ("command", "name", "words"),
    [
        (["match", "simple"], "alcie", "(did you mean 'alice'?)"),
        (["match", "simple"], "zed", "(it names alice, bob)"),
        (["check"], "bbo", "(did you mean 'bob'?)"),
    ],
)
def test_a_remote_name_without_a_token_is_refused_before_listening(
    command: list[str], name: str, words: str, tokens: Path
) -> None:
    """A usage error at once, not after the wait (which, were it reached, would end it
    too: exit 1, after "Listening on")."""
    from click.testing import CliRunner

    from referee.cli import cli

    args = [command[0], f"remote:{name}", *command[1:], "--tokens", str(tokens), "--listen",
            "127.0.0.1:0", "--remote-wait", "0.1", "--no-sandbox"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert f"Error: no token for remote:{name} in the tokens file {tokens} {words}" in (
        result.output
    )
    assert "Listening on" not in result.output


def test_ginref_check_runs_its_battery_on_a_remote_engine(start: Start, tokens: Path) -> None:
    referee = start([*GINREF, "check", "remote:alice", "--listen", "127.0.0.1:0", "--tokens",
                     str(tokens), "--no-sandbox"])
    url, _ = _listening(referee)
    start([*CONNECT, url, "--token", TOKENS["alice"], "--", *SIMPLE])
    out, err = referee.communicate(timeout=120)
    assert referee.returncode == 0, out + err
    assert out.splitlines()[0].startswith("PASS handshake ('Simple'")
    assert "PASS quit" in out and out.splitlines()[-1] == "all 20 checks passed"


def test_over_tls_with_a_self_signed_certificate(
    start: Start, tokens: Path, tmp_path: Path
) -> None:
    """``--tls CERT KEY`` serves wss://; the client checks the certificate (``--cafile``), and
    one that does not know it cannot connect."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    made = subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
         "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key),
         "-out", str(cert)], capture_output=True, timeout=60,
    )
    if made.returncode != 0:
        pytest.skip(f"openssl cannot make a certificate: {made.stderr[-200:]!r}")
    referee = start([*GINREF, "match", "remote:alice", "simple", "--listen", "127.0.0.1:0",
                     "--tokens", str(tokens), "--tls", str(cert), str(key), "--games", "1",
                     *FAST])
    url, _ = _listening(referee)
    assert url.startswith("wss://127.0.0.1:")
    stranger = start([*CONNECT, url, "--token", TOKENS["alice"], "--once", "--", *SIMPLE])
    _, err = stranger.communicate(timeout=60)
    assert stranger.returncode == 1 and "certificate verify failed" in err
    start([*CONNECT, url, "--token", TOKENS["alice"], "--cafile", str(cert), "--", *SIMPLE])
    out, err = referee.communicate(timeout=120)
    assert referee.returncode == 0, err
    assert "Simple" in out and "Warning" not in err


def test_a_public_address_without_tls_is_said_in_one_line(tokens: Path) -> None:
    done = subprocess.run(
        [*GINREF, "match", "remote:alice", "simple", "--listen", "0.0.0.0:0", "--tokens",
         str(tokens), "--remote-wait", "0.1", *FAST],
        cwd=ROOT, capture_output=True, text=True, timeout=60, preexec_fn=_die_with_the_test,
    )
    assert done.returncode == 1
    warnings = [line for line in done.stderr.splitlines() if line.startswith("Warning")]
    assert warnings == [
        "Warning: listening on 0.0.0.0, a public address, without TLS: the tokens and the games"
        " cross the network in clear (--tls CERT KEY)"
    ]


def test_the_python_api_plays_a_remote_engine_as_any_other(start: Start) -> None:
    from referee import Clock, Sandbox, play_match
    from referee.seat.remote import Listener

    settings = {"clock": Clock(tc="inf"), "sandbox": Sandbox(mode="off")}

    with Listener(TOKENS, "127.0.0.1", 0) as listener:
        start([*CONNECT, listener.url, "--token", TOKENS["alice"], "--", *SIMPLE])
        listener.wait_for(["alice"], 30)
        remote = play_match(["remote:alice", "random"], games=2, seed=5, **settings)
        assert listener.latency("alice") is not None
    local = play_match(["simple", "random"], games=2, seed=5, **settings)
    assert remote.names == local.names == ("Simple", "Random")
    assert remote.games == local.games


CUP = """
format = "round-robin"
games = 2
seed = 3
tc = "inf"
sandbox = "off"
{concurrency}

[[engines]]
name = "alice"
{alice}

[[engines]]
command = "simple"

[[engines]]
command = "random"
"""


def test_a_tournament_of_remote_and_local_engines_records_as_a_local_one(
    start: Start, tokens: Path, tmp_path: Path
) -> None:
    from referee.results.store import RECORDS_NAME

    remote_cup, local_cup = tmp_path / "remote.toml", tmp_path / "local.toml"
    remote_cup.write_text(CUP.format(concurrency="", alice='remote = "alice"'))
    local_cup.write_text(CUP.format(concurrency="", alice='command = "simple"'))
    referee = start([*GINREF, "tournament", str(remote_cup), "--output", str(tmp_path / "r"),
                     "--listen", "127.0.0.1:0", "--tokens", str(tokens), "-q"])
    url, said = _listening(referee)
    assert "for alice, bob " in said[-1]  # a tournament listens for every name of its tokens
    start([*CONNECT, url, "--token", TOKENS["alice"], "--", *SIMPLE])
    out, err = referee.communicate(timeout=120)
    assert referee.returncode == 0, err
    assert "alice" in out and "remote:alice: round trip" not in err  # -q
    subprocess.run(
        [*GINREF, "tournament", str(local_cup), "--output", str(tmp_path / "l"), "-q"],
        cwd=ROOT, check=True, capture_output=True, timeout=120, preexec_fn=_die_with_the_test,
    )
    remote = (tmp_path / "r" / RECORDS_NAME).read_text()
    assert '.Command "remote:alice"]' in remote and ".Latency " in remote
    assert _commands_apart(remote) == _commands_apart((tmp_path / "l" / RECORDS_NAME).read_text())


def test_a_tournament_plays_as_many_games_at_once_as_its_remote_engine_does(
    start: Start, tokens: Path, tmp_path: Path
) -> None:
    """Concurrency 3 in the config, a client that plays 2 games at once: 2 at a time, said
    in one line, and the same results as the same tournament played locally."""
    from referee.results.store import RECORDS_NAME

    cup = tmp_path / "cup.toml"
    cup.write_text(CUP.format(concurrency="concurrency = 3", alice='remote = "alice"'))
    referee = start([*GINREF, "tournament", str(cup), "--output", str(tmp_path / "r"),
                     "--listen", "127.0.0.1:0", "--tokens", str(tokens), "-q"])
    url, _ = _listening(referee)
    pids = tmp_path / "pids"
    start([*CONNECT, url, "--token", TOKENS["alice"], "--games", "2", "--", *_counted(pids)])
    _, err = referee.communicate(timeout=120)
    assert referee.returncode == 0, err
    assert "2 games at a time, not 3: a remote engine's client plays 2 at once" in err
    # on alice's machine: one engine to learn its name, then one per game played at once
    assert len(set(pids.read_text().split())) == 3
    local_cup = tmp_path / "local.toml"
    local_cup.write_text(CUP.format(concurrency="concurrency = 2", alice='command = "simple"'))
    subprocess.run(
        [*GINREF, "tournament", str(local_cup), "--output", str(tmp_path / "l"), "-q"],
        cwd=ROOT, check=True, capture_output=True, timeout=120, preexec_fn=_die_with_the_test,
    )
    remote = (tmp_path / "r" / RECORDS_NAME).read_text()
    assert _commands_apart(remote) == _commands_apart((tmp_path / "l" / RECORDS_NAME).read_text())


def _counted(pids: Path) -> list[str]:
    """The simple engine, each process of it writing its PID in ``pids`` as it starts."""
    return ["sh", "-c", f'echo $$ >> "{pids}"; exec "$0" -m engines.simple_engine',
            sys.executable]


def test_two_clients_of_two_games_each_play_a_match_two_games_at_a_time(
    start: Start, tokens: Path, tmp_path: Path
) -> None:
    record = tmp_path / "remote.gin"
    referee = start([*GINREF, "match", "remote:alice", "remote:bob", "--listen", "127.0.0.1:0",
                     "--tokens", str(tokens), "--seed", "11", "--games", "6", "--concurrency",
                     "2", "--record", str(record), *FAST])
    url, _ = _listening(referee)
    pids = {n: tmp_path / f"{n}.pids" for n in TOKENS}
    for name in TOKENS:
        start([*CONNECT, url, "--token", TOKENS[name], "--games", "2", "--",
               *_counted(pids[name])])
    out, err = referee.communicate(timeout=120)
    assert referee.returncode == 0, err
    assert "games at a time" not in err  # as many as asked for
    assert "Faults" in out and "crash" not in out
    for name in TOKENS:  # one engine each to learn its name, then two side by side
        assert len(set(pids[name].read_text().split())) == 3
    local = _local(tmp_path, ["simple", "simple"], "11", 6)
    assert _commands_apart(record.read_text()) == _commands_apart(local)


def test_a_tournament_with_a_remote_engine_resumes(
    start: Start, tokens: Path, tmp_path: Path
) -> None:
    from referee.results.store import RECORDS_NAME

    cup = tmp_path / "cup.toml"
    cup.write_text(CUP.format(concurrency="", alice='remote = "alice"').replace(
        "games = 2", "games = 4"))
    out = tmp_path / "r"
    referee = start([*GINREF, "tournament", str(cup), "--output", str(out), "--listen",
                     "127.0.0.1:0", "--tokens", str(tokens)])
    url, _ = _listening(referee)
    start([*CONNECT, url, "--token", TOKENS["alice"], "--", *SIMPLE])
    assert referee.stderr is not None
    while "game 2:" not in (line := referee.stderr.readline()):
        assert line, "ginref ended before game 2"
    referee.send_signal(signal.SIGINT)
    _, err = referee.communicate(timeout=60)
    assert referee.returncode == 130, err
    resumed = start([*GINREF, "tournament", "--resume", str(out), "--listen", "127.0.0.1:0",
                     "--tokens", str(tokens), "-q"])
    url, _ = _listening(resumed)
    start([*CONNECT, url, "--token", TOKENS["alice"], "--", *SIMPLE])
    stdout, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, err
    assert "12 of 12 games played" in stdout
    records = (out / RECORDS_NAME).read_text()
    assert records.count("[Event ") == 12


def test_a_tournament_remote_name_without_a_token_is_refused_before_listening(
    tokens: Path, tmp_path: Path
) -> None:
    """Before anything listens or the results folder is made: the config is fixed and run
    again as it was."""
    from click.testing import CliRunner

    from referee.cli import cli

    cup = tmp_path / "cup.toml"
    cup.write_text(CUP.format(concurrency="remote_wait = 0.1", alice='remote = "alcie"'))
    result = CliRunner().invoke(cli, ["tournament", str(cup), "--output", str(tmp_path / "r"),
                                      "--listen", "127.0.0.1:0", "--tokens", str(tokens)])
    assert result.exit_code == 2, result.output
    assert (
        f"Error: no token for remote:alcie in the tokens file {tokens} (did you mean 'alice'?)"
        in result.output
    )
    assert "Listening on" not in result.output
    assert not (tmp_path / "r").exists()


def test_a_tournament_config_says_where_to_listen(start: Start, tmp_path: Path) -> None:
    """``listen`` and ``tokens`` (relative to the config file) in place of the options."""
    folder = tmp_path / "cup"
    folder.mkdir()
    (folder / "tokens.toml").write_text(f'alice = "{TOKENS["alice"]}"\n')
    (folder / "tokens.toml").chmod(0o600)
    cup = folder / "cup.toml"
    cup.write_text(
        'listen = "127.0.0.1:0"\ntokens = "tokens.toml"\nlatency_margin = 0.5\n'
        + CUP.format(concurrency="", alice='remote = "alice"')
    )
    referee = start([*GINREF, "tournament", str(cup.relative_to(tmp_path)), "--output", "r",
                     "--json"], cwd=tmp_path)
    url, said = _listening(referee)
    assert url.startswith("ws://127.0.0.1:") and " for alice (waiting up to 120s)" in said[-1]
    start([*CONNECT, url, "--token", TOKENS["alice"], "--", *SIMPLE])
    out, err = referee.communicate(timeout=120)
    assert referee.returncode == 0, err
    standings = json.loads(out)
    assert standings["tournament"]["played"] == 6
    connection = standings["remote"]["alice"]
    assert connection["drops"] == 0 and connection["latency"]["pings"] >= 1
    assert 0 <= connection["latency"]["median_ms"] <= connection["latency"]["worst_ms"]
    (said,) = [line for line in err.splitlines() if line.startswith("remote:alice: ")]
    assert "round trip" in said and "dropped" not in said


def test_the_command_line_overrides_where_a_tournament_config_listens(
    start: Start, tokens: Path, tmp_path: Path
) -> None:
    cup = tmp_path / "cup.toml"
    cup.write_text(
        f'tokens = "{tmp_path / "missing.toml"}"\nremote_wait = 600\n'
        + CUP.format(concurrency="", alice='remote = "alice"')
    )
    as_set = start([*GINREF, "tournament", str(cup), "--output", str(tmp_path / "a"),
                    "--tokens", str(tokens), "--listen", "127.0.0.1:0"])
    _, said = _listening(as_set)
    assert said[-1].endswith("for alice, bob (waiting up to 600s)")
    as_set.kill()
    overridden = start([*GINREF, "tournament", str(cup), "--output", str(tmp_path / "b"),
                        "--tokens", str(tokens), "--listen", "127.0.0.1:0", "--remote-wait",
                        "0.2"])
    _, err = overridden.communicate(timeout=60)
    assert overridden.returncode == 1
    assert "(waiting up to 0.2s)" in err and "is not connected after 0.2s" in err


def test_a_tournament_config_s_remote_keys_are_checked_with_the_rest(tmp_path: Path) -> None:
    from referee.scheduling.config import ConfigError, RemoteRun
    from referee.scheduling.loader import load_config, load_remote

    cup = tmp_path / "cup.toml"
    body = CUP.format(concurrency="", alice='remote = "alice"')
    cup.write_text('listen = "9000"\ntokens = "t/tokens.toml"\nremote_wait = 30\n' + body)
    run = RemoteRun("9000", str(tmp_path / "t" / "tokens.toml"), None, 30.0)
    assert load_config(cup, {}).remote == run
    assert load_remote(cup) == (run, ("alice",))
    cup.write_text(
        'listen = "host:port"\ntokens = ""\nlatency_margin = -1\nremote_wait = "soon"\n'
        'listn = "9000"\n' + body
    )
    with pytest.raises(ConfigError) as caught:
        load_config(cup, {})
    with pytest.raises(ConfigError) as before_listening:  # ginref tournament's first read
        load_remote(cup)
    assert str(before_listening.value) == str(caught.value)
    assert str(caught.value).splitlines()[1:] == [
        "  - remote_wait must be a number, not 'soon'",
        "  - unknown key 'listn' (did you mean 'listen'?)",
        "  - listen: expected [HOST:]PORT, not 'host:port'",
        "  - tokens must name the tokens file, not be empty",
        "  - latency_margin must be seconds from 0 to 3600, not -1",
    ]


def test_a_resumed_tournament_s_stored_remote_names_are_checked_before_listening(
    tokens: Path, tmp_path: Path
) -> None:
    """Resumed without its config, the names are the store's."""
    from dataclasses import replace

    from click.testing import CliRunner

    from referee.cli import cli
    from referee.scheduling.loader import load_config
    from referee.scheduling.tournament import open_tournament

    cup = tmp_path / "cup.toml"
    cup.write_text(CUP.format(concurrency="", alice='remote = "alicia"'))
    folder = tmp_path / "r"
    folder.mkdir()
    open_tournament(replace(load_config(cup, {}), seed=3), folder, False).close()
    result = CliRunner().invoke(cli, ["tournament", "--resume", str(folder), "--listen",
                                      "127.0.0.1:0", "--tokens", str(tokens), "--remote-wait",
                                      "0.1"])
    assert result.exit_code == 2, result.output
    assert "Error: no token for remote:alicia in the tokens file" in result.output
    assert "(did you mean 'alice'?)" in result.output and "Listening on" not in result.output
