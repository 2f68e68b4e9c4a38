"""Confirmation by explicit rules: bid from the hand, play to make exactly the bid,
confirm when on track (RULES.md §1).

Everything comes from the observation: the bot's hand, the trump suit, the
bids, the finished tricks and the trick in progress. From these it derives the
*unseen* cards (the other hands, together) and which seats have shown a void.

Hand evaluation -- :func:`prospects`
    Each card gets the chance that it will take a trick some day. A card with
    ``h`` unseen higher cards of its suit counts only if the bot holds at least
    ``h`` smaller cards of that suit to wait with (K-x, Q-x-x, ...), and
    then by ``0.6 ** h`` (trumps ``0.8 ** h``). A side-suit winner is marked down
    when the suit is likely to be ruffed before the card's turn comes (few
    unseen cards of the suit left, trumps still out). Trumps beyond a fair
    share of the unseen trumps take tricks late, and spare trumps ruff in the
    suits the bot is void or short in. The sum is the number of tricks the
    hand should take from now on; the same function serves the bid (at the
    start, nothing seen) and the confirmation phase (mid-round).

Bidding -- :func:`choose_bid`
    The estimate rounded; the dealer avoids the forbidden number by taking the
    nearest allowed one (on the side the estimate leans to).

Trick play -- :func:`choose_card`
    ``need`` = bid in force minus tricks taken (for *pairs*: the team's bid and
    tricks). While tricks are needed the bot tries to win: the lowest card that
    surely wins, the highest card when it is not last and no card is sure, a
    cheap trump when void; it does not overtake a partner who is winning; it
    leads its safest master, or a short side suit to make a ruffing void. Once
    the bid is full it ducks: the highest card that still loses, dangerous high
    cards discarded when void, the lead that is least likely to win.

Confirmation phase -- :func:`choose_confirmation`
    Compares expected points of CONFIRM and of REVISE to the realistic
    number (tricks taken + the hand's remaining prospects), with a hit chance
    that falls with the distance between target and estimate and widens with
    the tricks still to play. This follows the sheet's advice (bid 3 with 3
    taken: confirm; bid 5 with 3 taken: confirm when two more are within
    reach). In *double* a first-phase CONFIRM keeps the triple bonus open and can
    still be revised in the second phase, so it is preferred more readily.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from referee.cards import NAMES, RANK, SUIT

CARD = {name: c for c, name in enumerate(NAMES)}
SUIT_LETTERS = "SHDC"
TRICKS = 13
#: tricks still to play -> factor turning the summed prospects into expected tricks.
#: Measured in self-play: the four hands' prospects add up to about 11.8 of 13
#: tricks at the deal, but to 10.6 of 9, 8.6 of 6 and 6.4 of 4 later on (several
#: hands count on the same tricks once voids appear).
SCALE = ((13, 1.1), (9, 0.85), (6, 0.7), (4, 0.62), (0, 0.6))
#: surplus of prospects over the tricks needed from which the bot, unable to
#: win a trick, sheds a likely winner rather than its least useful card
SURPLUS = 0.5
#: a hand expected to take fewer tricks than this bids 0: a confirmed hit pays
#: 20 against 22 for a bid of 1, and ducking everything is easier than taking exactly one
NIL_BELOW = 1.3
#: ruffing value of a side suit by the bot's length in it (void, singleton, doubleton)
RUFF_CREDIT = {0: 0.8, 1: 0.45, 2: 0.15}


# --- the table as the bot sees it ---------------------------------------------


@dataclass
class Table:
    """What the bot knows mid-round, derived from one observation."""

    seat: int
    hand: list[int]
    trump: int
    partner: int | None
    leader: int
    trick: list[tuple[int, int]]            # (seat, card) in play order
    won: list[int]
    parts: list[int]                        # bids in force (0 when unknown yet)
    tricks_done: int
    unseen: list[list[int]] = field(default_factory=list)   # per suit, ranks not seen, ascending
    voids: list[set[int]] = field(default_factory=list)     # per seat, suits shown void

    @property
    def team(self) -> tuple[int, ...]:
        return (self.seat,) if self.partner is None else (self.seat, self.partner)

    @property
    def need(self) -> int:
        """Tricks the bot (or its team) still has to take to hit the bid in force."""
        return sum(self.parts[s] for s in self.team) - sum(self.won[s] for s in self.team)

    @property
    def remaining(self) -> int:
        return TRICKS - self.tricks_done

    def opponents(self) -> list[int]:
        return [s for s in range(4) if s not in self.team]


def read_table(obs: dict[str, Any]) -> Table:
    """Build a :class:`Table` from a Confirmation observation."""
    seat = obs["seat"]
    hand = sorted(CARD[n] for n in obs["hand"])
    trump = SUIT_LETTERS.index(obs["trump"])
    leader = obs["leader"]
    trick = [((leader + i) % 4, CARD[n]) for i, n in enumerate(obs["trick"])]
    seen = set(hand)
    voids: list[set[int]] = [set() for _ in range(4)]
    finished = [(t["leader"], [CARD[n] for n in t["cards"]]) for t in obs["tricks"]]
    for lead_seat, played in finished + [(leader, [c for _, c in trick])]:
        if not played:
            continue
        led = SUIT[played[0]]
        for i, c in enumerate(played):
            seen.add(c)
            if SUIT[c] != led:
                voids[(lead_seat + i) % 4].add(led)
    unseen = [[r for r in range(13) if s * 13 + r not in seen] for s in range(4)]
    parts = [b if b is not None else 0 for b in obs["bids_in_force"]]
    return Table(seat, hand, trump, obs.get("partner"), leader, trick, list(obs["tricks_won"]), parts,
                 len(obs["tricks"]), unseen, voids)


# --- hand evaluation ------------------------------------------------------------


def by_suit(hand: list[int]) -> list[list[int]]:
    """The ranks held in each suit, ascending."""
    suits: list[list[int]] = [[], [], [], []]
    for c in hand:
        suits[SUIT[c]].append(RANK[c])
    return suits


def higher_unseen(tb: Table, card: int) -> int:
    """How many unseen cards of the card's suit outrank it."""
    r = RANK[card]
    return sum(1 for x in tb.unseen[SUIT[card]] if x > r)


