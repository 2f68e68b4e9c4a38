"""A bot written from the docs alone plays, legally and better than random, and what the referee sends it
is what docs/protocol.md says (issue 26's "done when").

`tests/bots/docs_only/stdio_bot.py` was written from README.md, docs/writing-a-bot.md, docs/protocol.md,
docs/rules.md, docs/tournaments.md and the .proto only: a stdio bot in plain Python. It checks every
observation, event and result it gets (the typed form, the only one a stdio bot is given, §16) with
`check_observation.py` (written from protocol.md's tables) and logs a `MISMATCH` line for anything the
docs do not say. `grpc_bot.py`, a gRPC bot from §13-§15 with the same rules, asks for both forms
(`DATA_BOTH`) and checks each, and that the typed one decodes to the JSON one (§3). Both play a
sandboxed tournament of each game with `sample_bots.random`, through `referee tournament` as a user
runs it.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
from harness import ROOT, require_sandbox

BOT_DIR = ROOT / "tests" / "bots" / "docs_only"
sys.path.insert(0, str(BOT_DIR))
from check_observation import camel, check_envelope, check_event, check_observation, check_results  # noqa: E402

REFEREE = Path(sys.executable).with_name("referee")
GAMES = {"aegis": "", "confirmation": "\n[tournament.options]\nrounds = 2\ndouble = true\nblind = true\n"}
DEAL_SETS = {"aegis": 3, "confirmation": 2}
DOCS_BOTS = ("docs_only", "docs_grpc")
FAULTS = ("timeout", "illegal", "malformed", "wrong_id", "disconnect", "no_session", "error")


# ---------------------------------------------------------------- the checker, on the docs' own examples

def doc_example(marker: str) -> dict:
    text = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    block = text[text.index(f"<!-- {marker} -->"):].split("```json\n", 1)[1].split("```", 1)[0]
    return json.loads(block)


def camelized(value):
    """protocol.md §9 and §10 print their typed examples with the .proto's names; a stdio bot reads them
    in lowerCamelCase (§16)."""
    if isinstance(value, dict):
        return {camel(key): camelized(item) for key, item in value.items()}
    if isinstance(value, list):
        return [camelized(item) for item in value]
    return value


# the context of each example: §9's is seat 0 bidding in a game of one round, §10's seat 0 following
CONTEXT = {"confirmation": (0, [f"BID {n}" for n in range(14)], {"rounds": "1", "trump": "dealer-card"}),
           "aegis": (0, ["6S", "2D", "7C", "AC"], {"promise": "table"})}


@pytest.mark.parametrize("game", sorted(CONTEXT))
def test_the_checker_takes_the_docs_examples(game):
    seat, legal, options = CONTEXT[game]
    as_json = doc_example(f"observation-example: {game}")
    assert check_observation(game, as_json, seat, legal, options, typed=False)[0] == []
    typed = camelized(doc_example(f"typed-example: {game}"))
    problems, decoded = check_observation(game, typed, seat, legal, options, typed=True)
    assert problems == []
    assert decoded == as_json  # §3's mapping rules turn the typed example into the JSON one


def _set(key, value):
    return lambda obs: obs.__setitem__(key, value)


MUTATIONS = {
    "confirmation": {
        "an undocumented field": _set("peek", ["AS"]),
        "a hand out of canonical order": lambda obs: obs["hand"].reverse(),
        "a seat as a string": _set("seat", "0"),
        "a bid not made as null, not -1": lambda obs: obs["bids"].__setitem__(0, None),
        "a hand of 12 cards": lambda obs: obs["hand"].pop(),
        "a partner without pairs": _set("partner", 2),
        "a trump card of another suit": _set("trumpCard", "KS"),
    },
    "aegis": {
        "an undocumented field": _set("stock", ["2C"]),
        "the wrong killers": _set("killers", ["8H", "8C", "8D"]),
        "a stock that does not add up": _set("stockSize", 33),
        "a trick given to the wrong seat": lambda obs: obs["tricks"][0].__setitem__("winner", 0),
        "a result in a request": _set("result", {"game": 1}),
        "an undocumented field in a nested message": lambda obs: obs["draw"].__setitem__("deck", []),
        "a count as a string": _set("e", "2"),
    },
}


@pytest.mark.parametrize("game,mutation", [(g, m) for g in sorted(MUTATIONS) for m in MUTATIONS[g]])
def test_the_checker_finds_what_the_docs_do_not_say(game, mutation):
    seat, legal, options = CONTEXT[game]
    typed = camelized(doc_example(f"typed-example: {game}"))
    MUTATIONS[game][mutation](typed)
    assert check_observation(game, typed, seat, legal, options, typed=True)[0] != []


def test_the_json_form_must_hold_every_key():
    as_json = doc_example("observation-example: confirmation")
    seat, legal, options = CONTEXT["confirmation"]
    for key in ("partner", "game", "my_pending_choice"):
        broken = copy.deepcopy(as_json)
        del broken[key]
        assert check_observation("confirmation", broken, seat, legal, options, typed=False)[0] != []


def stdio_exchange() -> list[dict]:
    """The messages the bot reads in §16's exchange (`<` lines; each may run over several lines)."""
    text = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    block = text[text.index("<!-- stdio-exchange -->"):].split("```\n", 1)[1].split("```", 1)[0]
    messages, current = [], None
    for line in block.splitlines():
        if line.startswith(("< ", "> ", "...")):
            if current and current[0] == "<":
                messages.append(json.loads(current[1]))
            current = (line[0], line[2:]) if not line.startswith("...") else None
        elif current:
            current = (current[0], current[1] + line)
    if current and current[0] == "<":
        messages.append(json.loads(current[1]))
    return messages


