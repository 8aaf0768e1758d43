"""Engines launched together (``EnginePlayer.launch``): a game's engines, and the sandboxed
engines of the check before game 1, load at the same time; each completes its handshake when it
is first asked, with its startup timeout counted from the start of its process
(spec/PROTOCOL.md, section 7.1), and is told nothing before that handshake."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from ginproto.rules import Rules
from ginproto.table import FaultKind, PlayerFault, play_game
from referee.scheduling.match import schedule
from referee.scheduling.seats import EngineSeats
from referee.seat.clock import TimeControl
from referee.seat.player import EnginePlayer, EngineSpec
from referee.seat.preflight import EngineNotReady, preflight

CONTROL = TimeControl.parse("inf")
SILENT = "import sys\nfor line in sys.stdin:\n    pass\n"  # reads, never answers


def recorded(spec: EngineSpec, startup_timeout: float = 10.0) -> tuple[EnginePlayer, list[str]]:
    """A player whose protocol lines, both ways, are kept as ``> line`` and ``< line``."""
    lines: list[str] = []

    def hook(direction: str, line: str) -> None:
        if direction in ("to", "from"):
            lines.append(f"{'>' if direction == 'to' else '<'} {line}")

    return EnginePlayer(spec, CONTROL, startup_timeout, on_line=hook), lines


def test_launched_engines_run_before_their_handshake_and_complete_it_when_asked() -> None:
    players = [EnginePlayer(EngineSpec.parse(name), CONTROL, 10.0) for name in ("simple", "random")]
    try:
        for player in players:
            player.launch()
        assert all(p.process is not None and p.process.alive for p in players)
        assert [p.id.name for p in players] == [None, None]  # no handshake read yet
        for player in players:
            player.start()
        assert [p.id.name for p in players] == ["Simple", "Random"]
    finally:
        for player in players:
            player.close()


def test_a_handshake_asked_after_the_startup_timeout_reads_the_answer_already_given() -> None:
    """The startup timeout counts from the start of the process: an engine that answered in
    time is not ruled against because the referee asked for its answer later."""
    player, lines = recorded(EngineSpec.parse("random"), startup_timeout=1.0)
    try:
        player.launch()
        assert player.process is not None
        deadline = time.monotonic() + 30
        while not player.process.ready():  # its answer to gin has come
            assert time.monotonic() < deadline, "the engine did not answer gin"
            time.sleep(0.01)
        time.sleep(1.0)  # past its startup timeout, counted from its start
        player.start()
        assert player.id.name == "Random"
        assert lines[0] == "> gin protocol 1" and "< ginok protocol 1" in lines
    finally:
        player.close()


def test_a_launched_engine_that_never_answers_is_a_startup_fault() -> None:
    player = EnginePlayer(EngineSpec((sys.executable, "-c", SILENT)), CONTROL, 0.5)
    player.launch()
    with pytest.raises(PlayerFault) as info:
        player.start()
    assert info.value.kind is FaultKind.STARTUP and "no ginok within 0.5s" in info.value.detail
    assert player.process is None  # stopped


def test_a_launched_engine_is_told_nothing_before_its_handshake() -> None:
    """Launched for a game in which it was never asked (its opponent forfeited first, say),
    it gets no information line and no matchover: only its gin, then quit."""
    player, lines = recorded(EngineSpec.parse("random"))
    player.launch()
    player.finish_match()
    assert lines == ["> gin protocol 1", "> quit"]


def test_a_launched_engine_that_cannot_start_is_ruled_when_asked(tmp_path: Path) -> None:
    player = EnginePlayer(EngineSpec((str(tmp_path / "missing"),)), CONTROL, 5.0)
    player.launch()  # nothing started, nothing raised
    assert player.process is None
    with pytest.raises(PlayerFault) as info:
        player.start()
    assert info.value.kind is FaultKind.CRASH and "cannot start" in info.value.detail


def test_the_engines_of_a_game_are_launched_when_it_starts() -> None:
    specs = (EngineSpec.parse("simple"), EngineSpec.parse("random"))
    seats = EngineSeats(specs, CONTROL, 10.0)
    try:
        [job] = schedule(Rules(target=1), [0, 1], 1, 3)
        players = seats.players(job)
        assert all(e.process is not None and e.process.alive for e in seats.engines)
        log = play_game(job.rules, players, job.seed, job.key)
        assert log.fault is None and log.game.is_over
        assert [e.id.name for e in seats.engines] == ["Simple", "Random"]
    finally:
        seats.close()
    assert all(e.process is None for e in seats.engines)


def test_the_check_before_game_1_names_the_first_engine_that_fails() -> None:
    """The engines load together, and are checked in their order: the first that fails is
    the one named, whatever the others do."""
    silent = EngineSpec((sys.executable, "-c", SILENT), name="Silent")
    specs = [EngineSpec.parse("random"), silent, EngineSpec.parse("nosuchengine")]
    with pytest.raises(EngineNotReady, match="engine 'Silent' cannot be used: no ginok"):
        preflight(specs, CONTROL, 1.0)
    ids = preflight([EngineSpec.parse("simple"), EngineSpec.parse("random")], CONTROL, 10.0)
    assert [i.name for i in ids] == ["Simple", "Random"]
