"""The contract every registered game keeps, checked by the importable check a game's author runs
(``referee/games/conformance.py``, as PettingZoo's ``api_test``); and the check itself, on games
broken on purpose: each wraps a real game and breaks one rule, and the check must name that rule."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import random
import re
from pathlib import Path
from typing import Any

import pytest

from referee.games import GAMES
from referee.games.base import PUBLIC, GameSpec, GameState, IllegalActionError, Option, Shoe, TypedForm
from referee.games.conformance import RULES, ConformanceError, check_game, option_sets
from referee.games.view import TableView

GAME_NAMES = sorted(GAMES)


# --- every registered game ----------------------------------------------------------------------


@pytest.mark.parametrize("game", GAME_NAMES)
def test_every_game_keeps_the_contract(game):
    spec = GAMES[game]
    report = check_game(spec)
    assert report.matches == 2 * len(option_sets(spec))
    # the view check is not idle: swaps replayed and compared, some of them changing a holder's view
    assert report.hidden_checked >= 20 and report.hidden_changed >= 10, report


@pytest.mark.slow
@pytest.mark.parametrize("game", GAME_NAMES)
def test_every_game_keeps_the_contract_over_many_matches(game):
    report = check_game(GAMES[game], seeds=range(100, 106), views=0.3)
    assert report.hidden_checked > 200 and report.hidden_changed > 50, report


def test_option_sets_move_each_option():
    assert option_sets(GAMES["confirmation"]) == [
        {}, {"rounds": 1}, {"rounds": 1, "trump": "random-suit"}, {"rounds": 1, "double": True},
        {"rounds": 1, "blind": True}, {"rounds": 1, "pairs": True},
        {"rounds": 1, "trump": "random-suit", "double": True, "blind": True, "pairs": True}]
    assert option_sets(GAMES["aegis"]) == [{}, {"promise": "4plus"}]


def test_a_decision_for_several_seats_is_simultaneous():
    """RULES 1.6: the confirm phase asks all four seats at once, and the check sees it."""
    state = GAMES["confirmation"].new({"rounds": 1}, seed=5)
    while len(state.to_act()) == 1:
        seat = state.to_act()[0]
        state.apply(seat, state.legal_actions(seat)[0])
    assert state.to_act() == (0, 1, 2, 3)
    assert check_game(GAMES["confirmation"], seeds=[5], options=[{"rounds": 1}]).simultaneous_checked == 3


# --- games broken on purpose ----------------------------------------------------------------------


class Proxy(GameState):
    """A real game's state, passed through; each broken game below changes one thing."""

    def __init__(self, inner: GameState):
        self.inner = inner
        self.num_seats = inner.num_seats

    options = property(lambda self: self.inner.options)
    shoe = property(lambda self: self.inner.shoe)
    events = property(lambda self: self.inner.events)
    actions = property(lambda self: self.inner.actions)

    def to_act(self):
        return self.inner.to_act()

    def is_terminal(self):
        return self.inner.is_terminal()

    def legal_actions(self, seat):
        return self.inner.legal_actions(seat)

    def apply(self, seat, action):
        self.inner.apply(seat, action)

    def observation(self, seat):
        return self.inner.observation(seat)

    def visible_events(self, seat, start=0):
        return self.inner.visible_events(seat, start)

    def scores(self):
        return self.inner.scores()

    def placing(self):
        return self.inner.placing()

    def results(self):
        return self.inner.results()

    def action_name(self, action):
        return self.inner.action_name(action)

    def action_names(self, actions):
        return self.inner.action_names(actions)

    def parse_action(self, text):
        return self.inner.parse_action(text)


def broken(spec: GameSpec, proxy: type[Proxy] = Proxy, **changes: Any) -> GameSpec:
    """``spec`` with its states wrapped in ``proxy`` and the given traits replaced."""
    changes = {"hidden_cards": lambda state, seat: spec.hidden_cards(state.inner, seat), **changes}
    return dataclasses.replace(spec, new_match=lambda options, shoe: proxy(spec.new_match(options, shoe)), **changes)


class RepeatsASeat(Proxy):
    def to_act(self):
        seats = self.inner.to_act()
        return seats + seats[:1]


class OneSeatMore(Proxy):
    def __init__(self, inner):
        super().__init__(inner)
        self.num_seats = inner.num_seats + 1


class IgnoresWrongTurn(Proxy):
    def apply(self, seat, action):
        if seat in self.inner.to_act():
            self.inner.apply(seat, action)


