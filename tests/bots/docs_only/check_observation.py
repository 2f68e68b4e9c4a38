"""A checker of what the referee sends, written from docs/protocol.md's tables alone (§3, §9, §10, §16).

Written from the docs alone (README.md, docs/writing-a-bot.md, docs/protocol.md, docs/rules.md,
docs/tournaments.md and proto/referee/v1/referee.proto), without reading the referee's source, by the
`newcomer` helper (issue 26's "done when": a bot from the docs alone).

Every message of the game data is described once, in the JSON form's names (snake_case), field by
field as §9 and §10 list them. A typed message as a stdio bot reads it (proto3 JSON, lowerCamelCase,
defaults left out, §16) is first checked against that description and turned into the JSON form by
§3's mapping rules; the JSON form (`observation_json` and friends) is checked as it is. Then the
meaning of every field that can be checked from the observation, the request and the rule book
(docs/rules.md) is checked on the JSON form. Every function returns a list of problems, in words;
an empty list means the message is what the docs say.

Standard library only.
"""

RANKS = "23456789TJQKA"
SUITS = "SHDC"


# ---------------------------------------------------------------- the shapes, from the tables

class Opt:
    """A field that may be null in the JSON form: an `optional` scalar, or a message field."""

    def __init__(self, kind):
        self.kind = kind


class JsonOnly:
    """A key of the JSON form that has no typed field (the observation's "game")."""

    def __init__(self, kind):
        self.kind = kind


class Pair:
    """A fixed-length JSON array whose items mean different things; typed: a message (§3)."""

    def __init__(self, *fields):
        self.fields = fields  # (name, kind) in order


class Nested:
    """A JSON array of arrays; typed: a repeated message whose one repeated field holds each (§3)."""

    def __init__(self, field, item):
        self.field = field
        self.item = item


class Bare:
    """Event data that is a bare value in JSON; typed: a message with that one field (§3)."""

    def __init__(self, field, kind):
        self.field = field
        self.kind = kind


U32, I32, STR, BOOL, BIDS = "uint32", "int32", "string", "bool", "bids"  # BIDS: int32, -1 typed = null


def rep(kind):
    return ("list", kind)


TRICK_CONF = {"leader": U32, "cards": rep(STR), "winner": U32}
ROUND_SCORE = {
    "round": U32, "dealer": U32, "trump": STR, "bids": rep(I32), "final_bids": rep(I32),
    "choices": Nested("words", STR), "phase_bids": Nested("numbers", U32), "tricks": rep(U32),
    "points": rep(I32), "totals": rep(I32),
}
CONFIRMATION_OBSERVATION = {
    "game": JsonOnly(STR), "seat": U32, "round": U32, "rounds": U32, "dealer": U32, "phase": STR,
    "turn": Opt(U32), "hand": rep(STR), "trump": STR, "trump_card": Opt(STR), "bids": BIDS,
    "bids_in_force": BIDS, "choices": Nested("words", STR), "phase_bids": Nested("numbers", U32),
    "my_pending_choice": Opt(STR), "leader": U32, "trick": rep(STR), "tricks_won": rep(U32),
    "tricks": rep(TRICK_CONF), "scores": rep(I32), "partner": Opt(U32),
}
CONFIRMATION_EVENTS = {
    "round": {"round": U32, "dealer": U32},
    "deal": Bare("cards", rep(STR)),
    "trump": {"suit": STR, "card": Opt(STR)},
    "bid": Bare("bid", U32),
    "play": Bare("card", STR),
    "trick": Bare("number", U32),
    "choice": {"phase": U32, "choice": STR},
    "score": ROUND_SCORE,
    "end": {"scores": rep(I32), "placing": rep(U32)},
}
CONFIRMATION_RESULTS = {"rounds": rep(ROUND_SCORE), "teams": Nested("seats", U32)}

