"""gin-connect: play an ordinary engine for a referee elsewhere, over one WebSocket.

``gin-connect URL --token TOKEN -- COMMAND...`` starts nothing until the referee asks: it
connects to ``URL`` (``ws://`` or, with TLS, ``wss://``), and each time the referee starts a
session of the engine (before a match, again after a fault) it starts ``COMMAND`` on this
machine, as an ordinary stdin/stdout engine, and relays its lines both ways. The engine never
knows it is remote; its standard error stays here, on this terminal.

The wire (spec/PROTOCOL.md, section 2.2): the client authenticates with an ``Authorization:
Bearer TOKEN`` header and says how many games it plays at once with a ``Gin-Games: K`` header
(``--games``; a refusal is an HTTP status before any message: 401 for a token the referee does
not know, 409 when that engine is connected already). Then a **text** message is ``N LINE``, a
session's number and one protocol line, without its line feed: from the referee, a line for the
standard input of session N's engine; from the client, a line that engine wrote. Up to K
sessions run at once, each its own engine process. A **binary** message is a control word, in
ASCII: the referee sends ``start N`` (start session N of the engine), ``stop N`` (end it: the
engine was sent ``quit``, and is killed after a grace period), ``ping X`` (answer ``pong X`` at
once: the referee measures the round trip) and ``bye`` (the run is over); the client sends
``pong X``, ``exited N STATUS`` (session N's engine has ended: ``code 0``, ``signal 9``),
``error N TEXT`` (it could not start) and ``toolong N`` (the engine wrote a line longer than
``LINE_LIMIT``; the rest of it was dropped).

A dropped connection is tried again, after 1, 2, 4... seconds (at most ``RETRY_MAX``); a
refused token, or the referee's ``bye``, ends the client. Ctrl-C leaves once the games in
progress are over (their ``gameover`` relayed; no new game is begun), at once between games;
a second Ctrl-C at once.
Every failure is one line on stderr, never a traceback. This module needs aiohttp
(``pip install 'ginproto[web]'``), imported only when the client runs, so the rest of
``ginproto`` never needs it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

import click

if TYPE_CHECKING:
    from aiohttp import ClientWebSocketResponse

__all__ = [
    "BYE",
    "ERROR",
    "EXITED",
    "GAMES_HEADER",
    "LINE_LIMIT",
    "MAX_GAMES",
    "PING",
    "PONG",
    "START",
    "STOP",
    "TOOLONG",
    "TokenRefused",
    "main",
    "run",
]

START: Final = "start"
STOP: Final = "stop"
PING: Final = "ping"
PONG: Final = "pong"
BYE: Final = "bye"
EXITED: Final = "exited"
ERROR: Final = "error"
TOOLONG: Final = "toolong"

GAMES_HEADER: Final = "Gin-Games"
"""The opening request's header by which the client says how many games it plays at once."""
MAX_GAMES: Final = 64
LINE_LIMIT: Final = 1 << 20
"""The longest engine line relayed, in bytes (the referee's default line limit)."""
CONTROL_LIMIT: Final = 512
"""The longest control message, in bytes."""
STOP_GRACE: Final = 1.0
"""Seconds an engine has to exit after ``stop`` before it is killed."""
RETRY_FIRST: Final = 1.0
RETRY_MAX: Final = 30.0
_CHUNK: Final = 1 << 16
_WEB_EXTRA: Final = "it needs aiohttp: pip install 'ginproto[web]'"


class TokenRefused(Exception):
    """The referee refused the token: trying again would not help."""


class ConnectFailed(Exception):
    """The connection could not be made (or was refused for now): try again later."""


def status_words(returncode: int) -> str:
    """``code 0``, ``signal 9``: how an engine ended, as ``exited`` carries it."""
    return f"signal {-returncode}" if returncode < 0 else f"code {returncode}"


