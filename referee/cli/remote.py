"""The options of remote engines (``remote:NAME``), shared by the commands that play them.

``--listen [HOST:]PORT`` (127.0.0.1 unless a host is given), ``--tokens FILE`` (the names and
their tokens, ``referee.seat.remote.load_tokens``), ``--latency-margin SECONDS`` (added to each
remote move's time), ``--remote-wait SECONDS`` (how long the named engines have to connect
before game 1) and ``--tls CERT KEY`` (serve ``wss://``). `remote_options` adds them to a
command as one ``remote`` argument, a `RemoteOptions`; `RemoteOptions.seats` is the context
in which the engines are listened for, waited for, played, and told ``bye``. A tournament's
config may give the first four (``RemoteOptions.over``). A remote name without a token is
refused before anything listens (`check_names`); at the end, each engine's round trips and
drops are said (and `remote_json` gives them to ``--json``).
"""

from __future__ import annotations

import contextlib
import difflib
import functools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import click

from ginproto.text import plural
from referee.cli.options import SECONDS, _margin

if TYPE_CHECKING:
    import ssl

    from referee.api import TournamentStart
    from referee.scheduling.config import RemoteRun
    from referee.seat.player import EngineSpec
    from referee.seat.remote import Listener

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_LISTEN = "127.0.0.1:9000"
DEFAULT_WAIT = 120.0


@dataclass(frozen=True, slots=True)
class RemoteOptions:
    """What the command line says of remote engines."""

    listen: str | None = None
    tokens: str | None = None
    latency_margin: float | None = None  # None: not given (0)
    remote_wait: float | None = None  # None: not given (DEFAULT_WAIT)
    tls: tuple[str, str] | None = None

    @property
    def given(self) -> bool:
        return self.listen is not None or self.tokens is not None or self.tls is not None

    @property
    def wait(self) -> float:
        """Seconds the remote engines have to connect before they first play."""
        return DEFAULT_WAIT if self.remote_wait is None else self.remote_wait

    def over(self, run: RemoteRun) -> RemoteOptions:
        """These options over a tournament config's (``listen = ...``): each one the command
        line gives wins."""
        return RemoteOptions(
            self.listen if self.listen is not None else run.listen,
            self.tokens if self.tokens is not None else run.tokens,
            self.latency_margin if self.latency_margin is not None else run.latency_margin,
            self.remote_wait if self.remote_wait is not None else run.remote_wait,
            self.tls,
        )

    @contextlib.contextmanager
    def seats(
        self,
        specs: Sequence[EngineSpec],
        *,
        dask: str | None = None,
        quiet: bool = False,
    ) -> Iterator[tuple[EngineSpec, ...]]:
        """Listen for the remote engines among ``specs`` (a match's) and wait for them before
        game 1; inside, ``specs``. Without remote engines, nothing is listened for (and
        remote options are a usage error)."""
        names = [spec.remote for spec in specs if spec.remote is not None]
        if not names:
            if self.given:
                raise click.UsageError(
                    "--listen, --tokens and --tls are for remote engines (remote:NAME)"
                )
            yield tuple(specs)
            return
        check_together(dask)
        if len(set(names)) < len(names):
            raise click.UsageError("each remote engine can hold one seat of a match")
        with self.listening(names, quiet) as listener:
            listener.wait_for(names, self.wait)
            yield tuple(specs)

    @contextlib.contextmanager
    def listening(
        self, names: Sequence[str] | None = None, quiet: bool = False, every: bool = False
    ) -> Iterator[Any]:
        """Inside, a `Listener` (``referee.seat.remote``) serves the engines of the tokens
        file: ``names``, or all of them (``every``: a tournament's), each given
        ``--remote-wait`` seconds to connect before it first plays. A name without a token
        is a usage error before anything listens. Without ``--tokens``, so are ``names``
        (but a tournament's: a finished one resumes to its standings without), and else
        nothing is listened for. At the end, each engine's round trips (unless ``quiet``)."""
        if self.tokens is None:
            if names and not every:
                raise click.UsageError(
                    "remote engines need --tokens FILE (a TOML table of names to tokens)"
                )
            if self.given:
                raise click.UsageError("--listen and --tls serve remote engines: give --tokens")
            yield None
            return
        from referee.seat.remote import Listener
        from referee.seat.tokens import is_public, load_tokens, parse_listen

        tokens = load_tokens(self.tokens)
        check_names(names or (), tokens, self.tokens)  # before anything listens
        try:
            host, port = parse_listen(self.listen or DEFAULT_LISTEN)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--listen") from None
        listener = Listener(
            tokens,
            host,
            port,
            first_wait=self.wait,
            latency_margin=self.latency_margin or 0.0,
            ssl_context=self._ssl(),
        )
        shown = list(names) if names and not every else sorted(tokens)
        with listener:
            if is_public(host) and self.tls is None:
                click.echo(
                    f"Warning: listening on {host}, a public address, without TLS: the tokens"
                    " and the games cross the network in clear (--tls CERT KEY)",
                    err=True,
                )
            click.echo(  # even with --quiet: the clients need the address (a port 0 chosen)
                f"Listening on {listener.url} for {', '.join(shown)}"
                f" (waiting up to {self.wait:g}s)",
                err=True,
            )
            try:
                yield listener
            finally:
                if not quiet:
                    for name in shown:
                        said = _connection_words(listener, name)
                        if said:
                            click.echo(f"remote:{name}: {said}", err=True)

    def checked(
        self, on_start: Callable[[TournamentStart], None]
    ) -> Callable[[TournamentStart], None]:
        """``on_start`` for a tournament, after the refusal of what remote engines cannot do
        (a Dask cluster), from its settings in force."""

        def start(run: TournamentStart) -> None:
            if any(spec.remote is not None for spec in run.config.specs()):
                check_together(run.cluster)
            on_start(run)

        return start

    def _ssl(self) -> ssl.SSLContext | None:
        if self.tls is None:
            return None
        import ssl  # only when it is used: the command line starts without it

        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        try:
            context.load_cert_chain(*self.tls)
        except (OSError, ssl.SSLError) as exc:
            raise click.BadParameter(
                f"cannot load the certificate and key: {exc}", param_hint="--tls"
            ) from None
        return context