EXCHANGE_COUNTS = Pair(("master", U32), ("slave", Opt(U32)))
AEGIS_TRICK = {"trick": U32, "leader": U32, "cards": rep(STR), "winner": U32}
AEGIS_DRAW = {"cards": rep(STR), "master": U32}
DEAL_RESULT = {
    "game": U32, "master": U32, "slave": U32, "key_card": STR, "trump": STR, "e": U32,
    "exchanges": rep(EXCHANGE_COUNTS), "d_master": U32, "d_slave": Opt(U32), "slave_passed": BOOL,
    "attacker": U32, "defender": U32, "d": U32, "tricks": rep(U32), "attacker_tricks": U32,
    "attacker_won": BOOL, "winner": U32, "promise": BOOL, "conquest": BOOL, "save": BOOL,
    "points": rep(I32),
}
EXCHANGE_CARDS = {"round": U32, "discarded": rep(STR), "drawn": rep(STR)}
AEGIS_OBSERVATION = {
    "game": JsonOnly(STR), "game_number": U32, "seat": U32, "role": STR, "master": U32, "phase": STR,
    "to_act": rep(U32), "hand": rep(STR), "key_card": STR, "trump": STR, "killers": rep(STR),
    "stock_size": U32, "exchange_round": Opt(U32), "exchanges": rep(EXCHANGE_COUNTS),
    "exchange_end": Opt(STR), "e": U32, "my_exchanges": rep(EXCHANGE_CARDS), "d_master": Opt(U32),
    "d_slave": Opt(U32), "slave_passed": BOOL, "attacker": Opt(U32), "d": Opt(U32), "leader": Opt(U32),
    "trick": rep(Pair(("seat", U32), ("card", STR))), "tricks_won": rep(U32), "tricks": rep(AEGIS_TRICK),
    "points": rep(I32), "result": Opt(DEAL_RESULT), "options": {"promise": STR}, "draw": AEGIS_DRAW,
    "match_scores": rep(I32), "games": rep(DEAL_RESULT), "match_over": BOOL, "winner": Opt(U32),
    "ended_by": Opt(STR),
}
AEGIS_EVENTS = {
    "master_draw": AEGIS_DRAW,
    "deal": {"game": U32, "master": U32, "slave": U32, "key_card": STR, "trump": STR,
             "killers": rep(STR), "stock_size": U32},
    "hand": {"game": U32, "cards": rep(STR)},
    "exchange": {"round": U32, "role": STR, "count": U32},
    "exchange_cards": EXCHANGE_CARDS,
    "stop": {"round": U32},
    "exchange_end": {"e": U32, "by": STR},
    "declare": {"role": STR, "d": U32},
    "pass": {"role": STR},
    "attacker": {"attacker": U32, "role": STR, "d": U32},
    "play": {"trick": U32, "card": STR},
    "trick": AEGIS_TRICK,
    "game_end": DEAL_RESULT,
    "match_end": {"scores": rep(I32), "winner": U32, "placing": rep(U32), "ended_by": STR, "games": U32},
}
# §10's results table: winner and ended_by are "int; optional uint32" and "string; optional string"
AEGIS_RESULTS = {"winner": Opt(U32), "ended_by": Opt(STR), "draw": AEGIS_DRAW, "num_games": U32,
                 "games": rep(DEAL_RESULT)}
FAULT_KINDS = ("timeout", "illegal", "malformed", "wrong_id", "disconnect", "no_session", "error")

OBSERVATIONS = {"confirmation": CONFIRMATION_OBSERVATION, "aegis": AEGIS_OBSERVATION}
EVENTS = {"confirmation": CONFIRMATION_EVENTS, "aegis": AEGIS_EVENTS}
RESULTS = {"confirmation": CONFIRMATION_RESULTS, "aegis": AEGIS_RESULTS}


def camel(name):
    """§16: field names are lowerCamelCase (`bids_in_force` -> `bidsInForce`)."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


# ---------------------------------------------------------------- typed (proto3 JSON) -> JSON form

def _scalar_default(kind):
    return {U32: 0, I32: 0, STR: "", BOOL: False}[kind]


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _scalar(kind, value, where, problems):
    """Check one scalar of proto3 JSON (32-bit numbers are numbers, §16)."""
    if kind in (U32, I32, BIDS):
        if not _is_int(value):
            problems.append(f"{where}: {value!r} is not a {kind} number")
        elif kind == U32 and value < 0:
            problems.append(f"{where}: {value} is negative for a uint32")
        return value
    if kind == STR and not isinstance(value, str):
        problems.append(f"{where}: {value!r} is not a string")
    if kind == BOOL and not isinstance(value, bool):
        problems.append(f"{where}: {value!r} is not a bool")
    return value


def from_typed(spec, value, where, problems):
    """One typed message (a dict of proto3 JSON) as the JSON form, every key there, per §3's rules."""
    if not isinstance(value, dict):
        problems.append(f"{where}: {value!r} is not an object")
        return {}
    names = {camel(name): name for name, kind in spec.items() if not isinstance(kind, JsonOnly)}
    for key in value:
        if key not in names:
            problems.append(f"{where}: undocumented field {key!r}")
    out = {}
    for name, kind in spec.items():
        if isinstance(kind, JsonOnly):
            continue
        key = camel(name)
        out[name] = _typed_value(kind, value.get(key), key in value, f"{where}.{key}", problems)
    return out


