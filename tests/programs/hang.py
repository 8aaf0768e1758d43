"""Hostile test engine: prints nothing and never reads stdin, so its input pipe fills up."""

import time

while True:
    time.sleep(60)
