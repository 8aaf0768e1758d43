"""One engine's seat (``referee.seat``): the untrusted process, its sandbox, its clock, the
check before game 1 and the conformance battery."""
