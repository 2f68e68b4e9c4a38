"""Aegis, whole matches: random legal playouts checked against invariants and an
independent reading of RULES.md §2, replay from records, and a leak check of
observations (RULES §4)."""

from __future__ import annotations

import random

import pytest

from referee import cards
from referee.games import GAMES
from referee.games.aegis import DECLARE, EXCHANGE, PASS, STOP, AegisMatch
from referee.games.base import PUBLIC, IllegalActionError, NotYourTurnError

SPEC = GAMES["aegis"]

# --- an independent reading of the rules (RULES 2.1, 2.6, 2.7, 2.8) ---------------

STRENGTH = "23456789TJQKA"


def ref_stronger(a: int, b: int) -> bool:
    """RULES 2.1, spelled out: the ace beats K Q J and loses to T..2."""
    ra, rb = STRENGTH[a % 13], STRENGTH[b % 13]
    if ra == "A":
        return rb in "KQJ"
    if rb == "A":
        return ra in "T98765432"
    return STRENGTH.index(ra) > STRENGTH.index(rb)


def ref_trick_winner(leader: int, lead: int, follow: int, key: int) -> int:
    """RULES 2.6, spelled out (seats 0/1)."""
    trump = key // 13
    killer = follow % 13 == key % 13 and follow // 13 != trump
    if follow // 13 == lead // 13:
        follower_wins = ref_stronger(follow, lead)
    elif lead // 13 != trump and follow // 13 == trump:
        follower_wins = True
    elif lead // 13 == trump and killer:
        follower_wins = True
    else:
        follower_wins = False
    return 1 - leader if follower_wins else leader


# RULES 2.7: the sheet's table, attacker points by (d, t)
TABLE = {(1, 1): 2, (1, 2): 1, (1, 3): 1, (1, 4): 1, (1, 5): 2,
         (2, 2): 3, (2, 3): 2, (2, 4): 2, (2, 5): 3,
         (3, 3): 4, (3, 4): 3, (3, 5): 4,
         (4, 4): 5, (4, 5): 5,
         (5, 5): 7}


def ref_points(attacker: int, d: int, d_m: int, tricks: list[int], promise: str) -> list[int]:
    points = [0, 0]
    t = tricks[attacker]
    defender = 1 - attacker
    if t >= d:
        p = TABLE[d, t]
        if promise == "4plus" and t == d and d < 4:
            p -= 1
        points[attacker] = p
        if d_m <= 2 and tricks[defender] >= d_m:
            points[defender] = d_m
    else:
        points[defender] = d + (1 if t == 0 else 0)
    return points


# --- playing ---------------------------------------------------------------------


def choose(rng: random.Random, legal: list[int], uniform: bool) -> int:
    """Uniform, or biased toward stopping/declining so that low declarations occur."""
    if not uniform:
        if legal[0] == STOP and rng.random() < 0.5:
            return STOP
        if legal[0] == EXCHANGE and rng.random() < 0.4:
            return EXCHANGE
    return rng.choice(legal)


def play_match(seed: int, options: dict, uniform: bool, check=None) -> tuple[AegisMatch, list[tuple[int, int]]]:
    m = SPEC.new(options, seed=seed)
    rng = random.Random(seed * 7 + 1)
    record: list[tuple[int, int]] = []
    while True:
        seats = m.to_act()
        if not seats:
            break
        assert len(seats) == 1
        seat = seats[0]
        legal = m.legal_actions(seat)
        assert legal, "the seat to act has legal actions"
        assert m.legal_actions(1 - seat) == [], "the other seat has none"
        if check is not None:
            check(m, seat, legal, rng)
        a = choose(rng, legal, uniform)
        m.apply(seat, a)
        record.append((seat, a))
        assert len(record) < 10_000, "a match always ends"
    return m, record


def card(name: str) -> int:
    """A card named in an event or observation, back as the engine's int (views use notation only)."""
    assert isinstance(name, str) and name in cards.NAMES, name
    return cards.parse(name)


def card_set(named: list[str]) -> set[int]:
    return {card(c) for c in named}


def split_games(events):
    """The events of each game (from its 'deal' to its 'game_end')."""
    games, cur = [], None
    for e in events:
        if e.kind == "deal":
            cur = [e]
        elif cur is not None:
            cur.append(e)
            if e.kind == "game_end":
                games.append(cur)
                cur = None
    return games


