"""Aegis for the search bot: candidates, determinized samples, a fast rollout policy.

The rollout policy plays both seats of a sampled game to its end:

- exchanges and declarations: the heuristic bot's rules (each seat from its
  own view of the sampled game);
- cards, with both hands in view (cheap and decisive): a seat that wants
  the trick (the tally it can still reach pays more with it) leads the
  cheapest card the other cannot beat and follows with the cheapest card
  that wins; a seat that does not want it leads its strongest card the
  other can beat and follows with its strongest card that loses.

Samples: ``determinize`` deals the opponent's hidden hand uniformly, but an
opponent that exchanged kept its good cards (the heuristic's real hands are
much stronger than uniform ones, see :data:`BIAS`); once it has exchanged,
the sampled hand leans to the cards of high keep value (weighted sampling
through the rng handed to ``determinize``; the sample stays consistent with
the observation).

The search bot's value is its points of the game minus the opponent's,
plus ``MATCH_BONUS`` when the game ends the match in its favour (minus when
against it).
"""

from __future__ import annotations

import math
import random
from typing import Any

from referee.cards import RANK, SUIT, SUIT_MASK, cards_of
from referee.games import aegis as engine
from referee.games.aegis import (
    EXCHANGE,
    PLAY,
    RANK_BEATS,
    STOP,
    AegisGame,
    action_name,
    follower_wins,
    parse_action,
    score_game,
)
from sample_bots import heuristic_aegis as heur
from sample_bots.search_core import Budget, run_search

TRICKS = 5
#: value of winning (losing) the match with the game, in game points
MATCH_BONUS = 5.0
#: how many of a suit's ranks each rank beats (RULES 2.1), for a card's worth
_BEATS_COUNT = tuple(sum(RANK_BEATS[r]) for r in range(13))


def clone(g: AegisGame) -> AegisGame:
    """A copy of a game in progress that play can continue on without touching ``g``."""
    c = object.__new__(AegisGame)
    c.__dict__.update(g.__dict__)
    c.hands = g.hands[:]
    c.exchange_counts = [x[:] for x in g.exchange_counts]
    c.own_exchanges = [x[:] for x in g.own_exchanges]
    c.tricks_won = g.tricks_won[:]
    c.completed = g.completed[:]
    c.points = g.points[:]
    c.events = []
    c.actions = []
    return c


def worth(c: int, trump: int, killers: int) -> float:
    """A rough, static worth of a card: what it beats in its suit, more for trumps and killers."""
    w = _BEATS_COUNT[RANK[c]]
    if SUIT[c] == trump:
        w += 14
    elif killers >> c & 1:
        w += 7
    return w


def _final_value(g: AegisGame, seat: int, mine: int) -> int:
    d, d_m = g.d, g.d_master
    promise = g.options["promise"]
    if g.attacker == seat:
        att, dfd = score_game(d, mine, d_m, promise)
        return att - dfd
    att, dfd = score_game(d, TRICKS - mine, d_m, promise)
    return dfd - att


def wants_trick(g: AegisGame, seat: int) -> bool:
    won = g.tricks_won
    mine = won[seat]
    left = TRICKS - won[0] - won[1]
    best = max(range(mine, mine + left + 1), key=lambda f: (_final_value(g, seat, f), -f))
    return best > mine


def _beaten_by(hand: int, lead: int, trump: int, killers: int) -> bool:
    """Whether a seat holding ``hand`` can win the trick against the led card."""
    s = SUIT[lead]
    follow = hand & SUIT_MASK[s]
    r = RANK[lead]
    if follow:
        return any(RANK_BEATS[RANK[c]][r] for c in cards_of(follow))
    if s != trump:
        return bool(hand & SUIT_MASK[trump])
    return bool(hand & killers)


def play_card(g: AegisGame, seat: int) -> int:
    hand = g.hands[seat]
    other = g.hands[1 - seat]
    trump, killers = g.trump, g.killer_mask
    want = wants_trick(g, seat)
    lead = g.lead
    if lead is None:
        legal = cards_of(hand)
        if len(legal) == 1:
            return legal[0]
        safe = [c for c in legal if not _beaten_by(other, c, trump, killers)]
        if want:
            pool = safe or legal
            return min(pool, key=lambda c: worth(c, trump, killers))
        losing = [c for c in legal if c not in safe]
        if losing:
            return max(losing, key=lambda c: worth(c, trump, killers))
        return min(legal, key=lambda c: worth(c, trump, killers))
    follow = hand & SUIT_MASK[SUIT[lead]]
    legal = cards_of(follow or hand)
    if len(legal) == 1:
        return legal[0]
    winners = [c for c in legal if follower_wins(lead, c, trump, killers)]
    losers = [c for c in legal if c not in winners]
    if want:
        if winners:
            return min(winners, key=lambda c: worth(c, trump, killers))
        return min(losers, key=lambda c: worth(c, trump, killers))
    if losers:
        return max(losers, key=lambda c: worth(c, trump, killers))
    return min(winners, key=lambda c: worth(c, trump, killers))