def run_chance(unseen_in_suit: int, round_needed: int, trumps_out: bool) -> float:
    """Chance that the suit is still followed by everyone at its ``round_needed``-th
    round from now (so a winner is not ruffed)."""
    if not trumps_out:
        return 1.0
    slack = unseen_in_suit / 3 - round_needed + 1
    if slack >= 1.5:
        return 0.95
    if slack >= 1:
        return 0.85
    if slack >= 0.5:
        return 0.65
    if slack >= 0:
        return 0.45
    return 0.25


def card_prospect(tb: Table, card: int, mine: list[list[int]]) -> float:
    """The chance that ``card`` takes a trick some day (see the module docstring)."""
    s, r = SUIT[card], RANK[card]
    h = higher_unseen(tb, card)
    guards = sum(1 for x in mine[s] if x < r)
    if h and guards < h:
        return 0.02 if s != tb.trump else 0.08
    if s == tb.trump:
        return 0.8 ** h
    trumps_out = bool(tb.unseen[tb.trump])
    return 0.6 ** h * run_chance(len(tb.unseen[s]), h + 1, trumps_out)


def prospects(tb: Table) -> dict[int, float]:
    """Each card of the hand with its :func:`card_prospect`."""
    mine = by_suit(tb.hand)
    return {c: card_prospect(tb, c, mine) for c in tb.hand}


