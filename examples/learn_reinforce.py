"""Train a small gin rummy policy with NumPy alone, then let it play in the referee.

The policy is a network with one hidden layer, from the environment's observation to a score
for each of the 109 actions; the action mask keeps it to legal moves. It learns by REINFORCE
(the policy gradient, with a running baseline) in ``ginproto/GinRummy-v0``, one hand per
episode against the built-in ``simple`` engine, the reward being the hand's points. Then the
same file is an engine: ``gin-policy examples/learn_reinforce.py:act`` plays the trained
weights through the protocol, and the script runs two ``ginref match``es (against ``random``
and ``simple``) to show the result block.

Usage (needs the env extra, ``pip install -e '.[env]'``)::

    python examples/learn_reinforce.py            # train about 3 minutes, then play
    python examples/learn_reinforce.py --minutes 1 --games 20
    python examples/learn_reinforce.py --play     # play the saved weights only

The weights are saved beside this file (``learn_reinforce.npz``), where ``act`` reads them:
the sandbox shows the engine this file's folder, read-only.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

HIDDEN = 64
WEIGHTS = Path(__file__).with_suffix(".npz")
Array = npt.NDArray[np.float64]


class Policy:
    """observation -> tanh hidden layer -> one logit per action, masked softmax."""

    def __init__(self, inputs: int, actions: int, rng: np.random.Generator) -> None:
        self.params: dict[str, Array] = {
            "w1": rng.normal(0, 1 / np.sqrt(inputs), (HIDDEN, inputs)),
            "b1": np.zeros(HIDDEN),
            "w2": rng.normal(0, 0.01, (actions, HIDDEN)),
            "b2": np.zeros(actions),
        }

    def forward(self, x: Array, mask: npt.NDArray[Any]) -> tuple[Array, Array]:
        """The hidden layer and the action probabilities (zero outside the mask)."""
        p = self.params
        hidden = np.tanh(p["w1"] @ x + p["b1"])
        logits = p["w2"] @ hidden + p["b2"]
        logits = np.where(mask > 0, logits, -np.inf)
        e = np.exp(logits - logits.max())
        return hidden, e / e.sum()

    def act(self, observation: dict[str, npt.NDArray[Any]]) -> int:
        """The most likely legal action (the greedy policy, as an engine plays it)."""
        x = observation["observation"].astype(np.float64)
        _, probs = self.forward(x, observation["action_mask"])
        return int(np.argmax(probs))

    def save(self, path: Path) -> None:
        p = self.params
        np.savez(path, w1=p["w1"], b1=p["b1"], w2=p["w2"], b2=p["b2"])

    @classmethod
    def load(cls, path: Path) -> Policy:
        policy = cls.__new__(cls)
        with np.load(path) as data:
            policy.params = {k: data[k] for k in data.files}
        return policy


class Adam:
    def __init__(self, params: dict[str, Array], rate: float) -> None:
        self.rate, self.t = rate, 0
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}

    def step(self, params: dict[str, Array], grads: dict[str, Array]) -> None:
        """Gradient ascent: ``grads`` point uphill."""
        self.t += 1
        for k, g in grads.items():
            self.m[k] = 0.9 * self.m[k] + 0.1 * g
            self.v[k] = 0.999 * self.v[k] + 0.001 * g * g
            m_hat = self.m[k] / (1 - 0.9**self.t)
            v_hat = self.v[k] / (1 - 0.999**self.t)
            params[k] += self.rate * m_hat / (np.sqrt(v_hat) + 1e-8)


def train(minutes: float, opponent: str, seed: int, log_every: int) -> Policy:
    """REINFORCE, one hand per episode, batches of 32 hands, until the time is up."""
    import gymnasium

    import ginproto.env  # noqa: F401 - registers ginproto/GinRummy-v0

    env = gymnasium.make("ginproto/GinRummy-v0", opponent=opponent, episode="hand")
    rng = np.random.default_rng(seed)
    size = env.observation_space["observation"].shape[0]  # type: ignore[index]
    policy = Policy(size, int(env.action_space.n), rng)  # type: ignore[attr-defined]
    optimizer = Adam(policy.params, rate=3e-3)
    baseline, batch = 0.0, 32
    grads = {k: np.zeros_like(v) for k, v in policy.params.items()}
    window: list[float] = []
    hands = steps = 0
    deadline = time.monotonic() + minutes * 60
    start = time.monotonic()
    print(f"training against {opponent} for {minutes:g} minutes (hands of 'standard')")
    while time.monotonic() < deadline:
        observation, _ = env.reset(seed=int(rng.integers(2**31)))
        trajectory: list[tuple[Array, Array, Array, int]] = []
        total, done = 0.0, False
        while not done:
            x = observation["observation"].astype(np.float64)
            hidden, probs = policy.forward(x, observation["action_mask"])
            action = int(rng.choice(len(probs), p=probs))
            trajectory.append((x, hidden, probs, action))
            observation, reward, terminated, truncated, _ = env.step(action)
            total += float(reward)
            done = terminated or truncated
        steps += len(trajectory)
        hands += 1
        window.append(total)
        advantage = (total - baseline) / 25.0  # a hand's points are tens of points
        baseline += 0.01 * (total - baseline)
        p = policy.params
        for x, hidden, probs, action in trajectory:
            d_logits = -probs
            d_logits[action] += 1.0
            d_logits *= advantage
            grads["w2"] += np.outer(d_logits, hidden)
            grads["b2"] += d_logits
            d_hidden = (p["w2"].T @ d_logits) * (1 - hidden * hidden)
            grads["w1"] += np.outer(d_hidden, x)
            grads["b1"] += d_hidden
        if hands % batch == 0:
            optimizer.step(p, {k: g / batch for k, g in grads.items()})
            for g in grads.values():
                g[:] = 0.0
        if hands % log_every == 0:
            elapsed = time.monotonic() - start
            print(
                f"  {hands:>6} hands  {steps / elapsed:6.0f} steps/s"
                f"  mean points per hand (last {len(window)}): {np.mean(window):+6.2f}"
            )
            window.clear()
    return policy


_loaded: Policy | None = None


def act(observation: dict[str, npt.NDArray[Any]]) -> int:
    """The engine's function for ``gin-policy examples/learn_reinforce.py:act``."""
    global _loaded
    if _loaded is None:
        if not WEIGHTS.exists():
            raise SystemExit(f"no trained weights at {WEIGHTS}: run python {__file__} first")
        _loaded = Policy.load(WEIGHTS)
    return _loaded.act(observation)


