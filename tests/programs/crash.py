"""Hostile test engine: complains on stderr and exits with code 3 before reading anything."""

import sys

sys.stderr.write("fatal: cannot load weights\n")
sys.exit(3)
