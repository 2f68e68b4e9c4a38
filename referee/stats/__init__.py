"""Statistics, pure computation (no I/O, no asyncio): Elo ratings from pairwise results
(:mod:`~referee.stats.ratings`), what the rating tables print beside them: head to head,
game pairs, LOS (:mod:`~referee.stats.headtohead`), and the sequential probability ratio test
(:mod:`~referee.stats.sprt`, with a model of duplicate play for simulations in
:mod:`~referee.stats.simulation`)."""
