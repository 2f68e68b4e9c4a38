"""Confirmation for the search bot: candidates, determinized samples, a fast rollout policy.

The rollout policy plays every seat from the engine state itself (so with
the sampled hands in view, which makes it cheap and decisive):

- bids: the heuristic bot's hand estimate (computed once per sample), rounded
  to the nearest legal number;
- cards: play to make exactly the bid in force (the team's in *pairs*): while
  tricks are needed, lead a card nobody can beat (else a low card of a short
  side suit), follow with the lowest card sure to win (else the highest that
  wins for now, else the least useful card), leave a partner's sure trick
  alone; once the bid is full, lead low and follow with the highest card that
  still loses;
- confirmation: the heuristic bot's choice, from the seat's own view of the
  sample (a cheaper rule on the open hands -- confirm when the part is within
  a trick of the hand's top cards and long trumps -- measured worse).

The search bot's own value is its points for the round (both partners score
the team's in *pairs*). In *pairs* its confirmation choices are the heuristic
bot's (each partner answers for its own part), not searched.
"""

from __future__ import annotations

import random
from typing import Any

from referee import cards
from referee.cards import RANK, SUIT, SUIT_MASK
from referee.games import confirmation as engine
from referee.games.confirmation import BID, CONFIRM, REVISE, Confirmation
from sample_bots import heuristic_confirmation as heur
from sample_bots.search_core import Budget, run_search

BIDDING, PLAYING, CONFIRMING = engine.BIDDING, engine.PLAYING, engine.CONFIRMING
TRICKS = 13
#: how far from the heuristic's bid / target the candidates reach
BID_WINDOW = 2
REVISE_WINDOW = 2


def _top(bits: int) -> int:
    """Rank of the highest card in a 13-bit suit pattern (-1 when empty)."""
    return bits.bit_length() - 1


# --- the state: copies and samples -------------------------------------------------


def clone(st: Confirmation) -> Confirmation:
    """A copy of a round in progress that play can continue on without touching ``st``."""
    c = object.__new__(Confirmation)
    c.__dict__.update(st.__dict__)
    c.hands = st.hands[:]
    c.bids = st.bids[:]
    c.parts = st.parts[:]
    c.choices = [x[:] for x in st.choices]
    c.phase_bids = [x[:] for x in st.phase_bids]
    c.pending = dict(st.pending)
    c.won = st.won[:]
    c.completed = st.completed[:]
    c.trick = st.trick[:]
    c.totals = st.totals[:]
    c.history = []
    c.events = []
    c.actions = []
    return c


def options_of(game: Any, obs: dict[str, Any]) -> dict[str, Any]:
    """The rule options the referee announced (typed), for determinize."""
    out: dict[str, Any] = {}
    for key in ("double", "blind", "pairs", "trump"):
        value = game.option(key) if hasattr(game, "option") else None
        if value is not None:
            out[key] = value
    out["rounds"] = obs["rounds"]
    return out


def sample(obs: dict[str, Any], rng: random.Random, options: dict[str, Any]) -> Confirmation:
    """A determinized state of this round that ends with the round (no next deal)."""
    st = engine.determinize(obs, rng, options)
    st.rounds = st.round + 1  # the engine stops after this round: rollouts end there
    if st.phase is BIDDING:
        st._bid_estimates = [_bid_estimate(st, s) if st.bids[s] < 0 else 0.0 for s in range(4)]
    return st


def _bid_estimate(st: Confirmation, seat: int) -> float:
    """The heuristic bot's estimate of the tricks of ``seat``'s hand at the deal."""
    hand = cards.cards_of(st.hands[seat])
    mine = set(hand)
    unseen = [[r for r in range(13) if s * 13 + r not in mine] for s in range(4)]
    tb = heur.Table(seat, hand, st.trump, (seat + 2) % 4 if st.pairs else None, st.leader, [], [0] * 4,
                    [0] * 4, 0, unseen, [set() for _ in range(4)])
    return heur.estimate(tb)


# --- the rollout policy --------------------------------------------------------------


def rollout(st: Confirmation) -> None:
    """Play the round to its end with :func:`policy` for every seat."""
    while True:
        seats = st._to_act
        if not seats or st.phase is engine.OVER:
            return
        for seat in seats:
            st.apply(seat, policy(st, seat))


