"""Well-behaved test engine: echoes each line; a few commands exercise the referee's process layer.

quit -> exit 0; exit N -> exit with code N; kill -> SIGKILL itself; env -> print the sorted
environment variable names; cwd -> print the working directory; badbytes -> print invalid UTF-8;
stderr TEXT -> write TEXT to stderr; anything else is echoed back.
"""

import os
import signal
import sys


def main() -> None:
    out = sys.stdout.buffer
    for raw in sys.stdin.buffer:
        line = raw.decode("utf-8").rstrip("\n")
        if line == "quit":
            return
        if line.startswith("exit "):
            sys.exit(int(line.split()[1]))
        if line == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        if line == "env":
            out.write((",".join(sorted(os.environ)) + "\n").encode())
        elif line == "cwd":
            out.write((os.getcwd() + "\n").encode())
        elif line == "badbytes":
            out.write(b"ok\xff\xfeok\r\n")
        elif line.startswith("stderr "):
            sys.stderr.write(line[7:] + "\n")
            sys.stderr.flush()
            continue
        else:
            out.write(raw)
        out.flush()


if __name__ == "__main__":
    main()
