"""determinize(observation, rng, options): full states consistent with one seat's view.

For a search bot: from a seat's observation alone, a concrete state at the
same decision point whose view for that seat is identical, the hidden cards
sampled among the deals consistent with what the seat saw (RULES §4 says
what a seat may know; RULES 1.5 / 2.6 make a seat that does not follow suit
void in it). The state must play on to the end with the engine.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest
from helpers import random_playout, slow_but

from referee import cards
from referee.games import GAMES, aegis, confirmation
from referee.games.aegis import AegisGame, AegisMatch

CONFIRMATION_VARIANTS = [
    {"rounds": 2, "double": double, "blind": blind, "pairs": pairs, "trump": trump}
    for double, blind, pairs, trump in itertools.product(
        (False, True), (False, True), (False, True), ("dealer-card", "random-suit"))
]


def _variant_id(opts: dict) -> str:
    flags = [k for k in ("double", "blind", "pairs") if opts[k]]
    return "+".join(flags + [opts["trump"]])


def _voids(tricks: list[tuple[int, list[str]]], num_seats: int) -> list[int]:
    """The suits (bit set) each seat showed out of: it played another suit than the one led."""
    void = [0] * num_seats
    for leader, names in tricks:
        played = cards.parse_list(names)
        for i, c in enumerate(played[1:], 1):
            if cards.SUIT[c] != cards.SUIT[played[0]]:
                void[(leader + i) % num_seats] |= 1 << cards.SUIT[played[0]]
    return void


def _holds_suit(hand: int, void: int) -> bool:
    return any(void >> s & 1 and hand & cards.SUIT_MASK[s] for s in range(4))


# --- Confirmation -----------------------------------------------------------------


def _confirmation_voids(obs: dict) -> list[int]:
    tricks = [(t["leader"], t["cards"]) for t in obs["tricks"]]
    if obs["trick"]:
        tricks.append((obs["leader"], obs["trick"]))
    return _voids(tricks, 4)


def _check_confirmation(state, seat: int, rng: random.Random, playout: bool) -> None:
    obs = state.observation(seat)
    det = confirmation.determinize(obs, rng, state.options)
    assert isinstance(det, confirmation.Confirmation)
    assert det.observation(seat) == obs
    assert det.legal_actions(seat) == state.legal_actions(seat)
    if state.phase == confirmation.CONFIRMING:
        # who else has already chosen is hidden from the seat: in the sample nobody else has
        assert det.to_act() == tuple(s for s in range(4) if s != seat or seat in state.to_act())
    else:
        assert det.to_act() == state.to_act()
    assert det.round == state.round and det.dealer == state.dealer and det.totals == state.totals
    # hand sizes, voids, the face-up trump card
    void = _confirmation_voids(obs)
    for s in range(4):
        assert det.hands[s].bit_count() == state.hands[s].bit_count()
        assert not _holds_suit(det.hands[s], void[s]), f"seat {s} showed out of a suit it is dealt"
    if state.trump_card is not None:
        assert det.trump_card == state.trump_card
        assert state.hands[state.dealer] >> state.trump_card & 1 == det.hands[det.dealer] >> det.trump_card & 1
    if playout:
        random_playout(det, rng)
        assert det.is_terminal() and det.round == det.rounds


#: the variants whose views are checked in the fast loop, every option off and every one on (a third
#: of a second of CPU each); the others are marked slow
QUICK_VARIANTS = ("dealer-card", "double+blind+pairs+random-suit")


@pytest.mark.parametrize("opts", slow_but(CONFIRMATION_VARIANTS, lambda opts: _variant_id(opts) in QUICK_VARIANTS),
                         ids=_variant_id)
def test_confirmation_views_are_kept(opts):
    """At sampled decision points of random games (two rounds), for every seat,
    acting or not: same view, same legal actions, voids respected, playable."""
    rng = random.Random(_variant_id(opts))
    checked = Counter()
    for _ in range(8):
        state = GAMES["confirmation"].new(opts, seed=rng.randrange(1 << 30))
        while True:
            if rng.random() < 0.2 or state.phase in (confirmation.CONFIRMING, confirmation.OVER):
                for seat in range(4):
                    _check_confirmation(state, seat, rng, playout=rng.random() < 0.3)
                    checked[state.phase, len(state.to_act()), seat in state.to_act()] += 1
            seats = state.to_act()
            if not seats:
                break
            seat = rng.choice(seats)  # one at a time: confirmation phases get caught half-chosen
            state.apply(seat, rng.choice(state.legal_actions(seat)))
    # every kind of decision point was seen, for acting and waiting seats, and the end
    for phase, acting in (("bid", 1), ("play", 1), ("confirm", 3), ("confirm", 1)):
        assert checked[phase, acting, True] and checked[phase, acting, False], (phase, acting)
    assert checked["confirm", 4, True]
    assert checked["over", 0, False] == 4 * 8


@pytest.mark.parametrize("opts", CONFIRMATION_VARIANTS[::5], ids=_variant_id)
def test_confirmation_without_options(opts):
    """The options can be left out: the view still comes back the same (the
    undetectable ones, double and blind, default to off)."""
    rng = random.Random(7)
    state = GAMES["confirmation"].new(opts, seed=11)
    while not state.is_terminal():
        for seat in range(4):
            obs = state.observation(seat)
            assert confirmation.determinize(obs, rng).observation(seat) == obs
        seat = rng.choice(state.to_act())
        state.apply(seat, rng.choice(state.legal_actions(seat)))


def test_confirmation_option_contradicting_the_view():
    state = GAMES["confirmation"].new({"rounds": 1, "pairs": True}, seed=3)
    with pytest.raises(confirmation.GameError):
        confirmation.determinize(state.observation(0), random.Random(0), {"rounds": 1, "pairs": False})


def test_confirmation_hidden_cards_vary():
    """Twenty samples of one position: the other hands differ, the seat's own and the played cards do not."""
    rng = random.Random(5)
    for opts in CONFIRMATION_VARIANTS[:4]:
        state = GAMES["confirmation"].new(opts, seed=rng.randrange(1 << 30))
        for _ in range(rng.randrange(4, 20)):  # into the bidding or the first tricks
            seat = state.to_act()[0]
            state.apply(seat, rng.choice(state.legal_actions(seat)))
        for seat in range(4):
            samples = [confirmation.determinize(state.observation(seat), rng, state.options) for _ in range(20)]
            others = {tuple(d.hands[s] for s in range(4) if s != seat) for d in samples}
            assert len(others) >= 2
            assert {d.hands[seat] for d in samples} == {state.hands[seat]}


