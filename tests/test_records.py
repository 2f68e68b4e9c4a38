"""Game records: write, read, replay, and the rejection of bad records (docs/records.md)."""

from __future__ import annotations

import copy
import itertools
import json
import random
import re
from pathlib import Path

import pytest
from harness import ROOT
from helpers import random_playout
from hypothesis import given, settings
from hypothesis import strategies as st

from referee import records
from referee.games import GAMES
from referee.records import IllegalRecordActionError, RecordError, RecordFileError, ResultsMismatchError

FIXTURES = Path(__file__).resolve().parent / "records"

OPTION_SETS = [
    ("confirmation", {}),
    ("confirmation", {"rounds": 2, "trump": "random-suit"}),
    ("confirmation", {"rounds": 2, "double": True, "blind": True}),
    ("confirmation", {"rounds": 1, "pairs": True, "double": True, "trump": "random-suit"}),
    ("aegis", {}),
    ("aegis", {"promise": "4plus"}),
]


def finished(game: str, options: dict, seed: int):
    state = GAMES[game].new(options, seed=seed)
    random_playout(state, random.Random(seed))
    return state


def record_of(game: str, options: dict, seed: int, **kw) -> dict:
    return records.to_record(finished(game, options, seed), **kw)


def through_json(record: dict) -> dict:
    return records.loads(records.dumps(record))


def replay_error(record: dict) -> RecordError:
    with pytest.raises(RecordError) as info:
        records.replay(record)
    return info.value


# --- round trips ----------------------------------------------------------------


@pytest.mark.parametrize("game, options", OPTION_SETS)
@pytest.mark.parametrize("seed", [1, 2])
def test_round_trip(game, options, seed, tmp_path):
    state = finished(game, options, seed)
    record = records.to_record(state)
    path = tmp_path / "game.json"
    records.write(path, record)
    back = records.read(path)
    assert back == json.loads(json.dumps(record))
    rep = records.replay(back)
    assert rep.finished
    assert rep.results == json.loads(json.dumps(state.results()))
    assert rep.state.scores() == state.scores()
    assert [(s, a) for s, a in rep.state.actions] == state.actions
    # the record lists every option and one deck per deal
    assert set(record["options"]) == set(GAMES[game].options)
    assert all(len(d.split()) == 52 for d in record["decks"])
    if options.get("trump") == "random-suit":
        assert len(record["suits"]) == options["rounds"]
    else:
        assert "suits" not in record


@pytest.mark.parametrize("game", sorted(GAMES))
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_round_trip_any_seed(game, seed):
    options = {"rounds": 1} if game == "confirmation" else {}
    state = finished(game, options, seed)
    rep = records.replay(through_json(records.to_record(state)))
    assert rep.results == json.loads(json.dumps(state.results()))


def test_written_record_shape():
    record = record_of("confirmation", {"rounds": 1}, 5, seats=["a", "b", "c", "d"])
    assert list(record) == ["format", "version", "game", "options", "seed", "seats", "decks", "actions", "results"]
    assert record["format"] == "referee-record" and record["version"] == 1
    assert record["seats"] == ["a", "b", "c", "d"]
    assert len(record["actions"]) == 60
    assert all(isinstance(s, int) and isinstance(a, str) for s, a in record["actions"])
    text = records.dumps(record)
    assert '\n    [1, "BID ' in text  # one action per line
    with pytest.raises(ValueError):
        record_of("confirmation", {"rounds": 1}, 5, seats=["a", "b"])


def test_results_omitted_is_valid():
    record = record_of("confirmation", {"rounds": 1}, 3)
    del record["results"]
    record["meta"] = {"tournament": "spring", "table": 3}  # free-form, ignored
    assert records.replay(record).results["scores"] == record_of("confirmation", {"rounds": 1}, 3)["results"]["scores"]


def test_minimal_record_options_default_and_seed_only():
    record = record_of("confirmation", {"rounds": 1}, 4)
    minimal = {k: record[k] for k in ("format", "version", "game", "decks", "actions")}
    minimal["options"] = {"rounds": 1}
    assert records.replay(minimal).results == record["results"]
    seed_only = dict(minimal)
    del seed_only["decks"]
    seed_only["seed"] = 4
    assert records.replay(seed_only).results == record["results"]


