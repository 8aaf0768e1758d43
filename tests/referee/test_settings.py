"""The settings as values (``referee.settings``): `Clock`, `Sandbox` and `Outputs` check
themselves with the messages users saw before, the API, the tournament config and the command
line build the same values, and the loose keywords they replace still work for one minor
version, each with a ``DeprecationWarning`` that names its replacement."""

from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path
from typing import Any

import pytest

from referee import (
    Clock,
    ConfigError,
    Limits,
    Outputs,
    Sandbox,
    SandboxMode,
    TimeControl,
    TimeControlError,
    play_match,
    play_tournament,
)
from referee.scheduling.loader import build_config
from referee.settings import deprecated_keywords

ENGINES = [{"command": "simple"}, {"command": "random"}]


# --- each value checks itself, with the message of before ------------------------------------


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"tc": "fast"}, "time control must be BASE+INC in seconds (e.g. 60+0.5), not 'fast'"),
        ({"tc": "99999999999999+0"}, "the base time is too long"),
        ({"move_timeout": 0}, "the move timeout must be more than zero seconds, not 0"),
        ({"move_timeout": float("nan")}, "the move timeout must be a finite number"),
        ({"startup_timeout": -1}, "the startup timeout must be more than zero seconds"),
        ({"time_margin": -1}, "the time margin must be seconds from 0 to 3600, not -1"),
        ({"time_margin": True}, "the time margin must be seconds from 0 to 3600"),
    ],
)
def test_a_bad_clock_is_refused_as_it_is_made(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(TimeControlError) as caught:
        Clock(**fields)
    assert message in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_the_api_and_the_config_word_a_bad_clock_the_same_way_they_did() -> None:
    """The one check, the setting named as each front end names it."""
    with pytest.raises(TimeControlError, match=r"^the move timeout must be more than zero"):
        Clock(move_timeout=-1)
    table = {"engines": ENGINES, "move_timeout": -1, "tc": "x", "time_margin": 4000}
    with pytest.raises(ConfigError) as caught:
        build_config(table, where="cup.toml: ", find_engines=False)
    assert str(caught.value).splitlines()[1:] == [
        "  - tc: time control must be BASE+INC in seconds (e.g. 60+0.5), not 'x'",
        "  - move_timeout must be more than zero seconds, not -1",
        "  - time_margin must be seconds from 0 to 3600, not 4000",
    ]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"mode": "maybe"}, "sandbox must be one of auto, require, off, not 'maybe'"),
        ({"limits": {"memory": "lots"}}, "expected a size such as 2G, 512M or 100000"),
        ({"limits": {"colour": 1}}, "unknown limit 'colour'"),
        ({"limits": [{"cpus": 0}]}, "cpus must be a number of CPUs"),
        ({"network": "yes"}, "network must be True or False"),
        ({"read": "/opt"}, "read must be a sequence of paths"),
    ],
)
def test_a_bad_sandbox_is_refused_as_it_is_made(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Sandbox(**fields)


def test_a_bad_output_is_refused() -> None:
    with pytest.raises(ValueError, match="record must be a path"):
        Outputs(record=3)  # type: ignore[arg-type]


def test_the_values_are_frozen_and_compare_by_value(tmp_path: Path) -> None:
    assert Clock(tc="60+1", move_timeout=5) == Clock("60+1", 5.0)
    assert Sandbox(mode="off", limits={"memory": "1G"}) == Sandbox(
        SandboxMode.OFF, Limits().updated({"memory": "1G"})
    )
    assert Outputs(record=tmp_path / "g.gin").record == str(tmp_path / "g.gin")
    with pytest.raises(dataclasses.FrozenInstanceError):
        Clock().tc = "inf"  # type: ignore[misc]


def test_an_unset_setting_is_the_default_or_the_configs() -> None:
    assert Clock().control == TimeControl.parse("120+1", move=10.0, margin=0.1)
    assert Clock().startup == 10.0
    config = build_config({"engines": ENGINES, "tc": "60+1", "move_timeout": 3}, find_engines=False)
    assert config.clock == Clock("60+1", 3.0, 10.0, 0.1)
    assert Clock(tc="inf").over(config.clock) == Clock("inf", 3.0, 10.0, 0.1)  # unset: base
    assert Clock.of(TimeControl(12345678.5, 2.5, 4.0, 0.2)).control == TimeControl(
        12345678.5, 2.5, 4.0, 0.2
    )


def test_a_tournament_config_holds_the_values() -> None:
    table = {
        "engines": ENGINES,
        "tc": 60,
        "startup_timeout": 2,
        "sandbox": "off",
        "limits": {"memory": "1G"},
        "network": True,
        "read": ["/opt"],
    }
    config = build_config(table, find_engines=False)
    assert config.clock == Clock("60+0", 10.0, 2.0, 0.1)
    assert config.sandbox == Sandbox(
        SandboxMode.OFF, Limits().updated({"memory": "1G"}), True, ["/opt"]
    )
    assert config.control == config.clock.control and config.startup_timeout == 2.0


def test_the_stored_settings_keep_their_keys() -> None:
    """A store written before the values existed resumes: its keys are the same."""
    config = build_config({"engines": ENGINES, "seed": 1, "tc": "60+0.5"}, find_engines=False)
    settings = config.settings()
    assert (settings["tc"], settings["move_timeout"]) == ("60+0.5", 10.0)
    assert config.run_options() == {
        "concurrency": 1,
        "startup_timeout": 10.0,
        "time_margin": 0.1,
        "sandbox": "auto",
        "limits": {},
        "network": False,
        "read": [],
        "affinity": False,
    }
    again = build_config({**settings, **config.run_options()}, stored=True, find_engines=False)
    assert again == config


# --- the loose keywords of before --------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "replacement"),
    [
        ({"tc": "inf"}, "give clock=Clock(tc=...)"),
        ({"move_timeout": 5}, "give clock=Clock(move_timeout=...)"),
        ({"startup_timeout": 5}, "give clock=Clock(startup_timeout=...)"),
        ({"time_margin": 0.2}, "give clock=Clock(time_margin=...)"),
        ({"limits": {"memory": "1G"}}, "give sandbox=Sandbox(limits=...)"),
        ({"network": True}, "give sandbox=Sandbox(network=...)"),
        ({"read": ["/opt"]}, "give sandbox=Sandbox(read=...)"),
        ({"record": "g.gin"}, "give outputs=Outputs(record=...)"),
        ({"debug_log": "d.log"}, "give outputs=Outputs(debug_log=...)"),
        ({"stderr_dir": "err"}, "give outputs=Outputs(stderr_dir=...)"),
        ({"html": "r.html"}, "give outputs=Outputs(html=...)"),
    ],
)
def test_each_old_keyword_warns_and_names_its_replacement(
    old: dict[str, Any], replacement: str
) -> None:
    (name,) = old
    with pytest.warns(DeprecationWarning, match=rf"play_match\({name}=\.\.\.\) is deprecated: "):
        values = deprecated_keywords("play_match", old, None, None, None)
    with pytest.warns(DeprecationWarning) as caught:
        deprecated_keywords("play_match", old, None, None, None)
    assert replacement in str(caught[0].message)
    group = {"clock": 0, "sandbox": 1, "outputs": 2}[replacement.split("=")[0].split()[-1]]
    kind = (Clock, Sandbox, Outputs)[group]
    assert values[group] == kind(**{replacement.split("(")[1].split("=")[0]: old[name]})


