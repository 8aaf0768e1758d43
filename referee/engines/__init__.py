"""One untrusted engine: its process (``process``) behind the protocol's transport
(``transport``), in its sandbox (``sandbox``, with ``outputs``: the referee's own files that no
engine may see), as a seat at the table (``engine``: the protocol spoken, every misbehaviour a
ruling), its clock (``clock``), its CPUs (``affinity``), the check before game 1
(``preflight``), the conformance battery (``check``), and one engine driven from Python
(``engine_api``).

Nothing here knows of matches, tournaments, stores or pages: it imports only
``referee.errors`` and ``referee.defaults`` from the rest of the referee.
"""
