"""Games and matches in the browser: a replay viewer and a match report, as single HTML files.

``referee.views.html.viewer.write_replay`` turns a record file into a page that steps through every
game move by move; ``referee.views.html.report.write_match_report`` adds the match's figures and
charts above the same viewer. The data comes from the rules engine (``referee.views.html.model``);
the page (``referee.views.html.page``) only draws it, and loads nothing from anywhere.
"""