def trump_extras(tb: Table, values: dict[int, float]) -> float:
    """Tricks from trump length and ruffing, beyond the trumps' own prospects.

    Spare trumps (those unlikely to win by rank) take tricks late when the bot
    holds more trumps than an opponent is likely to, and ruff in side suits
    the bot is void or short in while the others still hold that suit."""
    mine = by_suit(tb.hand)
    trumps = [c for c in tb.hand if SUIT[c] == tb.trump]
    spare = sum(1 for c in trumps if values[c] < 0.5)
    if not spare:
        return 0.0
    out = len(tb.unseen[tb.trump])
    length = max(0.0, len(trumps) - math.ceil(out / 2) - 1) * 0.5
    ruffs = 0.0
    for s in range(4):
        if s != tb.trump:
            ruffs += RUFF_CREDIT.get(len(mine[s]), 0.0) * min(1.0, len(tb.unseen[s]) / 6)
    return min(float(spare), length + ruffs) * 0.85


def scale(remaining: int) -> float:
    """The :data:`SCALE` factor for ``remaining`` tricks (linear in between)."""
    for (r1, f1), (r0, f0) in pairwise(SCALE):
        if remaining >= r0:
            return f0 + (f1 - f0) * (remaining - r0) / (r1 - r0)
    return SCALE[-1][1]


def estimate(tb: Table) -> float:
    """Tricks the hand should take from now on."""
    values = prospects(tb)
    return (sum(values.values()) + trump_extras(tb, values)) * scale(tb.remaining)


def sure_winners(tb: Table) -> int:
    """Trumps that will win whenever they are played (above every unseen trump):
    a floor on the tricks still to come, however the bot ducks."""
    out = tb.unseen[tb.trump]
    top = out[-1] if out else -1
    return sum(1 for c in tb.hand if SUIT[c] == tb.trump and RANK[c] > top)


# --- bidding --------------------------------------------------------------------


def choose_bid(tb: Table, legal_bids: list[int]) -> int:
    """The estimate rounded to the nearest legal bid (the dealer's forbidden number
    skipped); a weak hand (below :data:`NIL_BELOW`) bids nothing."""
    est = estimate(tb)
    if est < NIL_BELOW:
        est = 0.0
    return min(legal_bids, key=lambda n: (abs(n - est), n))


# --- trick play -----------------------------------------------------------------


def beats(card: int, best: int, led: int, trump: int) -> bool:
    """``card`` beats the trick's current best card ``best`` (RULES 1.5)."""
    if SUIT[card] == SUIT[best]:
        return RANK[card] > RANK[best]
    return SUIT[card] == trump


def current_best(tb: Table) -> tuple[int, int]:
    """(seat, card) winning the trick in progress so far."""
    led = SUIT[tb.trick[0][1]]
    best = tb.trick[0]
    for seat, c in tb.trick[1:]:
        if beats(c, best[1], led, tb.trump):
            best = (seat, c)
    return best


def still_to_play(tb: Table) -> list[int]:
    """Seats that play to this trick after the bot."""
    n = len(tb.trick)
    return [(tb.seat + i) % 4 for i in range(1, 4 - n)]


def holds_up(tb: Table, card: int, later: list[int]) -> bool:
    """Whether ``card`` (winning now) should survive the seats still to play:
    no unseen higher card of its suit, and no ruff by a seat known void."""
    if not later:
        return True
    if higher_unseen(tb, card):
        return False
    if SUIT[card] == tb.trump or not tb.unseen[tb.trump]:
        return True
    led = SUIT[tb.trick[0][1]] if tb.trick else SUIT[card]
    return not any(led in tb.voids[s] for s in later) and len(tb.unseen[led]) >= 2 * len(later)


def lead_win_chance(tb: Table, card: int) -> float:
    """Rough chance that ``card``, led now, takes the trick."""
    s = SUIT[card]
    h = higher_unseen(tb, card)
    if h:
        return 0.2 / h if s != tb.trump else 0.3 / h
    if s == tb.trump or not tb.unseen[tb.trump]:
        return 1.0
    chance = run_chance(len(tb.unseen[s]), 1, True)
    if any(s in tb.voids[o] for o in tb.opponents()):
        chance *= 0.4
    return chance