def _typed_value(kind, value, present, where, problems):
    if isinstance(kind, Opt):
        return _typed_value(kind.kind, value, True, where, problems) if present else None
    if isinstance(kind, dict):
        return from_typed(kind, value, where, problems) if present else from_typed(kind, {}, where, problems)
    if isinstance(kind, Pair):
        message = from_typed(dict(kind.fields), value if present else {}, where, problems)
        return [message[name] for name, _ in kind.fields]
    if isinstance(kind, Nested):
        items = value if present else []
        if not isinstance(items, list):
            problems.append(f"{where}: {items!r} is not a list")
            return []
        return [from_typed({kind.field: rep(kind.item)}, item, f"{where}[{i}]", problems)[kind.field]
                for i, item in enumerate(items)]
    if isinstance(kind, Bare):
        return from_typed({kind.field: kind.kind}, value if present else {}, where, problems)[kind.field]
    if kind == BIDS:
        items = value if present else []
        if not isinstance(items, list):
            problems.append(f"{where}: {items!r} is not a list")
            return []
        numbers = [_scalar(I32, item, f"{where}[{i}]", problems) for i, item in enumerate(items)]
        for i, number in enumerate(numbers):
            if _is_int(number) and number < -1:
                problems.append(f"{where}[{i}]: {number} is below -1")
        return [None if number == -1 else number for number in numbers]
    if isinstance(kind, tuple):  # a repeated field
        items = value if present else []
        if not isinstance(items, list):
            problems.append(f"{where}: {items!r} is not a list")
            return []
        if present and not items:
            problems.append(f"{where}: an empty list is printed (proto3 JSON leaves it out)")
        return [_typed_value(kind[1], item, True, f"{where}[{i}]", problems) for i, item in enumerate(items)]
    if not present:
        return _scalar_default(kind)
    return _scalar(kind, value, where, problems)


# ---------------------------------------------------------------- the JSON form, as it is

def check_json(spec, value, where, problems):
    """A message of the JSON form (`observation_json`, `data_json`, `results_json`): every key, typed."""
    if not isinstance(value, dict):
        problems.append(f"{where}: {value!r} is not an object")
        return
    for key in value:
        if key not in spec:
            problems.append(f"{where}: undocumented key {key!r}")
    for name, kind in spec.items():
        if name not in value:
            problems.append(f"{where}: documented key {name!r} is missing")
            continue
        _json_value(kind, value[name], f"{where}.{name}", problems)


def _json_value(kind, value, where, problems):
    if isinstance(kind, JsonOnly):
        _json_value(kind.kind, value, where, problems)
    elif isinstance(kind, Opt):
        if value is not None:
            _json_value(kind.kind, value, where, problems)
    elif isinstance(kind, dict):
        check_json(kind, value, where, problems)
    elif isinstance(kind, Pair):
        if not isinstance(value, list) or len(value) != len(kind.fields):
            problems.append(f"{where}: {value!r} is not a list of {len(kind.fields)}")
            return
        for (name, item_kind), item in zip(kind.fields, value):
            _json_value(item_kind, item, f"{where}.{name}", problems)
    elif isinstance(kind, Nested):
        _json_value(rep(rep(kind.item)), value, where, problems)
    elif isinstance(kind, Bare):
        _json_value(kind.kind, value, where, problems)
    elif kind == BIDS:
        _json_value(rep(Opt(I32)), value, where, problems)
    elif isinstance(kind, tuple):
        if not isinstance(value, list):
            problems.append(f"{where}: {value!r} is not a list")
            return
        for i, item in enumerate(value):
            _json_value(kind[1], item, f"{where}[{i}]", problems)
    else:
        _scalar(kind, value, where, problems)


# ---------------------------------------------------------------- cards and the rules

def is_card(text):
    return isinstance(text, str) and len(text) == 2 and text[0] in RANKS and text[1] in SUITS


def card_order(card):
    """The canonical order (§1 of protocol.md): by suit S, H, D, C, then rank 2 up to A."""
    return SUITS.index(card[1]) * 13 + RANKS.index(card[0])


def _cards(cards, where, problems, canonical=False):
    bad = [card for card in cards if not is_card(card)]
    if bad:
        problems.append(f"{where}: not cards in notation: {bad}")
        return False
    if len(set(cards)) != len(cards):
        problems.append(f"{where}: a card twice: {cards}")
    if canonical and cards != sorted(cards, key=card_order):
        problems.append(f"{where}: not in canonical order: {cards}")
    return True


def aegis_beats(card, other):
    """rules.md §2.1 inside one suit: does `card` beat `other`?"""
    a, b = card[0], other[0]
    if a == "A":
        return b in "KQJ"
    if b == "A":
        return a not in "KQJ"
    return RANKS.index(a) > RANKS.index(b)


def aegis_trick_winner(led, second, trump, killers):
    """rules.md §2.6: True if the leader's card takes the trick."""
    if second[1] == led[1]:
        return not aegis_beats(second, led)
    if led[1] != trump and second[1] == trump:
        return False
    if led[1] == trump and second in killers:
        return False
    return True


