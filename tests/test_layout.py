"""The package layout: no import cycle among the modules of ginproto, referee and engines,
and each layer imports only the layers below it: ginproto and engines no referee, and in the
referee each part only the parts `REFEREE_LAYERS` allows it (the whole layering, in one table).

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


def _modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the packages under ``root``, by its dotted name."""
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
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
    assert "referee.seat.player" in graph["referee.scheduling.seats"]  # top-level import
    assert {"ginproto", "ginproto.protocol", "referee"} <= set(graph)


def _reaching(graph: dict[str, set[str]], package: str, forbidden: str) -> list[str]:
    """The imports from ``package``'s modules into ``forbidden`` (a package), as ``a -> b``."""
    return sorted(
        f"{name} -> {target}"
        for name, targets in graph.items()
        if name == package or name.startswith(package + ".")
        for target in targets
        if target == forbidden or target.startswith(forbidden + ".")
    )


# The referee's layering, whole: what each of its parts may import of the others. A part not
# named here is refused until it is placed; a part imports itself freely.
BASE = frozenset({"errors", "defaults", "outputs", "gate"})
REFEREE_LAYERS: dict[str, frozenset[str]] = {
    "errors": frozenset(),
    "defaults": frozenset(),
    "outputs": frozenset({"errors"}),
    # The gate before the web servers (the live page's, the remote engines' listener).
    "gate": frozenset(),
    # One engine's seat knows nothing of matches, stores, clusters or pages ...
    "seat": BASE,
    # ... the results nothing of who plays the games, nor of who shows them ...
    "results": BASE,
    # ... a run's settings are values made of the seat's parts (its clock, its sandbox) ...
    "settings": BASE | {"seat", "results"},
    # ... the games are scheduled over seats and counted into results ...
    "scheduling": BASE | {"seat", "results", "settings"},
    # ... a cluster is one more place to play them, above the scheduling, never below it ...
    "cluster": BASE | {"seat", "results", "settings", "scheduling"},
    # ... the views read results (and a seat, to play a person against an engine), never how
    # the games are scheduled ...
    "views": BASE | {"seat", "results"},
    # ... the API sets a run up from all of these, and the command line is the API's.
    "api": BASE | {"seat", "results", "settings", "scheduling", "cluster", "views"},
    "cli": BASE | {"seat", "results", "settings", "scheduling", "cluster", "views", "api"},
    "__main__": BASE | {"cli"},
}


def _part(module: str) -> str | None:
    """The referee part a module belongs to (``referee.seat.process`` -> ``seat``); None for the
    package ``referee`` itself (its lazy exports may name anything) and outside the referee."""
    parts = module.split(".")
    return parts[1] if parts[0] == "referee" and len(parts) > 1 else None


def referee_violations(graph: dict[str, set[str]]) -> list[str]:
    """Every import between two parts of the referee that the layering does not allow."""
    found = []
    for name, targets in graph.items():
        source = _part(name)
        if source is None:
            continue
        allowed = REFEREE_LAYERS.get(source)
        for target in sorted(targets):
            part = _part(target)
            if part is None or part == source:
                continue
            if allowed is None or part not in allowed:
                found.append(f"{name} -> {target}")
    return sorted(found)


def test_every_part_of_the_referee_has_its_place_in_the_layering() -> None:
    parts = {part for name in import_graph() if (part := _part(name)) is not None}
    assert sorted(parts - set(REFEREE_LAYERS)) == []


@pytest.mark.parametrize("part", sorted(REFEREE_LAYERS))
def test_the_referee_imports_only_as_its_layering_allows(part: str) -> None:
    assert [
        edge for edge in referee_violations(import_graph()) if _part(edge.split(" -> ")[0]) == part
    ] == []


def test_the_layering_has_no_circle() -> None:
    graph = {part: set(allowed) for part, allowed in REFEREE_LAYERS.items()}
    assert find_cycle(graph) is None


def test_a_planted_back_reference_is_refused() -> None:
    graph = {name: set(targets) for name, targets in import_graph().items()}
    graph["referee.results.report"].add("referee.scheduling.match")
    graph["referee.scheduling.plan"].add("referee.cluster.backend")
    planted = set(referee_violations(graph)) - set(referee_violations(import_graph()))
    assert planted == {
        "referee.results.report -> referee.scheduling.match",
        "referee.scheduling.plan -> referee.cluster.backend",
    }


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [
        ("ginproto", "referee"),  # the rules and the protocol know no referee
        ("engines", "referee"),  # the built-in engines speak the protocol, as any engine does
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
