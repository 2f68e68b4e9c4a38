"""Random-playout speed of each game, in process: ``python -m referee.bench``.

One decision is ``legal_actions`` + a uniform random choice + ``apply``: the
work a referee does per decision, minus transport. Prints a table and, with
``--json FILE``, writes the figures.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import time

from referee.games import GAMES


def playout_rate(game: str, seconds: float, options: dict | None = None, seed: int = 0) -> dict:
    spec = GAMES[game]
    rng = random.Random(seed)
    decisions = matches = 0
    start = time.perf_counter()
    cpu_start = time.process_time()
    while time.perf_counter() - start < seconds:
        state = spec.new(options, seed=seed + matches)
        to_act, legal, apply, choice = state.to_act, state.legal_actions, state.apply, rng.choice
        while seats := to_act():
            for seat in seats:
                apply(seat, choice(legal(seat)))
                decisions += 1
        matches += 1
    wall = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    return {
        "game": game,
        "options": options or {},
        "matches": matches,
        "decisions": decisions,
        "seconds": round(wall, 3),
        "decisions_per_s": round(decisions / wall),
        "cpu_us_per_decision": round(cpu / decisions * 1e6, 2),
        "matches_per_s": round(matches / wall, 1),
    }


CASES = [
    ("confirmation", {}),
    ("confirmation", {"double": True, "blind": True, "pairs": True, "trump": "random-suit"}),
    ("aegis", {}),
]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per case (default 3)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    rows = [playout_rate(game, args.seconds, options) for game, options in CASES]
    print(f"Engine random playouts, one core ({platform.python_implementation()} {platform.python_version()})")
    print(f"{'game':<14}{'options':<48}{'decisions/s':>12}{'µs/decision':>13}{'matches/s':>11}")
    for r in rows:
        opts = ",".join(f"{k}={v}" for k, v in r["options"].items()) or "defaults"
        print(f"{r['game']:<14}{opts:<48}{r['decisions_per_s']:>12,}{r['cpu_us_per_decision']:>13}"
              f"{r['matches_per_s']:>11}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"engine": rows}, f, indent=2)


if __name__ == "__main__":
    main()