def confirmation_trick_winner(leader, cards, trump):
    """rules.md §1.5: the seat that wins a trick of 4 cards in play order from `leader`."""
    led = cards[0][1]
    best = 0
    for i, card in enumerate(cards):
        top = cards[best]
        if (card[1] == trump and (top[1] != trump or RANKS.index(card[0]) > RANKS.index(top[0]))) or (
                card[1] == top[1] == led and RANKS.index(card[0]) > RANKS.index(top[0])):
            best = i
    return (leader + best) % 4


# ---------------------------------------------------------------- the meaning of an observation

def check_confirmation(obs, seat, legal, options, problems):
    """What §9's observation table says, checked on the JSON form."""
    rounds = int(options.get("rounds", "8"))
    pairs = options.get("pairs") == "true"
    double = options.get("double") == "true"
    blind = options.get("blind") == "true"
    where = "confirmation"
    if obs["game"] != "confirmation":
        problems.append(f"{where}.game is {obs['game']!r}")
    if obs["seat"] != seat:
        problems.append(f"{where}.seat {obs['seat']} is not the request's seat {seat}")
    if not 1 <= obs["round"] <= rounds or obs["rounds"] != rounds:
        problems.append(f"{where}: round {obs['round']} of {obs['rounds']}, the option says {rounds}")
    if obs["dealer"] != (obs["round"] - 1) % 4:
        problems.append(f"{where}.dealer {obs['dealer']} is not (round - 1) mod 4 in round {obs['round']}")
    phase = obs["phase"]
    if phase not in ("bid", "play", "confirm"):
        problems.append(f"{where}.phase {phase!r} in a request")
    if phase in ("bid", "play") and obs["turn"] != seat:
        problems.append(f"{where}.turn {obs['turn']} in phase {phase}, not the seat asked ({seat})")
    if phase == "confirm" and obs["turn"] is not None:
        problems.append(f"{where}.turn {obs['turn']} in phase confirm (documented: null)")
    tricks = obs["tricks"]
    hand = obs["hand"]
    if _cards(hand, f"{where}.hand", problems, canonical=True) and len(hand) != 13 - len(tricks):
        problems.append(f"{where}.hand holds {len(hand)} cards after {len(tricks)} trick(s)")
    if obs["trump"] not in SUITS:
        problems.append(f"{where}.trump {obs['trump']!r} is not a suit")
    trump_card = obs["trump_card"]
    if options.get("trump", "dealer-card") == "dealer-card":
        if not is_card(trump_card) or trump_card[1] != obs["trump"]:
            problems.append(f"{where}.trump_card {trump_card!r} does not show trump {obs['trump']}")
    elif trump_card is not None:
        problems.append(f"{where}.trump_card {trump_card!r} with trump = random-suit")
    for key in ("bids", "bids_in_force", "choices", "phase_bids", "tricks_won", "scores"):
        if len(obs[key]) != 4:
            problems.append(f"{where}.{key} has {len(obs[key])} items, not 4: {obs[key]}")
            return
    bidders = [(obs["dealer"] + 1 + i) % 4 for i in range(4)]
    bid_so_far = bidders[:bidders.index(seat)] if phase == "bid" else bidders
    for s, bid in enumerate(obs["bids"]):
        if (bid is not None) != (s in bid_so_far):
            problems.append(f"{where}.bids {obs['bids']} in phase {phase}: seat {s} has {bid}")
        if bid is not None and not 0 <= bid <= 13:
            problems.append(f"{where}.bids: {bid} is not 0..13")
    if phase == "bid" and obs["bids_in_force"] != obs["bids"]:
        problems.append(f"{where}.bids_in_force {obs['bids_in_force']} differs from bids before any phase")
    # choices and phase_bids: one item per phase so far, words CONFIRM or REVISE
    phase_after = (4, 9) if double else (7,)
    done = sum(len(tricks) >= n for n in phase_after)
    if phase == "confirm":
        done -= 1  # the phase being asked is not revealed yet
    for s in range(4):
        shown = done if (s == seat or not blind) else 0
        words, numbers = obs["choices"][s], obs["phase_bids"][s]
        if len(words) != shown or len(numbers) != shown:
            problems.append(f"{where}: seat {s} shows choices {words} and phase_bids {numbers}, "
                            f"{shown} phase(s) expected")
        if any(word not in ("CONFIRM", "REVISE") for word in words):
            problems.append(f"{where}.choices[{s}]: {words}")
        if numbers and obs["bids_in_force"][s] != numbers[-1]:
            problems.append(f"{where}: seat {s}'s bid in force {obs['bids_in_force'][s]} is not its last "
                            f"phase_bids {numbers}")
    if obs["my_pending_choice"] is not None:
        problems.append(f"{where}.my_pending_choice {obs['my_pending_choice']!r} in a request")
    trick = obs["trick"]
    _cards(trick, f"{where}.trick", problems)
    if len(trick) > 3 or (trick and phase != "play"):
        problems.append(f"{where}.trick {trick} in phase {phase}")
    if phase == "bid" and obs["leader"] != (obs["dealer"] + 1) % 4:
        problems.append(f"{where}.leader {obs['leader']} during bidding is not left of the dealer")
    if phase == "play" and (obs["leader"] + len(trick)) % 4 != seat:
        problems.append(f"{where}: leader {obs['leader']} with {len(trick)} card(s) down is not seat {seat}'s turn")
    leader = (obs["dealer"] + 1) % 4
    won = [0, 0, 0, 0]
    for i, done_trick in enumerate(tricks):
        cards = done_trick["cards"]
        if not _cards(cards, f"{where}.tricks[{i}]", problems) or len(cards) != 4:
            continue
        if done_trick["leader"] != leader:
            problems.append(f"{where}.tricks[{i}].leader {done_trick['leader']}, expected {leader}")
        winner = confirmation_trick_winner(done_trick["leader"], cards, obs["trump"])
        if done_trick["winner"] != winner:
            problems.append(f"{where}.tricks[{i}].winner {done_trick['winner']}, rule 1.5 gives {winner}")
        leader = done_trick["winner"]
        won[done_trick["winner"]] += 1
    if phase != "bid" and obs["leader"] != leader:
        problems.append(f"{where}.leader {obs['leader']}, the last trick's winner is {leader}")
    if obs["tricks_won"] != won:
        problems.append(f"{where}.tricks_won {obs['tricks_won']}, the tricks say {won}")
    expected_partner = (seat + 2) % 4 if pairs else None
    if obs["partner"] != expected_partner:
        problems.append(f"{where}.partner {obs['partner']}, expected {expected_partner}")
    # the legal actions fit the phase (§9's actions table)
    if phase == "bid" and not all(a.startswith("BID ") for a in legal):
        problems.append(f"legal actions in phase bid: {legal}")
    if phase == "play" and not set(legal) <= set(hand):
        problems.append(f"legal actions {legal} are not cards of the hand {hand}")
    if phase == "confirm" and (legal[0] != "CONFIRM" or not all(a.startswith("REVISE ") for a in legal[1:])):
        problems.append(f"legal actions in phase confirm: {legal}")


