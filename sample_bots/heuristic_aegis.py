"""Aegis by explicit rules: exchange weak cards, declare by expected points, play
for the tricks that pay (RULES.md §2).

Everything comes from the observation: the bot's hand, the key card (trump
and killers), its own exchanges, the declarations and the tricks so far. The
*unknown* cards are the 52 minus the hand, the key card, the bot's own
discards and every card played; the opponent's hand is treated as a random
handful of them.

Card strength -- :func:`lead_chance`
    The chance that a card, led now, takes the trick: the opponent must hold
    no stronger card of its suit (by the non-transitive order: an ace loses to
    every unknown T..2 of its suit, so a lone ace is a poor lead while number
    cards of its suit are out) and must not be able to ruff (void in the suit
    while holding a trump) -- or, for a trump lead, to kill (void in trumps
    while holding a killer). With the opponent's hand a random ``h`` of the
    ``N`` unknown cards (none of a suit it has shown void in) this is exact
    hypergeometric arithmetic. Trumps and killers also win as the second card
    (a trump on a side suit, a killer on a trump lead when void of trumps), so
    their *keep value* and *trick chance* get a bonus (tuned in duplicate
    self-play: a trump is worth about 0.45 trick more than its lead chance).

Declarations -- :func:`declare_values`
    The trick chances of the hand give a distribution of its tricks
    (independent cards). For every legal number the
    bot adds up the points it would win or lose by RULES 2.7 (promise,
    conquest, save) and takes the best; the slave also values PASS (defending
    the master's number) and reads a high master declaration as strength
    opposite.

Exchanges -- :func:`choose_exchange`
    A random replacement card is worth the average keep value of the unknown
    cards. The slave discards every card worth less than that (its exchanges
    cost nothing). The master weighs the floor: it discards the weakest cards
    only when the best declaration after the exchange, at the raised floor
    e + 2, is expected to pay better than declaring now at e + 1; so it stops
    as soon as the hand is decent.

Trick play -- :func:`choose_card`
    From the points each final tally would bring, the bot knows whether it
    wants this trick (the attacker until it has its number; the defender until
    the contract is beaten; an attacker exactly on its number ducks for the
    promise). Wanting it: lead the card most likely to hold; follow with the
    cheapest card that wins (an ace on a led face card, a killer on a trump
    lead when void of trumps, a trump on a side suit when void). Not wanting
    it: lead the card least likely to win, follow with the most dangerous card
    that still loses.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from math import comb
from typing import Any

from referee.cards import NAMES, SUIT
from referee.games.aegis import EXCHANGE, RANK_BEATS, action_name, follower_wins, score_game

CARD = {name: c for c, name in enumerate(NAMES)}
SUIT_LETTERS = "SHDC"
TRICKS = 5

#: the slave marks its chances down by this much per trick the master declared above its floor
SLAVE_CAUTION = 0.04
#: the master exchanges only when that is expected to gain at least this many points
EXCHANGE_MARGIN = 0.05
#: keep-value bonuses: trumps and killers also win as the second card
TRUMP_BONUS, KILLER_BONUS = 0.45, 0.2
#: the same bonuses when counting the hand's tricks for a declaration
TRUMP_TRICK, KILLER_TRICK = 0.45, 0.2


# --- what the bot knows -------------------------------------------------------


class View:
    """The bot's knowledge of the current game, from one observation."""

    def __init__(self, obs: dict[str, Any]):
        self.obs = obs
        self.seat: int = obs["seat"]
        self.hand = sorted(CARD[n] for n in obs["hand"])
        self.trump = SUIT_LETTERS.index(obs["trump"])
        self.killers = [CARD[n] for n in obs["killers"]]
        self.killer_mask = sum(1 << k for k in self.killers)
        known = set(self.hand) | {CARD[obs["key_card"]]}
        for x in obs["my_exchanges"]:
            known.update(CARD[n] for n in x["discarded"])
        opp_played = 0
        self.opp_voids: set[int] = set()
        for t in obs["tricks"]:
            played = [CARD[n] for n in t["cards"]]
            known.update(played)
            opp_played += 1
            if t["leader"] == self.seat and SUIT[played[1]] != SUIT[played[0]]:
                self.opp_voids.add(SUIT[played[0]])     # the opponent could not follow
        self.lead: int | None = None
        if obs["trick"]:
            leader, name = obs["trick"][0]
            self.lead = CARD[name]
            known.add(self.lead)
            opp_played += leader != self.seat
        self.unknown = [c for c in range(52) if c not in known]
        self.opp_cards = TRICKS - opp_played
        #: unknown cards the opponent may hold, per suit (none of a suit it showed void in)
        self.by_suit = [[c for c in self.unknown if SUIT[c] == s] if s not in self.opp_voids else []
                        for s in range(4)]
        self.possible = sum(len(x) for x in self.by_suit)
        self.unknown_killers = sum(1 for k in self.killers if k not in known and SUIT[k] not in self.opp_voids)

    @property
    def is_master(self) -> bool:
        role: str = self.obs["role"]
        return role == "master"

    def promise(self) -> str:
        """The promise option (RULES 2.7): "table" or "4plus"."""
        promise: str = (self.obs.get("options") or {}).get("promise", "table")
        return promise


