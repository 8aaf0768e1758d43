"""Scheduling: which games are played, where, and in what order.

Where games are played, for a match and a tournament alike: ``backends`` (the ``Backend``
interface, the local workers, ``play_job``) and ``seats`` (one worker's players). A match
(``match``: its schedule, played on a backend, its records and result in order) and a
tournament, in the order a run uses its pieces: ``config`` (the TOML file checked into a
``TournamentConfig``; ``address``, the ``--dask`` value), ``plan`` (the pairings and their
games) and ``tournament`` (create or resume the store, run what is pending). A Dask cluster
(``referee.cluster``) is a backend above this package, which never imports it.
"""