def check_aegis(obs, seat, legal, options, problems):
    """What §10's observation table says, checked on the JSON form."""
    where = "aegis"
    if obs["game"] != "aegis":
        problems.append(f"{where}.game is {obs['game']!r}")
    if obs["seat"] != seat:
        problems.append(f"{where}.seat {obs['seat']} is not the request's seat {seat}")
    if obs["master"] not in (0, 1) or obs["role"] != ("master" if obs["master"] == seat else "slave"):
        problems.append(f"{where}: role {obs['role']!r} with master {obs['master']} for seat {seat}")
    phase = obs["phase"]
    if phase not in ("exchange", "declare", "play"):
        problems.append(f"{where}.phase {phase!r} in a request")
    if obs["to_act"] != [seat]:
        problems.append(f"{where}.to_act {obs['to_act']}, the request is seat {seat}'s")
    tricks = obs["tricks"]
    hand = obs["hand"]
    if _cards(hand, f"{where}.hand", problems, canonical=True) and len(hand) != 5 - len(tricks):
        problems.append(f"{where}.hand holds {len(hand)} cards after {len(tricks)} trick(s)")
    key = obs["key_card"]
    if not is_card(key):
        problems.append(f"{where}.key_card {key!r}")
        return
    if obs["trump"] != key[1]:
        problems.append(f"{where}.trump {obs['trump']!r} is not the key card's suit")
    killers = [key[0] + suit for suit in SUITS if suit != key[1]]
    if obs["killers"] != killers:
        problems.append(f"{where}.killers {obs['killers']}, expected {killers}")
    exchanges = obs["exchanges"]
    drawn = sum((m or 0) + (s or 0) for m, s in exchanges)
    if obs["stock_size"] != 41 - drawn:
        problems.append(f"{where}.stock_size {obs['stock_size']} after {drawn} card(s) drawn")
    if obs["e"] != len(exchanges) or len(exchanges) > 4:
        problems.append(f"{where}.e {obs['e']} with exchanges {exchanges}")
    for i, (m, s) in enumerate(exchanges):
        last_open = phase == "exchange" and i == len(exchanges) - 1
        if not 1 <= m <= 5 or (s is None and not last_open) or (s is not None and not 0 <= s <= 5):
            problems.append(f"{where}.exchanges[{i}] = {[m, s]}")
    in_exchange = phase == "exchange"
    if (obs["exchange_round"] is not None) != in_exchange:
        problems.append(f"{where}.exchange_round {obs['exchange_round']} in phase {phase}")
    if in_exchange and obs["exchange_round"] != (len(exchanges) if exchanges and exchanges[-1][1] is None
                                                 else len(exchanges) + 1):
        problems.append(f"{where}.exchange_round {obs['exchange_round']} with exchanges {exchanges}")
    end = obs["exchange_end"]
    if in_exchange and end is not None or not in_exchange and end != ("limit" if obs["e"] == 4 else "stop"):
        problems.append(f"{where}.exchange_end {end!r} in phase {phase} with e = {obs['e']}")
    mine = obs["my_exchanges"]
    my_counts = [s if obs["role"] == "slave" else m for m, s in exchanges]
    my_counts = [count for count in my_counts if count is not None]
    if [len(x["discarded"]) for x in mine] != my_counts or [x["round"] for x in mine] != list(
            range(1, len(mine) + 1)):
        problems.append(f"{where}.my_exchanges {mine} does not fit the counts {exchanges}")
    for x in mine:
        if len(x["drawn"]) != len(x["discarded"]):
            problems.append(f"{where}.my_exchanges: {x}")
        _cards(x["discarded"], f"{where}.my_exchanges.discarded", problems, canonical=True)
        _cards(x["drawn"], f"{where}.my_exchanges.drawn", problems)
    d_master, d_slave, passed = obs["d_master"], obs["d_slave"], obs["slave_passed"]
    if in_exchange and (d_master, d_slave, passed) != (None, None, False):
        problems.append(f"{where}: declarations {d_master}, {d_slave}, {passed} during the exchanges")
    if phase == "declare" and (d_master is None) != (obs["role"] == "master"):
        problems.append(f"{where}.d_master {d_master} in phase declare for the {obs['role']}")
    if d_master is not None and not obs["e"] + 1 <= d_master <= 5:
        problems.append(f"{where}.d_master {d_master} with e = {obs['e']} (rule 2.5)")
    if d_slave is not None and (passed or d_master is None or not d_master < d_slave <= 5):
        problems.append(f"{where}.d_slave {d_slave} with d_master {d_master}, passed {passed}")
    if phase == "play":
        attacker = obs["master"] if passed else 1 - obs["master"]
        if obs["attacker"] != attacker or obs["d"] != (d_master if passed else d_slave):
            problems.append(f"{where}: attacker {obs['attacker']}, d {obs['d']} with declarations "
                            f"{d_master}, {d_slave}, passed {passed}")
    elif obs["attacker"] is not None or obs["d"] is not None or obs["leader"] is not None:
        problems.append(f"{where}: attacker {obs['attacker']}, d {obs['d']}, leader {obs['leader']} before play")
    trick = obs["trick"]
    if phase == "play":
        if len(trick) > 1 or (trick and trick[0][0] != obs["leader"]) or (
                obs["leader"] == seat) != (not trick):
            problems.append(f"{where}: trick {trick} with leader {obs['leader']}, seat {seat} to play")
        for _seat, card in trick:
            if not is_card(card):
                problems.append(f"{where}.trick: {card!r}")
    elif trick:
        problems.append(f"{where}.trick {trick} before play")
    leader = obs["master"]  # rule 2.6: the master leads the first trick
    won = [0, 0]
    for i, t in enumerate(tricks):
        cards = t["cards"]
        if t["trick"] != i + 1 or t["leader"] != leader or not _cards(cards, f"{where}.tricks[{i}]", problems) \
                or len(cards) != 2:
            problems.append(f"{where}.tricks[{i}] = {t}, expected trick {i + 1} led by {leader}")
            continue
        winner = leader if aegis_trick_winner(cards[0], cards[1], obs["trump"], killers) else 1 - leader
        if t["winner"] != winner:
            problems.append(f"{where}.tricks[{i}] = {t}: rule 2.6 gives the trick to seat {winner}")
        leader = t["winner"]
        won[t["winner"]] += 1
    if phase == "play" and obs["leader"] != leader:
        problems.append(f"{where}.leader {obs['leader']}, expected {leader}")
    if obs["tricks_won"] != won:
        problems.append(f"{where}.tricks_won {obs['tricks_won']}, the tricks say {won}")
    if obs["points"] != [0, 0] or obs["result"] is not None or obs["match_over"] or obs["winner"] is not None \
            or obs["ended_by"] is not None:
        problems.append(f"{where}: points {obs['points']}, result {obs['result']}, match_over "
                        f"{obs['match_over']}, winner {obs['winner']}, ended_by {obs['ended_by']} in a request")
    if obs["options"] != {"promise": options.get("promise", "table")}:
        problems.append(f"{where}.options {obs['options']}, the game's are {options}")
    draw = obs["draw"]
    if not _cards(draw["cards"], f"{where}.draw.cards", problems) or len(draw["cards"]) != 2:
        problems.append(f"{where}.draw {draw}")
    if obs["game_number"] != len(obs["games"]) + 1:
        problems.append(f"{where}.game_number {obs['game_number']} after {len(obs['games'])} finished deal(s)")
    first_master = draw["master"]
    if obs["master"] != (first_master + obs["game_number"] - 1) % 2:
        problems.append(f"{where}.master {obs['master']} in deal {obs['game_number']}, first master {first_master}")
    totals = [sum(g["points"][s] for g in obs["games"]) for s in (0, 1)]
    if obs["match_scores"] != totals:
        problems.append(f"{where}.match_scores {obs['match_scores']}, the games add up to {totals}")
    if phase == "exchange":
        first = "STOP" if obs["role"] == "master" else "EXCHANGE"
        if legal[0] != first or not all(a.startswith("EXCHANGE") for a in legal[1:]):
            problems.append(f"legal actions of the {obs['role']} in phase exchange: {legal[:3]}...")
    if phase == "declare" and not all(a == "PASS" or a.startswith("DECLARE ") for a in legal):
        problems.append(f"legal actions in phase declare: {legal}")
    if phase == "play" and not set(legal) <= set(hand):
        problems.append(f"legal actions {legal} are not cards of the hand {hand}")


