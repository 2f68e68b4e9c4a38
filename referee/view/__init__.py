"""Look instead of read: HTML pages of matches and tournaments.

- :mod:`.steps`: a record replayed through the engine, step by step, as one viewer sees it;
- :mod:`.page`: one self-contained HTML replay (``referee view RECORD.json``);
- :mod:`.report`: a tournament report with every match's replay (``referee view RESULTS_DIR``);
- :mod:`.live`: the live page of a referee or a tournament (``--http PORT``).

Every page is self-contained: its styles, scripts and data are inline, and it loads
nothing from anywhere (no CDN, no fonts). What is game-specific comes from the
game's ``table_view`` trait; the one script here renders any game's frames.
"""
