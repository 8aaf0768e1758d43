"""Dask: a cluster's address (``address``), the backend that plays a match's or a
tournament's games on its workers (``backend``), and what runs on each worker (``worker``).
"""