MEANING = {"confirmation": check_confirmation, "aegis": check_aegis}


def check_observation(game, observation, seat, legal, options, typed):
    """All that is wrong with one observation: `typed` as a stdio bot reads it, else the JSON form.

    Returns (problems, the observation in the JSON form) so that a bot can play from the second.
    """
    problems = []
    spec = OBSERVATIONS[game]
    if typed:
        obs = from_typed(spec, observation, f"{game}", problems)
        obs["game"] = game
    else:
        check_json(spec, observation, game, problems)
        obs = observation
    if not problems:
        MEANING[game](obs, seat, legal, options, problems)
    return problems, obs


def confirmation_points(bid, tricks, words):
    """rules.md §1.7 and §1.8 (double): a seat's (or a team's) points for a round."""
    miss = abs(tricks - bid)
    if words[-1] == "REVISE":
        return 10 + bid if miss == 0 else -miss
    if miss:
        return -3 * miss
    return 30 + 3 * bid if words == ["CONFIRM", "CONFIRM"] else 20 + 2 * bid


def check_round_score(summary, options, problems):
    """The `score` event's summary against rules 1.7 and 1.8."""
    pairs = options.get("pairs") == "true"
    phases = 2 if options.get("double") == "true" else 1
    words, tricks, bids = summary["choices"], summary["tricks"], summary["final_bids"]
    if sum(tricks) != 13 or any(len(w) != phases for w in words) or any(len(n) != phases
                                                                        for n in summary["phase_bids"]):
        problems.append(f"round {summary['round']}: tricks {tricks}, choices {words}, phase_bids "
                        f"{summary['phase_bids']} for {phases} phase(s)")
        return
    if [numbers[-1] for numbers in summary["phase_bids"]] != bids:
        problems.append(f"round {summary['round']}: final_bids {bids}, phase_bids {summary['phase_bids']}")
    for seat in range(4):
        if pairs:
            team = (seat, (seat + 2) % 4)
            team_words = ["CONFIRM" if all(words[s][i] == "CONFIRM" for s in team) else "REVISE"
                          for i in range(phases)]
            points = confirmation_points(sum(bids[s] for s in team), sum(tricks[s] for s in team), team_words)
        else:
            points = confirmation_points(bids[seat], tricks[seat], words[seat])
        if summary["points"][seat] != points:
            problems.append(f"round {summary['round']}: seat {seat} scored {summary['points'][seat]}, rules "
                            f"1.7/1.8 give {points} (bid {bids[seat]}, tricks {tricks[seat]}, {words[seat]})")


