"""Aegis, rule by rule: each test cites the RULES.md section it checks (§2, §3)."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee import cards
from referee.games import GAMES, IllegalActionError, OptionError, aegis
from referee.games.aegis import DECLARE, EXCHANGE, PASS, STOP, AegisGame, AegisMatch
from referee.games.base import PUBLIC, ActionSyntaxError, NotYourTurnError

SPEC = GAMES["aegis"]
P = cards.parse


# --- helpers ------------------------------------------------------------------


def cl(text: str) -> list[int]:
    return cards.parse_list(text)


def make_deck(slave: str | list[int], master: str | list[int], key: str | int,
              stock: str | list[int] = ()) -> list[int]:
    """A deck order dealing these hands by RULES §3 (slave 0,2,4,6,8; master 1,3,5,7,9;
    key card 10; then the stock top first); the rest of the stock follows in card order."""
    slave = cl(slave) if isinstance(slave, str) else list(slave)
    master = cl(master) if isinstance(master, str) else list(master)
    key = P(key) if isinstance(key, str) else key
    stock = cl(stock) if isinstance(stock, str) else list(stock)
    assert len(slave) == 5 and len(master) == 5
    deck = [0] * 10
    deck[0:10:2] = slave
    deck[1:10:2] = master
    deck.append(key)
    deck += stock
    used = set(deck)
    assert len(used) == len(deck), "a card is given twice"
    deck += [c for c in range(52) if c not in used]
    return deck


def draw_deck(card0: str, card1: str) -> list[int]:
    """The master-draw deck (RULES §3): seat 0 draws card 0, seat 1 card 1."""
    first = [P(card0), P(card1)]
    return first + [c for c in range(52) if c not in first]


def game(slave, master, key, stock=(), master_seat=0, **options) -> AegisGame:
    return AegisGame(master_seat, make_deck(slave, master, key, stock), options)


def act(state, *names: str) -> None:
    """Apply actions by name, each for the seat to act."""
    for text in names:
        (seat,) = state.to_act()
        state.apply(seat, aegis.parse_action(text))


def names(text: str) -> list[str]:
    """Card names as the engine's views give them (``"2H 3H"`` -> ``["2H", "3H"]``)."""
    return text.split()


def hand(state, seat) -> list[int]:
    """The seat's hand as cards: the observation names them (in ascending card order)."""
    named = state.observation(seat)["hand"]
    assert all(isinstance(c, str) for c in named), named
    return cards.parse_list(named)


def last_event(state, kind):
    return [e for e in state.events if e.kind == kind][-1]


def plays_for(state, seat: int, tricks: int, remaining: int = 5) -> list[int]:
    """A sequence of plays (found by search) after which ``seat`` has taken exactly
    ``tricks`` of the ``remaining`` tricks of the current game."""

    def search(st, need, left):
        if need < 0 or need > left:
            return None
        if left == 0:
            return []
        (leader,) = st.to_act()
        for a in st.legal_actions(leader):
            s1 = copy.deepcopy(st)
            s1.apply(leader, a)
            (follower,) = s1.to_act()
            for b in s1.legal_actions(follower):
                s2 = copy.deepcopy(s1)
                n = len(s2.events)
                s2.apply(follower, b)
                winner = next(e.seat for e in s2.events[n:] if e.kind == "trick")
                rest = search(s2, need - (winner == seat), left - 1)
                if rest is not None:
                    return [a, b, *rest]
        return None

    found = search(state, tricks, remaining)
    assert found is not None, f"no way for seat {seat} to take {tricks} tricks"
    return found


def play_to(state, seat: int, tricks: int) -> None:
    for a in plays_for(state, seat, tricks):
        state.apply(state.to_act()[0], a)


# All hearts, no trumps in play (key QS: trump spades, killers QH QD QC).
# Ace beats K, 2 beats A: both a clean sweep and any split are reachable.
CYCLE_MASTER = "AH 3H 5H 7H 9H"
CYCLE_SLAVE = "KH 2H 4H 6H 8H"
CYCLE_KEY = "QS"


def cycle_deck() -> list[int]:
    return make_deck(CYCLE_SLAVE, CYCLE_MASTER, CYCLE_KEY)


def cycle_game(master_seat=0, **options) -> AegisGame:
    return AegisGame(master_seat, cycle_deck(), options)


def played_game(declarations: list[str], attacker_tricks: int, master_seat=0, **options) -> AegisGame:
    """A cycle game: STOP, the declarations, then the attacker takes ``attacker_tricks``."""
    g = cycle_game(master_seat, **options)
    act(g, "STOP", *declarations)
    play_to(g, g.observation(0)["attacker"], attacker_tricks)
    assert g.is_terminal()
    return g


# --- 2.1 card strength ----------------------------------------------------------

ORDER = "23456789TJQKA"


@pytest.mark.parametrize("a", list(ORDER))
@pytest.mark.parametrize("b", list(ORDER))
def test_2_1_strength_within_a_suit(a, b):
    """RULES 2.1: K>Q>J>T>..>2 as usual; the ace beats K, Q, J and loses to T..2."""
    ra, rb = ORDER.index(a), ORDER.index(b)
    if a == b:
        expected = False
    elif a == "A":
        expected = b in "KQJ"
    elif b == "A":
        expected = a in "T98765432"
    else:
        expected = ra > rb
    assert aegis.beats(P(a + "H"), P(b + "H")) is expected


def test_2_1_ace_is_not_transitive():
    """RULES 2.1: A > K > 2 > A."""
    assert aegis.beats(P("AS"), P("KS")) and aegis.beats(P("KS"), P("2S")) and aegis.beats(P("2S"), P("AS"))
    with pytest.raises(ValueError):
        aegis.beats(P("AS"), P("KH"))