def check_exchange(messages) -> list[str]:
    """Everything the checker finds in a stdio exchange of one Aegis seat."""
    problems, last = [], -1
    for message in messages:
        (kind, body), = message.items()
        for event in body.get("events", []):
            found, last = check_envelope("aegis", event, body["gameId"], body.get("seat", 0), {}, last)
            problems += found + check_event("aegis", event, typed=True)
        if kind == "request":
            problems += check_observation("aegis", body["aegis"], body.get("seat", 0), body["legalActions"],
                                          {"promise": "table"}, typed=True)[0]
        if kind == "gameEnd":
            problems += check_results("aegis", body, typed=True, seats=2)
    return problems


def test_the_checker_takes_the_docs_stdio_exchange():
    messages = stdio_exchange()
    assert [next(iter(m)) for m in messages] == ["welcome", "gameStart", "request", "request", "gameEnd"]
    assert check_exchange(messages) == []


EXCHANGE_MUTATIONS = {
    "another seat's hand": lambda m: m[2]["request"]["events"][2].__setitem__("actor", 0),
    "events out of order": lambda m: m[2]["request"]["events"][1].__setitem__("index", 5),
    "an event for another game": lambda m: m[3]["request"]["events"][0].__setitem__("gameId", "g2"),
    "a public event with no actor": lambda m: m[2]["request"]["events"][1].__setitem__("actor", 1),
    "an undocumented event kind": lambda m: m[3]["request"]["events"][0].__setitem__("kind", "peek"),
    "scores as numbers": lambda m: m[4]["gameEnd"].__setitem__("scores", [1, 14]),
}


@pytest.mark.parametrize("mutation", sorted(EXCHANGE_MUTATIONS))
def test_the_checker_finds_a_wrong_event(mutation):
    messages = stdio_exchange()
    EXCHANGE_MUTATIONS[mutation](messages)
    assert check_exchange(messages) != []


# The example columns of §9's round-summary table and §10's deal-result table (JSON form). §9's example
# gives phase_bids [[4],[2],[6],[1]] beside final_bids [2,3,1,5]: each seat's bid in force after the
# phase is its final bid in a plain game, so phase_bids is taken here as [[2],[3],[1],[5]].
ROUND_SUMMARY = {"round": 1, "dealer": 0, "trump": "H", "bids": [2, 4, 1, 5], "final_bids": [2, 3, 1, 5],
                 "choices": [["CONFIRM"], ["REVISE"], ["CONFIRM"], ["CONFIRM"]],
                 "phase_bids": [[2], [3], [1], [5]], "tricks": [2, 3, 0, 8], "points": [24, 13, -3, -9],
                 "totals": [24, 13, -3, -9]}
DEAL_RESULT = {"game": 1, "master": 0, "slave": 1, "key_card": "4D", "trump": "D", "e": 2,
               "exchanges": [[3, 1], [2, 0]], "d_master": 3, "d_slave": 4, "slave_passed": False, "attacker": 1,
               "defender": 0, "d": 4, "tricks": [1, 4], "attacker_tricks": 4, "attacker_won": True, "winner": 1,
               "promise": True, "conquest": False, "save": False, "points": [0, 5]}
