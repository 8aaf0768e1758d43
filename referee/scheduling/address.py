"""The ``--dask`` value: ``local:N`` or a scheduler's address, checked before anything starts.

It sits below the Dask backend (``referee.cluster``, which plays the games that scheduling
plans, and so imports it): a tournament's settings check the address here without ever
importing the cluster. The backend's error, ``DaskError``, is ``referee.errors``', which the
commands catch without importing the backend.
"""

from __future__ import annotations

from typing import Final

LOCAL: Final = "local:"


def parse_address(text: str) -> str:
    """Check a ``--dask`` value: ``local:N`` (N worker processes here) or a scheduler address
    (``tcp://host:8786``, ``host:8786``, ``tls://...``). Returns it stripped;
    ``ValueError`` says what is wrong."""
    address = text.strip()
    if address.startswith(LOCAL):
        count = address[len(LOCAL) :]
        if not count.isdigit() or int(count) < 1:
            raise ValueError(f"expected local:N with N at least 1, not {text!r}")
        return address
    if not address or any(c.isspace() for c in address) or ":" not in address:
        raise ValueError(
            f"expected a scheduler address such as tcp://host:8786, or local:N, not {text!r}"
        )
    return address
