"""Dask: the backend that plays a match's or a tournament's games on a cluster's workers
(``backend``), and what runs on each worker (``worker``). It sits above scheduling, whose jobs
it plays; the ``--dask`` address sits below it (``referee.scheduling.address``), and so does
its error (``referee.errors.DaskError``).
"""
