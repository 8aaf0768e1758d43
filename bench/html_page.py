"""The replay page of many games: its size, the time to build it, and the time to open it.

    python bench/html_page.py [--games 200] [--runs 5] [--chromium /usr/bin/chromium]

Plays ``--games`` standard games in process (the greedy player against a random one that
knocks when it can), writes their replay page with ``referee.views.html.viewer.write_replay``, and
opens it ``--runs`` times in a headless Chromium through Playwright. The load time is the
page's own figure: milliseconds from the start of the navigation until the first position is
drawn (the ``data-ready`` attribute the viewer sets). The baseline, measured in the same run,
is the page of the first game alone: the ratio says what the other games cost at load.
The goal is a 200-game page under 5 MB that opens in under 2 s.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from ginproto.record import GameRecord  # noqa: E402
from ginproto.rules import Rules  # noqa: E402
from ginproto.simulate import GreedyPlayer, RandomPlayer, run_games  # noqa: E402
from referee.views.html.viewer import write_replay  # noqa: E402


def load_ms(browser: Any, path: Path, runs: int) -> float:
    """The median time, in ms, from navigation start to the first position drawn."""
    times = []
    for _ in range(runs):
        page = browser.new_page()
        page.goto(path.resolve().as_uri())
        page.wait_for_selector("html[data-ready]", timeout=30_000)
        times.append(float(page.evaluate("document.documentElement.dataset.ready")))
        page.close()
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    records: list[GameRecord] = []
    start = time.perf_counter()
    run_games(
        Rules(),
        lambda key: [GreedyPlayer(), RandomPlayer(key, knocks=True)],
        args.games,
        "bench",
        on_game=lambda _, r: records.append(r) if r is not None else None,
    )
    played = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as tmp:
        many, one = Path(tmp) / "many.html", Path(tmp) / "one.html"
        start = time.perf_counter()
        write_replay(records, many)
        built = time.perf_counter() - start
        write_replay(records[:1], one)
        size = many.stat().st_size
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=args.chromium)
            try:
                base = load_ms(browser, one, args.runs)
                full = load_ms(browser, many, args.runs)
            finally:
                browser.close()
    hands = sum(1 for r in records for i in r.items if type(i).__name__ == "HandStart")
    print(f"{args.games} games, {hands} hands (played in {played:.2f} s)")
    print(f"page: {size / 1e6:.2f} MB (goal: under 5 MB), built in {built:.2f} s")
    print(f"load, 1 game (baseline):  {base:7.0f} ms (median of {args.runs})")
    print(f"load, {args.games} games:          {full:7.0f} ms (median of {args.runs}),"
          f" {full / base:.2f}x the baseline (goal: under 2000 ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
