"""Determinization for search bots: full Aegis states consistent with one seat's view.

A search bot (determinized Monte Carlo) samples complete states that agree
with everything its seat knows and plays them out with the engine.

What a seat knows of a game: its own hand now, its own exchanges (the cards
it discarded and drew, the drawn ones in stock order), the key card, every
card played, and the public counts. From these its own initial hand follows
(undo the tricks, then the exchanges, last first). Its draws fix stock
positions exactly: in each round the master draws first, then the slave,
each from the top, so round r's master draw starts after all the cards
drawn in rounds before r, and the slave's right after the master's.

The hidden cards are the opponent's initial hand, its discards and draws,
and the rest of the stock. By symmetry (a uniform deck), what the opponent
holds now is uniform among the unseen cards of the suits it has not shown
out of in trick play, together with the cards it has played. The rest is
rebuilt backwards from its hand after the exchanges: in each round where it
exchanged k cards, last round first, k cards of its hand are taken as that
round's draw (a random k of them, in random stock order) and k fresh unseen
cards as its discards (so it held them then); what remains at the start is
its initial hand. The unseen cards left over are the undrawn stock, in random
order. That is a deck order (RULES §3) and a discard for every opponent
exchange, so the game can be replayed action by action to the decision point.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from referee import cards
from referee.cards import NAMES, SUIT, cards_of
from referee.games.aegis.match import AegisMatch
from referee.games.aegis.notation import DECLARE, EXCHANGE, HAND_SIZE, PASS, STOP
from referee.games.aegis.rules import AegisGame
from referee.games.base import PrimedShoe

_CARD = {name: c for c, name in enumerate(NAMES)}


def determinize(observation: dict[str, Any], rng: random.Random, options: Mapping[str, Any] | None = None, *,
                match: bool = False) -> AegisGame | AegisMatch:
    """A full game state that ``observation`` (of some seat) is a view of.

    By default an :class:`AegisGame`: the current game, at the same decision
    point, whose ``observation(seat)`` equals ``observation`` (a match's view
    may be given: its match keys are ignored); the game can be played to its
    end. With ``match=True`` (a match's view), an :class:`AegisMatch` whose
    ``observation(seat)`` equals the whole view and that can be played to the
    end of the match: the past games exist only as their results, and later
    games are dealt from a fresh shoe seeded from ``rng``.

    The hidden cards are sampled as the module's docstring explains:
    the opponent's hand now is uniform among the possibilities (cards it
    played stay, none of a suit it did not follow), its discards are unseen
    cards, and the stock holds the seat's own draws at their positions. The
    opponent's discards are not read as hints (it is assumed to discard
    without regard to which cards they are).

    ``options`` are the rule options (``promise``); a match's view carries
    them, and by default they are taken from there. The state's ``events`` and
    ``actions`` start at this game's deal.
    """
    obs = observation
    me = obs["seat"]
    opp = 1 - me
    master = obs["master"]
    slave = 1 - master
    if options is None:
        options = obs.get("options")
    key = _CARD[obs["key_card"]]

    # the cards played, and the suits the opponent showed out of (RULES 2.6)
    mine_played = opp_played = opp_void = 0
    for t in obs["tricks"]:
        leader = t["leader"]
        lead, follow = _CARD[t["cards"][0]], _CARD[t["cards"][1]]
        if leader == me:
            mine_played |= 1 << lead
            opp_played |= 1 << follow
            if SUIT[follow] != SUIT[lead]:
                opp_void |= 1 << SUIT[lead]
        else:
            opp_played |= 1 << lead
            mine_played |= 1 << follow
    for leader, name in obs["trick"]:
        if leader == me:
            mine_played |= 1 << _CARD[name]
        else:
            opp_played |= 1 << _CARD[name]

    # the seat's own initial hand: undo the tricks, then its exchanges, last first
    mine = {x["round"]: ([_CARD[n] for n in x["discarded"]], [_CARD[n] for n in x["drawn"]])
            for x in obs["my_exchanges"]}
    hand = cards.mask_of(_CARD[n] for n in obs["hand"]) | mine_played
    mine_drawn = 0
    for discarded, drawn in reversed(list(mine.values())):
        drawn_mask = cards.mask_of(drawn)
        hand = hand & ~drawn_mask | cards.mask_of(discarded)
        mine_drawn |= drawn_mask
    my_initial = cards_of(hand)

    # the opponent's hand after the exchanges: its played cards and a sample of the unseen cards
    unseen = cards_of(cards.FULL_DECK_MASK ^ (1 << key | hand | mine_drawn | opp_played))
    allowed = [c for c in unseen if not opp_void >> SUIT[c] & 1]
    holding = rng.sample(allowed, HAND_SIZE - opp_played.bit_count())
    rest = cards_of(cards.mask_of(unseen) & ~cards.mask_of(holding))
    rng.shuffle(rest)
    opp_hand = cards_of(opp_played) + holding

    # its exchanges, last round first: a random k of its hand were that round's draw, k unseen cards its discard
    who = 0 if opp == master else 1
    counts = obs["exchanges"]
    opp_discards: dict[int, list[int]] = {}
    opp_draws: dict[int, list[int]] = {}
    for r in range(len(counts), 0, -1):
        k = counts[r - 1][who]
        if not k:
            continue
        drawn = rng.sample(opp_hand, k)
        discarded = [rest.pop() for _ in range(k)]
        opp_hand = [c for c in opp_hand if c not in drawn] + discarded
        opp_draws[r], opp_discards[r] = drawn, discarded

    # the deck order (RULES §3): the hands, the key card, the stock with every draw at its place
    stock: list[int] = []
    for r, pair in enumerate(counts, 1):
        for seat, k in zip((master, slave), pair):
            if k:
                stock += mine[r][1] if seat == me else opp_draws[r]
    stock += rest
    hands = [0] * 10
    hands[0 if me == slave else 1::2] = my_initial
    hands[0 if opp == slave else 1::2] = opp_hand
    deck = (*hands, key, *stock)

    if match:
        game_number = obs["game_number"]
        past = obs["games"][:game_number - 1]
        totals = obs["match_scores"]
        if len(obs["games"]) >= game_number:  # the match is over: its totals count this game
            totals = [t - p for t, p in zip(totals, obs["points"])]
        state: AegisGame | AegisMatch = AegisMatch.resume(
            options or {}, PrimedShoe(rng.getrandbits(64), deck), _cards(obs["draw"]["cards"]), totals, past)
    else:
        state = AegisGame(master, deck, options, number=obs["game_number"])

    # replay: the exchanges, the declarations, the tricks
    def discard(r: int, seat: int) -> int:
        return EXCHANGE | cards.mask_of(mine[r][0] if seat == me else opp_discards.get(r, ()))

    for r, (_, slave_count) in enumerate(counts, 1):
        state.apply(master, discard(r, master))
        if slave_count is not None:
            state.apply(slave, discard(r, slave))
    if obs["exchange_end"] == "stop":
        state.apply(master, STOP)
    if obs["d_master"] is not None:
        state.apply(master, DECLARE + obs["d_master"])
    if obs["slave_passed"]:
        state.apply(slave, PASS)
    elif obs["d_slave"] is not None:
        state.apply(slave, DECLARE + obs["d_slave"])
    for t in obs["tricks"]:
        state.apply(t["leader"], _CARD[t["cards"][0]])
        state.apply(1 - t["leader"], _CARD[t["cards"][1]])
    for leader, name in obs["trick"]:
        state.apply(leader, _CARD[name])
    return state


def _cards(names: Sequence[str]) -> list[int]:
    return [_CARD[n] for n in names]
