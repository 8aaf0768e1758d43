"""The Python names README.md and docs/API.md mention are the package's own, by their
current names: every ``referee.X``/``ginproto.X`` resolves, every import in their code
blocks runs, and an old name kept as an alias (``referee.Engine``, now ``RunningEngine``)
appears only where the text says it is the old name."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

import referee

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", ROOT / "docs" / "API.md", ROOT / "docs" / "DEVELOPMENT.md"]
DOTTED = re.compile(r"\b(?:referee|ginproto)(?:\.[A-Za-z_]\w*)+")
IMPORT = re.compile(r"^(?:>>> )?(from (?:referee|ginproto)[\w.]* import [\w, ]+)$", re.M)
BLOCK = re.compile(r"^```(?:python|pycon)\n(.*?)^```", re.S | re.M)


def resolves(dotted: str) -> bool:
    """Whether ``dotted`` is a module, or an attribute of one, of the installed packages."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            if not hasattr(obj, name):
                return False
            obj = getattr(obj, name)
        return True
    return False


def old_names() -> set[str]:
    """The exported names of ``referee`` that are another exported name's old alias."""
    out = set()
    for name in referee.__all__:
        current = getattr(getattr(referee, name), "__name__", name)
        if current != name and getattr(referee, current, None) is getattr(referee, name):
            out.add(name)
    return out


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_dotted_name_of_the_docs_exists(doc: Path) -> None:
    text = doc.read_text()
    missing = sorted({n for n in DOTTED.findall(text) if not resolves(n)})
    assert missing == [], f"{doc.name} names what the packages do not have: {missing}"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_import_in_the_code_blocks_runs(doc: Path) -> None:
    for block in BLOCK.findall(doc.read_text()):
        for line in IMPORT.findall(block):
            exec(line, {})  # an import line, nothing else: ImportError if a name is gone


def test_engine_is_the_old_name_of_running_engine() -> None:
    assert "Engine" in old_names() and "RunningEngine" not in old_names()


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_the_docs_use_the_current_names(doc: Path) -> None:
    """``Engine.popen`` or ``referee.Engine`` only in a sentence that calls it the old name;
    ``ginproto.sdk.Engine``, the SDK's base class, is another class."""
    old = old_names()
    stale = []
    for number, line in enumerate(doc.read_text().splitlines(), 1):
        for name in old:
            use = re.compile(rf"(?<![\w.])(?:referee\.)?{name}\.\w+|\breferee\.{name}\b")
            if use.search(line) and "old name" not in line:
                stale.append(f"{doc.name}:{number}: {line.strip()}")
    assert stale == []
