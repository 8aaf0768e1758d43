"""What the games come to: a tournament's store (``store``) and its check against the records
(``integrity``), a match's standings (``report``) and the statistics under them (``stats``).
"""
