"""What shows the games: replay, play at a terminal, the result block, the HTML pages and the
live page."""