@pytest.mark.parametrize("lead, follow, winner", [
    ("AH", "KH", "leader"), ("AH", "QH", "leader"), ("AH", "JH", "leader"),
    ("AH", "TH", "follower"), ("AH", "2H", "follower"), ("KH", "AH", "follower"),
    ("2H", "AH", "leader"), ("KH", "QH", "leader"), ("9H", "TH", "follower"),
])
def test_2_1_ace_in_play(lead, follow, winner):
    """RULES 2.1 and 2.6: a followed trick goes to the stronger card, ace included."""
    master = f"{lead} 3C 4C 6C 7C"
    slave = f"{follow} 3D 4D 6D 7D"
    g = game(slave, master, "5S")
    act(g, "STOP", "DECLARE 1", "PASS", lead, follow)
    assert last_event(g, "trick").seat == (0 if winner == "leader" else 1)


# --- 2.2 the master draw --------------------------------------------------------


@pytest.mark.parametrize("c0, c1, master", [
    ("AS", "KH", 0),   # ace beats king, whatever the suits
    ("KS", "AC", 1),
    ("AS", "2C", 1),   # ace loses to a two
    ("TD", "AH", 0),   # ace loses to a ten
    ("JC", "AD", 1),   # ace beats a jack
    ("KH", "QS", 0),
    ("3C", "2S", 0),
    ("7D", "7H", 1),   # equal ranks: spades > hearts > diamonds > clubs
    ("7S", "7C", 0),
    ("AD", "AH", 1),
    ("2C", "2D", 1),
])
def test_2_2_master_draw(c0, c1, master):
    """RULES 2.2 and §3: seat 0 draws card 0, seat 1 card 1 of the draw deck; stronger rank by 2.1
    is master, equal ranks by suit."""
    m = SPEC.new(decks=[draw_deck(c0, c1), cycle_deck()])
    assert aegis.draw_master(P(c0), P(c1)) == master
    assert m.events[0].kind == "master_draw" and m.events[0].to == PUBLIC
    assert m.events[0].data == {"cards": [c0, c1], "master": master}
    obs = m.observation(1 - master)
    assert obs["master"] == master and obs["role"] == "slave"
    assert obs["draw"] == {"cards": [c0, c1], "master": master}
    assert m.results()["draw"] == {"cards": [c0, c1], "master": master}
    assert m.to_act() == (master,)


def test_2_2_draw_uses_its_own_deck():
    """RULES 2.2 Resolution: the draw is a fresh shuffle, separate from the first deal."""
    m = SPEC.new(seed=7)
    assert len(m.shoe.decks) == 2
    draw, first = m.shoe.decks
    assert m.observation(0)["draw"]["cards"] == [cards.NAMES[draw[0]], cards.NAMES[draw[1]]]
    assert m.observation(0)["key_card"] == cards.NAMES[first[10]]


def test_2_2_roles_alternate():
    """RULES 2.2: the roles alternate every game."""
    m = SPEC.new(decks=[draw_deck("KH", "AS")] + [cycle_deck()] * 10)
    masters = []
    for _ in range(4):
        masters.append(m.observation(0)["master"])
        act(m, "STOP", "DECLARE 1", "PASS")  # master attacks d=1
        play_to(m, m.observation(0)["master"], 2)  # +1 for the master, +1 save for the slave
    assert masters == [1, 0, 1, 0]
    assert [e.data["master"] for e in m.events if e.kind == "deal"][:4] == [1, 0, 1, 0]


# --- 2.3 / §3 deal, key card, trump, killers -------------------------------------


@pytest.mark.parametrize("master_seat", [0, 1])
def test_2_3_and_3_dealing_convention(master_seat):
    """RULES §3 and 2.3: deck cards 0,2,4,6,8 to the slave, 1,3,5,7,9 to the master, card 10 the
    key card (its suit trump, the other three of its rank killers), stock of 41 with card 11 on top."""
    deck = list(range(51, -1, -1))
    g = AegisGame(master_seat, deck, None)
    slave_seat = 1 - master_seat
    assert hand(g, slave_seat) == sorted(deck[0:10:2])
    assert hand(g, master_seat) == sorted(deck[1:10:2])
    assert g.observation(slave_seat)["hand"] == [cards.NAMES[c] for c in sorted(deck[0:10:2])]
    obs = g.observation(master_seat)
    assert deck[10] == P("4C")
    assert obs["key_card"] == "4C"
    assert obs["trump"] == "C"
    assert obs["killers"] == names("4S 4H 4D")
    assert obs["stock_size"] == 41
    assert obs["role"] == "master" and g.observation(slave_seat)["role"] == "slave"
    # the first draw takes card 11, the top of the stock (not the key card)
    g.apply(master_seat, aegis.parse_action("EXCHANGE " + cards.NAMES[deck[1]]))
    assert deck[11] in hand(g, master_seat) and deck[1] not in hand(g, master_seat)
    assert g.observation(slave_seat)["stock_size"] == 40


def test_2_3_killers_never_trump():
    """RULES 2.3: killers are the key card's rank in the three other suits."""
    for key in range(52):
        g = AegisGame(0, [c for c in range(52) if c != key][:10] + [key] +
                      [c for c in range(52) if c != key][10:], None)
        obs = g.observation(0)
        assert obs["key_card"] == cards.NAMES[key]
        assert obs["trump"] == cards.SUITS[cards.SUIT[key]]
        assert len(obs["killers"]) == 3
        assert all(cards.RANK[k] == cards.RANK[key] and cards.SUITS[cards.SUIT[k]] != obs["trump"]
                   for k in cards.parse_list(obs["killers"]))
        assert g.killer_mask == cards.mask_of(cards.parse_list(obs["killers"]))