def danger(tb: Table, card: int) -> float:
    """How likely the card is to win a trick later (to get rid of it when ducking)."""
    return card_prospect(tb, card, by_suit(tb.hand)) + RANK[card] / 100


def lowest(cards: list[int], trump: int) -> int:
    """The cheapest card: side suits before trumps, then the lowest rank."""
    return min(cards, key=lambda c: (SUIT[c] == trump, RANK[c]))


def choose_card(tb: Table, legal: list[int]) -> int:
    """Play to make exactly the bid in force (see the module docstring)."""
    want = tb.need > 0
    if not tb.trick:
        return lead_to_win(tb, legal) if want else lead_to_lose(tb, legal)
    return follow_to_win(tb, legal) if want else follow_to_lose(tb, legal)


def lead_to_win(tb: Table, legal: list[int]) -> int:
    """Lead the safest master; else a singleton/doubleton to make a ruffing void; else low."""
    chances = {c: lead_win_chance(tb, c) for c in legal}
    best = max(legal, key=lambda c: (chances[c], -RANK[c]))
    if chances[best] >= 0.6:
        return best
    mine = by_suit(tb.hand)
    has_trumps = bool(mine[tb.trump])
    short = [c for c in legal if SUIT[c] != tb.trump and len(mine[SUIT[c]]) <= 2]
    if has_trumps and short:
        return min(short, key=lambda c: (len(mine[SUIT[c]]), RANK[c]))
    return lowest(legal, tb.trump)


def lead_to_lose(tb: Table, legal: list[int]) -> int:
    """Lead the card least likely to win (many unseen cards above it)."""
    return min(legal, key=lambda c: (lead_win_chance(tb, c), -higher_unseen(tb, c), RANK[c]))


def follow_to_win(tb: Table, legal: list[int]) -> int:
    """Take the trick as cheaply as is safe; leave a partner's winning card alone."""
    best_seat, best = current_best(tb)
    led = SUIT[tb.trick[0][1]]
    later = still_to_play(tb)
    if tb.partner is not None and best_seat == tb.partner and holds_up(tb, best, later):
        return shed(tb, legal) if surplus(tb) >= SURPLUS else lowest(legal, tb.trump)
    winners = [c for c in legal if beats(c, best, led, tb.trump)]
    if not winners:
        return shed(tb, legal) if surplus(tb) >= SURPLUS else discard(tb, legal)
    safe = [c for c in winners if holds_up(tb, c, later)]
    if safe:
        return min(safe, key=lambda c: (SUIT[c] == tb.trump and led != tb.trump, RANK[c]))
    if SUIT[winners[0]] != led:            # ruffing: with two still to play, not the very lowest trump
        ranked = sorted(winners, key=lambda c: RANK[c])
        return ranked[min(len(ranked) - 1, 1)] if len(later) > 1 else ranked[0]
    return max(winners, key=lambda c: RANK[c])


def surplus(tb: Table) -> float:
    """How far the hand's prospects (and the partner's part) exceed the tricks still needed."""
    return estimate(tb) + partner_outlook(tb) - tb.need


def shed(tb: Table, legal: list[int]) -> int:
    """A card that cannot win this trick, chosen to get rid of a likely winner
    the bot does not need."""
    return max(legal, key=lambda c: danger(tb, c))


def discard(tb: Table, legal: list[int]) -> int:
    """A card that cannot win this trick: the least useful one."""
    values = prospects(tb)
    mine = by_suit(tb.hand)
    return min(legal, key=lambda c: (values[c], SUIT[c] == tb.trump, len(mine[SUIT[c]]), RANK[c]))


def follow_to_lose(tb: Table, legal: list[int]) -> int:
    """Duck: the most dangerous card that still loses; if every card wins, win
    with the most dangerous when last, else play low hoping to be overtaken."""
    best = current_best(tb)[1]
    led = SUIT[tb.trick[0][1]]
    losers = [c for c in legal if not beats(c, best, led, tb.trump)]
    if losers:
        return max(losers, key=lambda c: danger(tb, c))
    if not still_to_play(tb):
        return max(legal, key=lambda c: danger(tb, c))
    return min(legal, key=lambda c: (SUIT[c] == tb.trump, RANK[c]))