@lru_cache(maxsize=4096)
def avoid(n: int, h: int, k: int) -> float:
    """Chance that a random ``h`` of ``n`` cards misses ``k`` given cards."""
    if h <= 0:
        return 1.0
    if k > n - h:
        return 0.0
    return comb(n - k, h) / comb(n, h)


def lead_chance(v: View, card: int) -> float:
    """Chance that ``card`` led now takes the trick (see the module docstring)."""
    s = SUIT[card]
    rank = card % 13
    same = v.by_suit[s]
    stronger = sum(1 for x in same if RANK_BEATS[x % 13][rank])
    spoilers = v.unknown_killers if s == v.trump else len(v.by_suit[v.trump])
    n, h = v.possible, v.opp_cards
    return avoid(n, h, stronger) - avoid(n, h, len(same)) + avoid(n, h, len(same) + spoilers)


def keep_value(v: View, card: int) -> float:
    """What a card is worth keeping: its lead chance plus its use as the second card."""
    bonus = TRUMP_BONUS if SUIT[card] == v.trump else KILLER_BONUS if card in v.killers else 0.0
    return lead_chance(v, card) + bonus


def replacement_value(v: View, value: Callable[[View, int], float] = keep_value) -> float:
    """The average value of a card drawn at random (one of the unknown cards)."""
    if not v.unknown:
        return 0.0
    return sum(value(v, c) for c in v.unknown) / len(v.unknown)


# --- declarations -------------------------------------------------------------


def trick_distribution(chances: list[float]) -> list[float]:
    """P(t tricks), t = 0..5, for independent cards with these chances (capped at 5)."""
    dist = [1.0] + [0.0] * TRICKS
    for p in chances:
        p = min(max(p, 0.0), 1.0)
        for t in range(TRICKS, 0, -1):
            dist[t] = dist[t] * (1 - p) + dist[t - 1] * p
        dist[0] *= 1 - p
    return dist


def attack_value(dist: list[float], d: int, d_m: int, promise: str) -> float:
    """Expected point difference for the bot attacking with ``d`` (RULES 2.7)."""
    total = 0.0
    for t, p in enumerate(dist):
        att, dfd = score_game(d, t, d_m, promise)
        total += p * (att - dfd)
    return total


def defend_value(dist: list[float], d: int, promise: str) -> float:
    """Expected point difference for the bot defending against ``d`` (it takes ``t`` tricks)."""
    total = 0.0
    for t, p in enumerate(dist):
        att, dfd = score_game(d, TRICKS - t, d, promise)
        total += p * (dfd - att)
    return total


def trick_chance(v: View, card: int) -> float:
    """A card's share of the hand's tricks: its lead chance, more for trumps and killers."""
    bonus = TRUMP_TRICK if SUIT[card] == v.trump else KILLER_TRICK if card in v.killers else 0.0
    return lead_chance(v, card) + bonus


def hand_chances(v: View, caution: float = 0.0) -> list[float]:
    """The trick chances of the hand's cards, less ``caution`` each."""
    return [max(0.0, trick_chance(v, c) - caution) for c in v.hand]