def test_a_sandbox_mode_as_a_string_warns() -> None:
    with pytest.warns(DeprecationWarning, match=r"sandbox='off'\) is deprecated: give sandbox="):
        _, box, _ = deprecated_keywords("play_match", {}, None, "off", None)
    assert box == Sandbox(mode="off")


def test_an_old_time_control_keeps_its_move_limit_and_margin() -> None:
    control = TimeControl.parse("60+0.5", move=3.0, margin=0.25)
    with pytest.warns(DeprecationWarning):
        clock, _, _ = deprecated_keywords(
            "play_match", {"tc": control, "move_timeout": 9, "startup_timeout": 4}, None, None, None
        )
    assert clock is not None
    assert clock.control == control and clock.startup == 4.0


def test_old_and_new_for_the_same_setting_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=r"got both clock= and tc=: give tc in the Clock"):
        deprecated_keywords("play_match", {"tc": "inf"}, Clock(), None, None)
    with pytest.raises(TypeError, match=r"got both outputs= and record="):
        play_match(["simple", "random"], outputs=Outputs(), record="g.gin")
    with pytest.raises(TypeError, match=r"got both sandbox= and network="):
        play_match(["simple", "random"], sandbox=Sandbox(), network=True)


def test_a_keyword_never_taken_is_still_a_type_error() -> None:
    with pytest.raises(
        TypeError, match=r"play_match\(\) got an unexpected keyword argument 'gmes'"
    ):
        play_match(["simple", "random"], gmes=2)
    with pytest.raises(TypeError, match="unexpected keyword argument 'record'"):
        play_tournament({"engines": ENGINES}, record="g.gin")


