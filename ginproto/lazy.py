"""Names of a package imported on first use.

A package that re-exports its public names lists where each one lives; ``lazy_names`` turns
that table into the module-level ``__getattr__`` and ``__dir__`` (PEP 562) that import the
defining module the first time a name is read, and keep the value in the package's globals so
the next read costs nothing. ``import ginproto`` and ``import referee`` stay cheap this way.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from typing import Any


def lazy_names(
    package: str,
    where: Mapping[str, Sequence[str]],
    namespace: MutableMapping[str, Any],
    public: Sequence[str],
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``.

    ``where`` maps each module to the names it defines; ``namespace`` is the package's
    ``globals()``, where a name is kept once imported; ``public`` is its ``__all__``.
    """
    module_of = {name: module for module, names in where.items() for name in names}

    def getattr_(name: str) -> Any:
        module = module_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted({*namespace, *public})

    return getattr_, dir_