# --- the confirmation phase -----------------------------------------------------


def hit_chance(gap: float, remaining: int) -> float:
    """Chance of ending exactly on a target ``gap`` tricks above the estimate
    (negative: below it). Measured in self-play after 7 tricks: about 0.48 on
    the estimate, 0.43 one trick below (ducking is the easier way), 0.28 one
    above and 0.15 one and a half above."""
    peak = min(0.75, 0.5 + 0.04 * (6 - remaining))
    spread = 0.5 + 0.08 * remaining if gap > 0 else 0.6 + 0.25 * remaining
    return peak * math.exp(-(gap / spread) ** 2 / 2)


def partner_outlook(tb: Table) -> float:
    """Tricks the partner is assumed to take from now on: its own part, if still reachable."""
    if tb.partner is None:
        return 0.0
    p = tb.partner
    return float(min(max(tb.parts[p] - tb.won[p], 0), tb.remaining))


def choice_value(confirm: bool, target: int, took: int, outlook: float, remaining: int, phases_left: int,
                 first_confirmed: bool | None) -> float:
    """Expected points of a choice with final target ``target`` (RULES 1.7, 1.8)."""
    need = target - took
    if need < 0 or need > remaining:
        p = 0.0
    else:
        p = hit_chance(need - outlook, remaining)
    miss = max(1.0, abs(need - outlook))
    if confirm:
        if phases_left > 1:                 # double, phase 1: the triple stays open, phase 2 can revise
            return p * (30 + 3 * target) + (1 - p) * 0.35 * (10 + target)
        bonus = 30 + 3 * target if first_confirmed else 20 + 2 * target
        return p * bonus - (1 - p) * 3 * miss
    if phases_left > 1:                     # revising in phase 1 leaves a double hit open
        return p * (20 + 2 * target) + (1 - p) * 0.35 * (10 + target)
    return p * (10 + target) - (1 - p) * miss


def first_phase_confirmed(tb: Table, obs: dict[str, Any]) -> bool:
    """In the second phase of *double*: whether the bot (in *pairs*: its team, as
    far as it can see) confirmed in the first phase."""
    shown = [obs["choices"][s] for s in tb.team]
    return bool(shown[0]) and all(ch[0] == "CONFIRM" for ch in shown if ch)


def choose_confirmation(tb: Table, obs: dict[str, Any]) -> str:
    """CONFIRM, or REVISE to the best other number, by expected points (see the
    module docstring). In *pairs* the bot judges the team's bid and tricks and
    revises its own part."""
    phases_left = 2 if tb.tricks_done == 4 else 1
    first_confirmed = phases_left == 1 and first_phase_confirmed(tb, obs)
    took = sum(tb.won[s] for s in tb.team)
    outlook = max(estimate(tb), float(sure_winners(tb))) + partner_outlook(tb)
    part = tb.parts[tb.seat]
    others = sum(tb.parts[s] for s in tb.team) - part

    def value(confirm: bool, n: int) -> float:
        return choice_value(confirm, n + others, took, outlook, tb.remaining, phases_left, first_confirmed)

    revise = max((n for n in range(TRICKS + 1) if n != part), key=lambda n: value(False, n))
    return "CONFIRM" if value(True, part) >= value(False, revise) else f"REVISE {revise}"


# --- the entry point ------------------------------------------------------------


def decide(obs: dict[str, Any], legal: list[str]) -> str:
    """One Confirmation decision: a name from ``legal``."""
    tb = read_table(obs)
    phase = obs["phase"]
    if phase == "bid":
        bids = [int(a.split()[1]) for a in legal if a.startswith("BID ")]
        return f"BID {choose_bid(tb, bids)}"
    if phase == "confirm":
        return choose_confirmation(tb, obs)
    return NAMES[choose_card(tb, [CARD[a] for a in legal])]
