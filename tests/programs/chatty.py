"""Hostile test engine: writes 100 MB to stderr before and while answering on stdout."""

import sys

BLOCK = b"noise " * 10922 + b"\n"  # about 64 KiB
TOTAL = 100 * 1000 * 1000


def spam(nbytes: int) -> None:
    err = sys.stderr.buffer
    for _ in range(nbytes // len(BLOCK) + 1):
        err.write(BLOCK)
    err.flush()


spam(TOTAL // 2)
sys.stdout.write("ready\n")
sys.stdout.flush()
for line in sys.stdin:
    spam(TOTAL // 2)
    sys.stdout.write(line)
    sys.stdout.flush()