def test_deck_as_list_of_names_and_lower_case_actions():
    record = record_of("confirmation", {"rounds": 1}, 6)
    record["decks"] = [d.split() for d in record["decks"]]
    record["actions"] = [[s, a.lower()] for s, a in record["actions"]]
    assert records.replay(record).results == record["results"]


def _confirm_phase_starts(record: dict) -> list[int]:
    acts = record["actions"]
    return [i for i in range(len(acts) - 3)
            if all(re.match(r"CONFIRM|REVISE", acts[j][1]) for j in range(i, i + 4))
            and (i == 0 or not re.match(r"CONFIRM|REVISE", acts[i - 1][1]))]


def test_confirmation_phase_in_any_order():
    record = record_of("confirmation", {"rounds": 1}, 8)
    (start,) = _confirm_phase_starts(record)
    block = record["actions"][start:start + 4]
    for order in itertools.permutations(block):
        changed = copy.deepcopy(record)
        changed["actions"][start:start + 4] = [list(a) for a in order]
        assert records.replay(changed).results == record["results"]


def test_confirmation_phases_shuffled_double_pairs():
    record = record_of("confirmation", {"rounds": 2, "double": True, "pairs": True}, 9)
    starts = _confirm_phase_starts(record)
    assert len(starts) == 4
    rng = random.Random(0)
    for start in starts:
        block = record["actions"][start:start + 4]
        rng.shuffle(block)
        record["actions"][start:start + 4] = block
    assert records.replay(record).results == record_of("confirmation", {"rounds": 2, "double": True,
                                                                        "pairs": True}, 9)["results"]


# --- illegal actions, each rejected with its rule ---------------------------------


def _step_to(record: dict, predicate):
    """Replay ``record`` action by action; the first index where predicate(state, seat, text) holds."""
    parsed = records.parse(record)
    state = parsed.spec.new(parsed.options, decks=parsed.decks, suits=parsed.suits or [])
    for i, (seat, text) in enumerate(record["actions"]):
        found = predicate(state, seat, text)
        if found is not None:
            return i, found
        state.apply_name(seat, text)
    raise AssertionError("no such point in the record")


def _truncated(record: dict, index: int, action: str) -> dict:
    """The record up to ``index`` with that action replaced (and no results)."""
    bad = copy.deepcopy(record)
    bad["actions"] = bad["actions"][:index + 1]
    bad["actions"][index][1] = action
    bad.pop("results", None)
    return bad


def test_dealer_may_not_bid_the_total_of_13():
    for seed in range(40):
        record = record_of("confirmation", {"rounds": 1}, seed)
        bids = [int(a.split()[1]) for _, a in record["actions"][:3]]
        if sum(bids) <= 13:
            break
    else:
        pytest.fail("no deal where the dealer has a forbidden bid")
    bad = copy.deepcopy(record)
    bad["actions"][3][1] = f"BID {13 - sum(bids)}"
    err = replay_error(bad)
    assert isinstance(err, IllegalRecordActionError)
    assert (err.index, err.seat, err.action, err.rule) == (3, 0, f"BID {13 - sum(bids)}", "1.4")
    assert err.error.rule == "1.4"
    assert str(err).startswith(f'action #3 (seat 0, "BID {13 - sum(bids)}"): the dealer may not bid')
    assert str(err).endswith("(rule 1.4)")


def test_revoke_is_rejected():
    record = record_of("confirmation", {"rounds": 1}, 11)

    def revoke(state, seat, text):
        obs = state.observation(seat)
        if obs["phase"] != "play" or not obs["trick"]:
            return None
        legal = {state.action_name(a) for a in state.legal_actions(seat)}
        off_suit = [c for c in obs["hand"] if c not in legal]  # the hand is in notation, like the actions
        return off_suit[0] if off_suit else None

    index, card = _step_to(record, revoke)
    err = replay_error(_truncated(record, index, card))
    assert isinstance(err, IllegalRecordActionError)
    assert (err.index, err.action, err.rule) == (index, card, "1.5")
    assert "follow suit" in err.reason


def _aegis_master_declares(predicate):
    for seed in range(200):
        record = record_of("aegis", {}, seed)

        def at_declaration(state, seat, text):
            obs = state.observation(seat)
            if obs["phase"] == "declare" and obs["d_master"] is None and predicate(obs):
                return obs
            return None

        try:
            return record, *_step_to(record, at_declaration)
        except AssertionError:
            continue
    raise AssertionError("no suitable aegis match")