class WrongTurnChangesTheState(Proxy):
    def apply(self, seat, action):
        if seat not in self.inner.to_act() and not self.inner.is_terminal():
            self.inner.events.append(self.inner.events[-1])
        self.inner.apply(seat, action)


class LegalWhenNotToAct(Proxy):
    def legal_actions(self, seat):
        seats = self.inner.to_act()
        return self.inner.legal_actions(seats[0]) if seats else []


class LegalDescending(Proxy):
    def legal_actions(self, seat):
        return sorted(self.inner.legal_actions(seat), reverse=True)


class NoLegalAction(Proxy):
    def legal_actions(self, seat):
        return [] if len(self.inner.actions) == 9 else self.inner.legal_actions(seat)


class FastNamesDisagree(Proxy):
    def action_names(self, actions):
        return [self.inner.action_name(a) for a in actions][::-1]


class UnparsableName(Proxy):
    def action_name(self, action):
        return self.inner.action_name(action) + "!"


class AcceptsAnything(Proxy):
    """An action outside the legal list is taken as the first legal one."""

    def apply(self, seat, action):
        legal = self.inner.legal_actions(seat)
        self.inner.apply(seat, action if action in legal or not legal else legal[0])


class RefusedWithoutARule(Proxy):
    def apply(self, seat, action):
        if action not in self.inner.legal_actions(seat):
            raise IllegalActionError("", "")
        self.inner.apply(seat, action)


class RefusalChangesTheState(Proxy):
    def apply(self, seat, action):
        try:
            self.inner.apply(seat, action)
        except IllegalActionError:
            self.inner.events.append(self.inner.events[-1])
            raise


class WrongTurnIsIllegal(Proxy):
    """A seat not to act is refused, but not with NotYourTurnError."""

    def apply(self, seat, action):
        if seat not in self.inner.to_act():
            raise IllegalActionError("1", f"seat {seat} is not to act")
        self.inner.apply(seat, action)


class OffersAnIllegalCard(Proxy):
    """The legal list names, in its place, a card the seat does not hold (or may not play)."""

    def legal_actions(self, seat):
        legal = self.inner.legal_actions(seat)
        extra = [c for c in range(52) if c not in legal and c > (legal[0] if legal else 52)][:1]
        return sorted(legal + extra) if legal and legal[0] < 52 else legal


class ForgetsActions(Proxy):
    actions = property(lambda self: self.inner.actions[:-1])


class ObservationHasATuple(Proxy):
    def observation(self, seat):
        return {**self.inner.observation(seat), "seats": tuple(range(self.num_seats))}


class EventDataIsASet(Proxy):
    events = property(lambda self: [e._replace(data={e.kind}) for e in self.inner.events])

    def visible_events(self, seat, start=0):
        return [e for e in self.events[start:] if e.to in (PUBLIC, seat)]


class PeeksAtTheNextHand(Proxy):
    """A view that leaks a hidden card: the next seat's hand."""

    def observation(self, seat):
        return {**self.inner.observation(seat), "peek": self.inner.observation((seat + 1) % self.num_seats)["hand"]}


class ShowsAllEvents(Proxy):
    def visible_events(self, seat, start=0):
        return self.inner.events[start:]


class ShowsTheChoicesSoFar(Proxy):
    """A simultaneous decision whose choices so far are in everyone's observation."""

    def __init__(self, inner):
        super().__init__(inner)
        self.chosen = []

    def apply(self, seat, action):
        several = len(self.inner.to_act()) > 1
        self.inner.apply(seat, action)
        self.chosen = [*self.chosen, action] if several else []

    def observation(self, seat):
        return {**self.inner.observation(seat), "chosen": self.chosen}


class ActsAfterTheEnd(Proxy):
    def legal_actions(self, seat):
        return [0] if self.inner.is_terminal() else self.inner.legal_actions(seat)


class AcceptsAfterTheEnd(Proxy):
    def apply(self, seat, action):
        if not self.inner.is_terminal():
            self.inner.apply(seat, action)


class RefusalAfterTheEndChangesTheState(Proxy):
    def apply(self, seat, action):
        if self.inner.is_terminal():
            self.inner.events.append(self.inner.events[-1])
        self.inner.apply(seat, action)


class EndsEarly(Proxy):
    def is_terminal(self):
        return len(self.inner.actions) > 5 or self.inner.is_terminal()


class PrivateEventToNoSeat(Proxy):
    events = property(lambda self: [e if e.to == PUBLIC else e._replace(to=self.num_seats)
                                    for e in self.inner.events])


class ResultsDisagree(Proxy):
    def results(self):
        return {**self.inner.results(), "scores": self.inner.scores()[::-1] + [0]}


