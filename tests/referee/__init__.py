"""Running games (``referee.api``, ``referee.scheduling``, ``referee.cluster``), their results
(``referee.results``) and the ``ginref`` commands that run them."""