def test_aegis_fifth_exchange_is_rejected():
    record, index, obs = _aegis_master_declares(lambda obs: obs["e"] == 4)
    card = obs["hand"][0]  # in notation
    action = f"EXCHANGE {card}"
    err = replay_error(_truncated(record, index, action))
    assert isinstance(err, IllegalRecordActionError)
    assert (err.index, err.action, err.rule) == (index, action, "2.4")


def test_aegis_declaration_below_e_plus_1_is_rejected():
    record, index, obs = _aegis_master_declares(lambda obs: obs["e"] >= 1)
    action = f"DECLARE {obs['e']}"
    err = replay_error(_truncated(record, index, action))
    assert isinstance(err, IllegalRecordActionError)
    assert (err.index, err.action, err.rule) == (index, action, "2.5")


# --- the fixture files ------------------------------------------------------------

#: every file in tests/records/ and what replaying it must give: None = valid,
#: else (index of the illegal action, rule)
FIXTURE_VERDICTS = {
    "confirmation_one_round.json": None,
    "confirmation_dealer_bid.json": (3, "1.4"),
    "confirmation_revoke.json": (17, "1.5"),
    "aegis_fifth_exchange.json": (8, "2.4"),
    "aegis_low_declaration.json": (3, "2.5"),
}


def test_every_fixture_has_a_verdict():
    assert sorted(p.name for p in FIXTURES.glob("*.json")) == sorted(FIXTURE_VERDICTS)


@pytest.mark.parametrize("name", sorted(FIXTURE_VERDICTS))
def test_fixture(name):
    record = records.read(FIXTURES / name)
    verdict = FIXTURE_VERDICTS[name]
    if verdict is None:
        assert records.replay(record).finished
    else:
        err = replay_error(record)
        assert isinstance(err, IllegalRecordActionError)
        assert (err.index, err.rule) == verdict


def test_doc_example_replays_valid():
    text = (ROOT / "docs" / "records.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```json\n(.*?)```", text, re.S)
    assert len(blocks) == 1
    record = records.loads(blocks[0], "docs/records.md")
    assert record["options"] == {**record["options"], "rounds": 1}
    assert len(record["actions"]) == 60
    rep = records.replay(record)
    assert rep.finished and rep.results == record["results"]
    assert record == records.read(FIXTURES / "confirmation_one_round.json")


# --- structure errors -------------------------------------------------------------


@pytest.fixture
def good() -> dict:
    return records.read(FIXTURES / "confirmation_one_round.json")


@pytest.mark.parametrize("change, message", [
    (lambda r: r.pop("actions"), "missing field 'actions'"),
    (lambda r: r.pop("game"), "missing field 'game'"),
    (lambda r: r.update(format="other"), "format:"),
    (lambda r: r.update(version=2), "version:"),
    (lambda r: r.update(game="bridge"), "game: unknown game 'bridge'"),
    (lambda r: r["options"].update(jokers=True), "options: confirmation has no option 'jokers'"),
    (lambda r: r["options"].update(rounds=0), "options: option 'rounds' must be at least 1"),
    (lambda r: r.update(extra=1), "unknown field 'extra'"),
    (lambda r: r.update(seed="x"), "seed:"),
    (lambda r: r.update(seats=["a", "b"]), "seats: confirmation has 4 seats"),
    (lambda r: r["decks"].__setitem__(0, r["decks"][0].replace("2C", "AS")), "decks[0]: "),
    (lambda r: r["decks"].__setitem__(0, r["decks"][0].replace("2C", "ZZ")), "decks[0]: not a card: 'ZZ'"),
    (lambda r: r["decks"].__setitem__(0, 7), "decks[0]:"),
    (lambda r: r.update(decks=[]), "decks: the record holds 0 deck order(s)"),
    (lambda r: (r.pop("decks"), r.pop("seed")), "the record needs decks"),
    (lambda r: r.update(suits=["X"]), "suits[0]: not a suit"),
    (lambda r: r["actions"].__setitem__(5, [1]), "actions[5]: expected [seat, \"ACTION\"]"),
    (lambda r: r["actions"].__setitem__(5, [7, "AS"]), "actions[5]: there is no seat 7"),
    (lambda r: r["actions"].__setitem__(5, [1, "BID 99"]), "actions[5]: not a Confirmation action"),
    (lambda r: r.update(actions="BID 3"), "actions: expected a list"),
    (lambda r: r.update(results=[1]), "results: expected an object"),
])
def test_structure_errors(good, change, message):
    change(good)
    err = replay_error(good)
    assert type(err) is RecordError
    assert message in str(err)