def test_a_bad_old_value_gives_the_message_of_before() -> None:
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match="time control"):
        play_match(["simple", "random"], tc="fast")
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match="'maybe'"):
        play_match(["simple", "random"], sandbox="maybe")


def test_the_old_form_plays_the_same_match_as_the_new(tmp_path: Path) -> None:
    common: dict[str, Any] = {"games": 2, "seed": 5, "rules": {"target": 25}}
    with pytest.warns(DeprecationWarning) as caught:
        old = play_match(
            ["simple", "random"],
            tc="inf",
            move_timeout=5,
            sandbox="off",
            record=tmp_path / "old.gin",
            **common,
        )
    assert len(caught) == 4
    new = play_match(
        ["simple", "random"],
        clock=Clock(tc="inf", move_timeout=5),
        sandbox=Sandbox(mode="off"),
        outputs=Outputs(record=tmp_path / "new.gin"),
        **common,
    )
    assert old.to_json() == new.to_json()
    dated = ("[Date ",)
    assert [
        x for x in (tmp_path / "old.gin").read_text().splitlines() if not x.startswith(dated)
    ] == [x for x in (tmp_path / "new.gin").read_text().splitlines() if not x.startswith(dated)]


def test_the_old_tournament_overrides_set_only_their_own_key(tmp_path: Path) -> None:
    table = {"games": 1, "seed": 2, "move_timeout": 7, "engines": ENGINES, "sandbox": "off"}
    seen: list[Any] = []
    with pytest.warns(DeprecationWarning, match=r"play_tournament\(tc=\.\.\.\) is deprecated"):
        play_tournament(table, output=tmp_path / "old", tc="inf", on_start=seen.append)
    play_tournament(table, output=tmp_path / "new", clock=Clock(tc="inf"), on_start=seen.append)
    assert seen[0].config.clock == seen[1].config.clock == Clock("inf", 7.0, 10.0, 0.1)


def test_a_tournament_takes_no_record_file_of_its_own(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="keeps its records in its output folder"):
        play_tournament({"engines": ENGINES}, output=tmp_path, outputs=Outputs(record="g.gin"))


def test_the_old_attributes_of_a_tournament_config_warn() -> None:
    config = build_config({"engines": ENGINES, "tc": "60+1"}, find_engines=False)
    with pytest.warns(DeprecationWarning, match=r"TournamentConfig.tc is deprecated: read"):
        assert config.tc == "60+1"
    with pytest.warns(DeprecationWarning, match="TournamentConfig.clock.move_timeout"):
        assert config.move_timeout == 10.0
    with pytest.warns(DeprecationWarning, match="TournamentConfig.sandbox.limits"):
        assert config.limits == Limits()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert config.clock.tc == "60+1" and config.startup_timeout == 10.0
