"""RULES §4 at the protocol level: the bytes a seat receives are identical for
two deals that differ only in cards hidden from it.

Each test plays a match twice through a real server with scripted bot
processes that dump every message exactly as received. The second deal swaps
two cards the watched seat cannot see (and the other seats' actions follow
the swap), so every seat plays "the same game" from the watched seat's point
of view.
"""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

import pytest
from harness import serve
from helpers import swap_card

from referee import cards
from referee.games import GAMES
from referee.runner import Clock
from referee.v1 import referee_pb2 as pb

pytestmark = pytest.mark.e2e


def random_match(game: str, options: dict, seed: int):
    state = GAMES[game].new(options, seed=seed)
    rng = random.Random(seed)
    while seats := state.to_act():
        for seat in seats:
            state.apply(seat, rng.choice(state.legal_actions(seat)))
    return state


def play_scripted(tmp: Path, tag: str, game: str, options: dict, decks, actions) -> list[list[bytes]]:
    """Play the given actions through the server; each seat's received messages, as bytes."""
    spec = GAMES[game]
    names = [f"seat{s}" for s in range(spec.num_seats)]
    for seat in range(spec.num_seats):
        script = [spec.action_name(a) for s, a in actions if s == seat]
        (tmp / f"{tag}{seat}.json").write_text(json.dumps(script))

    async def main(server, bots):
        procs = [bots.proto(names[s], "--script", str(tmp / f"{tag}{s}.json"), "--dump", str(tmp / f"{tag}{s}.bin"),
                            "--games", "1") for s in range(spec.num_seats)]
        try:
            out = await server.arena.run_match(game, options, names, decks=decks, clock=Clock(5.0, 10.0),
                                               game_id="leak")
        finally:
            loop = asyncio.get_running_loop()
            for p in procs:
                await loop.run_in_executor(None, p.wait, 20)
        return out

    out = serve(main, output=None)
    assert out.faults == [] and out.state.actions == list(actions)
    # the session's Welcome (its session id depends on the order the bots connected) is not about the game
    return [split(tmp / f"{tag}{s}.bin")[1:] for s in range(spec.num_seats)]


def split(path: Path) -> list[bytes]:
    data, messages, i = path.read_bytes(), [], 0
    while i < len(data):
        n = int.from_bytes(data[i:i + 4], "big")
        messages.append(data[i + 4:i + 4 + n])
        i += 4 + n
    return messages


def swapped(decks, deck_index, x, y):
    out = [list(d) for d in decks]
    d = out[deck_index]
    i, j = d.index(x), d.index(y)
    d[i], d[j] = y, x
    return out


def test_confirmation_bytes_are_identical_until_a_swapped_card_is_played(tmp_path):
    options = {"rounds": 1, "blind": True}
    state = random_match("confirmation", options, seed=12)
    deck = state.shoe.decks[0]
    watched = 0
    # two cards of one suit, dealt to two different opponents of the watched seat
    hands = {s: [c for i, c in enumerate(deck) if (1 + i) % 4 == s] for s in range(4)}
    x, y = next((a, b) for a in hands[1] for b in hands[2]
                if cards.SUIT[a] == cards.SUIT[b] and a != deck[51] and b != deck[51])
    actions_b = [(s, a if s == watched else swap_card(a, x, y)) for s, a in state.actions]
    seen_a = play_scripted(tmp_path, "a", "confirmation", options, state.shoe.decks, state.actions)
    seen_b = play_scripted(tmp_path, "b", "confirmation", options, swapped(state.shoe.decks, 0, x, y), actions_b)

    a, b = seen_a[watched], seen_b[watched]
    first = next(i for i, (m, n) in enumerate(zip(a, b)) if m != n)
    assert first > 5  # game start, bid, confirmation and several plays of the watched seat
    # the first message that differs brings the event that reveals a swapped card, and only
    # after the events before it, byte for byte the same
    message_a, message_b = (pb.RefereeMessage.FromString(m[first]) for m in (a, b))
    assert message_a.WhichOneof("kind") == message_b.WhichOneof("kind") == "request"
    events_a, events_b = message_a.request.events, message_b.request.events
    k = next(i for i, (e, f) in enumerate(zip(events_a, events_b)) if e.SerializeToString() != f.SerializeToString())
    assert events_a[k].kind == "play"
    assert {json.loads(events_a[k].data_json), json.loads(events_b[k].data_json)} <= {cards.name(x), cards.name(y)}
    assert seen_a[1][:5] != seen_b[1][:5]  # the holder of a swapped card saw its own hand change


def test_aegis_bytes_are_identical_for_the_whole_match(tmp_path):
    # find a match whose first game has an opponent discard to hide
    watched, other = 0, 1
    for seed in range(100):
        state = random_match("aegis", {}, seed=seed)
        first = state.games[0] if state.games else state.current
        discards = [c for ex in first.own_exchanges[other] for c in ex["discarded"]]
        if discards:
            break
    discarded = discards[0] if isinstance(discards[0], int) else cards.parse(discards[0])
    game1_actions = len(first.actions)
    untouched = first.stock[first.drawn:]          # stock cards nobody drew in game 1
    y = untouched[-1]
    actions_b = [(s, swap_card(a, discarded, y) if s == other and i < game1_actions else a)
                 for i, (s, a) in enumerate(state.actions)]
    decks_b = swapped(state.shoe.decks, 1, discarded, y)
    seen_a = play_scripted(tmp_path, "a", "aegis", {}, state.shoe.decks, state.actions)
    seen_b = play_scripted(tmp_path, "b", "aegis", {}, decks_b, actions_b)
    assert len(seen_a[watched]) > 50
    assert seen_a[watched] == seen_b[watched]      # every byte, the whole match
    assert seen_a[other] != seen_b[other]          # the discarder saw its own hand differ