def play(games: int, seed: int) -> int:
    """Two matches through the referee, the trained policy against random and simple."""
    ginref = shutil.which("ginref") or str(Path(sys.executable).with_name("ginref"))
    gin_policy = shutil.which("gin-policy") or str(Path(sys.executable).with_name("gin-policy"))
    policy = f"{gin_policy} {Path(__file__).resolve()}:act"
    status = 0
    for opponent in ("random", "simple"):
        command = [ginref, "match", policy, opponent, "--games", str(games), "--seed", str(seed)]
        print("\n$ " + " ".join(f"'{c}'" if " " in c else c for c in command), flush=True)
        status |= subprocess.run(command, check=False).returncode
    return status


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--minutes", type=float, default=3.0, help="training time")
    parser.add_argument("--opponent", default="simple", help="the engine to train against")
    parser.add_argument("--games", type=int, default=40, help="games of each match")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--play", action="store_true", help="play the saved weights only")
    parser.add_argument("--log-every", type=int, default=1000, help="hands between reports")
    args = parser.parse_args(argv)
    if not args.play:
        policy = train(args.minutes, args.opponent, args.seed, args.log_every)
        policy.save(WEIGHTS)
        print(f"weights saved to {WEIGHTS}")
    elif not WEIGHTS.exists():
        parser.error(f"no trained weights at {WEIGHTS}: run without --play first")
    return play(args.games, args.seed)


if __name__ == "__main__":
    sys.exit(main())
