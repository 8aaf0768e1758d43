"""The referee's memory and games under clients that attack its WebSocket listener
(``referee.seat.remote.Listener``), against a baseline measured in the same run.

Each scenario is one match of ``--games`` games between two remote engines, ``remote:alice``
and ``remote:bob``, each the built-in simple engine behind a real ``gin-connect`` client, played
by a referee process of its own (this script with ``--referee``: a `Listener` around
`referee.api.play_match`, the clock off, no sandbox). The adversaries are raw sockets of this
process, speaking HTTP and WebSocket frames by hand, so that nothing in them is bounded by a
client library:

- ``baseline``: no adversary;
- ``silent-tcp``: 200 TCP connections that send nothing, open before the engines connect
  (and watched up to 15 s, the match over, for the referee to close them);
- ``silent-ws``: 200 clients that complete the opening handshake, each with a valid token of
  its own (the tokens file names 200 more engines), before the engines connect, then send
  nothing (no ``pong``; watched up to 20 s, the match over, for the referee to close them);
- ``flood-lines``: an authenticated client that sends 1 KiB text messages as fast as it can,
  connecting again each time it is cut off;
- ``flood-pongs``: the same with binary ``pong 1`` messages;
- ``20MB-text`` / ``20MB-binary``: a client that sends one 20 MB message, again and again;
- ``claim-name``: a client that claims bob's name, with a wrong token and with bob's own
  token while bob is connected, ten times a second each.

The messages an adversary sends start with ``1 `` (``1 info string xxx...``), so they mean
the same whether the lines carry a session number or not. For each scenario: the games
played (of those asked), the faults ruled, the referee's peak memory (``VmHWM`` of its
process) and its ratio to the baseline's, the match's wall time, and how the referee treated
the adversary, as the adversary saw it (HTTP status, WebSocket close code, when).

Every process started here dies with this one (its parent death signal is SIGKILL) and is
killed at the end of its scenario. Usage: ``python bench/remote_adversaries.py [--games N]
[--only NAME,...]``; about two minutes on the 2-core machine.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import ctypes
import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent
SEATS = ("alice", "bob")
CROWD = 200
BIG = 20 << 20
LINE = "1 info string " + "x" * 1010  # 1 KiB: one engine line, with or without a session
_CHUNK = 1 << 16
TEXT, BINARY, CLOSE = 0x1, 0x2, 0x8


# -- the referee ---------------------------------------------------------------------------
def _status_kb(field_name: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field_name + ":"):
                return int(line.split()[1])
    return 0


def referee(tokens_path: str, games: int) -> None:
    """The referee's process: say the URL, wait for the seats' engines (say ``connected``),
    play the match (say ``over``), wait for a line on stdin (the adversary has stopped), stop
    listening, and print its figures as one JSON line."""
    import logging

    from referee import Clock, Sandbox, play_match
    from referee.seat.remote import Listener
    from referee.seat.tokens import load_tokens

    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    tokens = load_tokens(tokens_path)
    with Listener(tokens, "127.0.0.1", 0, first_wait=120.0) as listener:
        print(listener.url, flush=True)
        started = time.monotonic()
        listener.wait_for(SEATS, 120.0)
        connected = time.monotonic() - started
        print("connected", flush=True)
        result = play_match(
            [f"remote:{name}" for name in SEATS],
            games=games,
            seed=1,
            clock=Clock(tc="inf"),
            sandbox=Sandbox(mode="off"),
        )
        wall = time.monotonic() - started - connected
        print("over", flush=True)
        sys.stdin.readline()
    forfeits = result.to_json().get("forfeits", [])
    figures = {
        "games": len(result.games),
        "faults": [f"{f['kind']}: {f['reason'][:60]}" for f in forfeits],
        "hwm_kb": _status_kb("VmHWM"),
        "connected": connected,
        "wall": wall,
    }
    print(json.dumps(figures), flush=True)


# -- raw WebSocket clients -------------------------------------------------------------------
async def handshake(
    host: str, port: int, token: str, timeout: float = 30.0
) -> tuple[int, asyncio.StreamReader, asyncio.StreamWriter]:
    """Open a connection and send the opening request; the HTTP status the referee answered
    (101: the WebSocket is open), and the streams."""
    reader, writer = await asyncio.open_connection(host, port)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        (
            f"GET / HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
            f"Authorization: Bearer {token}\r\nGin-Games: 1\r\n\r\n"
        ).encode()
    )
    try:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
    except (OSError, asyncio.IncompleteReadError, TimeoutError):
        writer.close()
        return 0, reader, writer
    return int(head.split()[1]), reader, writer


def frame_header(opcode: int, length: int) -> bytes:
    """A final frame's header, masked with a zero key (the payload goes as it is)."""
    first = 0x80 | opcode
    if length < 126:
        head = bytes([first, 0x80 | length])
    elif length < 1 << 16:
        head = bytes([first, 0x80 | 126]) + length.to_bytes(2, "big")
    else:
        head = bytes([first, 0x80 | 127]) + length.to_bytes(8, "big")
    return head + b"\0\0\0\0"


