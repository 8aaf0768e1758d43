"""The sample engines. Each is an independent program that speaks only the protocol.

They use the Python engine SDK (``ginproto.sdk``) and nothing of the referee. Run one by hand
with ``python -m engines.random_engine`` (or the installed ``gin-random`` command) and type
``gin`` to see it answer.

``BUILTIN`` maps each engine's short name to the argv that starts it. The argv is built when
it is looked up, with the Python interpreter running at that moment, so it is always the
interpreter (and virtual environment) of the caller. Engines in other languages are listed in
``_SCRIPTS`` with their interpreter; ``js-simple`` (``engines/simple.js``) is written from
spec/PROTOCOL.md alone and runs under ``node``. ``openspiel:simple`` is OpenSpiel's
``SimpleGinRummyBot`` through the adapter ``engines/openspiel_engine.py`` (docs/OPENSPIEL.md).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ginproto.sdk import Engine

_MODULES: dict[str, tuple[str, str]] = {
    "random": ("engines.random_engine", "RandomEngine"),
    "simple": ("engines.simple_engine", "SimpleEngine"),
    "expert": ("engines.expert_engine", "ExpertEngine"),
    "camper": ("engines.camper_engine", "CamperEngine"),
}
"""The Python engines: short name -> (module, its engine class, for playing in process)."""

_MODULE_ARGS: dict[str, tuple[str, ...]] = {
    "openspiel:simple": ("engines.openspiel_engine", "simple"),
}
"""Python engines started with arguments: short name -> (module, arguments...). The OpenSpiel
engine needs the ``openspiel`` extra (``pyspiel``)."""

_HERE = Path(__file__).resolve().parent

_SCRIPTS: dict[str, tuple[str, str]] = {
    "js-simple": ("node", "simple.js"),
}
"""Engines that are not Python modules: short name -> (interpreter, file in ``engines/``)."""


class _Builtin(Mapping[str, list[str]]):
    """Short name -> argv, resolved at each lookup."""

    def __getitem__(self, name: str) -> list[str]:
        if name in _SCRIPTS:
            interpreter, script = _SCRIPTS[name]
            return [interpreter, str(_HERE / script)]
        if name in _MODULE_ARGS:
            module, *args = _MODULE_ARGS[name]
            return [sys.executable, "-m", module, *args]
        return [sys.executable, "-m", _MODULES[name][0]]

    def __iter__(self) -> Iterator[str]:
        yield from _MODULES
        yield from _SCRIPTS
        yield from _MODULE_ARGS

    def __len__(self) -> int:
        return len(_MODULES) + len(_SCRIPTS) + len(_MODULE_ARGS)

    def __repr__(self) -> str:
        return f"BUILTIN({', '.join(self)})"


BUILTIN: Mapping[str, list[str]] = _Builtin()
"""The built-in engines: ``BUILTIN["random"]`` is the argv of the random engine."""

IN_PROCESS: tuple[str, ...] = tuple(_MODULES)
"""The built-in engines that ``in_process`` makes."""


def in_process(name: str) -> Engine:
    """A new object of the built-in engine ``name`` (one of ``IN_PROCESS``), to play in process
    (an SDK ``Engine`` is a ``ginproto.table.Player``). Raises ``ValueError`` for another name."""
    if name not in _MODULES:
        known = ", ".join(IN_PROCESS)
        raise ValueError(f"no built-in engine {name!r} plays in process (one of: {known})")
    module, cls = _MODULES[name]
    engine: Engine = getattr(importlib.import_module(module), cls)()
    return engine


__all__ = ["BUILTIN", "IN_PROCESS", "in_process"]
