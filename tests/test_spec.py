"""The spec's generated examples cannot drift from the code: they are regenerated and diffed."""

from __future__ import annotations

from referee.transcript import SPEC, render, spec_section, transcript


def test_protocol_transcript_in_the_spec_is_what_the_referee_sends_today() -> None:
    expected = render(transcript())
    actual = spec_section(SPEC.read_text())
    assert actual == expected, "spec/PROTOCOL.md is stale: run python -m referee.transcript --write"


def test_transcript_shows_a_whole_game_with_every_kind_of_line() -> None:
    text = transcript()
    for word in (
        "gin ",
        "ginok",
        "isready",
        "newgame",
        "position",
        "go offer",
        "go draw",
        "go discard",
        "move ",
        "handover",
        "gameover",
        "matchover",
        "quit",
    ):
        assert word in text, word
