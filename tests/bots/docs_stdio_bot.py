"""A stdio bot written from docs/protocol.md §16 alone (not from the relay's code), for tests/test_kits.py.

It reads the observation (the request's object named as the game, camelCase keys, defaults left
out), answers by name, and checks on the way what the section promises: one message a line, one key
at the top, 64-bit integers as strings, a missing seat meaning seat 0, no JSON texts inside the JSON.
A promise broken is written to stderr as "BROKEN: ..." (the test reads the log), and the bot answers
the first legal action all the same.
"""

import json
import sys

TOP = {"welcome", "gameStart", "request", "result", "gameEnd", "refusal"}


def broken(what):
    print(f"BROKEN: {what}", file=sys.stderr, flush=True)


def choose(request):
    legal = request["legalActions"]
    typed = request.get("aegis") or request.get("confirmation")
    if typed is None:
        broken("a request without the observation")
        return legal[0]
    if typed.get("seat", 0) != request.get("seat", 0) or "observationJson" in request:
        broken("an observation of another seat, or a JSON text")
    hand = typed.get("hand", [])
    if "confirmation" in request and typed["phase"] == "bid":
        aces = sum(card[0] == "A" for card in hand)
        bids = [a for a in legal if a.startswith("BID ")]
        return min(bids, key=lambda a: abs(int(a.split()[1]) - aces))
    cards = [a for a in legal if a in hand]
    return cards[-1] if cards else legal[0]  # the highest card in canonical order, else the first action


def main():
    for line in sys.stdin:
        message = json.loads(line)
        if len(message) != 1 or not set(message) <= TOP:
            broken(f"a line with the keys {sorted(message)}")
            continue
        if "request" in message:
            request = message["request"]
            if not isinstance(request["requestId"], str):
                broken("a requestId that is not a string")
            reply = {"requestId": request["requestId"], "gameId": request["gameId"],
                     "seat": request.get("seat", 0), "name": choose(request)}
            sys.stdout.write(json.dumps({"action": reply}) + "\n")
            sys.stdout.flush()
        elif "gameEnd" in message:
            end = message["gameEnd"]
            if not all(isinstance(score, str) for score in end["scores"]):
                broken("scores that are not strings")
            print(f"{end['gameId']} seat {end.get('seat', 0)}: placing {end['placing']}", file=sys.stderr)
        elif "refusal" in message:
            print(f"refused: {message['refusal']}", file=sys.stderr)


if __name__ == "__main__":
    main()
