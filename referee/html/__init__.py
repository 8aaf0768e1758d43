"""Games and matches in the browser: a replay viewer and a match report, as single HTML files.

``referee.html.replay.write_replay`` turns a record file into a page that steps through every
game move by move; ``referee.html.report.write_match_report`` adds the match's figures and
charts above the same viewer. The data comes from the rules engine (``referee.html.model``);
the page (``referee.html.page``) only draws it, and loads nothing from anywhere.
"""