def test_2_3_deal_events_private_hands():
    """RULES 2.3: each hand is private; key card, trump and killers are public."""
    g = game("2S 3S 4S 5S 6S", "2H 3H 4H 5H 6H", "9D")
    deal, h_slave, h_master = g.events[:3]
    assert deal.kind == "deal" and deal.to == PUBLIC and deal.data["key_card"] == "9D"
    assert deal.data["trump"] == "D" and deal.data["killers"] == names("9S 9H 9C")
    assert h_slave.kind == "hand" and h_slave.to == 1 and h_slave.data["cards"] == names("2S 3S 4S 5S 6S")
    assert h_master.kind == "hand" and h_master.to == 0 and h_master.data["cards"] == names("2H 3H 4H 5H 6H")
    assert all(e.to != 1 for e in g.visible_events(0))


# --- 2.4 exchange -----------------------------------------------------------------


def exchange_game() -> AegisGame:
    return game("2S 3S 4S 5S 6S", "2H 3H 4H 5H 6H", "9D", stock="AC KC QC JC TC 9C 8C 7C 6C 5C 4C 3C 2C")


def test_2_4_legal_exchange_actions():
    """RULES 2.4: the master STOPs or exchanges 1..5 (31 subsets); the slave 0..5 (32 subsets)."""
    g = exchange_game()
    la = g.legal_actions(0)
    assert la[0] == STOP and len(la) == 32 and la == sorted(la)
    assert EXCHANGE not in la
    assert g.legal_actions(1) == []
    masks = [a ^ EXCHANGE for a in la[1:]]
    assert len(set(masks)) == 31 and all(m and m & ~cards.mask_of(cl("2H 3H 4H 5H 6H")) == 0 for m in masks)
    act(g, "EXCHANGE 2H")
    la = g.legal_actions(1)
    assert la[0] == EXCHANGE and len(la) == 32 and la == sorted(la) and STOP not in la
    assert g.legal_actions(0) == []


def test_2_4_draws_from_top_in_order():
    """RULES 2.4 and §3: exchanged cards are replaced from the top of the stock, in order."""
    g = exchange_game()
    act(g, "EXCHANGE 2H 3H")
    assert hand(g, 0) == sorted(cl("4H 5H 6H AC KC"))
    act(g, "EXCHANGE 2S 3S 4S")
    assert hand(g, 1) == sorted(cl("5S 6S QC JC TC"))
    act(g, "EXCHANGE 4H")
    assert hand(g, 0) == sorted(cl("5H 6H AC KC 9C"))
    assert g.observation(1)["stock_size"] == 41 - 6
    assert g.observation(0)["my_exchanges"] == [
        {"round": 1, "discarded": names("2H 3H"), "drawn": names("AC KC")},
        {"round": 2, "discarded": names("4H"), "drawn": names("9C")},
    ]


def test_2_4_master_must_exchange_at_least_one():
    """RULES 2.4: the master discards 1..5; an empty exchange is not a master action."""
    g = exchange_game()
    with pytest.raises(IllegalActionError) as err:
        g.apply(0, EXCHANGE)
    assert err.value.rule == "2.4"
    with pytest.raises(IllegalActionError) as err:
        g.apply(0, P("2H"))
    assert err.value.rule == "2.4"


def test_2_4_exchange_only_own_cards():
    """RULES 2.4: discards come from the player's hand."""
    g = exchange_game()
    with pytest.raises(IllegalActionError) as err:
        act(g, "EXCHANGE 2H 2S")
    assert err.value.rule == "2.4" and "2S" in str(err.value)
    act(g, "EXCHANGE 2H 3H 4H 5H 6H")  # all five is fine
    with pytest.raises(IllegalActionError) as err:
        act(g, "EXCHANGE 2H")
    assert err.value.rule == "2.4"


def test_2_4_slave_cannot_stop():
    """RULES 2.4: only the master stops; the slave replies with 0..5 cards."""
    g = exchange_game()
    act(g, "EXCHANGE 2H")
    with pytest.raises(IllegalActionError) as err:
        g.apply(1, STOP)
    assert err.value.rule == "2.4"
    with pytest.raises(IllegalActionError):
        g.apply(1, DECLARE + 2)


def test_2_4_slave_decline_does_not_end_phase():
    """RULES 2.4: the slave declining (0 cards) does not end the exchange phase."""
    g = exchange_game()
    act(g, "EXCHANGE 2H", "EXCHANGE")
    obs = g.observation(1)
    assert obs["phase"] == "exchange" and obs["exchange_round"] == 2 and g.to_act() == (0,)
    assert hand(g, 1) == cl("2S 3S 4S 5S 6S")
    assert g.legal_actions(0)[0] == STOP and len(g.legal_actions(0)) == 32


def test_2_4_stop_ends_phase():
    """RULES 2.4: the master's STOP ends the exchange phase at once."""
    g = exchange_game()
    act(g, "EXCHANGE 2H", "EXCHANGE 2S", "STOP")
    obs = g.observation(0)
    assert obs["phase"] == "declare" and obs["e"] == 1 and obs["exchange_end"] == "stop"
    assert obs["exchanges"] == [[1, 1]]
    assert g.legal_actions(0) == [DECLARE + d for d in (2, 3, 4, 5)]
    with pytest.raises(IllegalActionError) as err:
        act(g, "EXCHANGE 3H")
    assert err.value.rule == "2.4"