def heuristic_action(g: AegisGame, seat: int) -> int:
    """The heuristic bot's exchange or declaration, from the seat's view of the sampled game."""
    obs = g.observation(seat)
    obs["options"] = g.options
    v = heur.View(obs)
    if obs["phase"] == "exchange":
        return parse_action(heur.choose_exchange(v, []))
    names = [action_name(a) for a in g.legal_actions(seat)]
    values = heur.declare_values(v, names)
    return parse_action(max(names, key=lambda a: values[a]))


def rollout(g: AegisGame) -> None:
    while g.phase != engine.OVER:
        seat = g.turn
        if g.phase == PLAY:
            g.apply(seat, play_card(g, seat))
        else:
            g.apply(seat, heuristic_action(g, seat))


def match_bonus(obs: dict[str, Any], g: AegisGame, seat: int) -> float:
    """+MATCH_BONUS when this game wins the match for the seat, -MATCH_BONUS when it loses it (RULES 2.8)."""
    totals = obs.get("match_scores")
    if not totals:
        return 0.0
    a = totals[seat] + g.points[seat]
    b = totals[1 - seat] + g.points[1 - seat]
    win = engine.WINNING_SCORE
    if a >= win and b >= win:
        mine = g.result["winner"] == seat
    elif a >= win or b >= win:
        mine = a >= win
    elif abs(a - b) >= engine.CALLED_LEAD:
        mine = a > b
    else:
        return 0.0
    return MATCH_BONUS if mine else -MATCH_BONUS


# --- biased samples: the opponent kept its good cards ------------------------------------

#: how strongly the sampled opponent hand leans to strong cards (0 = uniform, as determinize).
#: Measured with the heuristic bot (sum of its keep values over the opponent's hand, at the
#: declarations): real hands 3.3-3.5, uniform samples 2.44, samples with BIAS 1.5 about 3.3.
BIAS = 1.5


class _LeaningRandom(random.Random):
    """The rng handed to ``determinize``: its first ``sample`` (the opponent's hidden hand) leans
    to the cards of high ``weight``; every other draw is the wrapped rng's own."""

    def __init__(self, rng: random.Random, weight: dict[int, float]):
        super().__init__(0)
        self._rng = rng
        self._weight = weight
        self._first = True

    def sample(self, population, k, **kw):  # type: ignore[override]
        if self._first:
            self._first = False
            rnd = self._rng.random
            w = self._weight
            keyed = sorted(population, key=lambda c: rnd() ** (1.0 / w.get(c, 1.0)), reverse=True)
            return keyed[:k]
        return self._rng.sample(population, k, **kw)

    def shuffle(self, x):  # type: ignore[override]
        self._rng.shuffle(x)

    def random(self):
        return self._rng.random()

    def getrandbits(self, k):
        return self._rng.getrandbits(k)

    def _randbelow(self, n):
        return self._rng._randbelow(n)


def card_weights(obs: dict[str, Any]) -> dict[int, float]:
    """exp(BIAS * keep value) of every card the opponent may hold (keep values as the seat sees them)."""
    v = heur.View(obs)
    return {c: math.exp(BIAS * heur.keep_value(v, c)) for c in v.unknown}


def sample(obs: dict[str, Any], rng: random.Random, options: dict[str, Any],
           weights: dict[int, float] | None) -> AegisGame:
    if not weights:
        return engine.determinize(obs, rng, options)
    return engine.determinize(obs, _LeaningRandom(rng, weights), options)


# --- the search bot's decision -------------------------------------------------------


def candidates(obs: dict[str, Any], codes: list[int], prior_code: int) -> list[int]:
    """Every card and declaration; at an exchange: stop / decline and discarding the 1..5 weakest cards."""
    if obs["phase"] != "exchange":
        return list(codes)
    v = heur.View(obs)
    order = sorted(v.hand, key=lambda c: heur.keep_value(v, c))
    legal = set(codes)
    out = {STOP if STOP in legal else EXCHANGE, prior_code}
    mask = 0
    for c in order:
        mask |= 1 << c
        out.add(EXCHANGE | mask)
    return sorted(a for a in out if a in legal)


def choose(obs: dict[str, Any], codes: list[int], prior: int, game: Any, budget: Budget) -> int:
    seat = obs["seat"]
    cands = candidates(obs, codes, codes[prior])
    if len(cands) == 1:
        return codes.index(cands[0])
    rng: random.Random = game.rng
    promise = game.option("promise") if hasattr(game, "option") else None
    options = {"promise": promise or (obs.get("options") or {}).get("promise", "table")}

    weights = card_weights(obs) if BIAS and obs["exchanges"] else None

    def make() -> AegisGame:
        return sample(obs, rng, options, weights)

    def playout(base: AegisGame, action: int) -> float:
        g = clone(base)
        g.apply(seat, action)
        rollout(g)
        return g.points[seat] - g.points[1 - seat] + match_bonus(obs, g, seat)

    prior_code = codes[prior]
    prior_i = cands.index(prior_code) if prior_code in cands else 0
    result = run_search(cands, prior_i, make, playout, budget)
    return codes.index(cands[result.choice])