def check_deal_result(result, options, problems):
    """A deal's result against rule 2.7."""
    d, t, d_master = result["d"], result["attacker_tricks"], result["d_master"]
    attacker, defender = result["attacker"], result["defender"]
    if {attacker, defender} != {0, 1} or result["tricks"][attacker] != t or sum(result["tricks"]) != 5:
        problems.append(f"deal {result['game']}: attacker {attacker}, tricks {result['tricks']}, t = {t}")
        return
    won = t >= d
    points = [0, 0]
    promise = won and t == d and (options.get("promise", "table") == "table" or d >= 4)
    conquest = t == 5 if won else t == 0
    save = won and d_master <= 2 and 5 - t >= d_master
    if won:
        points[attacker] = d + promise + conquest
        points[defender] = d_master if save else 0
    else:
        points[defender] = d + conquest
    expected = {"attacker_won": won, "winner": attacker if won else defender, "promise": promise,
                "conquest": conquest, "save": save, "points": points}
    for key, value in expected.items():
        if result[key] != value:
            problems.append(f"deal {result['game']}: {key} {result[key]}, rule 2.7 gives {value} "
                            f"(d {d}, t {t}, d_master {d_master})")


SCORING = {("confirmation", "score"): check_round_score, ("aegis", "game_end"): check_deal_result}