def test_2_4_phase_ends_after_fourth_slave_reply():
    """RULES 2.4: after the slave's reply to the 4th master exchange the phase ends by itself
    (no 5th exchange, no stop), e = 4; 4 x 10 cards never exhaust the stock of 41."""
    g = exchange_game()
    for r in range(4):
        assert g.observation(0)["exchange_round"] == r + 1
        h0 = hand(g, 0)
        g.apply(0, EXCHANGE | cards.mask_of(h0))  # all five
        assert g.observation(0)["phase"] == "exchange"
        h1 = hand(g, 1)
        g.apply(1, EXCHANGE | cards.mask_of(h1) if r % 2 == 0 else EXCHANGE)
    obs = g.observation(1)
    assert obs["phase"] == "declare" and obs["e"] == 4 and obs["exchange_end"] == "limit"
    assert obs["exchanges"] == [[5, 5], [5, 0], [5, 5], [5, 0]]
    assert obs["stock_size"] == 41 - 30
    assert g.to_act() == (0,)
    assert g.legal_actions(0) == [DECLARE + 5]
    for bad in (STOP, EXCHANGE | cards.mask_of(hand(g, 0)[:1])):
        with pytest.raises(IllegalActionError) as err:
            g.apply(0, bad)
        assert err.value.rule == "2.4"


def test_2_4_four_full_rounds_fit_the_stock():
    """RULES 2.4: 4 rounds x 10 cards <= 41: the stock never runs out."""
    g = exchange_game()
    for _ in range(4):
        for seat in (0, 1):
            g.apply(seat, EXCHANGE | cards.mask_of(hand(g, seat)))
    assert g.observation(0)["stock_size"] == 1
    assert len(hand(g, 0)) == len(hand(g, 1)) == 5


def test_2_4_public_counts_private_cards():
    """RULES 2.4: the counts are public; which cards were discarded and drawn is private."""
    g = exchange_game()
    act(g, "EXCHANGE 2H 3H", "EXCHANGE 2S", "STOP")
    public = [(e.kind, e.seat, e.data) for e in g.public_events() if e.kind == "exchange"]
    assert public == [("exchange", 0, {"round": 1, "role": "master", "count": 2}),
                      ("exchange", 1, {"round": 1, "role": "slave", "count": 1})]
    private = [e for e in g.events if e.kind == "exchange_cards"]
    assert [(e.seat, e.to) for e in private] == [(0, 0), (1, 1)]
    assert private[0].data == {"round": 1, "discarded": names("2H 3H"), "drawn": names("AC KC")}
    obs1 = g.observation(1)
    assert obs1["exchanges"] == [[2, 1]]
    assert obs1["my_exchanges"] == [{"round": 1, "discarded": names("2S"), "drawn": names("QC")}]
    assert "2H" not in str(obs1) and "2H" not in obs1["hand"] and "AC" not in str(obs1)
    assert not any(e.kind == "exchange_cards" and e.seat == 0 for e in g.visible_events(1))
    assert any(e.kind == "stop" and e.seat == 0 and e.to == PUBLIC for e in g.events)


# --- 2.5 declarations -------------------------------------------------------------


@pytest.mark.parametrize("e", [0, 1, 2, 3, 4])
def test_2_5_master_floor_is_e_plus_1(e):
    """RULES 2.5: the master declares e+1..5 with e its number of exchanges; no pass."""
    g = exchange_game()
    for _ in range(e):
        act(g, "EXCHANGE " + cards.NAMES[hand(g, 0)[0]], "EXCHANGE")
    if e < 4:
        act(g, "STOP")
    assert g.observation(0)["e"] == e
    assert g.legal_actions(0) == [DECLARE + d for d in range(e + 1, 6)]
    for d in range(1, e + 1):
        with pytest.raises(IllegalActionError) as err:
            g.apply(0, DECLARE + d)
        assert err.value.rule == "2.5"
        assert f"DECLARE {d} is below the floor e+1 = {e + 1} after {e} exchange" in err.value.reason
    with pytest.raises(IllegalActionError) as err:
        g.apply(0, PASS)
    assert err.value.rule == "2.5"
    g.apply(0, DECLARE + e + 1)
    assert g.observation(1)["d_master"] == e + 1


@pytest.mark.parametrize("d_m", [1, 2, 3, 4, 5])
def test_2_5_slave_passes_or_exceeds(d_m):
    """RULES 2.5: the slave may always pass, or declare d_s with d_m < d_s <= 5 (only pass after 5)."""
    g = cycle_game()
    act(g, "STOP", f"DECLARE {d_m}")
    assert g.legal_actions(1) == [PASS] + [DECLARE + d for d in range(d_m + 1, 6)]
    assert g.legal_actions(0) == []
    for d in range(1, d_m + 1):
        with pytest.raises(IllegalActionError) as err:
            g.apply(1, DECLARE + d)
        assert err.value.rule == "2.5"
    with pytest.raises(IllegalActionError):
        g.apply(1, STOP)
    g2 = copy.deepcopy(g)
    act(g, "PASS")
    obs = g.observation(1)
    assert obs["slave_passed"] and obs["attacker"] == 0 and obs["d"] == d_m and obs["phase"] == "play"
    if d_m < 5:
        act(g2, f"DECLARE {d_m + 1}")
        obs = g2.observation(0)
        assert obs["attacker"] == 1 and obs["d"] == d_m + 1 and obs["d_slave"] == d_m + 1


def test_2_5_only_one_declaration_each_and_master_still_leads():
    """RULES 2.5 and 2.6: one declaration each; then the master leads even when the slave attacks."""
    g = cycle_game(master_seat=1)
    act(g, "STOP", "DECLARE 2", "DECLARE 4")
    assert g.to_act() == (1,)
    assert g.observation(0)["phase"] == "play"
    with pytest.raises(IllegalActionError) as err:
        g.apply(1, DECLARE + 5)
    assert err.value.rule == "2.6"
    assert [(e.kind, e.seat) for e in g.public_events() if e.kind in ("declare", "pass", "attacker")] == \
        [("declare", 1), ("declare", 0), ("attacker", 0)]


# --- 2.6 trick play ---------------------------------------------------------------

