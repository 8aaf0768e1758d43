"""A survey of the source tree, for a reviewer: the longest functions, the modules over 600
lines, and the import edges between the referee's sub-packages.

Usage: ``python dev/house.py [ROOT]`` (ROOT defaults to the checkout this script is in).
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.test_layout import _imports, _modules

LONG_MODULE = 600


def longest_functions(root: Path, count: int) -> list[tuple[int, str]]:
    """The ``count`` longest functions and methods, as (lines, 'module:qualified name')."""
    found: list[tuple[int, str]] = []
    for module, path in _modules(root).items():

        def visit(node: ast.AST, prefix: str, module: str = module) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                    name = f"{prefix}{child.name}"
                    lines = (child.end_lineno or child.lineno) - child.lineno + 1
                    found.append((lines, f"{module}:{name}"))
                    visit(child, name + ".", module)
                elif isinstance(child, ast.ClassDef):
                    visit(child, f"{prefix}{child.name}.", module)

        visit(ast.parse(path.read_text(), str(path)), "")
    return sorted(found, reverse=True)[:count]


def long_modules(root: Path) -> list[tuple[int, str]]:
    sizes = [
        (len(path.read_text().splitlines()), str(path.relative_to(root)))
        for path in _modules(root).values()
    ]
    return sorted((size for size in sizes if size[0] > LONG_MODULE), reverse=True)


def _subpackage(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "referee" and len(parts) > 1 else None


def referee_edges(root: Path) -> Counter[tuple[str, str]]:
    """How many module imports run from one referee part (a sub-package or a top module) to
    another, read as tests/test_layout.py reads them (lazy and ``TYPE_CHECKING`` ones too)."""
    modules = _modules(root)
    edges: Counter[tuple[str, str]] = Counter()
    for name, path in modules.items():
        source = _subpackage(name)
        for target in _imports(name, path, modules):
            destination = _subpackage(target)
            if source and destination and destination != source:
                edges[source, destination] += 1
    return edges


def main() -> None:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent)
    print("five longest functions:")
    for lines, name in longest_functions(root, 5):
        print(f"  {lines:4d}  {name}")
    print(f"modules over {LONG_MODULE} lines:")
    for lines, name in long_modules(root) or [(0, "none")]:
        print(f"  {lines:4d}  {name}")
    print("imports between referee sub-packages (from -> to: count):")
    for (source, destination), count in sorted(referee_edges(root).items()):
        print(f"  {source} -> {destination}: {count}")


if __name__ == "__main__":
    main()
