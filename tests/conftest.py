"""Test configuration: slow soak tests run under CI (CI=true) or with --slow."""

from __future__ import annotations

import os

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--slow", action="store_true", help="also run the tests marked slow")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--slow") or os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        return
    skip = pytest.mark.skip(reason="slow: runs under CI=true or with --slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