# Key 5S: trump spades, killers 5H 5D 5C.
TRICK_CASES = [
    # (master hand, slave hand, lead, follow, winner, why)
    ("9H 2C 3C 4C 6C", "2S 3D 4D 6D 7D", "9H", "2S", "follower", "case 1: non-trump lead, trump played"),
    ("9H 2C 3C 4C 6C", "3S 3D 4D 6D 7D", "9H", "3D", "leader", "case 3: non-trump lead, off-suit non-trump"),
    ("AS 2C 3C 4C 6C", "5H 3D 4D 6D 7D", "AS", "5H", "follower", "case 2: trump lead, killer played"),
    ("AS 2C 3C 4C 6C", "5D 3H 4D 6D 7D", "AS", "5D", "follower", "case 2 with another killer"),
    ("AS 2C 3C 4C 6C", "5H 3D 4D 6D 7D", "AS", "3D", "leader", "case 3: trump lead, off-suit non-killer"),
    ("5H 2C 3C 4C 6C", "5D 3D 4D 6D 7D", "5H", "5D", "leader", "killer led: ordinary strength vs killer"),
    ("5H 2C 3C 4C 6C", "2S 3D 4D 6D 7D", "5H", "2S", "follower", "killer led, trumped: case 1"),
    ("5H 2C 3C 4C 6C", "6H 3D 4D 6D 7D", "5H", "6H", "follower", "killer led, followed: ordinary strength"),
    ("5H 2C 3C 4C 6C", "4H 3D 4D 6D 7D", "5H", "4H", "leader", "killer led, followed lower"),
    ("9D 2C 3C 4C 6C", "5H 3S 4H 6H 7H", "9D", "5H", "leader", "killer on a non-trump lead: ordinary"),
    ("9D 2C 3C 4C 6C", "5D 3S 4H 6H 7H", "9D", "5D", "leader", "killer following a non-trump lead"),
    ("9D 2C 3C 4C 6C", "TD 3S 4H 6H 7H", "9D", "TD", "follower", "followed: stronger wins"),
    ("AS 2C 3C 4C 6C", "2S 3D 4D 6D 7D", "AS", "2S", "follower", "trump lead followed: 2 beats A"),
    ("AS 2C 3C 4C 6C", "KS 3D 4D 6D 7D", "AS", "KS", "leader", "trump lead followed: A beats K"),
    ("KS 2C 3C 4C 6C", "QS 3D 4D 6D 7D", "KS", "QS", "leader", "trump lead followed: K beats Q"),
]


@pytest.mark.parametrize("master, slave, lead, follow, winner, why", TRICK_CASES,
                         ids=[c[5] for c in TRICK_CASES])
def test_2_6_trick_winner(master, slave, lead, follow, winner, why):
    """RULES 2.6 cases 1-3, the killer subtleties, and 2.1's ace."""
    g = game(slave, master, "5S")
    act(g, "STOP", "DECLARE 1", "PASS", lead, follow)
    w = 0 if winner == "leader" else 1
    ev = last_event(g, "trick")
    assert ev.seat == w and ev.data == {"trick": 1, "leader": 0, "cards": [lead, follow], "winner": w}
    assert [e.data for e in g.events if e.kind == "play"] == [{"trick": 1, "card": lead},
                                                               {"trick": 1, "card": follow}]
    assert g.observation(1 - w)["tricks"] == [{"trick": 1, "leader": 0, "cards": [lead, follow], "winner": w}]
    assert aegis.follower_wins(P(lead), P(follow), cards.SPADES, cards.mask_of(cl("5H 5D 5C"))) == (w == 1)
    # the winner of a trick leads the next
    assert g.to_act() == (w,)
    assert g.observation(1 - w)["tricks_won"][w] == 1


def test_2_6_must_follow_suit():
    """RULES 2.6: the follower must follow suit if able (a killer does not escape this)."""
    g = game("2S 5H 4D 6D 7D", "AS 2C 3C 4C 6C", "5S")
    act(g, "STOP", "DECLARE 1", "PASS", "AS")
    assert g.legal_actions(1) == [P("2S")]
    with pytest.raises(IllegalActionError) as err:
        act(g, "5H")
    assert err.value.rule == "2.6" and "follow suit" in err.value.reason


def test_2_6_void_may_play_anything_and_any_lead():
    """RULES 2.6: any card may be led (trump included); a follower void in the led suit plays any card."""
    g = game("2S 5H 4D 6D 7D", "AS 2C 3C 4C 6C", "5S")
    act(g, "STOP", "DECLARE 1", "PASS")
    assert g.legal_actions(0) == cl("AS 2C 3C 4C 6C")
    assert g.legal_actions(1) == []
    act(g, "2C")
    assert g.legal_actions(1) == cl("2S 5H 4D 6D 7D")
    assert g.observation(1)["trick"] == [[0, "2C"]] and g.observation(0)["leader"] == 0


def test_2_6_card_must_be_in_hand_and_out_of_turn():
    """RULES 2.6: only a card of one's hand; acting out of turn is refused."""
    g = game("2S 5H 4D 6D 7D", "AS 2C 3C 4C 6C", "5S")
    act(g, "STOP", "DECLARE 1", "PASS")
    with pytest.raises(NotYourTurnError):
        g.apply(1, P("2S"))
    with pytest.raises(IllegalActionError) as err:
        g.apply(0, P("2S"))
    assert err.value.rule == "2.6" and "not in your hand" in err.value.reason
    with pytest.raises(IllegalActionError) as err:
        g.apply(0, STOP)
    assert err.value.rule == "2.6"


