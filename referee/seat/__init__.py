"""One engine's seat at the table: the untrusted process (``process``) behind the protocol's
transport (``transport``), in its sandbox (``sandbox``), playing as a player of the table
(``player``: the protocol spoken, every misbehaviour a ruling), its clock (``clock``), its CPUs
(``affinity``), the check before game 1 (``preflight``), the conformance battery (``check``),
and one engine driven from Python (``running``: ``RunningEngine.popen``).

The bots themselves are elsewhere: the top-level ``engines`` package holds the built-in ones,
which the seat runs as it runs any program.

Nothing here knows of matches, tournaments, stores or pages: it imports only
``referee.errors``, ``referee.defaults`` and ``referee.outputs`` from the rest of the referee.
"""