def frame(opcode: int, payload: bytes) -> bytes:
    return frame_header(opcode, len(payload)) + payload


async def close_code(reader: asyncio.StreamReader, timeout: float) -> int | None:
    """Read the referee's frames up to its close frame: its code; None when the connection
    ended without one (or not within ``timeout``)."""

    async def read() -> int | None:
        while True:
            first, second = await reader.readexactly(2)
            length = second & 0x7F
            if length == 126:
                length = int.from_bytes(await reader.readexactly(2), "big")
            elif length == 127:
                length = int.from_bytes(await reader.readexactly(8), "big")
            payload = await reader.readexactly(length)
            if first & 0x0F == CLOSE:
                return int.from_bytes(payload[:2], "big") if len(payload) >= 2 else 1005

    try:
        return await asyncio.wait_for(read(), timeout)
    except (OSError, asyncio.IncompleteReadError, TimeoutError):
        return None


async def _code(closed: asyncio.Task[int | None]) -> int | None:
    """The close code ``closed`` (a `close_code` task) finds within 5 s, or None."""
    with contextlib.suppress(TimeoutError):
        return await asyncio.wait_for(asyncio.shield(closed), 5)
    closed.cancel()
    return None


def _done(writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(Exception):
        writer.transport.abort()


# -- the adversaries -------------------------------------------------------------------------
@dataclass
class Adversary:
    """Nothing: the baseline. Subclasses act ``before`` the engines connect and ``during``
    the match (until ``stop``), and say how they were treated."""

    name: str = "baseline"
    tokens: dict[str, str] = field(default_factory=dict)
    seen: Counter[str] = field(default_factory=Counter)
    started: float = field(default_factory=time.monotonic)

    async def before(self, host: str, port: int) -> None:
        pass

    async def during(self, host: str, port: int, stop: asyncio.Event) -> None:
        await stop.wait()

    def treated(self) -> str:
        return "-"

    def note(self, what: str) -> None:
        self.seen[what] += 1

    async def let_in(
        self, host: str, port: int, stop: asyncio.Event
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        """A connection with the intruder's token, tried again (each refusal noted) until the
        referee lets it in; None once ``stop`` is set."""
        token = self.tokens["intruder"]
        while not stop.is_set():
            try:
                status, reader, writer = await handshake(host, port, token)
            except OSError:  # the referee is gone: the match is over
                await asyncio.sleep(0.1)
                continue
            if status == 101:
                return reader, writer
            self.note(str(status))
            _done(writer)
            await asyncio.sleep(0.1)
        return None


@dataclass
class SilentTcp(Adversary):
    sockets: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = field(
        default_factory=list
    )
    closed_after: list[float] = field(default_factory=list)

    watchers: list[asyncio.Task[None]] = field(default_factory=list)
    opened: float = 0.0

    async def before(self, host: str, port: int) -> None:
        async def watch(reader: asyncio.StreamReader, opened: float) -> None:
            with contextlib.suppress(OSError):
                await reader.read(1)
            self.closed_after.append(time.monotonic() - opened)

        self.opened = time.monotonic()
        for _ in range(CROWD):
            reader, writer = await asyncio.open_connection(host, port)
            self.sockets.append((reader, writer))
            self.watchers.append(asyncio.create_task(watch(reader, time.monotonic())))

    async def during(self, host: str, port: int, stop: asyncio.Event) -> None:
        await stop.wait()
        # After the match, still listening: time for the opening requests' deadline.
        await asyncio.wait(self.watchers, timeout=max(0.0, 15 - (time.monotonic() - self.opened)))
        for task in self.watchers:
            task.cancel()
        for _, writer in self.sockets:
            _done(writer)

    def treated(self) -> str:
        if not self.closed_after:
            return f"{CROWD} open, none closed by the referee within 15 s"
        return (
            f"{CROWD} open through the match; {len(self.closed_after)} closed by the referee"
            f" after {min(self.closed_after):.1f}-{max(self.closed_after):.1f} s"
        )


@dataclass
class SilentWs(Adversary):
    open: list[asyncio.StreamWriter] = field(default_factory=list)
    codes: Counter[int | None] = field(default_factory=Counter)
    closed_after: list[float] = field(default_factory=list)
    watchers: list[asyncio.Task[None]] = field(default_factory=list)
    opened: float = 0.0

    async def before(self, host: str, port: int) -> None:
        async def watch(reader: asyncio.StreamReader, opened: float) -> None:
            code = await close_code(reader, 3600)
            self.codes[code] += 1
            self.closed_after.append(time.monotonic() - opened)

        crowd = [token for name, token in self.tokens.items() if name.startswith("crowd")]
        answers = await asyncio.gather(*(handshake(host, port, token) for token in crowd))
        self.opened = opened = time.monotonic()
        for status, reader, writer in answers:
            self.note(str(status))
            if status == 101:
                self.open.append(writer)
                self.watchers.append(asyncio.create_task(watch(reader, opened)))
            else:
                _done(writer)

    async def during(self, host: str, port: int, stop: asyncio.Event) -> None:
        await stop.wait()
        # After the match, still listening: time for the pings to find them dead.
        await asyncio.wait(self.watchers, timeout=max(0.0, 20 - (time.monotonic() - self.opened)))
        for task in self.watchers:
            task.cancel()
        for writer in self.open:
            _done(writer)

    def treated(self) -> str:
        statuses = ", ".join(f"{count} x {status}" for status, count in sorted(self.seen.items()))
        closed = ", ".join(f"{n} x close {c}" for c, n in self.codes.items())
        when = (
            f" after {min(self.closed_after):.0f}-{max(self.closed_after):.0f} s"
            if self.closed_after
            else ""
        )
        return f"{statuses}; {closed or 'none closed'}{when}"


@dataclass
class Flooder(Adversary):
    """Connects with its own valid token and sends ``message`` (an opcode and a payload) as
    fast as it can, connecting again each time it is cut off."""

    opcode: int = TEXT
    payload: bytes = LINE.encode()
    sent: int = 0
    connections: int = 0
    codes: Counter[int | None] = field(default_factory=Counter)

    async def during(self, host: str, port: int, stop: asyncio.Event) -> None:
        data = frame(self.opcode, self.payload) * 64
        while (connection := await self.let_in(host, port, stop)) is not None:
            reader, writer = connection
            self.connections += 1
            closed = asyncio.create_task(close_code(reader, 3600))
            with contextlib.suppress(OSError):
                while not stop.is_set() and not closed.done():
                    writer.write(data)
                    await writer.drain()
                    self.sent += len(data)
            self.codes[await _code(closed) if not stop.is_set() else -1] += 1
            _done(writer)

    def treated(self) -> str:
        codes = ", ".join(
            f"{n} x {'close ' + str(c) if c and c > 0 else 'reset' if c is None else 'open'}"
            for c, n in self.codes.items()
        )
        return (
            f"{self.connections} connections, {self.sent / 1e6:.0f} MB sent; {codes}"
            + "".join(f"; {n} x {s}" for s, n in self.seen.items())
        )


@dataclass
class Big(Adversary):
    """Sends one message of ``BIG`` bytes (``opcode``), streamed, again and again."""

    opcode: int = TEXT
    attempts: int = 0
    written: list[int] = field(default_factory=list)
    codes: Counter[int | None] = field(default_factory=Counter)

    async def during(self, host: str, port: int, stop: asyncio.Event) -> None:
        chunk = (b"1 info string " + b"x" * _CHUNK)[:_CHUNK]
        while (connection := await self.let_in(host, port, stop)) is not None:
            reader, writer = connection
            self.attempts += 1
            written = 0
            closed = asyncio.create_task(close_code(reader, 3600))
            with contextlib.suppress(OSError):
                writer.write(frame_header(self.opcode, BIG))
                while written < BIG and not stop.is_set() and not closed.done():
                    writer.write(chunk)
                    await writer.drain()
                    written += len(chunk)
            self.written.append(written)
            self.codes[await _code(closed)] += 1
            _done(writer)

    def treated(self) -> str:
        codes = ", ".join(
            f"{n} x {'close ' + str(c) if c else 'reset'}" for c, n in self.codes.items()
        )
        most = max(self.written, default=0)
        return (
            f"{self.attempts} messages begun, at most {most / (1 << 20):.1f} of 20 MiB written;"
            f" {codes}" + "".join(f"; {n} x {s}" for s, n in self.seen.items())
        )


@dataclass
class Claimer(Adversary):
    """Claims bob's name: a wrong token, and bob's own token while bob is connected."""

    async def during(self, host: str, port: int, stop: asyncio.Event) -> None:
        tries = {"wrong token": "bob-" + secrets.token_urlsafe(), "bob's token": ""}
        tries["bob's token"] = self.tokens["bob"]
        while not stop.is_set():
            for what, token in tries.items():
                try:
                    status, _, writer = await handshake(host, port, token)
                except OSError:  # the referee is gone: the match is over
                    continue
                self.note(f"{what}: {status}")
                if status == 101:  # bob's seat taken: say so, and let it go at once
                    writer.write(frame(CLOSE, (1000).to_bytes(2, "big")))
                _done(writer)
            await asyncio.sleep(0.1)

    def treated(self) -> str:
        return ", ".join(f"{n} x {what}" for what, n in sorted(self.seen.items()))


SCENARIOS: dict[str, Callable[[], Adversary]] = {
    "baseline": lambda: Adversary("baseline"),
    "silent-tcp": lambda: SilentTcp("silent-tcp"),
    "silent-ws": lambda: SilentWs("silent-ws"),
    "flood-lines": lambda: Flooder("flood-lines"),
    "flood-pongs": lambda: Flooder("flood-pongs", opcode=BINARY, payload=b"pong 1"),
    "20MB-text": lambda: Big("20MB-text", opcode=TEXT),
    "20MB-binary": lambda: Big("20MB-binary", opcode=BINARY),
    "claim-name": lambda: Claimer("claim-name"),
}


# -- one scenario ----------------------------------------------------------------------------
def _die_with_us() -> None:
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


@contextlib.contextmanager
def started(argv: list[str], **kwargs: Any) -> Iterator[subprocess.Popen[str]]:
    """A process of ours (Popen from the main thread: its death signal follows this one),
    killed and reaped on the way out."""
    kwargs.setdefault("stdin", subprocess.DEVNULL)
    process = subprocess.Popen(argv, cwd=ROOT, text=True, preexec_fn=_die_with_us, **kwargs)
    try:
        yield process
    finally:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        process.wait()


@dataclass
class Row:
    name: str
    figures: dict[str, Any]
    treated: str


async def scenario(
    adversary: Adversary, tokens_path: str, games: int, log: IO[str]
) -> dict[str, Any]:
    from engines import BUILTIN

    argv = [sys.executable, __file__, "--referee", tokens_path, str(games)]
    with started(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log) as ref:
        assert ref.stdin is not None and ref.stdout is not None
        url = (await asyncio.to_thread(ref.stdout.readline)).strip()
        if not url:
            raise SystemExit(f"the referee did not start:\n{_tail(log)}")
        host, port = url.removeprefix("ws://").strip("/").rsplit(":", 1)
        await adversary.before(host, int(port))
        stop = asyncio.Event()
        with contextlib.ExitStack() as clients:
            for name in SEATS:
                clients.enter_context(
                    started(
                        [sys.executable, "-m", "ginproto.connect", url, "--token",
                         adversary.tokens[name], "--", *BUILTIN["simple"]],
                        stderr=log,
                    )
                )
            said = await asyncio.to_thread(ref.stdout.readline)
            attack = asyncio.create_task(adversary.during(host, int(port), stop))
            if said == "connected\n":
                said = await asyncio.to_thread(ref.stdout.readline)
            stop.set()
            await asyncio.wait_for(attack, 30)
            ref.stdin.write("stop\n")
            ref.stdin.flush()
            line = await asyncio.to_thread(ref.stdout.readline) if said == "over\n" else ""
        if not line:
            raise SystemExit(f"the referee ended without its figures:\n{_tail(log)}")
        figures: dict[str, Any] = json.loads(line)
        return figures


def _tail(log: IO[str]) -> str:
    """The last lines the scenario's processes wrote on stderr (its folder goes at the end)."""
    log.flush()
    return "\n".join(Path(log.name).read_text().splitlines()[-15:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--only", default="", help="scenarios, comma-separated (baseline too)")
    parser.add_argument("--referee", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # the temporary folder goes too
    if args.referee:
        referee(args.referee[0], int(args.referee[1]))
        return
    names = ["baseline", *(n for n in SCENARIOS if n != "baseline")]
    if args.only:
        wanted = {"baseline", *args.only.split(",")}
        names = [n for n in names if n in wanted]
    tokens = {name: f"{name}-{secrets.token_urlsafe()}" for name in SEATS}
    tokens["intruder"] = f"intruder-{secrets.token_urlsafe()}"
    tokens.update({f"crowd{k:03}": f"crowd-{secrets.token_urlsafe()}" for k in range(CROWD)})
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="ginproto-adversaries-") as folder:
        tokens_path = Path(folder, "tokens.toml")
        tokens_path.write_text("".join(f'{n} = "{t}"\n' for n, t in tokens.items()))
        tokens_path.chmod(0o600)
        for name in names:
            adversary = SCENARIOS[name]()
            adversary.tokens = tokens
            with open(Path(folder, f"{name}.log"), "w") as log:
                figures = asyncio.run(scenario(adversary, str(tokens_path), args.games, log))
            rows.append(Row(name, figures, adversary.treated()))
            print(f"{name}: done", file=sys.stderr, flush=True)
    base = rows[0].figures["hwm_kb"]
    print(f"{args.games} games a match, remote:alice against remote:bob (simple, tc inf)")
    print(
        f"{'scenario':12} {'games':>5} {'faults':>6} {'peak MB':>7} {'ratio':>5} {'wait s':>6}"
        f" {'match s':>7}  how the adversary was treated"
    )
    for row in rows:
        f = row.figures
        print(
            f"{row.name:12} {f['games']:>5} {len(f['faults']):>6} {f['hwm_kb'] / 1024:>7.1f}"
            f" {f['hwm_kb'] / base:>5.2f} {f['connected']:>6.1f} {f['wall']:>7.1f}  {row.treated}"
        )
        for fault in f["faults"][:3]:
            print(f"{'':14}fault: {fault}")


if __name__ == "__main__":
    main()