def test_2_6_five_tricks_then_over():
    """RULES 2.6: five tricks, then the game is over."""
    g = cycle_game()
    act(g, "STOP", "DECLARE 1", "PASS")
    for _ in range(10):
        (seat,) = g.to_act()
        g.apply(seat, g.legal_actions(seat)[0])
    assert g.is_terminal() and g.to_act() == () and g.legal_actions(0) == g.legal_actions(1) == []
    assert len([e for e in g.events if e.kind == "trick"]) == 5
    with pytest.raises(NotYourTurnError):
        g.apply(0, P("AH"))


# --- 2.7 scoring ------------------------------------------------------------------

# the sheet's table: attacker points by (d, t)
TABLE = {
    1: {1: 2, 2: 1, 3: 1, 4: 1, 5: 2},
    2: {2: 3, 3: 2, 4: 2, 5: 3},
    3: {3: 4, 4: 3, 5: 4},
    4: {4: 5, 5: 5},
    5: {5: 7},
}
TABLE_4PLUS = {
    1: {1: 1, 2: 1, 3: 1, 4: 1, 5: 2},
    2: {2: 2, 3: 2, 4: 2, 5: 3},
    3: {3: 3, 4: 3, 5: 4},
    4: {4: 5, 5: 5},
    5: {5: 7},
}
CELLS = [(d, t) for d in TABLE for t in TABLE[d]]
assert len(CELLS) == 15


@pytest.mark.parametrize("d, t", CELLS)
def test_2_7_score_table_cell(d, t):
    """RULES 2.7: the attacker's points, cell by cell of the sheet's table (default promise=table)."""
    g = played_game([f"DECLARE {d}", "PASS"], t)
    assert g.scores()[0] == TABLE[d][t]
    assert aegis.score_game(d, t, d)[0] == TABLE[d][t]
    assert g.results()["attacker_won"] and g.results()["points"] == g.scores()


@pytest.mark.parametrize("d, t", CELLS)
def test_2_7_score_table_cell_promise_4plus(d, t):
    """RULES 2.7 Resolution, option promise=4plus: promise only when d >= 4."""
    g = played_game([f"DECLARE {d}", "PASS"], t, promise="4plus")
    assert g.scores()[0] == TABLE_4PLUS[d][t]
    assert aegis.score_game(d, t, d, "4plus")[0] == TABLE_4PLUS[d][t]


@pytest.mark.parametrize("d, t", [(d, t) for d, t in CELLS if d >= 2])
def test_2_7_score_table_cell_slave_attacker(d, t):
    """RULES 2.7: the same table when the slave (seat 0 here) attacks, out-declaring the master's
    d - 1 (a slave declaration is at least 2)."""
    g = played_game([f"DECLARE {d - 1}", f"DECLARE {d}"], t, master_seat=1)
    assert g.results()["attacker"] == 0
    assert g.scores()[0] == TABLE[d][t]


@pytest.mark.parametrize("d, t", [(d, t) for d in range(1, 6) for t in range(d)])
def test_2_7_defender_wins(d, t):
    """RULES 2.7: t < d: the defender scores d, +1 conquest when t = 0; the attacker scores 0."""
    g = played_game([f"DECLARE {d}", "PASS"], t)
    assert g.scores() == [0, d + (1 if t == 0 else 0)]
    r = g.results()
    assert not r["attacker_won"] and r["winner"] == 1 and r["conquest"] == (t == 0)


def test_2_7_defender_wins_when_slave_attacks():
    """RULES 2.7: the master defends a slave's declaration: it scores the slave's d (+1 conquest)."""
    g = played_game(["DECLARE 1", "DECLARE 4"], 3)
    assert g.scores() == [4, 0]
    g = played_game(["DECLARE 1", "DECLARE 4"], 0)
    assert g.scores() == [5, 0]


@pytest.mark.parametrize("d_m, t, expected", [
    (1, 1, [2, 1]), (1, 2, [1, 1]), (1, 4, [1, 1]), (1, 5, [2, 0]),
    (2, 2, [3, 2]), (2, 3, [2, 2]), (2, 4, [2, 0]), (2, 5, [3, 0]),
])
def test_2_7_save_slave_passed(d_m, t, expected):
    """RULES 2.7 save, case 1: master declared d_m <= 2, slave passed, master won; the slave also
    scores d_m when it took at least d_m tricks (2,3: the sheet's example, 2 points each by the table)."""
    g = played_game([f"DECLARE {d_m}", "PASS"], t)
    assert g.scores() == expected
    assert g.results()["save"] == (expected[1] > 0)


@pytest.mark.parametrize("d_m, d_s, t, expected", [
    (1, 3, 3, [1, 4]),   # the sheet: master took 1 -> 1 point
    (1, 3, 4, [1, 3]),
    (1, 2, 3, [1, 2]),   # master took 2 with d_m = 1: still 1 point (the sheet's example)
    (2, 3, 3, [2, 4]),
    (2, 3, 4, [0, 3]),   # the master took 1 < d_m = 2: no save
    (1, 5, 5, [0, 7]),   # the master took 0 < 1: no save
])
def test_2_7_save_slave_out_declared(d_m, d_s, t, expected):
    """RULES 2.7 save, case 2: master declared d_m <= 2, the slave out-declared and won; the master
    scores d_m if it took at least d_m tricks."""
    g = played_game([f"DECLARE {d_m}", f"DECLARE {d_s}"], t)
    assert g.scores() == expected


@pytest.mark.parametrize("decl, t, expected", [
    (["DECLARE 3", "PASS"], 3, [4, 0]),
    (["DECLARE 3", "DECLARE 4"], 4, [0, 5]),
    (["DECLARE 2", "DECLARE 3"], 2, [3, 0]),  # the attacker lost: only the defender scores
])
def test_2_7_no_save(decl, t, expected):
    """RULES 2.7: no save when d_m >= 3 or when the attacker lost."""
    g = played_game(decl, t)
    assert g.scores() == expected
    assert not g.results()["save"]


