"""stdio_random: a whole bot for the stdio protocol (docs/protocol.md §16), in plain Python, no gRPC.

Each line on its stdin is a message from the referee, in proto3 JSON; to each decision request it
answers with one line on its stdout: a random legal action. It plays any game. Enter it as

    [[bots]]
    name = "stdio-random"
    command = ["python", "-m", "sample_bots.stdio_random"]
    protocol = "stdio"
"""

import json
import random
import sys


def main() -> None:
    rng = random.Random()
    for line in sys.stdin:
        message = json.loads(line)
        if "request" in message:
            request = message["request"]
            observation = request.get("confirmation") or request.get("aegis")  # all this seat may know (§9, §10)
            assert observation.get("seat", 0) == request.get("seat", 0)  # a field at its default (0) is left out
            answer = {"requestId": request["requestId"], "gameId": request["gameId"],
                      "seat": request.get("seat", 0), "index": rng.randrange(len(request["legalActions"]))}
            print(json.dumps({"action": answer}), flush=True)
        elif "gameEnd" in message:
            end = message["gameEnd"]
            print(f"{end['gameId']} seat {end.get('seat', 0)}: scores {end['scores']}", file=sys.stderr)
        elif "refusal" in message:
            print(f"refused: {message['refusal']}", file=sys.stderr)


if __name__ == "__main__":
    main()