def test_confirmation_dealer_keeps_the_trump_card():
    """Dealer-card trump: until the dealer plays it, the face-up card is in its hand in every sample."""
    rng = random.Random(9)
    state = GAMES["confirmation"].new({"rounds": 1}, seed=4)
    seat = (state.dealer + 1) % 4
    for _ in range(10):
        det = confirmation.determinize(state.observation(seat), rng)
        assert det.hands[det.dealer] >> state.trump_card & 1
        assert det.shoe.decks[0][51] == state.trump_card


def test_confirmation_blind_hidden_choices_use_the_policy():
    """Blind: the others' choices are not in the view; ``hidden_choice`` makes them."""
    rng = random.Random(2)
    opts = {"rounds": 1, "blind": True}
    state = GAMES["confirmation"].new(opts, seed=8)
    while state.tricks_done < 8:
        seat = state.to_act()[0]
        state.apply(seat, state.legal_actions(seat)[-1 if state.phase == "confirm" else 0])
    asked = []

    def revise_to_zero_or_one(det, s, _rng):
        asked.append(s)
        return confirmation.REVISE + (1 if det.parts[s] == 0 else 0)

    det = confirmation.determinize(state.observation(0), rng, opts, hidden_choice=revise_to_zero_or_one)
    assert sorted(asked) == [1, 2, 3]
    assert det.observation(0) == state.observation(0)
    assert det.choices[1] == [False]


def test_deal_hidden_is_uniform():
    """The constrained deal is uniform over all deals that respect the voids."""
    pool = cards.parse_list("AS KS QS AH KH AD 2C")
    seats = [1, 2, 3]
    need = [0, 2, 2, 3]
    void = [0, 1 << cards.SPADES, 1 << cards.HEARTS, 0]

    def key(hands):
        return tuple(hands[s] for s in seats)

    consistent = set()
    for order in itertools.permutations(pool):
        hands = [0, cards.mask_of(order[:2]), cards.mask_of(order[2:4]), cards.mask_of(order[4:])]
        if not any(_holds_suit(hands[s], void[s]) for s in seats):
            consistent.add(key(hands))
    rng = random.Random(1)
    n = 200 * len(consistent)
    counts = Counter()
    for _ in range(n):
        hands = [0] * 4
        confirmation.determinization._deal_hidden(rng, list(pool), seats, need, void, hands)
        counts[key(hands)] += 1
    assert set(counts) == consistent
    assert max(counts.values()) < 200 + 5 * 14 and min(counts.values()) > 200 - 5 * 14  # sd ~ 14


# --- Aegis --------------------------------------------------------------------------


def _aegis_voids(obs: dict) -> list[int]:
    return _voids([(t["leader"], t["cards"]) for t in obs["tricks"]], 2)