def policy(st: Confirmation, seat: int) -> int:
    phase = st.phase
    if phase is PLAYING:
        return play_card(st, seat)
    if phase is BIDDING:
        return bid(st, seat)
    return heuristic_confirm(st, seat)


def heuristic_confirm(st: Confirmation, seat: int) -> int:
    """The heuristic bot's CONFIRM / REVISE, from the seat's own view of the sampled state
    (about 60 µs a seat, once or twice a round: it models the heuristic's choices exactly and
    measured better than a cheap rule on the open hands, most of all in *double* + *pairs*)."""
    legal = st.legal_actions(seat)
    choice = heur.decide(st.observation(seat), [engine.action_name(a) for a in legal])
    action = engine.parse_action(choice)
    return action if action in legal else CONFIRM


def bid(st: Confirmation, seat: int) -> int:
    est = getattr(st, "_bid_estimates", None)
    e = est[seat] if est is not None else _bid_estimate(st, seat)
    forbidden = st._forbidden_bid()
    best = min((n for n in range(TRICKS + 1) if n != forbidden), key=lambda n: (abs(n - e), n))
    return BID + best


def _need(st: Confirmation, seat: int) -> int:
    if st.pairs:
        p = (seat + 2) % 4
        return st.parts[seat] + st.parts[p] - st.won[seat] - st.won[p]
    return st.parts[seat] - st.won[seat]


def _beats(c: int, best: int, trump: int) -> bool:
    if SUIT[c] == SUIT[best]:
        return RANK[c] > RANK[best]
    return SUIT[c] == trump


def _can_beat(hand: int, c: int, led: int, trump: int) -> bool:
    """Whether a seat holding ``hand`` can play over card ``c`` on a trick led in ``led``."""
    follow = hand & SUIT_MASK[led]
    if follow:
        return SUIT[c] == led and _top(follow >> 13 * led) > RANK[c]
    trumps = hand & SUIT_MASK[trump]
    if not trumps:
        return False
    if SUIT[c] == trump:
        return _top(trumps >> 13 * trump) > RANK[c]
    return True


def play_card(st: Confirmation, seat: int) -> int:
    hands = st.hands
    hand = hands[seat]
    trump = st.trump
    trick = st.trick
    want = _need(st, seat) > 0
    if not trick:
        return _lead(st, seat, hand, trump, want)
    led = SUIT[trick[0]]
    follow = hand & SUIT_MASK[led]
    legal = cards.cards_of(follow or hand)
    if len(legal) == 1:
        return legal[0]
    # the card winning so far, and who played it
    best = trick[0]
    best_i = 0
    for i in range(1, len(trick)):
        if _beats(trick[i], best, trump):
            best, best_i = trick[i], i
    leader = st.leader
    best_seat = (leader + best_i) % 4
    later = [(seat + k) % 4 for k in range(1, 4 - len(trick))]
    if want:
        if st.pairs and best_seat == (seat + 2) % 4 and not any(
                _can_beat(hands[o], best, led, trump) for o in later):
            return _cheapest(legal, trump)
        winners = [c for c in legal if _beats(c, best, trump)]
        if winners:
            safe = [c for c in winners if not any(_can_beat(hands[o], c, led, trump) for o in later)]
            if safe:
                return min(safe, key=lambda c: RANK[c])
            return max(winners, key=lambda c: RANK[c])
        return _cheapest(legal, trump)
    losers = [c for c in legal if not _beats(c, best, trump)]
    if losers:
        return max(losers, key=lambda c: (SUIT[c] != trump, RANK[c]))
    if not later:
        return max(legal, key=lambda c: RANK[c])
    return min(legal, key=lambda c: RANK[c])


def _cheapest(legal: list[int], trump: int) -> int:
    return min(legal, key=lambda c: (SUIT[c] == trump, RANK[c]))


