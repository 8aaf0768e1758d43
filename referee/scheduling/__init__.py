"""Scheduling: which games are played, where, and in what order.

A match (``match``: its schedule, the pool of workers that plays it, the results in order;
``jobs``: one game as a pure job; ``seats``: one worker's players) and a tournament, in the
order a run uses its pieces: ``config`` (the TOML file checked into a ``TournamentConfig``),
``plan`` (the pairings and their games), ``backends`` (``play_job`` and the local workers),
``tournament`` (create or resume the store, run what is pending) and ``standings``.
"""
