"""Test engine: completes the handshake, then at its first ``go`` closes its stdout
(``closes_pipe.py stdout``), or answers it and closes its stdin (``closes_pipe.py stdin``),
and sleeps on. Either is a crash (spec/PROTOCOL.md section 10), to be ruled at once."""

import os
import sys
import time

which = sys.argv[1]
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    if words[0] == "gin":
        print("id name Closer\nginok protocol 1", flush=True)
    elif words[0] == "isready":
        print("readyok", flush=True)
    elif words[0] == "quit":
        sys.exit(0)
    elif words[0] == "go":
        # A player's first decision is the upcard's offer, or the draw if the other took it.
        if which == "stdout":
            os.close(1)
        else:
            print("move pass" if words[1] == "offer" else "move stock", flush=True)
            os.close(0)
        break
while True:
    time.sleep(60)