def check_match(m: AegisMatch, options: dict) -> dict:
    """Invariants of a finished match, recomputed from its events; returns tallies."""
    tally = {"save": 0, "conquest": 0, "defender": 0, "slave_attacks": 0, "ended": m.results()["ended_by"],
             "d_m": set()}
    assert m.is_terminal() and m.to_act() == ()
    draw = m.events[0]
    assert draw.kind == "master_draw" and draw.to == PUBLIC
    assert draw.data["cards"] == [cards.NAMES[c] for c in m.shoe.decks[0][:2]] == m.results()["draw"]["cards"]
    games = split_games(m.events)
    assert len(games) == len(m.games) == m.results()["num_games"] >= 1
    totals = [0, 0]
    before = None
    for n, evs in enumerate(games, start=1):
        deal = evs[0].data
        assert deal["game"] == n
        # RULES 2.2: roles alternate, game 1's master is the draw winner
        assert deal["master"] == (draw.data["master"] if n % 2 else 1 - draw.data["master"])
        master, slave, key = deal["master"], deal["slave"], card(deal["key_card"])
        # RULES 2.3 / §3, in notation: the key card is deck card 10, its suit trump, its rank the killers
        assert key == m.shoe.decks[n][10]
        assert deal["trump"] == cards.SUITS[key // 13]
        assert sorted(card_set(deal["killers"])) == [s * 13 + key % 13 for s in range(4) if s != key // 13]
        hands = {e.seat: card_set(e.data["cards"]) for e in evs if e.kind == "hand"}
        assert all(e.data["cards"] == sorted(e.data["cards"], key=cards.parse) for e in evs if e.kind == "hand")
        assert e_to_ok(evs)
        # RULES 2.4: exchanges, private cards, draws
        ex = [e for e in evs if e.kind == "exchange"]
        assert len(ex) <= 8
        e_count = sum(1 for x in ex if x.seat == master)
        assert all(1 <= x.data["count"] <= 5 for x in ex if x.seat == master)
        assert all(0 <= x.data["count"] <= 5 for x in ex if x.seat == slave)
        for x in (e for e in evs if e.kind == "exchange_cards"):
            assert x.to == x.seat
            h = hands[x.seat]
            discarded, drawn = card_set(x.data["discarded"]), card_set(x.data["drawn"])
            assert discarded <= h and len(x.data["discarded"]) == len(x.data["drawn"]) == len(drawn)
            hands[x.seat] = (h - discarded) | drawn
            assert len(hands[x.seat]) == 5
        assert all(key not in h for h in hands.values())
        end = [e for e in evs if e.kind == "exchange_end"][0].data
        assert end["e"] == e_count and (end["by"] == "stop" or e_count == 4)
        # RULES 2.5
        decl = {e.seat: e.data["d"] for e in evs if e.kind == "declare"}
        d_m = decl[master]
        assert e_count + 1 <= d_m <= 5
        if slave in decl:
            assert d_m < decl[slave] <= 5
            attacker, d = slave, decl[slave]
            tally["slave_attacks"] += 1
        else:
            assert any(e.kind == "pass" for e in evs)
            attacker, d = master, d_m
        tally["d_m"].add(d_m)
        # RULES 2.6: 5 tricks, master leads the first, winner leads the next, follow suit
        plays = [e for e in evs if e.kind == "play"]
        tricks_ev = [e for e in evs if e.kind == "trick"]
        assert len(plays) == 10 and len(tricks_ev) == 5
        leader = master
        won = [0, 0]
        for i, tr in enumerate(tricks_ev):
            p1, p2 = plays[2 * i], plays[2 * i + 1]
            assert p1.seat == leader and p2.seat == 1 - leader
            lead, follow = card(p1.data["card"]), card(p2.data["card"])
            assert tr.data["cards"] == [p1.data["card"], p2.data["card"]]
            assert lead in hands[leader] and follow in hands[1 - leader]
            if follow // 13 != lead // 13:
                assert not any(c // 13 == lead // 13 for c in hands[1 - leader]), "must follow suit"
            hands[leader].discard(lead)
            hands[1 - leader].discard(follow)
            w = ref_trick_winner(leader, lead, follow, key)
            assert tr.seat == w == tr.data["winner"]
            won[w] += 1
            leader = w
        assert hands == {0: set(), 1: set()}
        # RULES 2.7
        result = evs[-1].data
        points = ref_points(attacker, d, d_m, won, options.get("promise", "table"))
        assert result["points"] == points == m.games[n - 1].scores()
        assert result["tricks"] == won and result["attacker"] == attacker and result["d"] == d
        assert result["key_card"] == deal["key_card"] and result["trump"] == deal["trump"]
        assert m.results()["games"][n - 1] == result
        assert max(points) >= 1, "every game gives someone a point"
        tally["save"] += result["save"]
        tally["conquest"] += result["conquest"]
        tally["defender"] += not result["attacker_won"]
        before = list(totals)
        totals = [totals[0] + points[0], totals[1] + points[1]]
        if n < len(games):  # RULES 2.8: the match went on
            assert max(totals) < 25 and abs(totals[0] - totals[1]) < 10
    # RULES 2.8: the end
    assert m.scores() == totals
    r = m.results()
    a, b = totals
    if a >= 25 and b >= 25:
        assert r["ended_by"] == "both-25" and r["winner"] == m.games[-1].results()["winner"]
        assert before[0] < 25 and before[1] < 25
    elif a >= 25 or b >= 25:
        assert r["ended_by"] == "25" and r["winner"] == (0 if a >= 25 else 1)
    else:
        assert abs(a - b) >= 10 and r["ended_by"] == "called" and r["winner"] == (0 if a > b else 1)
    assert m.placing() == ([1, 2] if r["winner"] == 0 else [2, 1]) == r["placing"]
    assert m.events[-1].kind == "match_end" and m.events[-1].data["winner"] == r["winner"]
    return tally


def e_to_ok(evs) -> bool:
    """Private events go to their own seat only; everything else is public."""
    for e in evs:
        if e.kind in ("hand", "exchange_cards"):
            if e.to != e.seat:
                return False
        elif e.to != PUBLIC:
            return False
    return True


# --- the tests ---------------------------------------------------------------------


@pytest.mark.parametrize("matches", [pytest.param(300, id="quick"), pytest.param(2000, marks=pytest.mark.slow)])
def test_random_matches_invariants(matches):
    """2000 random matches (300 in the fast loop): they end; every game follows RULES 2.2-2.8 as recomputed here."""
    seen = {"25": 0, "both-25": 0, "called": 0}
    save = conquest = defender = slave_attacks = 0
    d_ms = set()
    for seed in range(matches):
        options = {"promise": "4plus"} if seed % 3 == 0 else {}
        m, record = play_match(seed, options, uniform=seed % 4 == 0)
        t = check_match(m, SPEC.check_options(options))
        seen[t["ended"]] += 1
        save += t["save"]
        conquest += t["conquest"]
        defender += t["defender"]
        slave_attacks += t["slave_attacks"]
        d_ms |= t["d_m"]
    if matches < 2000:
        return  # the fast loop's few: every invariant checked, not every ending reached (both at 25 is rare)
    # the playouts reach every kind of ending and scoring
    assert all(seen.values()), seen
    assert save and conquest and defender and slave_attacks
    assert d_ms == {1, 2, 3, 4, 5}


def check_step(m: AegisMatch, seat: int, legal: list[int], rng: random.Random) -> None:
    """Per-decision checks: canonical legal lists, hand sizes, illegal actions refused."""
    assert legal == sorted(set(legal))
    obs = [m.observation(s) for s in (0, 1)]
    for o in obs:  # cards and suits are named in views
        card_set(o["hand"] + o["killers"] + [o["key_card"]] + o["draw"]["cards"])
        assert o["trump"] in cards.SUITS and o["trump"] == cards.SUITS[card(o["key_card"]) // 13]
    assert sorted(card_set(obs[seat]["hand"])) == cards.cards_of(m.current.hands[seat])
    assert obs[0]["to_act"] == [seat] == obs[1]["to_act"]
    phase = obs[seat]["phase"]
    if phase in ("exchange", "declare"):
        assert len(obs[0]["hand"]) == len(obs[1]["hand"]) == 5
        assert obs[seat]["stock_size"] >= 1
    else:
        assert phase == "play"
        for s in (0, 1):
            played = sum(1 for tr in obs[s]["tricks"]) + (1 if obs[s]["trick"] and obs[s]["trick"][0][0] == s else 0)
            assert len(obs[s]["hand"]) == 5 - played
    if phase == "exchange" and legal[0] == STOP:
        assert len(legal) == 32
    if phase == "exchange" and legal[0] == EXCHANGE:
        assert len(legal) == 32
    if phase == "declare" and obs[seat]["role"] == "master":
        assert legal == list(range(DECLARE + obs[seat]["e"] + 1, DECLARE + 6))
    if phase == "declare" and obs[seat]["role"] == "slave":
        assert legal[0] == PASS
    # an action outside the legal list is refused, and the state is unchanged
    candidates = [STOP, PASS, *range(DECLARE + 1, DECLARE + 6), rng.randrange(52),
                  EXCHANGE | 1 << rng.randrange(52), EXCHANGE]
    bad = [a for a in candidates if a not in legal]
    if bad:
        n = len(m.events)
        before = m.observation(seat)
        with pytest.raises(IllegalActionError) as err:
            m.apply(seat, rng.choice(bad))
        assert err.value.rule in ("2.4", "2.5", "2.6")
        assert len(m.events) == n and m.observation(seat) == before
    with pytest.raises(NotYourTurnError) as err:
        m.apply(1 - seat, legal[0])
    assert err.value.rule == {"exchange": "2.4", "declare": "2.5", "play": "2.6"}[phase]


@pytest.mark.parametrize("matches", [pytest.param(30, id="quick"), pytest.param(150, marks=pytest.mark.slow)])
def test_random_matches_step_checks_and_replay(matches):
    """Per-decision checks on 150 matches (30 in the fast loop), and replay from shoe.decks + the actions (RULES §4)."""
    for seed in range(10_000, 10_000 + matches):
        options = {"promise": "4plus"} if seed % 2 else {}
        m, record = play_match(seed, options, uniform=seed % 3 == 0, check=check_step)
        replay = SPEC.new(options, decks=m.shoe.decks)
        for seat, a in record:
            replay.apply(seat, a)
        assert replay.is_terminal()
        assert replay.results() == m.results()
        assert replay.events == m.events
        assert replay.shoe.decks == m.shoe.decks


def test_json_compatible():
    """Events, observations and results are JSON-compatible (RULES §4)."""
    import json
    m, _ = play_match(5, {}, uniform=False)
    for e in m.events:
        json.dumps(e.data)
    json.dumps(m.results())
    json.dumps(m.observation(0))
    json.dumps(m.observation(1))


# --- leak check --------------------------------------------------------------------


def seen_cards(m: AegisMatch, seat: int) -> list[set[int]]:
    """Per deck of the match (the draw deck, then each game's): the cards ``seat`` has seen."""
    seen: list[set[int]] = [card_set(m.events[0].data["cards"])]
    for e in m.visible_events(seat):
        if e.kind == "deal":
            seen.append({card(e.data["key_card"])})
        elif e.kind == "hand":
            seen[-1] |= card_set(e.data["cards"])
        elif e.kind == "exchange_cards":
            seen[-1] |= card_set(e.data["drawn"]) | card_set(e.data["discarded"])
        elif e.kind == "play":
            seen[-1].add(card(e.data["card"]))
    return seen


def map_action(a: int, perm: dict[int, int]) -> int:
    if a >= EXCHANGE:
        return EXCHANGE | cards.mask_of(perm[c] for c in cards.cards_of(a ^ EXCHANGE))
    if a < 52:
        return perm[a]
    return a


def observations_leak_nothing(matches: int) -> None:
    """RULES §4: a seat's observation is the same whatever the cards hidden from it (the opponent's
    hand and discards, the stock order): decks that differ only there, played with the same actions
    (the opponent's discards renamed), give that seat identical observations at every step."""
    opponent_differs = 0
    for seed in range(matches):
        seat = seed % 2
        options = {} if seed % 3 else {"promise": "4plus"}
        m, record = play_match(20_000 + seed, options, uniform=seed % 4 == 0)
        rng = random.Random(seed)
        perms = []
        for _deck, seen in zip(m.shoe.decks, seen_cards(m, seat)):
            hidden = [c for c in range(52) if c not in seen]
            shuffled = hidden[:]
            rng.shuffle(shuffled)
            perm = {c: c for c in range(52)}
            perm.update(zip(hidden, shuffled))
            perms.append(perm)
        decks_b = [[perm[c] for c in deck] for deck, perm in zip(m.shoe.decks, perms)]
        a_match = SPEC.new(options, decks=m.shoe.decks)
        b_match = SPEC.new(options, decks=decks_b)
        assert a_match.observation(seat) == b_match.observation(seat)
        for who, action in record:
            perm = perms[len(a_match.games) + 1]
            a_match.apply(who, action)
            b_match.apply(who, action if who == seat else map_action(action, perm))
            assert a_match.observation(seat) == b_match.observation(seat)
            if a_match.observation(1 - seat) != b_match.observation(1 - seat):
                opponent_differs += 1
        assert a_match.visible_events(seat) == b_match.visible_events(seat)
        assert b_match.results() == m.results()
    assert opponent_differs > 0  # the hidden cards did differ, and the opponent saw it


@pytest.mark.slow
def test_observation_leaks_nothing():
    """The leak check on 300 random matches."""
    observations_leak_nothing(300)


def test_observation_leaks_nothing_quick():
    """The leak check on 40 random matches, for the fast loop."""
    observations_leak_nothing(40)