class _Engine:
    """One session's engine process on this machine."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.reader: asyncio.Task[None] | None = None
        self.in_game = False  # between its ``newgame`` and its ``gameover``


class _Relay:
    """The engine sessions of one connection: at most ``games`` run at once."""

    def __init__(self, ws: ClientWebSocketResponse, argv: Sequence[str], games: int = 1) -> None:
        self.ws = ws
        self.argv = list(argv)
        self.games = games
        self.lock = asyncio.Lock()  # one message at a time on the socket
        self.engines: dict[int, _Engine] = {}
        self.accepting = True  # new games begun (after Ctrl-C: none)

    @property
    def in_game(self) -> bool:
        """Whether a game is in progress."""
        return any(engine.in_game for engine in self.engines.values())

    async def text(self, session: int, line: str) -> None:
        async with self.lock:
            await self.ws.send_str(f"{session} {line}")

    async def control(self, words: str) -> None:
        async with self.lock:
            await self.ws.send_bytes(words.encode("ascii", "replace"))

    async def start(self, session: int) -> None:
        await self.stop(session)
        if len(self.engines) >= self.games:
            await self.control(f"{ERROR} {session} it plays {self.games} games at once")
            return
        try:
            process = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                start_new_session=True,  # its own group: stop kills what it started too
            )
        except OSError as exc:
            say(f"the engine does not start: {exc.strerror or exc}: {self.argv[0]}")
            await self.control(f"{ERROR} {session} {exc.strerror or 'cannot start'}")
            return
        engine = self.engines[session] = _Engine(process)
        engine.reader = asyncio.create_task(self._read(session, process))

    async def to_engine(self, message: str) -> None:
        """Hand a line (``N LINE``) to session N's engine, if it still runs."""
        head, _, line = message.partition(" ")
        engine = self.engines.get(int(head)) if head.isascii() and head.isdigit() else None
        if engine is None:
            return  # stopped meanwhile, or never started: the referee knows
        word = line.split(maxsplit=1)[0] if line.strip() else ""
        if word == "newgame":
            if not self.accepting:
                return  # leaving: the client disconnects before this game
            engine.in_game = True
        elif word == "gameover":
            engine.in_game = False
        stdin = engine.process.stdin
        if stdin is None or stdin.is_closing():
            return  # it has ended: the referee hears so from ``exited``
        try:
            stdin.write(line.encode("utf-8") + b"\n")
            await stdin.drain()
        except (ConnectionError, OSError):
            pass

    async def stop(self, session: int, grace: float = STOP_GRACE) -> None:
        """End session's engine (if it runs): its input closed, ``grace`` seconds, then its
        group killed; its reader reports ``exited``."""
        engine = self.engines.pop(session, None)
        if engine is None:
            return
        process = engine.process
        if process.stdin is not None:
            with contextlib.suppress(OSError, RuntimeError):
                process.stdin.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), grace)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if hasattr(os, "killpg"):  # its whole group, what it started included
                os.killpg(process.pid, signal.SIGKILL)
            elif process.returncode is None:  # Windows: the engine alone
                process.kill()
        await process.wait()
        if engine.reader is not None:
            with contextlib.suppress(Exception):
                await engine.reader

    async def stop_all(self, grace: float) -> None:
        await asyncio.gather(*(self.stop(session, grace) for session in list(self.engines)))

    async def _read(self, session: int, process: asyncio.subprocess.Process) -> None:
        """Relay the engine's lines, cut at ``LINE_LIMIT``; then say how it ended."""
        assert process.stdout is not None
        line = bytearray()
        discarding = False
        try:
            while chunk := await process.stdout.read(_CHUNK):
                start = 0
                while True:
                    newline = chunk.find(b"\n", start)
                    end = len(chunk) if newline < 0 else newline
                    if not discarding:
                        line += chunk[start:end]
                        if len(line) > LINE_LIMIT:
                            line.clear()
                            discarding = True
                            await self.control(f"{TOOLONG} {session}")
                    if newline < 0:
                        break
                    if discarding:
                        discarding = False
                    else:
                        await self.text(session, _decode(line))
                    line.clear()
                    start = newline + 1
            if line and not discarding:
                await self.text(session, _decode(line))
            code = await process.wait()
            engine = self.engines.get(session)
            if engine is not None and engine.process is process:  # it ended by itself
                del self.engines[session]
            await self.control(f"{EXITED} {session} {status_words(code)}")
        except (ConnectionError, RuntimeError):
            pass  # the socket is gone: the connection's loop notices it


