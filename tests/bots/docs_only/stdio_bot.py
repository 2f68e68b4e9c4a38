"""A stdio bot for both games, written from the docs alone.

Written by the `newcomer` helper (issue 26's "done when") from README.md, docs/writing-a-bot.md,
docs/protocol.md (§3, §9, §10, §16), docs/rules.md, docs/tournaments.md and
proto/referee/v1/referee.proto, without reading the referee's source, its sample bots or its tests.

It reads one RefereeMessage a line on stdin (proto3 JSON, typed game data, §16) and writes one
ActionReply a line on stdout; it needs nothing but the standard library. Every observation it gets
is checked by check_observation.py against docs/protocol.md's tables (and so is every event's data
and every GameEnd's results); each mismatch is a line on stderr (the bot's log) starting
`MISMATCH`, and each game ends with a line `checked GAME_ID seat N: ...` counting what was checked.

Play: simple rules from docs/rules.md.
- Confirmation: bid the tricks the hand looks worth (high cards and trumps); in play, take tricks
  while short of the bid in force and shed them once it is made; at a confirmation phase, confirm a
  bid that still looks right and revise to the estimate otherwise.
- Aegis: keep a strong hand (the master exchanges at most once, since each exchange raises its least
  declaration, rule 2.5), declare about what the hand is worth, and in play win every trick it can,
  as cheaply as it can (the attacker needs d tricks, the defender must stop it).
"""

import json
import sys

from check_observation import (
    RANKS,
    aegis_trick_winner,
    check_envelope,
    check_event,
    check_observation,
    check_results,
    confirmation_trick_winner,
)