class NoOneFirst(Proxy):
    def placing(self):
        return [p + 1 for p in self.inner.placing()]

    def results(self):
        return {**self.inner.results(), "placing": self.placing()}


class ObservationNamesTheSeed(Proxy):
    def observation(self, seat):
        return {**self.inner.observation(seat), "seed": self.inner.shoe.seed}


class ResultsNotJson(Proxy):
    def results(self):
        return {**self.inner.results(), "winners": {0}}


class ResultsNameTheSeed(Proxy):
    def results(self):
        return {**self.inner.results(), "seed": self.inner.shoe.seed}


class RandomEvents(Proxy):
    """A game that draws from the system's randomness, not from its shoe."""

    def apply(self, seat, action):
        self.inner.apply(seat, action)
        if self.inner.is_terminal():
            self.inner.events.append(self.inner.events[-1]._replace(data=random.random()))


class CrashesMidway(Proxy):
    def apply(self, seat, action):
        if len(self.inner.actions) == 7:
            raise KeyError("a bug in the rules")
        self.inner.apply(seat, action)


class ExplodingView(TableView):
    def feed(self, event):
        if event.kind == "trick":
            raise KeyError(event.kind)


class NumberedView(TableView):
    def describe(self, event):
        return 1


class TupleFrame(TableView):
    def frame(self):
        return {**super().frame(), "seats": ("a", "b")}


class SetScores(TableView):
    def score_table(self):
        return {"rows": {1}}


@dataclasses.dataclass(frozen=True)
class LaxSpec(GameSpec):
    """A spec whose options take anything."""

    def check_options(self, given):
        return {key: option.default for key, option in self.options.items()}


@dataclasses.dataclass(frozen=True)
class ForgetsDefaults(GameSpec):
    """A spec whose checked options lack the defaults."""

    def check_options(self, given):
        return dict(super().check_options(given), **{key: None for key in self.options if key not in (given or {})})


def unreplayable(spec: GameSpec):
    """``new_match`` that shuffles from the system when given deck orders to replay."""
    return lambda options, shoe: spec.new_match(options, Shoe(None) if shoe.seed is None else shoe)


def typed_with(**changes: Any) -> TypedForm:
    return dataclasses.replace(GAMES["aegis"].typed, **changes)


def unseeded(spec: GameSpec):
    """``new_match`` that shuffles from the system whatever seed it is given."""
    return lambda options, shoe: spec.new_match(options, Shoe(None) if shoe.seed is not None else shoe)


def stock_only(state, seat):
    game = state.inner.current
    return list(game.stock[game.drawn:])


AEGIS, CONFIRMATION = GAMES["aegis"], GAMES["confirmation"]
SHORT = {"options": [{"rounds": 1}]}  # one-round Confirmation matches: a rule broken at the end shows sooner