def _decode(data: bytes | bytearray) -> str:
    text = data.decode("utf-8", errors="replace")
    return text[:-1] if text.endswith("\r") else text


def say(text: str) -> None:
    """One line on stderr."""
    print(f"gin-connect: {text}", file=sys.stderr, flush=True)


class _Leaving:
    """Ctrl-C: the first one leaves once the game in progress is over (at once between
    games), the second at once."""

    def __init__(self) -> None:
        self.asked = False
        self.relay: _Relay | None = None
        self.main: asyncio.Task[Any] | None = None
        self.closing: asyncio.Task[Any] | None = None

    def interrupt(self) -> None:
        relay = self.relay
        if self.asked or relay is None:  # again, or not connected: at once
            if self.main is not None:
                self.main.cancel()
            return
        self.asked = True
        relay.accepting = False
        if relay.in_game:
            say("Ctrl-C: leaving after the game in progress (Ctrl-C again: now)")
        else:
            self.closing = asyncio.get_running_loop().create_task(relay.ws.close())

    def now(self) -> bool:
        """Whether to leave now: asked to, and no game in progress."""
        return self.asked and (self.relay is None or not self.relay.in_game)


async def _connection(
    url: str,
    token: str,
    argv: Sequence[str],
    cafile: str | None = None,
    leaving: _Leaving | None = None,
    games: int = 1,
) -> bool:
    """One connection, until it ends: True when the referee said ``bye``, or the author
    left (``leaving``)."""
    import ssl

    import aiohttp

    headers = {"Authorization": f"Bearer {token}", GAMES_HEADER: str(games)}
    context = ssl.create_default_context(cafile=cafile) if cafile is not None else True
    try:
        async with aiohttp.ClientSession() as http:
            try:
                ws = await http.ws_connect(
                    url, headers=headers, max_msg_size=4 * LINE_LIMIT, autoping=True,
                    ssl=context,
                )
            except aiohttp.WSServerHandshakeError as exc:
                if exc.status == 401:
                    raise TokenRefused("the referee refused the token") from None
                if exc.status == 409:
                    raise ConnectFailed("this engine is connected already") from None
                raise ConnectFailed(f"the referee answered {exc.status}") from None
            say(f"connected to {url}")
            relay = _Relay(ws, argv, games)
            if leaving is not None:
                leaving.relay = relay
            try:
                async for message in ws:
                    if message.type is aiohttp.WSMsgType.TEXT:
                        await relay.to_engine(message.data)
                    elif message.type is aiohttp.WSMsgType.BINARY:
                        if await _control(relay, message.data):
                            return True
                    else:
                        break
                    if leaving is not None and leaving.now():
                        return True
            finally:
                if leaving is not None:
                    leaving.relay = None
                await relay.stop_all(grace=0.2)
                await ws.close()
            if leaving is not None and leaving.asked:
                return True
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        raise ConnectFailed(_why(exc)) from None
    raise ConnectFailed("the connection was closed")


async def _control(relay: _Relay, data: bytes) -> bool:
    """Act on one control message; True for ``bye``."""
    words = data[:CONTROL_LIMIT].decode("ascii", "replace").split()
    if not words:
        return False
    word, rest = words[0], words[1:]
    if word == PING:
        await relay.control(" ".join([PONG, *rest[:1]]))
    elif word == START and rest and rest[0].isdigit():
        await relay.start(int(rest[0]))
    elif word == STOP and rest and rest[0].isdigit():
        await relay.stop(int(rest[0]))
    elif word == BYE:
        return True
    return False


def _why(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0][:200]