def test_2_7_save_never_for_d_m_3_or_more():
    """RULES 2.7: the save is limited to d_m <= 2 (also in the pure scoring function)."""
    assert aegis.score_game(3, 3, 3) == (4, 0)
    assert aegis.score_game(4, 4, 3) == (5, 0)
    assert aegis.score_game(2, 2, 2) == (3, 2)


def test_2_7_game_end_event():
    """RULES 2.7: the result is public, with the points of both."""
    g = played_game(["DECLARE 2", "PASS"], 3)
    ev = last_event(g, "game_end")
    assert ev.to == PUBLIC and ev.data["points"] == [2, 2] and ev.data["attacker"] == 0 and ev.data["d"] == 2
    assert ev.data["key_card"] == CYCLE_KEY and ev.data["trump"] == "S"  # in notation, like every view
    assert g.observation(1)["result"]["points"] == [2, 2]
    assert g.observation(1)["result"] == ev.data == {k: v for k, v in g.results().items()
                                                     if k not in ("scores", "placing")}


# --- 2.8 end of the match -----------------------------------------------------------


def new_cycle_match(**options) -> AegisMatch:
    """Seat 0 is master of game 1 (AS beats KH); every game is dealt the cycle deck."""
    return SPEC.new(options, decks=[draw_deck("AS", "KH")] + [cycle_deck()] * 20)


def play_game(m: AegisMatch, declarations: list[str], attacker_tricks: int) -> None:
    act(m, "STOP", *declarations)
    attacker = m.observation(0)["attacker"]
    n_games = len(m.games)
    play_to(m, attacker, attacker_tricks)
    assert len(m.games) == n_games + 1


def test_2_8_first_to_25():
    """RULES 2.8: a player with 25 or more wins."""
    m = new_cycle_match()
    totals = []
    for _ in range(6):
        play_game(m, ["DECLARE 5", "PASS"], 5)  # the master takes 7 each game
        totals.append(m.scores())
        assert not m.is_terminal()
    assert totals == [[7, 0], [7, 7], [14, 7], [14, 14], [21, 14], [21, 21]]
    play_game(m, ["DECLARE 4", "PASS"], 4)  # seat 0 is master of game 7: +5
    assert m.is_terminal() and m.scores() == [26, 21]
    r = m.results()
    assert r["winner"] == 0 and r["ended_by"] == "25" and r["placing"] == [1, 2] and r["num_games"] == 7
    assert m.placing() == [1, 2] and m.to_act() == () and m.legal_actions(0) == []
    end = m.events[-1]
    assert end.kind == "match_end" and end.to == PUBLIC and end.data["winner"] == 0
    with pytest.raises(NotYourTurnError):
        m.apply(0, STOP)


def test_2_8_both_over_25_game_winner_wins_with_lower_total():
    """RULES 2.8: both at 25+ after the same game: the winner of that game wins, even if behind."""
    m = new_cycle_match()
    for _ in range(6):
        play_game(m, ["DECLARE 5", "PASS"], 5)
    play_game(m, ["DECLARE 2", "PASS"], 2)  # seat 0 master: 3, seat 1 save 2
    assert m.scores() == [24, 23] and not m.is_terminal()
    play_game(m, ["DECLARE 2", "PASS"], 3)  # seat 1 master takes 3: 2; seat 0 took 2: save 2
    assert m.scores() == [26, 25]
    r = m.results()
    assert r["winner"] == 1 and r["ended_by"] == "both-25" and m.placing() == [2, 1]
    assert r["games"][-1]["winner"] == 1


def test_2_8_called_game():
    """RULES 2.8: otherwise a lead of 10 or more wins at once."""
    m = new_cycle_match()
    play_game(m, ["DECLARE 5", "PASS"], 5)   # (7, 0)
    play_game(m, ["DECLARE 1", "PASS"], 0)   # seat 1 master takes nothing: seat 0 scores 1 + 1
    assert m.scores() == [9, 0] and not m.is_terminal()  # a lead of 9 does not end it
    play_game(m, ["DECLARE 1", "PASS"], 1)   # seat 0: 2, seat 1 save 1
    assert m.scores() == [11, 1] and m.is_terminal()
    r = m.results()
    assert r["winner"] == 0 and r["ended_by"] == "called" and r["num_games"] == 3
    assert [g["points"] for g in r["games"]] == [[7, 0], [2, 0], [2, 1]]


def test_2_8_called_game_for_the_trailing_seat():
    """RULES 2.8: the called game goes to whoever leads by 10, here seat 1."""
    m = new_cycle_match()
    play_game(m, ["DECLARE 5", "PASS"], 0)   # seat 0 attacks 5, takes 0: seat 1 scores 6
    play_game(m, ["DECLARE 4", "PASS"], 4)   # seat 1 master: 5
    assert m.scores() == [0, 11] and m.is_terminal() and m.placing() == [2, 1]
    assert m.results()["ended_by"] == "called"


def test_2_8_match_events_cover_all_games():
    """RULES 2.8: the match's events hold the draw, every game and the end."""
    m = new_cycle_match()
    play_game(m, ["DECLARE 5", "PASS"], 5)
    play_game(m, ["DECLARE 5", "PASS"], 0)
    kinds = [e.kind for e in m.events]
    assert kinds[0] == "master_draw" and kinds[-1] == "match_end"
    assert kinds.count("deal") == 2 and kinds.count("game_end") == 2 and kinds.count("trick") == 10
    assert m.scores() == [13, 0]


# --- options, registry, notation ------------------------------------------------------