#: (the game broken, the rule it breaks, what the message says, check_game's arguments)
BROKEN = [
    pytest.param(dataclasses.replace(AEGIS, options={**AEGIS.options, "bad": Option(0, "x", minimum=1)}),
                 "options", "the default of option 'bad' fails its own check", {}, id="option-default"),
    pytest.param(LaxSpec(**{f.name: getattr(AEGIS, f.name) for f in dataclasses.fields(AEGIS)}),
                 "options", "accepted an option named 'no such option'", {}, id="unknown-option"),
    pytest.param(ForgetsDefaults(**{f.name: getattr(AEGIS, f.name) for f in dataclasses.fields(AEGIS)}),
                 "options", "not the defaults", {}, id="no-defaults"),
    pytest.param(AEGIS, "options", "an option set to play is refused", {"options": [{"promise": "never"}]},
                 id="bad-option-set"),
    pytest.param(dataclasses.replace(AEGIS, parse_action=lambda t: 0 if t == "nonsense" else AEGIS.parse_action(t)),
                 "syntax", "parse_action('nonsense') gave 0", {}, id="parses-nonsense"),
    pytest.param(broken(AEGIS, OneSeatMore), "seats", "the state has 3 seats, the spec 2", {}, id="seats"),
    pytest.param(broken(AEGIS, RepeatsASeat), "seats", "to_act() gave (", {}, id="seat-twice"),
    pytest.param(broken(CONFIRMATION, LegalWhenNotToAct), "legal", "is not to act", {}, id="legal-not-to-act"),
    pytest.param(broken(AEGIS, LegalDescending), "legal", "not ascending", {}, id="legal-descending"),
    pytest.param(broken(AEGIS, NoLegalAction), "legal", "must act but has no legal action", {}, id="no-legal"),
    pytest.param(broken(AEGIS, FastNamesDisagree), "notation", "action_names(", {}, id="fast-names"),
    pytest.param(broken(CONFIRMATION, UnparsableName), "notation", "not named and parsed back", {}, id="unparsable"),
    pytest.param(dataclasses.replace(AEGIS, action_name=lambda a: "PASS"), "notation", "the spec's", {},
                 id="spec-names"),
    pytest.param(broken(CONFIRMATION, AcceptsAnything), "illegal", "and it was accepted", {}, id="accepts-illegal"),
    pytest.param(broken(AEGIS, RefusedWithoutARule), "illegal", "without a rule and a reason", {}, id="no-rule"),
    pytest.param(broken(AEGIS, RefusalChangesTheState), "illegal", "changed the state", {}, id="refusal-changes"),
    pytest.param(broken(AEGIS, WrongTurnIsIllegal), "not-your-turn", "not NotYourTurnError", {}, id="wrong-turn"),
    pytest.param(broken(AEGIS, IgnoresWrongTurn), "not-your-turn", "not to act (", {}, id="wrong-turn-ignored"),
    pytest.param(broken(AEGIS, WrongTurnChangesTheState), "not-your-turn", "refused action changed the state", {},
                 id="wrong-turn-changes"),
    pytest.param(broken(CONFIRMATION, OffersAnIllegalCard), "applies", "was refused", {}, id="illegal-offered"),
    pytest.param(broken(AEGIS, ForgetsActions), "applies", "is not the last of state.actions", {}, id="unrecorded"),
    pytest.param(broken(AEGIS, ObservationHasATuple), "json", "JSON round trip", {}, id="observation-tuple"),
    pytest.param(broken(AEGIS, EventDataIsASet), "json", "data is not JSON", {}, id="event-set"),
    pytest.param(broken(AEGIS, PeeksAtTheNextHand), "hidden", "observation changed when", {}, id="peek-aegis"),
    pytest.param(broken(CONFIRMATION, PeeksAtTheNextHand), "hidden", "observation changed when", {},
                 id="peek-confirmation"),
    pytest.param(broken(CONFIRMATION, ShowsAllEvents), "hidden", "visible events changed when", {},
                 id="all-events"),
    pytest.param(broken(AEGIS, hidden_cards=lambda state, seat: [52]), "hidden-cards", "not cards 0..51", {},
                 id="not-cards"),
    pytest.param(broken(AEGIS, hidden_cards=stock_only), "hidden-cards", "changed any seat's view", {},
                 id="cards-no-one-sees"),
    pytest.param(broken(CONFIRMATION, ShowsTheChoicesSoFar), "simultaneous", "still to choose, sees seat", SHORT,
                 id="choices-shown"),
    pytest.param(AEGIS, "ends", "has not ended after 10 decisions", {"max_decisions": 10}, id="too-long"),
    pytest.param(broken(AEGIS, ActsAfterTheEnd), "terminal", "the match is over but seat 0 has legal actions", {},
                 id="acts-after-end"),
    pytest.param(broken(AEGIS, AcceptsAfterTheEnd), "terminal", "the match is over but seat 0's action", {},
                 id="accepts-after-end"),
    pytest.param(broken(AEGIS, RefusalAfterTheEndChangesTheState), "terminal",
                 "an action refused after the end changed the state", {}, id="end-refusal-changes"),
    pytest.param(broken(AEGIS, EndsEarly), "terminal", "is_terminal() is True while to_act()", {},
                 id="terminal-too-soon"),
    pytest.param(broken(AEGIS, PrivateEventToNoSeat), "events", "to 2: not a seat 0..1", {}, id="event-to-nobody"),
    pytest.param(broken(AEGIS, ShowsAllEvents, hidden_cards=lambda state, seat: []), "events",
                 "visible events are not the public events and its own", {}, id="visible-events"),
    pytest.param(broken(AEGIS, ResultsDisagree), "results", "not scores() [", {}, id="results-scores"),
    pytest.param(broken(AEGIS, ResultsNotJson), "json", "results() is not JSON", {}, id="results-set"),
    pytest.param(broken(AEGIS, NoOneFirst), "results", "someone first", {}, id="no-one-first"),
    pytest.param(dataclasses.replace(AEGIS, new_match=unseeded(AEGIS)), "determinism",
                 "with the same seed, action", {}, id="unseeded"),
    pytest.param(broken(CONFIRMATION, RandomEvents), "determinism", "gave other decks, suits, events", SHORT,
                 id="random-events"),
    pytest.param(broken(CONFIRMATION, ObservationNamesTheSeed), "replay", "view differs in the match replayed",
                 SHORT, id="observation-seed"),
    pytest.param(dataclasses.replace(AEGIS, new_match=unreplayable(AEGIS)), "replay", "refused an action", {},
                 id="unreplayable"),
    pytest.param(broken(CONFIRMATION, ResultsNameTheSeed), "replay", "replayed from its decks", SHORT,
                 id="results-seed"),
    pytest.param(broken(AEGIS, table_view=ExplodingView), "traits", "table_view raised KeyError", {},
                 id="view-raises"),
    pytest.param(dataclasses.replace(AEGIS, render_results=lambda results, seats: [1]), "traits",
                 "render_results gave a line that is not text", {}, id="results-not-text"),
    pytest.param(dataclasses.replace(AEGIS, seat_groups=lambda bots, options, most, apart=None: ([tuple(bots)], "")),
                 "traits", "not 2 of the bots", {}, id="seat-groups"),
    pytest.param(dataclasses.replace(AEGIS, typed=typed_with(observation=lambda o: [])),
                 "traits", "typed.observation", {}, id="typed-observation"),
    pytest.param(dataclasses.replace(AEGIS, typed=typed_with(event=lambda kind, data: [])),
                 "traits", "typed.event of a", {}, id="typed-event"),
    pytest.param(dataclasses.replace(AEGIS, typed=typed_with(results=lambda r: [])),
                 "traits", "typed.results is not a dict", {}, id="typed-results"),
    pytest.param(dataclasses.replace(AEGIS, table_view=NumberedView), "traits", "event as 1", {},
                 id="view-describes"),
    pytest.param(dataclasses.replace(AEGIS, table_view=TupleFrame), "traits", "gave a frame that is not JSON", {},
                 id="view-frame"),
    pytest.param(dataclasses.replace(AEGIS, table_view=SetScores), "traits", "score table that is not JSON", {},
                 id="view-scores"),
    pytest.param(dataclasses.replace(AEGIS, seat_groups=lambda bots, options, most: AEGIS.seat_groups(bots, options,
                                                                                                      most)),
                 "traits", "seat_groups(['bot0', 'bot1', 'bot2']) raised TypeError", {}, id="seat-groups-raises"),
    pytest.param(dataclasses.replace(AEGIS, seat_groups=lambda bots, options, most, apart=None: ([], "")),
                 "traits", "gave no line-up", {}, id="no-line-up"),
    pytest.param(broken(AEGIS, CrashesMidway), "raises", "raised KeyError: 'a bug in the rules'", {}, id="crash"),
]


