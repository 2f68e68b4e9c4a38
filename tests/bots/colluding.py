"""Two Confirmation entries of one author that collude through their play alone (no hidden channel).

    python tests/bots/colluding.py --role mark   --address HOST:PORT --name NAME --token-fd 3
    python tests/bots/colluding.py --role helper --address HOST:PORT --name NAME --token-fd 3
    python tests/bots/colluding.py --role honest ...      (the control: the heuristic bot itself)

Both are the heuristic sample bot (``sample_bots.heuristic``) but for this:

- ``mark``, the beneficiary, **signs its bids**: it bids the heuristic's number when ``bid + round +
  seat`` is even, otherwise the nearest legal number that makes it even (a trick more or less).
  Bids are public: that is its only signal, and it costs it a little when nobody helps.
- ``helper`` **plays for the mark**. It has no name to go by (the referee tells a bot neither who
  sits where nor who its opponents are), so it watches the bids: after each round's bidding, a seat
  whose bids of every round so far were signed stays a suspect; once exactly one suspect is left it
  is taken for the mark, and the helper plays every trick for it: while the mark still needs tricks
  it never takes one the mark could win (it plays low, leaves the mark's winning card alone, leads
  low), once the mark has its bid it takes the tricks the mark would win (it overtakes the mark,
  plays high before it, leads high). Its own bid and its confirmation choices stay the heuristic's:
  it throws its own points away only through its play.

Seated with the mark, the helper makes the mark's bids succeed far more often, at its own cost and
its other table-mates'; elsewhere both play as the heuristic (the mark's signature aside). An honest
seat is taken for the mark by mistake now and then (one whose bids happened to be signed in every
round so far, while the mark is not at the table): the helper plays for it until its next unsigned bid.

``--role honest`` plays exactly as the heuristic bot: the control run.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from referee.bot import GameView, run_bot
from sample_bots import heuristic
from sample_bots import heuristic_confirmation as hc

ROLES = ("mark", "helper", "honest")


#: the signature: ``bid + round + seat`` a multiple of this (an honest bid has it one time in SIGNATURE)
SIGNATURE = 3


def signed(bid: int, round_: int, seat: int) -> bool:
    """Whether a bid carries the mark's signature."""
    return (bid + round_ + seat) % SIGNATURE == 0


def mark(observation: dict[str, Any], legal: list[str], game: GameView) -> str:
    """The heuristic's choice, with a signed bid."""
    choice = heuristic.decide(observation, legal, game)
    if observation.get("phase") != "bid":
        return choice
    want = int(choice.split()[1])
    bids = [int(a.split()[1]) for a in legal if a.startswith("BID ")]
    ok = [b for b in bids if signed(b, observation["round"], observation["seat"])]
    return f"BID {min(ok, key=lambda b: (abs(b - want), -b))}" if ok else choice


def suspect(observation: dict[str, Any], memory: dict[str, Any]) -> int | None:
    """The seat taken for the mark (None: none, or not yet only one), from the bids seen so far."""
    me, round_ = observation["seat"], observation["round"]
    suspects = memory.setdefault("suspects", {s for s in range(4) if s != me})
    bids = observation["bids"]
    if memory.get("checked") != round_ and all(b is not None for b in bids):
        memory["checked"] = round_
        suspects &= {s for s in suspects if signed(bids[s], round_, s)}
    return next(iter(suspects)) if len(suspects) == 1 and memory.get("checked") == round_ else None


def helper(observation: dict[str, Any], legal: list[str], game: GameView) -> str:
    """The heuristic's choice, except in trick play once the mark is known: play for it."""
    choice = heuristic.decide(observation, legal, game)
    if observation.get("game") != "confirmation" or observation.get("phase") != "play":
        return choice
    partner = suspect(observation, game.memory)
    if partner is None:
        return choice
    return hc.NAMES[play_for(hc.read_table(observation), partner, [hc.CARD[a] for a in legal])]


def play_for(tb: hc.Table, mark_seat: int, legal: list[int]) -> int:
    """The card that helps the mark end on its bid: let it win while it needs tricks, take its
    tricks from it once it has them."""
    wants = tb.parts[mark_seat] - tb.won[mark_seat] > 0
    if not tb.trick:  # leading: low for the mark to win, high to take the trick before it can
        return hc.lead_to_lose(tb, legal) if wants else hc.lead_to_win(tb, legal)
    best_seat, best = hc.current_best(tb)
    led = hc.SUIT[tb.trick[0][1]]
    winners = [c for c in legal if hc.beats(c, best, led, tb.trump)]
    losers = [c for c in legal if c not in winners]
    mark_to_play = mark_seat in hc.still_to_play(tb)
    if wants:  # never beat the mark, nor take a card it could still beat
        if best_seat == mark_seat or mark_to_play:
            return hc.lowest(losers or legal, tb.trump)
        return hc.follow_to_win(tb, legal)
    if best_seat == mark_seat or mark_to_play:  # take the trick from the mark
        return max(winners, key=lambda c: (hc.SUIT[c] == tb.trump, hc.RANK[c])) if winners else \
            hc.lowest(legal, tb.trump)
    return hc.follow_to_lose(tb, legal)


POLICIES = {"mark": mark, "helper": helper, "honest": heuristic.decide}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--role", choices=ROLES, required=True)
    args, rest = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    run_bot(POLICIES[args.role], rest, default_name=args.role)


if __name__ == "__main__":
    main()
