"""Hostile test engine: a 10 MB line, then a normal line, then it echoes like a good engine."""

import sys

out = sys.stdout.buffer
out.write(b"x" * (10 * 1000 * 1000) + b"\n")
out.write(b"after\n")
out.flush()
for raw in sys.stdin.buffer:
    out.write(raw)
    out.flush()