def check_event(game, event, typed, options=None):
    """All that is wrong with one GameEvent's data (§9's and §10's event tables; the scores by the rules)."""
    problems = []
    kind = event.get("kind")
    specs = EVENTS[game]
    if kind not in specs:
        return [f"event {event.get('index', 0)}: undocumented kind {kind!r}"]
    spec = specs[kind]
    where = f"event {kind}"
    if typed:
        data = event.get(game)
        key = camel(kind)
        if not isinstance(data, dict) or list(data) != [key]:
            return [f"{where}: data {data!r} is not one key {key!r} under {game!r}"]
        if isinstance(spec, Bare):
            value = from_typed({spec.field: spec.kind}, data[key], where, problems)[spec.field]
        else:
            value = from_typed(spec, data[key], where, problems)
    else:
        value = event["data"]
        _json_value(spec, value, where, problems)
    if not problems and (game, kind) in SCORING:
        SCORING[game, kind](value, options or {}, problems)
    return problems


# the actor column of §9's and §10's event tables: -1, or the seat the event is about (None: any seat);
# and the events only their actor sees ("seen by": that seat only)
NO_ACTOR = {"confirmation": {"round", "trump", "score", "end"},
            "aegis": {"master_draw", "deal", "exchange_end", "game_end"}}
PRIVATE = {"confirmation": {"deal"}, "aegis": {"hand", "exchange_cards"}}


def check_envelope(game, event, game_id, seat, options, last_index):
    """All that is wrong with a GameEvent's own fields (§3) for this seat, and what it may see (§8).

    `event` is the typed GameEvent as proto3 JSON prints it; `last_index` the index of the seat's last
    event in this game (-1 before the first). Returns (problems, this event's index).
    """
    problems = []
    index, actor, kind = event.get("index", 0), event.get("actor", 0), event.get("kind")
    where = f"event {index} ({kind})"
    if event.get("gameId") != game_id or event.get("seat", 0) != seat:
        problems.append(f"{where}: for game {event.get('gameId')!r} seat {event.get('seat', 0)}, "
                        f"sent to {game_id!r} seat {seat}")
    if not _is_int(index) or index <= last_index:
        problems.append(f"{where}: index {index!r} does not follow {last_index}")
        index = last_index
    seats = 4 if game == "confirmation" else 2
    if kind in NO_ACTOR[game]:
        if actor != -1:
            problems.append(f"{where}: actor {actor}, documented -1")
    elif not _is_int(actor) or not 0 <= actor < seats:
        problems.append(f"{where}: actor {actor!r} is not a seat")
    private = PRIVATE[game] | ({"choice"} if options.get("blind") == "true" else set())
    if kind in private and actor != seat:
        problems.append(f"{where}: seat {seat} is shown seat {actor}'s private {kind} (§8)")
    return problems, index


def check_results(game, results, typed, seats):
    """All that is wrong with a GameEnd's results: typed (the game's object and `faults`) or results_json."""
    problems = []
    if typed:
        end = results
        from_typed(RESULTS[game], end.get(game, {}), f"gameEnd.{game}", problems)
        faults = end.get("faults", [])
        if len(faults) != seats:
            problems.append(f"gameEnd.faults has {len(faults)} items for {seats} seats")
        for i, seat_faults in enumerate(faults):
            from_typed({kind: U32 for kind in FAULT_KINDS}, seat_faults, f"gameEnd.faults[{i}]", problems)
        scores = end.get("scores", [])
        if not all(isinstance(s, str) and s.lstrip("-").isdigit() for s in scores):  # int64: strings (§16)
            problems.append(f"gameEnd.scores {scores} are not 64-bit integers as strings")
    else:
        spec = dict(RESULTS[game])
        if game == "confirmation" and "teams" not in results:
            del spec["teams"]  # "plus "teams" ... with pairs"
        spec.update({"scores": rep(I32), "placing": rep(U32),
                     "faults": rep({kind: U32 for kind in FAULT_KINDS})})
        check_json(spec, results, "results_json", problems)
    return problems