def log(text):
    print(text, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- Confirmation

def conf_worth(card, hand, trump):
    """Rough odds that a card takes a trick (rules.md §1.5: trumps beat every other suit)."""
    rank = RANKS.index(card[0])
    if card[1] == trump:
        return 1.0 if rank >= 10 else 0.6 if rank >= 7 else 0.4
    length = sum(c[1] == card[1] for c in hand)
    if card[0] == "A":
        return 0.9 if length <= 5 else 0.6
    if card[0] == "K":
        return 0.6 if 2 <= length <= 5 else 0.2
    if card[0] == "Q":
        return 0.3 if 3 <= length <= 5 else 0.1
    return 0.0


def conf_estimate(hand, trump):
    return sum(conf_worth(card, hand, trump) for card in hand)


def number_nearest(legal, word, target):
    """The legal action `WORD n` whose n is nearest the target."""
    options = [a for a in legal if a.startswith(word + " ")]
    return min(options, key=lambda a: (abs(int(a.split()[1]) - target), int(a.split()[1])))


def conf_winning(trick, leader, card, trump):
    """Would `card` be winning the trick so far, if played now (rule 1.5)?"""
    return confirmation_trick_winner(leader, trick + [card], trump) == (leader + len(trick)) % 4


def card_rank(card, trump):
    return RANKS.index(card[0]) + (13 if card[1] == trump else 0)


def decide_confirmation(obs, legal):
    seat, trump, hand = obs["seat"], obs["trump"], obs["hand"]
    if obs["phase"] == "bid":
        return number_nearest(legal, "BID", round(conf_estimate(hand, trump)))
    bid = obs["bids_in_force"][seat]
    won = obs["tricks_won"][seat]
    if obs["phase"] == "confirm":
        expected = won + conf_estimate(hand, trump)
        if abs(expected - bid) <= 0.75 and "CONFIRM" in legal:
            return "CONFIRM"
        target = max(won, round(expected))
        revise = number_nearest(legal, "REVISE", target)
        return revise if int(revise.split()[1]) != bid else "CONFIRM"
    # trick play: only cards listed, in canonical order
    want = won < bid
    trick, leader = obs["trick"], obs["leader"]
    if not trick:  # leading
        ordered = sorted(legal, key=lambda c: card_rank(c, trump))
        return ordered[-1] if want else ordered[0]
    winners = [c for c in legal if conf_winning(trick, leader, c, trump)]
    losers = [c for c in legal if c not in winners]
    by_rank = lambda c: card_rank(c, trump)  # noqa: E731
    if want:
        if winners:
            # the last to play takes it as cheaply as it can; earlier, with the strongest
            return min(winners, key=by_rank) if len(trick) == 3 else max(winners, key=by_rank)
        return min(legal, key=by_rank)
    if losers:
        return max(losers, key=by_rank)  # shed the highest card that does not win
    return min(legal, key=by_rank)


# ---------------------------------------------------------------- Aegis

def aegis_worth(card, obs):
    """Rough odds that a card takes a trick in Aegis (rules.md §2.1, §2.6)."""
    if card in obs["killers"]:
        return 0.6
    rank = card[0]
    if card[1] == obs["trump"]:
        return 0.9 if rank in "9TJQK" else 0.6
    return {"K": 0.5, "Q": 0.4, "T": 0.35, "J": 0.35, "9": 0.25, "A": 0.2}.get(rank, 0.1)


def aegis_estimate(hand, obs):
    return sum(aegis_worth(card, obs) for card in hand)


def aegis_play_value(card, obs):
    """How strong a card is to lead (killers are ordinary when led, rule 2.6)."""
    rank = "23456789TJQKA".index(card[0]) if card[0] != "A" else 9.5  # the ace beats only K, Q, J
    return rank + (20 if card[1] == obs["trump"] else 0)


def decide_aegis(obs, legal):
    hand = obs["hand"]
    if obs["phase"] == "exchange":
        weak = [c for c in hand if aegis_worth(c, obs) < 0.3]
        if obs["role"] == "master" and (obs["e"] >= 1 or len(weak) <= 1):
            return "STOP"
        if not weak:
            return legal[0]  # STOP, or the slave's bare EXCHANGE (a decline)
        wanted = "EXCHANGE " + " ".join(weak)
        return wanted if wanted in legal else legal[0]
    if obs["phase"] == "declare":
        estimate = round(aegis_estimate(hand, obs))
        if obs["role"] == "master":
            return number_nearest(legal, "DECLARE", estimate)
        declares = [a for a in legal if a.startswith("DECLARE ")]
        fitting = [a for a in declares if int(a.split()[1]) <= estimate]
        return fitting[0] if fitting else "PASS"
    trick = obs["trick"]
    if not trick:  # leading: the strongest card
        return max(legal, key=lambda c: aegis_play_value(c, obs))
    led = trick[0][1]
    winners = [c for c in legal if not aegis_trick_winner(led, c, obs["trump"], obs["killers"])]
    if winners:  # take it as cheaply as we can
        return min(winners, key=lambda c: aegis_play_value(c, obs))
    return min(legal, key=lambda c: aegis_play_value(c, obs))


DECIDE = {"confirmation": decide_confirmation, "aegis": decide_aegis}


# ---------------------------------------------------------------- the session

class Seat:
    def __init__(self, start):
        self.game = start["game"]
        self.options = start.get("options", {})
        self.seats = len(start.get("seatNames", []))
        self.observations = 0
        self.events = 0
        self.mismatches = 0
        self.last_index = -1


def report(seat_state, game_id, seat, problems):
    for problem in problems:
        seat_state.mismatches += 1
        log(f"MISMATCH {game_id} seat {seat}: {problem}")


def finished(state, game_id, seat, scores):
    """The line that says what was checked of one seat's game (the test counts them)."""
    log(f"checked {game_id} seat {seat}: {state.observations} observation(s), {state.events} event(s), "
        f"results; {state.mismatches} mismatch(es); scores {scores}")


def check_events(state, game_id, seat, events):
    for event in events:
        state.events += 1
        problems, state.last_index = check_envelope(state.game, event, game_id, seat, state.options,
                                                    state.last_index)
        report(state, game_id, seat, problems + check_event(state.game, event, typed=True, options=state.options))


def on_request(request, seats):
    game_id, seat = request["gameId"], request.get("seat", 0)
    legal = request["legalActions"]
    state = seats.get((game_id, seat))
    if state is None:  # no gameStart seen: read the game from the oneof (§3)
        state = seats[(game_id, seat)] = Seat({"game": "aegis" if "aegis" in request else "confirmation"})
        report(state, game_id, seat, ["a request before its gameStart"])
    check_events(state, game_id, seat, request.get("events", []))
    choice = legal[0]
    try:
        problems, obs = check_observation(state.game, request.get(state.game), seat, legal, state.options,
                                          typed=True)
        state.observations += 1
        report(state, game_id, seat, problems)
        if not problems:
            choice = DECIDE[state.game](obs, legal)
    except Exception as error:  # a checker or strategy bug costs a decision, never the game
        report(state, game_id, seat, [f"the bot failed on this request: {error!r}"])
    if choice not in legal:
        report(state, game_id, seat, [f"the bot chose {choice!r}, not a legal action"])
        choice = legal[0]
    return {"action": {"requestId": request["requestId"], "gameId": game_id, "seat": seat, "name": choice}}


def main():
    seats = {}
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        (kind, body), = message.items()
        if kind == "request":
            print(json.dumps(on_request(body, seats)), flush=True)
        elif kind == "gameStart":
            seats[(body["gameId"], body.get("seat", 0))] = Seat(body)
        elif kind == "gameEnd":
            key = (body["gameId"], body.get("seat", 0))
            state = seats.pop(key, None) or Seat({"game": "aegis" if "aegis" in body else "confirmation"})
            check_events(state, *key, body.get("events", []))
            report(state, *key, check_results(state.game, body, typed=True, seats=state.seats))
            finished(state, *key, body.get("scores"))
        elif kind == "result":
            log(f"substituted: {json.dumps(body)}")
        elif kind == "refusal":
            log(f"refused: {json.dumps(body)}")
            return 2
        elif kind != "welcome":
            log(f"MISMATCH: an undocumented message {kind!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
