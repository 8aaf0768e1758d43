"""What the games come to: a game to play and a game played (``played``: what every backend
takes and gives), a match's result (``match``) and standings (``report``), a tournament's
standings (``standings``), store (``store``) and its check against the records
(``integrity``), and the statistics under them (``stats``).
"""
