"""Hostile test engine: ignores SIGTERM, stdin EOF and the quit line; it only answers ping."""

import signal
import sys
import time

signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("ready", flush=True)
for line in sys.stdin:
    if line.strip() == "ping":
        print("pong", flush=True)
while True:
    time.sleep(60)
