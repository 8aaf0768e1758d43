"""Hostile test engine: leaves a child that ignores SIGTERM and keeps stdout/stderr open.

The parent prints the child's pid and exits. With ``--escape`` the child first moves to a
session of its own (out of the engine's process group), as a deliberately evasive engine might.
"""

import os
import signal
import sys
import time

escape = "--escape" in sys.argv
pid = os.fork()
if pid == 0:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if escape:
        os.setsid()
    os.write(1, f"{os.getpid()}\n".encode())
    while True:
        time.sleep(60)
else:
    time.sleep(0.2)  # let the child report its pid first
    os._exit(0)