def declare_values(v: View, legal: list[str]) -> dict[str, float]:
    """Expected point difference of every legal declaration (and PASS)."""
    promise = v.promise()
    if v.is_master:
        dist = trick_distribution(hand_chances(v))
        return {a: attack_value(dist, int(a.split()[1]), int(a.split()[1]), promise) for a in legal}
    d_m = v.obs["d_master"]
    caution = SLAVE_CAUTION * max(0, d_m - v.obs["e"] - 1)
    dist = trick_distribution(hand_chances(v, caution))
    values = {}
    for a in legal:
        if a == "PASS":
            values[a] = defend_value(dist, d_m, promise)
        else:
            values[a] = attack_value(dist, int(a.split()[1]), d_m, promise)
    return values


def best_declaration_value(chances: list[float], floor: int, promise: str) -> float:
    """The master's best expected value over declarations floor..5."""
    dist = trick_distribution(chances)
    return max(attack_value(dist, d, d, promise) for d in range(floor, TRICKS + 1))


# --- exchanges ----------------------------------------------------------------


def exchange_name(cards: list[int]) -> str:
    """The EXCHANGE action discarding these cards, in notation."""
    mask = 0
    for c in cards:
        mask |= 1 << c
    return action_name(EXCHANGE | mask)


def choose_exchange(v: View, legal: list[str]) -> str:
    """The slave discards every card below a random card's worth; the master
    exchanges only when that beats declaring now (see the module docstring)."""
    fresh = replacement_value(v)
    values = {c: keep_value(v, c) for c in v.hand}
    weak = sorted((c for c in v.hand if values[c] < fresh), key=lambda c: values[c])
    if not v.is_master:
        return exchange_name(weak)
    e = v.obs["e"]
    if e + 2 > TRICKS:
        return "STOP"
    promise = v.promise()
    chances = {c: trick_chance(v, c) for c in v.hand}
    fresh_chance = replacement_value(v, trick_chance)
    best, best_value = "STOP", best_declaration_value(list(chances.values()), e + 1, promise) + EXCHANGE_MARGIN
    for k in range(1, len(weak) + 1):
        kept = [chances[c] for c in v.hand if c not in weak[:k]]
        after = best_declaration_value(kept + [fresh_chance] * k, e + 2, promise)
        if after > best_value:
            best, best_value = exchange_name(weak[:k]), after
    return best


# --- trick play ---------------------------------------------------------------


def final_value(v: View, mine: int) -> float:
    """Point difference for the bot if it ends the game with ``mine`` tricks."""
    obs = v.obs
    d, d_m = obs["d"], obs["d_master"]
    if obs["attacker"] == v.seat:
        att, dfd = score_game(d, mine, d_m, v.promise())
        return att - dfd
    att, dfd = score_game(d, TRICKS - mine, d_m, v.promise())
    return dfd - att


def wants_trick(v: View) -> bool:
    """Whether the best reachable final tally lies above the tricks already taken."""
    won = v.obs["tricks_won"]
    mine: int = won[v.seat]
    left = TRICKS - won[0] - won[1]
    best = max(range(mine, mine + left + 1), key=lambda f: (final_value(v, f), -f))
    return best > mine


def choose_card(v: View, legal: list[int]) -> int:
    """Lead or follow, to win or to lose the trick (see the module docstring)."""
    want = wants_trick(v)
    if v.lead is None:
        if want:
            return max(legal, key=lambda c: (lead_chance(v, c), -keep_value(v, c)))
        return min(legal, key=lambda c: (lead_chance(v, c), keep_value(v, c)))
    winners = [c for c in legal if follower_wins(v.lead, c, v.trump, v.killer_mask)]
    losers = [c for c in legal if c not in winners]
    if want:
        pool = winners or losers
        return min(pool, key=lambda c: keep_value(v, c))
    pool = losers or winners
    return max(pool, key=lambda c: keep_value(v, c))


# --- the entry point ----------------------------------------------------------


def decide(obs: dict[str, Any], legal: list[str]) -> str:
    """One Aegis decision: a name from ``legal``."""
    v = View(obs)
    phase = obs["phase"]
    if phase == "exchange":
        return choose_exchange(v, legal)
    if phase == "declare":
        values = declare_values(v, legal)
        return max(legal, key=lambda a: values[a])
    return NAMES[choose_card(v, [CARD[a] for a in legal])]