async def run(
    url: str,
    token: str,
    argv: Sequence[str],
    *,
    once: bool = False,
    cafile: str | None = None,
    games: int = 1,
) -> int:
    """Connect (again after each drop, unless ``once``) until the referee says ``bye`` (0) or
    refuses the token (1). ``cafile``: the certificates a ``wss://`` referee's is checked
    against, in place of the system's."""
    delay = RETRY_FIRST
    leaving = _Leaving()
    leaving.main = asyncio.current_task()
    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError, RuntimeError):  # where signals cannot be had
        loop.add_signal_handler(signal.SIGINT, leaving.interrupt)
    while not leaving.asked:
        try:
            if await _connection(url, token, argv, cafile, leaving, games):
                if leaving.asked:
                    break
                say("the referee has ended the run")
                return 0
        except TokenRefused as exc:
            say(str(exc))
            return 1
        except ConnectFailed as exc:
            if once:
                say(f"cannot connect to {url}: {exc}")
                return 1
            say(f"cannot connect to {url}: {exc}; trying again in {delay:g}s")
        if leaving.asked:
            break
        await asyncio.sleep(delay)
        delay = min(delay * 2, RETRY_MAX)
    say("left")
    return 0


_EXAMPLE = """\b
Example:
  gin-connect wss://referee.example:9000 --token-file token.txt -- python3 mybot.py"""


@click.command(
    name="gin-connect",
    epilog=_EXAMPLE,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.argument("url", metavar="URL")
@click.argument("command", nargs=-1, required=True, metavar="-- COMMAND...")
@click.option("--token", help="The token the organiser gave you (default: $GIN_TOKEN).")
@click.option(
    "--token-file",
    type=click.Path(dir_okay=False),
    metavar="FILE",
    help="Read the token from FILE (its first line).",
)
@click.option(
    "--games",
    type=click.IntRange(1, MAX_GAMES),
    default=1,
    show_default=True,
    help="How many games the engine plays at once (one engine process each).",
)
@click.option("--once", is_flag=True, help="Do not connect again after the connection drops.")
@click.option(
    "--cafile",
    type=click.Path(dir_okay=False),
    metavar="FILE",
    help="Check a wss:// referee's certificate against FILE (say, its self-signed one).",
)
def command(
    url: str,
    command: tuple[str, ...],
    token: str | None,
    token_file: str | None,
    games: int,
    once: bool,
    cafile: str | None,
) -> int:
    """Play an engine on this machine for a referee elsewhere: its lines are relayed over one
    WebSocket to the referee at URL (ws://... or wss://...). COMMAND is the engine, an
    ordinary stdin/stdout program, started each time the referee asks for it."""
    if not url.startswith(("ws://", "wss://")):
        raise click.BadParameter(
            f"it must start with ws:// or wss://, not {url!r}", param_hint="URL"
        )
    token = _token(token, token_file)
    if cafile is not None:
        import ssl

        try:
            ssl.create_default_context(cafile=cafile)
        except (OSError, ssl.SSLError) as exc:
            raise click.BadParameter(
                f"cannot use its certificates: {exc}", param_hint="--cafile"
            ) from None
    try:
        import aiohttp  # noqa: F401
    except ImportError:
        say(_WEB_EXTRA)
        return 1
    try:
        return asyncio.run(run(url, token, command, once=once, cafile=cafile, games=games))
    except (KeyboardInterrupt, asyncio.CancelledError):
        say("interrupted")
        return 130


def _token(token: str | None, path: str | None) -> str:
    if token is None and path is not None:
        try:
            with open(path, encoding="utf-8") as file:
                token = file.readline().strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise click.BadParameter(
                f"cannot read it: {getattr(exc, 'strerror', None) or exc}: {path}",
                param_hint="--token-file",
            ) from None
    if token is None:
        token = os.environ.get("GIN_TOKEN")
    if not token:
        raise click.UsageError("give the token: --token TOKEN, --token-file FILE or $GIN_TOKEN")
    return token


def main(args: Sequence[str] | None = None) -> int:
    """The ``gin-connect`` command: its exit status (2 for a usage error)."""
    try:
        code = command.main(
            args=list(sys.argv[1:] if args is None else args),
            prog_name="gin-connect",
            standalone_mode=False,
        )
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.exceptions.Abort:
        say("interrupted")
        return 130
    except click.exceptions.Exit as exc:  # --help
        return exc.exit_code
    return code if isinstance(code, int) else 0


if __name__ == "__main__":
    sys.exit(main())