SCORED = {"confirmation": ("score", ROUND_SUMMARY), "aegis": ("game_end", DEAL_RESULT)}
WRONG_SCORES = {
    "confirmation": {"a revised hit paid as confirmed": ("points", [24, 26, -3, -9]),
                     "a miss not counted": ("points", [24, 13, 0, -9]),
                     "a bid in force that is not the last phase's": ("final_bids", [2, 4, 1, 5])},
    "aegis": {"no promise bonus": ("points", [0, 4]), "a save where d_master is 3": ("save", True),
              "the deal given to the defender": ("winner", 0)},
}


@pytest.mark.parametrize("game", sorted(SCORED))
def test_the_checker_scores_by_the_rule_book(game):
    kind, data = SCORED[game]
    assert check_event(game, {"kind": kind, "data": data}, typed=False) == []
    for key, value in WRONG_SCORES[game].values():
        assert check_event(game, {"kind": kind, "data": {**data, key: value}}, typed=False) != [], (key, value)


# ---------------------------------------------------------------- the bot in a sandboxed tournament

TOURNAMENT = """\
[tournament]
game = "{game}"
deal_sets = {deal_sets}
seed = 26
concurrency = 2
output = "out-{game}"
{options}
[limits]
sandbox = "bwrap"

[[bots]]
name = "docs_only"
command = ["python", "stdio_bot.py"]
cwd = "{bot_dir}"
protocol = "stdio"

[[bots]]
name = "random"
command = ["python", "-m", "sample_bots.random", "--seed", "1"]
cwd = "{root}"
files = ["sample_bots"]

[[bots]]
name = "docs_grpc"
command = ["python", "grpc_bot.py"]
cwd = "{bot_dir}"
"""


@pytest.fixture(scope="module")
def tournaments(tmp_path_factory):
    """Each game's tournament, played once: {game: (its standings JSON, {docs bot: its log})}."""
    require_sandbox()
    where = tmp_path_factory.mktemp("docs_only")
    played = {}
    for game, options in GAMES.items():
        path = where / f"{game}.toml"
        path.write_text(TOURNAMENT.format(game=game, deal_sets=DEAL_SETS[game], options=options, bot_dir=BOT_DIR,
                                          root=ROOT), encoding="utf-8")
        run = subprocess.run([str(REFEREE), "tournament", str(path), "--quiet"], capture_output=True,
                             text=True, timeout=120)
        assert run.returncode == 0, run.stdout + run.stderr
        out = where / f"out-{game}"
        ratings = subprocess.run([str(REFEREE), "ratings", str(out), "--format", "json"], capture_output=True,
                                 text=True, timeout=60, check=True)
        logs = {bot: (out / "logs" / f"{bot}.log").read_text(encoding="utf-8") for bot in DOCS_BOTS}
        played[game] = json.loads(ratings.stdout), logs
    return played


CASES = [(game, bot) for game in sorted(GAMES) for bot in DOCS_BOTS]


@pytest.mark.e2e
@pytest.mark.parametrize("game,bot", CASES)
def test_the_docs_only_bots_play_without_a_fault(tournaments, game, bot):
    standings, logs = tournaments[game]
    row = next(row for row in standings["standings"] if row["name"] == bot)
    assert row["matches"] == {"aegis": 4, "confirmation": 12}[game] * DEAL_SETS[game]  # all of its schedule
    assert row["faults"] == dict.fromkeys(FAULTS, 0)
    assert "substituted:" not in logs[bot] and "Traceback" not in logs[bot]


@pytest.mark.e2e
@pytest.mark.parametrize("game,bot", CASES)
def test_the_docs_only_bots_score_more_than_random(tournaments, game, bot):
    standings, _ = tournaments[game]
    against_random = standings["head_to_head"][bot]["random"]
    assert against_random["score_pct"] > 50, against_random
    rows = {row["name"]: row for row in standings["standings"]}
    assert rows[bot]["mean_points"] > rows["random"]["mean_points"]


@pytest.mark.e2e
@pytest.mark.parametrize("game,bot", CASES)
def test_what_the_referee_sends_is_what_the_docs_say(tournaments, game, bot):
    lines = tournaments[game][1][bot].splitlines()
    assert [line for line in lines if line.startswith("MISMATCH")] == []
    checked = [line for line in lines if line.startswith("checked ")]
    seats = [line for line in lines if line.startswith("--- match ") and ": ends (" in line]
    assert len(checked) == len(seats) > 0  # every seat of every match ended and was checked
    for line in checked:
        assert "; 0 mismatch(es);" in line and not line.split(": ", 1)[1].startswith("0 observation"), line
