"""Is the candidate stronger than the baseline? An SPRT between two bots, on duplicate units.

The statistics are :mod:`referee.stats.sprt`; here is the rest: the set-up (an SPRT file
or command-line options, :mod:`.setup`), the units and their outcomes (:mod:`.units`),
playing them until a verdict (:mod:`.run`) and the report (:mod:`.report`).

Duplicate units
---------------
Games are played in **units** of two on the same deals with the seats swapped:

- Aegis: one match with the candidate in seat 0 and the baseline in seat 1,
  and the same deal set with the seats swapped.
- Confirmation: the candidate and the baseline each fill two seats, A B A B,
  and the same deal set again with the seats swapped, B A B A (with *pairs*
  the two copies of a bot are partners, so it is team against team).

A game's result for the candidate is 1, ½ or 0: Aegis by the match winner
(the placing); Confirmation by the candidate's **total score over its two
seats** against the baseline's total over its two seats (higher wins, equal
is a draw). A unit's two results add up to 0, ½, 1, 1½ or 2 points: the five
outcomes of fishtest's *pentanomial* model, which the test counts.

Units are counted in the order of their index (deal set), whatever order
they finish in, so a run is reproducible whatever the concurrency.
"""