def _lead(st: Confirmation, seat: int, hand: int, trump: int, want: bool) -> int:
    hands = st.hands
    others = 0
    for s in range(4):
        if s != seat:
            others |= hands[s]
    if want:
        trump_master = -1
        short = -1
        short_len = 99
        for s in range(4):
            mine = hand >> 13 * s & 0x1FFF
            if not mine:
                continue
            top = _top(mine)
            if top > _top(others >> 13 * s & 0x1FFF):
                c = s * 13 + top
                if s == trump:
                    trump_master = c
                elif not any(not hands[o] & SUIT_MASK[s] and hands[o] & SUIT_MASK[trump]
                             for o in range(4) if o != seat):
                    return c
            elif s != trump:
                n = mine.bit_count()
                if n < short_len:
                    short_len, short = n, s * 13 + (mine & -mine).bit_length() - 1
        if trump_master >= 0:
            return trump_master
        if short >= 0 and hand & SUIT_MASK[trump]:
            return short
        return _cheapest(cards.cards_of(hand), trump)
    # duck: the lowest card that someone else can beat, side suits first
    best = -1
    best_key = None
    for s in range(4):
        mine = hand >> 13 * s & 0x1FFF
        if not mine:
            continue
        low = (mine & -mine).bit_length() - 1
        beaten = _top(others >> 13 * s & 0x1FFF) > low
        key = (not beaten, s == trump, low)
        if best_key is None or key < best_key:
            best_key, best = key, s * 13 + low
    return best


# --- the search bot's decision -------------------------------------------------------


def candidates(obs: dict[str, Any], codes: list[int], prior_code: int) -> list[int]:
    """The actions worth a playout: all but equivalent cards; bids and revisions near the heuristic's."""
    phase = obs["phase"]
    legal = set(codes)
    if phase == "play":
        return _distinct_cards(obs, codes)
    tb = heur.read_table(obs)
    if phase == "bid":
        est = heur.estimate(tb)
        centre = round(est)
        out = [a for a in codes if abs(a - BID - centre) <= BID_WINDOW]
    else:
        team = tb.team
        took = sum(tb.won[s] for s in team)
        others = sum(tb.parts[s] for s in team) - tb.parts[tb.seat]
        outlook = max(heur.estimate(tb), float(heur.sure_winners(tb))) + heur.partner_outlook(tb)
        centre = round(took + outlook) - others
        out = [CONFIRM] + [a for a in codes if a >= REVISE and abs(a - REVISE - centre) <= REVISE_WINDOW
                           and took <= a - REVISE + others <= took + tb.remaining]
    if prior_code in legal and prior_code not in out:
        out.append(prior_code)
    return sorted(a for a in set(out) if a in legal) or [prior_code]


def _distinct_cards(obs: dict[str, Any], codes: list[int]) -> list[int]:
    """The legal cards less those equal to a lower one of the same suit: nothing that
    another seat may still hold lies between them (cards of finished tricks are gone)."""
    gone = 0
    for t in obs["tricks"]:
        for name in t["cards"]:
            gone |= 1 << heur.CARD[name]
    hand = 0
    for name in obs["hand"]:
        hand |= 1 << heur.CARD[name]
    out = []
    prev = -1
    for c in sorted(codes):
        if prev >= 0 and SUIT[prev] == SUIT[c] and all(gone >> x & 1 or hand >> x & 1 for x in range(prev + 1, c)):
            prev = c
            continue
        out.append(c)
        prev = c
    return out


def choose(obs: dict[str, Any], codes: list[int], prior: int, game: Any, budget: Budget) -> int:
    seat = obs["seat"]
    if obs["phase"] == "confirm" and obs["partner"] is not None:
        # pairs: both partners choose at once; two searching partners that each expect the
        # other to follow the rollout policy both correct the team's gap (measured: double
        # + pairs went from +10 to +4 points a round against the heuristic). Keep its convention.
        return prior
    cands = candidates(obs, codes, codes[prior])
    if len(cands) == 1:
        return codes.index(cands[0])
    rng = game.rng
    options = options_of(game, obs)

    def make() -> Confirmation:
        return sample(obs, rng, options)

    def playout(base: Confirmation, action: int) -> float:
        st = clone(base)
        st.apply(seat, action)
        rollout(st)
        return st.totals[seat] - base.totals[seat]

    prior_code = codes[prior]
    prior_i = cands.index(prior_code) if prior_code in cands else 0
    result = run_search(cands, prior_i, make, playout, budget)
    return codes.index(cands[result.choice])
