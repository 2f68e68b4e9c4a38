"""Statistics, pure computation (no I/O, no asyncio): Elo ratings from pairwise results
(:mod:`~referee.stats.ratings`) and the sequential probability ratio test
(:mod:`~referee.stats.sprt`, with a model of duplicate play for simulations in
:mod:`~referee.stats.simulation`)."""
