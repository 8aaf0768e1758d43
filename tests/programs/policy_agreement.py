"""A deterministic policy for the agreement test (tests/core/test_policy_agreement.py), played both
in the environment and through ``gin-policy``.

Its choice is a function of the whole observation and mask (a hash of their bytes), so any
difference in what a seat is shown sends the game another way; and it writes that hash to the
file ``GIN_POLICY_LOG`` names, one line a decision, so the test compares every observation and
mask one by one. It knocks when it can and discards a highest card, so that hands end soon.
"""

import hashlib
import os

import numpy as np

KNOCK_BASE, DISCARD_BASE = 56, 4


def digest(observation):
    data = observation["observation"].tobytes() + observation["action_mask"].tobytes()
    return hashlib.sha256(data).hexdigest()


def act(observation):
    seen = digest(observation)
    log = os.environ.get("GIN_POLICY_LOG")
    if log:
        with open(log, "a") as f:
            f.write(seen + "\n")
    legal = np.flatnonzero(observation["action_mask"])
    pick = int(seen[:16], 16)
    knocks = legal[legal >= KNOCK_BASE]  # the knocks and big gin
    if knocks.size:
        return knocks[pick % knocks.size]
    discards = legal[(legal >= DISCARD_BASE) & (legal < KNOCK_BASE)]
    if discards.size:
        ranks = (discards - DISCARD_BASE) % 13
        highest = discards[ranks == ranks.max()]
        return highest[pick % highest.size]
    return legal[pick % legal.size]  # take or pass, stock or pile