def _connection_words(listener: Listener, name: str) -> str:
    """What the run measured of ``name``'s connection: its round trips, and how many times
    it dropped during a game (nothing when it never did)."""
    latency = listener.latency(name)
    drops = listener.drops(name)
    said = [] if latency is None else [str(latency)]
    if drops:
        said.append(f"dropped {plural(drops, 'time')} during a game")
    return "; ".join(said)


def remote_json(names: Iterable[str]) -> dict[str, Any]:
    """For ``--json``: each of the remote engines ``names``, its round trips (``latency``,
    in ms, None before the first) and how many times its connection dropped during a game
    (``drops``), as the listener running measured them ({} without one)."""
    from referee.seat.remote import active

    listener = active()
    if listener is None:
        return {}
    out: dict[str, Any] = {}
    for name in names:
        latency = listener.latency(name)
        out[name] = {
            "latency": None
            if latency is None
            else {
                "median_ms": round(latency.median * 1000, 1),
                "worst_ms": round(latency.worst * 1000, 1),
                "pings": latency.samples,
            },
            "drops": listener.drops(name),
        }
    return out


def check_names(names: Iterable[str], tokens: Mapping[str, str], path: str) -> None:
    """Refuse (exit 2) a remote engine that has no token in the tokens file ``path``, with the
    name it may have meant (a misspelt name would otherwise only be found after the wait)."""
    for name in names:
        if name not in tokens:
            close = difflib.get_close_matches(name, list(tokens), n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"it names {', '.join(tokens)}"
            raise click.UsageError(f"no token for remote:{name} in the tokens file {path} ({hint})")


def check_together(dask: str | None) -> None:
    """Refuse what remote engines cannot do: play on a Dask cluster (the listener is this
    process's)."""
    if dask is not None:
        raise click.UsageError("remote engines are not available with --dask")


NO_REMOTE = RemoteOptions()
"""No remote option given."""

_OPTIONS = (
    click.option(
        "--listen",
        metavar="[HOST:]PORT",
        help=f"Where remote engines connect (default {DEFAULT_LISTEN}; HOST 0.0.0.0 for every"
        " interface).",
    ),
    click.option(
        "--tokens",
        type=click.Path(dir_okay=False),
        metavar="FILE",
        help="The remote engines' tokens: a TOML table NAME = \"TOKEN\", readable by you only.",
    ),
    click.option(
        "--latency-margin",
        type=float,
        callback=_margin,
        help="Seconds added to each remote engine's move time, for the network (default 0).",
    ),
    click.option(
        "--remote-wait",
        type=SECONDS,
        help="Seconds the remote engines have to connect before game 1 (default"
        f" {DEFAULT_WAIT:g}).",
    ),
    click.option(
        "--tls",
        nargs=2,
        type=click.Path(dir_okay=False, exists=True),
        metavar="CERT KEY",
        help="Serve remote engines over TLS (wss://) with this certificate and key.",
    ),
)


def remote_options() -> Callable[[F], F]:
    """The remote engines' options, passed to the command as ``remote``, a `RemoteOptions`."""

    def decorate(command: F) -> F:
        @functools.wraps(command)
        def wrapper(
            *args: Any,
            listen: str | None,
            tokens: str | None,
            latency_margin: float | None,
            remote_wait: float | None,
            tls: tuple[str, str] | None,
            **kwargs: Any,
        ) -> Any:
            remote = RemoteOptions(listen, tokens, latency_margin, remote_wait, tls or None)
            return command(*args, remote=remote, **kwargs)

        decorated: Any = wrapper
        for option in reversed(_OPTIONS):
            decorated = option(decorated)
        return decorated  # type: ignore[no-any-return]

    return decorate