@pytest.mark.parametrize("spec, rule, says, arguments", BROKEN)
def test_the_check_names_the_rule_a_broken_game_breaks(spec, rule, says, arguments):
    with pytest.raises(ConformanceError) as caught:
        check_game(spec, **arguments)
    err = caught.value
    assert err.rule == rule, str(err)
    assert says in str(err), str(err)
    message = str(err)
    assert message.startswith(f"{spec.name}") and f"[rule {rule!r}: {RULES[rule]}]" in message
    if err.seed is not None:  # a rule of a match: where it was broken, for the author to play it again
        assert f"seed {err.seed}" in message and f"decision {err.decision}" in message and "options {" in message


def test_every_rule_has_a_broken_game():
    assert {p.values[1] for p in BROKEN} == set(RULES)


def test_a_conformance_error_fails_any_test_runner():
    assert issubclass(ConformanceError, AssertionError)


# --- docs/games.md -----------------------------------------------------------------------------

GAMES_MD = Path(__file__).resolve().parent.parent / "docs" / "games.md"


def test_the_documented_example_runs_and_prints_what_the_doc_says():
    text = GAMES_MD.read_text()
    [example] = [block for block in re.findall(r"```python\n(.*?)```", text, re.DOTALL) if "check_game" in block]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(example, {})  # noqa: S102 (the doc's own example, as a reader runs it)
    assert f"`{out.getvalue().strip()}`" in text


def test_the_documented_failure_is_the_checks_own():
    with pytest.raises(ConformanceError) as caught:
        check_game(broken(AEGIS, PeeksAtTheNextHand))
    assert f"```text\n{caught.value}\n```" in GAMES_MD.read_text()


def test_every_rule_is_documented():
    documented = re.findall(r"^\| `([a-z-]+)` \| ", GAMES_MD.read_text().split("## Checking a game")[1], re.MULTILINE)
    assert documented == list(RULES)