def test_repeated_card_names_the_deck_and_card(good):
    good["decks"][0] = good["decks"][0].replace("2C", "AS")
    message = str(replay_error(good))
    assert message.startswith("decks[0]: ") and "repeated AS" in message and "missing 2C" in message


def test_record_that_stops_early(good):
    good["actions"] = good["actions"][:-1]
    del good["results"]
    message = str(replay_error(good))
    assert message == "the record ends before the game is over: seat(s) 3 still to act"
    rep = records.replay(good, allow_unfinished=True)
    assert not rep.finished and rep.results is None and rep.state.to_act() == (3,)


def test_unfinished_state_records_without_results():
    state = GAMES["confirmation"].new({"rounds": 1}, seed=2)
    for _ in range(10):
        seat = state.to_act()[0]
        state.apply(seat, state.legal_actions(seat)[0])
    record = records.to_record(state)
    assert "results" not in record and len(record["actions"]) == 10
    assert "still to act" in str(replay_error(record))


def test_action_after_the_end(good):
    good["actions"].append([0, "AS"])
    assert "the game is over after action #59" in str(replay_error(good))


def test_unused_deck(good):
    good["decks"].append(good["decks"][0])
    assert str(replay_error(good)) == "decks: the record holds 2 deck order(s) but the game used only 1"


def test_unused_suit():
    record = record_of("confirmation", {"rounds": 1, "trump": "random-suit"}, 3)
    record["suits"].append("S")
    assert "suits: the record holds 2 suit(s)" in str(replay_error(record))
    record["suits"] = []
    assert str(replay_error(record)).startswith("suits: the record holds 0 drawn suit(s)")


# --- stated results --------------------------------------------------------------


def test_results_mismatch_names_the_key(good):
    good["results"]["scores"][2] += 1
    err = replay_error(good)
    assert isinstance(err, ResultsMismatchError)
    assert err.key == "results.scores[2]"
    assert err.stated == err.computed + 1
    assert str(err) == (f"results mismatch at results.scores[2]: the record states {err.stated}, "
                        f"the replay gives {err.computed}")
    assert err.replay.results["scores"][2] == err.computed


def test_results_mismatch_deep_and_partial(good):
    good["results"] = {"rounds": [{"tricks": [0, 0, 0, 0]}]}
    err = replay_error(good)
    assert isinstance(err, ResultsMismatchError) and err.key == "results.rounds[0].tricks[0]"
    good["results"] = {"scores": [26, -5, -4, -2]}
    assert records.replay(good).results["scores"] == [26, -5, -4, -2]
    good["results"] = {"winner": 1}
    err = replay_error(good)
    assert err.key == "results.winner" and err.computed is records.MISSING
    assert "the replay gives (nothing)" in str(err)


def test_results_bool_is_not_int():
    record = record_of("aegis", {}, 1)
    record["results"]["games"][0]["attacker_won"] = int(record["results"]["games"][0]["attacker_won"])
    assert replay_error(record).key == "results.games[0].attacker_won"


# --- reading files ----------------------------------------------------------------


def test_bad_json_names_file_and_line(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{\n  "format": "referee-record",\n  "version": 1,,\n}\n')
    with pytest.raises(RecordFileError) as info:
        records.read(path)
    assert str(info.value).startswith(f"{path}: line 3, column")
    assert "not valid JSON" in str(info.value)


def test_unreadable_files(tmp_path):
    with pytest.raises(RecordFileError, match="cannot read .*missing.json"):
        records.read(tmp_path / "missing.json")
    (tmp_path / "bin.json").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(RecordFileError, match="not UTF-8"):
        records.read(tmp_path / "bin.json")
    (tmp_path / "list.json").write_text("[1, 2]")
    with pytest.raises(RecordError, match="a record is a JSON object, got a list") as info:
        records.read(tmp_path / "list.json")
    assert not isinstance(info.value, RecordFileError)
