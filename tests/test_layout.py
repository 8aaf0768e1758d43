"""The package layout: no import cycle among the modules of ginproto, referee and engines,
and each layer imports only the layers below it (ginproto and engines no referee; in referee,
``engines`` no other concern, ``results`` none that plays or shows the games).

Every module's imports are read with ``ast`` - those at the top, inside functions and under
``TYPE_CHECKING`` alike - so a cycle hidden behind a lazy import still fails, naming its modules.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("ginproto", "referee", "engines")


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules that ``name`` imports anywhere in its source."""
    is_package = path.name == "__init__.py"
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".")
                if not is_package:
                    anchor.pop()
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                targets.add(submodule if submodule in modules else base)
    return {target for target in targets if target in modules and target != name}


@functools.cache
def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph as the list of its modules (first repeated at the end), or None."""
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state and (cycle := visit(target)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_packages_have_no_import_cycle() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_graph_sees_lazy_and_type_checking_imports() -> None:
    graph = import_graph()
    assert "referee.engines.engine" in graph["referee.scheduling.seats"]  # top-level import
    assert {"ginproto", "ginproto.protocol", "referee"} <= set(graph)


ABOVE_ENGINES = ("scheduling", "cluster", "results", "views", "cli", "api", "tournament")
ABOVE_RESULTS = ("scheduling", "cluster", "views", "cli", "api", "tournament")


def _reaching(graph: dict[str, set[str]], package: str, forbidden: str) -> list[str]:
    """The imports from ``package``'s modules into ``forbidden`` (a package), as ``a -> b``."""
    return sorted(
        f"{name} -> {target}"
        for name, targets in graph.items()
        if name == package or name.startswith(package + ".")
        for target in targets
        if target == forbidden or target.startswith(forbidden + ".")
    )


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [
        ("ginproto", "referee"),  # the rules and the protocol know no referee
        ("engines", "referee"),  # the built-in engines speak the protocol, as any engine does
        # One untrusted process knows nothing of matches, stores, clusters or pages ...
        *(("referee.engines", f"referee.{above}") for above in ABOVE_ENGINES),
        # ... and the results nothing of who plays the games, nor of who shows them.
        *(("referee.results", f"referee.{above}") for above in ABOVE_RESULTS),
        # A cluster plays the jobs that scheduling makes: scheduling knows no cluster.
        ("referee.scheduling", "referee.cluster"),
        # The views show results (``referee.results``), never how the games are played.
        ("referee.views", "referee.scheduling"),
        ("referee.views", "referee.cluster"),
        # The pages tell the game through the narration, not through the terminal UIs.
        ("referee.views.html", "referee.views.play"),
        ("referee.views.html", "referee.views.replay"),
    ],
)
def test_the_layers_import_only_downwards(package: str, forbidden: str) -> None:
    assert _reaching(import_graph(), package, forbidden) == []


def test_the_layer_check_sees_an_import_upwards() -> None:
    graph = {"engines.bot": {"referee.scheduling.match"}, "referee.scheduling.match": set()}
    assert _reaching(graph, "engines", "referee") == ["engines.bot -> referee.scheduling.match"]


def test_find_cycle_names_the_modules_of_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_module_stands_in_for_another() -> None:
    """One path per module: none replaces itself in ``sys.modules`` to alias another."""
    aliases = [
        name
        for name, path in _modules().items()
        if "sys.modules[__name__]" in path.read_text()
    ]
    assert aliases == []