def test_options():
    """RULES 2.7 Resolution: option promise = table (default) | 4plus; nothing else."""
    assert SPEC.check_options(None) == {"promise": "table"}
    assert SPEC.check_options({"promise": "4plus"}) == {"promise": "4plus"}
    with pytest.raises(OptionError):
        SPEC.check_options({"promise": "always"})
    with pytest.raises(OptionError):
        SPEC.check_options({"rounds": 3})
    assert SPEC.new({"promise": "4plus"}, seed=1).options == {"promise": "4plus"}
    assert SPEC.num_seats == 2 and SPEC.name == "aegis"


@pytest.mark.parametrize("action, text", [
    (P("AS"), "AS"), (P("2C"), "2C"), (STOP, "STOP"), (PASS, "PASS"), (DECLARE + 3, "DECLARE 3"),
    (DECLARE + 1, "DECLARE 1"), (DECLARE + 5, "DECLARE 5"), (EXCHANGE, "EXCHANGE"),
    (EXCHANGE | cards.mask_of(cl("5H 2C")), "EXCHANGE 5H 2C"),
])
def test_notation(action, text):
    """The action encoding of the module docstring; names round-trip (cards in card-int order)."""
    assert aegis.action_name(action) == text
    assert aegis.parse_action(text) == action
    assert aegis.parse_action(text.lower()) == action
    assert SPEC.action_name(action) == text and SPEC.parse_action(text) == action


def test_notation_values():
    assert (STOP, PASS, DECLARE, EXCHANGE) == (52, 53, 53, 1 << 52)
    assert aegis.parse_action("exchange 2c 5h") == aegis.parse_action("EXCHANGE 5H 2C")
    assert aegis.parse_action(" declare  4 ") == 57


@pytest.mark.parametrize("text", ["", "DECLARE", "DECLARE 0", "DECLARE 6", "DECLARE x", "STOP 2", "PASS AS",
                                  "EXCHANGE 2C 2C", "EXCHANGE XX", "1S", "AS KS", "HELLO"])
def test_notation_errors(text):
    with pytest.raises(ActionSyntaxError):
        aegis.parse_action(text)


@pytest.mark.parametrize("action", [-1, 59, 100, EXCHANGE - 1, 2 * EXCHANGE])
def test_notation_bad_ints(action):
    with pytest.raises(ActionSyntaxError):
        aegis.action_name(action)


@given(st.sets(st.integers(0, 51), max_size=5))
def test_notation_exchange_roundtrip(discard):
    action = EXCHANGE | cards.mask_of(discard)
    text = aegis.action_name(action)
    assert aegis.parse_action(text) == action
    assert text.split()[1:] == [cards.NAMES[c] for c in sorted(discard)]


def test_not_your_turn():
    """Acting out of turn raises NotYourTurnError (an IllegalActionError) citing the RULES section of
    the decision at hand: 2.4 exchanges, 2.5 declarations, 2.6 trick play, 2.8 once the match is over."""
    g = cycle_game()
    with pytest.raises(NotYourTurnError) as err:
        g.apply(1, EXCHANGE)
    assert err.value.rule == "2.4" and isinstance(err.value, IllegalActionError)
    assert "seat 0's turn" in err.value.reason
    with pytest.raises(NotYourTurnError) as err:
        g.apply(2, STOP)
    assert err.value.rule == "2" and "no seat 2" in err.value.reason
    act(g, "EXCHANGE 3H", "EXCHANGE")
    with pytest.raises(NotYourTurnError) as err:
        g.apply(1, EXCHANGE)
    assert err.value.rule == "2.4"
    act(g, "STOP")
    with pytest.raises(NotYourTurnError) as err:
        g.apply(1, DECLARE + 2)
    assert err.value.rule == "2.5"
    act(g, "DECLARE 2")
    with pytest.raises(NotYourTurnError) as err:
        g.apply(0, PASS)
    assert err.value.rule == "2.5"
    act(g, "PASS")
    with pytest.raises(NotYourTurnError) as err:
        g.apply(1, g.legal_actions(0)[0])
    assert err.value.rule == "2.6"
    act(g, g.action_name(g.legal_actions(0)[0]))
    with pytest.raises(NotYourTurnError) as err:
        g.apply(0, g.legal_actions(1)[0])
    assert err.value.rule == "2.6"
    while not g.is_terminal():
        (seat,) = g.to_act()
        g.apply(seat, g.legal_actions(seat)[0])
    with pytest.raises(NotYourTurnError) as err:
        g.apply(0, STOP)
    assert err.value.rule == "2.6" and "is over" in err.value.reason


def test_not_your_turn_after_the_match():
    """RULES 2.8: once the match is over no seat acts; the refusal cites 2.8."""
    m = new_cycle_match()
    play_game(m, ["DECLARE 5", "PASS"], 5)
    play_game(m, ["DECLARE 5", "PASS"], 5)
    assert m.scores() == [7, 7] and not m.is_terminal()
    with pytest.raises(NotYourTurnError) as err:
        m.apply(1, STOP)  # seat 0 is master of game 3
    assert err.value.rule == "2.4"
    while not m.is_terminal():
        play_game(m, ["DECLARE 5", "PASS"], 5)
    assert m.scores() == [28, 21]
    for seat in (0, 1):
        with pytest.raises(NotYourTurnError) as err:
            m.apply(seat, STOP)
        assert err.value.rule == "2.8" and "match is over" in err.value.reason


def test_action_names_of_any_codes_agree_with_action_name_even_outside_a_legal_list():
    from referee.games.aegis import EXCHANGE, STOP, action_name, action_names

    odd = [[EXCHANGE | (2**52 - 1)], [EXCHANGE | 0b101, EXCHANGE], [STOP, EXCHANGE | 1], [0, 51, STOP]]
    for codes in odd:  # a whole deck's "exchange" is named, never expanded into 2**52 subsets
        assert action_names(codes) == [action_name(c) for c in codes]