def _aegis_action(state, seat: int, rng: random.Random) -> int:
    """Random, but often the first legal action (STOP, decline, lowest declaration) so that
    exchange phases of every length occur."""
    legal = state.legal_actions(seat)
    return legal[0] if rng.random() < 0.3 else rng.choice(legal)


def _check_aegis(match: AegisMatch, seat: int, rng: random.Random, playout: bool) -> None:
    obs = match.observation(seat)
    det = aegis.determinize(obs, rng, match.options)
    assert isinstance(det, AegisGame)
    assert det.observation(seat) == match.current.observation(seat)
    assert det.to_act() == match.to_act()
    assert det.legal_actions(seat) == match.legal_actions(seat)
    opp = 1 - seat
    assert det.hands[seat] == match.current.hands[seat]
    assert det.hands[opp].bit_count() == match.current.hands[opp].bit_count()
    assert not _holds_suit(det.hands[opp], _aegis_voids(obs)[opp])
    if playout:
        random_playout(det, rng)
        assert det.is_terminal()

    whole = aegis.determinize(obs, rng, match=True)
    assert isinstance(whole, AegisMatch)
    assert whole.observation(seat) == obs
    assert whole.to_act() == match.to_act()
    assert whole.legal_actions(seat) == match.legal_actions(seat)
    if playout and rng.random() < 0.3:
        random_playout(whole, rng)
        assert whole.is_terminal() and whole.winner is not None


@pytest.mark.parametrize("promise", ["table", "4plus"])
def test_aegis_views_are_kept(promise):
    rng = random.Random(promise)
    checked = Counter()
    for _ in range(10):
        match = GAMES["aegis"].new({"promise": promise}, seed=rng.randrange(1 << 30))
        while True:
            if rng.random() < 0.25 or match.is_terminal():
                for seat in (0, 1):
                    _check_aegis(match, seat, rng, playout=rng.random() < 0.5)
                    checked[aegis.PHASE_NAMES[match.current.phase], seat in match.to_act()] += 1
            seats = match.to_act()
            if not seats:
                break
            match.apply(seats[0], _aegis_action(match, seats[0], rng))
    for phase in ("exchange", "declare", "play"):
        assert checked[phase, True] and checked[phase, False], phase
    assert checked["over", False] == 2 * 10


def test_aegis_single_game_views_are_kept():
    rng = random.Random(3)
    for _ in range(20):
        game = AegisGame(rng.randrange(2), cards.shuffled_deck(rng), {"promise": "4plus"}, number=3)
        while True:
            for seat in (0, 1):
                obs = game.observation(seat)
                det = aegis.determinize(obs, rng, game.options)
                assert det.observation(seat) == obs
                assert det.legal_actions(seat) == game.legal_actions(seat)
            if game.is_terminal():
                break
            seat = game.to_act()[0]
            game.apply(seat, _aegis_action(game, seat, rng))


def test_aegis_hidden_cards_vary_and_own_draws_stay():
    """Twenty samples of positions in the exchanges: the opponent's hand varies;
    the seat's own hand and draws are the same; the key card never moves."""
    rng = random.Random(4)
    for _ in range(10):
        game = AegisGame(rng.randrange(2), cards.shuffled_deck(rng))
        for _ in range(rng.randrange(0, 5)):
            if game.phase > aegis.EXCHANGE_SLAVE:
                break
            seat = game.to_act()[0]
            game.apply(seat, rng.choice(game.legal_actions(seat)[1:]))  # exchange at least one card
        for seat in (0, 1):
            samples = [aegis.determinize(game.observation(seat), rng) for _ in range(20)]
            assert len({d.hands[1 - seat] for d in samples}) >= 2
            assert {d.hands[seat] for d in samples} == {game.hands[seat]}
            assert {d.key_card for d in samples} == {game.key_card}
            assert all(d.drawn == game.drawn for d in samples)


def test_aegis_opponent_void_is_respected():
    """The opponent showed out of a suit: no sample gives it a card of that suit."""
    rng = random.Random(6)
    found = 0
    while found < 15:
        game = AegisGame(rng.randrange(2), cards.shuffled_deck(rng))
        while not game.is_terminal():
            seat = game.to_act()[0]
            game.apply(seat, _aegis_action(game, seat, rng))
            if game.phase == aegis.PLAY and game.lead is None and game.completed:
                for viewer in (0, 1):
                    void = _aegis_voids(game.observation(viewer))[1 - viewer]
                    if void and game.hands[1 - viewer]:
                        found += 1
                        for _ in range(20):
                            det = aegis.determinize(game.observation(viewer), rng)
                            assert not _holds_suit(det.hands[1 - viewer], void)
