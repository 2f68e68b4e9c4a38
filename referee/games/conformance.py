"""The contract every game keeps, as one check a game's author can run (as PettingZoo's ``api_test``).

::

    from referee.games import GAMES
    from referee.games.conformance import check_game

    check_game(GAMES["aegis"])        # a Conformance summary, or ConformanceError

:func:`check_game` plays random matches of a game (its ``GameSpec``) and checks, at every decision,
the state machine's contract (``referee/games/base.py``, docs/games.md): who acts, their legal
actions and the notation, refusals, the views (JSON, what a seat may not see, simultaneous choices
hidden), then at the end the results, determinism, the replay from the decks, and the traits the
rest of the referee calls. :data:`RULES` lists the rules. The first rule broken raises
:class:`ConformanceError`, an ``AssertionError`` (any test runner reports it as a failed test),
naming the game, the options, the seed, the decision and the rule, with what was seen.

Pure like the games: no I/O, nothing from outside ``referee/games`` but ``referee.cards``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from referee import cards
from referee.games.base import (
    PUBLIC,
    ActionSyntaxError,
    GameSpec,
    GameState,
    IllegalActionError,
    NotYourTurnError,
    Option,
    OptionError,
)

#: each rule of the contract, by the name a :class:`ConformanceError` gives it
RULES: dict[str, str] = {
    "options": "an unknown option raises OptionError; every default passes its own check",
    "syntax": "text that spells no action raises ActionSyntaxError",
    "seats": "a state has the spec's num_seats; to_act() is ascending seats, without repeats, () only when terminal",
    "legal": "a seat to act has legal actions, ascending and without repeats; a seat not to act has none",
    "notation": "parse_action(action_name(a)) == a for every legal action, the spec's and the state's alike; "
                "action_names agrees with action_name",
    "illegal": "an action outside the legal list raises IllegalActionError with a rule and a reason, "
               "and changes nothing",
    "not-your-turn": "a seat not to act is refused with NotYourTurnError, and nothing changes",
    "applies": "every legal action is accepted, and recorded in state.actions",
    "json": "observations are JSON (the same after a JSON round trip); event data and results can be written as JSON",
    "hidden": "a seat's view (observation, visible events, legal actions) is the same wherever the cards "
              "hidden from it lie",
    "hidden-cards": "spec.hidden_cards names cards (0..51) whose place some seat's view depends on",
    "simultaneous": "in a simultaneous decision a seat's choice is hidden from the seats still to choose",
    "ends": "a match ends within max_decisions decisions",
    "terminal": "a finished match has no seat to act, no legal action, and refuses every action",
    "events": "an event is public or to one seat; a seat's visible events are the public ones and its own",
    "results": "results() holds scores() and placing(), one per seat, someone placed first",
    "determinism": "the same seed and the same actions give the same decks, events and results",
    "replay": "a match replayed from its decks, drawn suits and actions gives the same events and results",
    "traits": "render_log, render_results, table_view, typed and seat_groups take every match and give "
              "what they promise",
    "raises": "the game raises nothing but its documented errors",
}

#: text no game should take for an action
NOT_ACTIONS = ("", "nonsense", "ZZ", "1X")


class ConformanceError(AssertionError):
    """A rule of the contract broken: ``rule`` (a key of :data:`RULES`), where (``game``, ``options``,
    ``seed``, ``decision``: the number of decisions made before it) and what was seen."""

    def __init__(self, rule: str, message: str, game: str, options: Mapping[str, Any] | None = None,
                 seed: int | None = None, decision: int | None = None):
        self.rule, self.detail, self.game = rule, message, game
        self.options, self.seed, self.decision = options, seed, decision
        where = [game]
        if options is not None:
            where.append(f"options {json.dumps(options, sort_keys=True, default=repr)}")
        if seed is not None:
            where.append(f"seed {seed}")
        if decision is not None:
            where.append(f"decision {decision}")
        super().__init__(f"{', '.join(where)}: {message} [rule {rule!r}: {RULES[rule]}]")


@dataclass
class Conformance:
    """What :func:`check_game` checked."""

    game: str
    matches: int = 0
    decisions: int = 0
    #: hidden-card swaps replayed and compared, and those that changed some other seat's view
    hidden_checked: int = 0
    hidden_changed: int = 0
    #: simultaneous choices checked hidden from the seats still to choose
    simultaneous_checked: int = 0


def check_game(spec: GameSpec, *, seeds: Iterable[int] = range(2), options: Sequence[Mapping[str, Any]] | None = None,
               views: float = 0.1, max_decisions: int = 100_000) -> Conformance:
    """Check that ``spec``'s game keeps the contract (:data:`RULES`); raise :class:`ConformanceError` if not.

    Every option set (default: :func:`option_sets`) is played once per seed, by uniformly random
    legal actions drawn from ``random.Random(seed)``; at a share ``views`` of the decisions (drawn
    likewise), each seat's view is checked against two of its hidden cards swapped."""
    report = Conformance(spec.name)
    _check_spec(spec)
    for opts in option_sets(spec) if options is None else options:
        _check_options(spec, opts)
        _check_seat_groups(spec, opts)
        for seed in seeds:
            _Playout(spec, dict(opts), seed, views, max_decisions, report).run()
    if report.hidden_checked and not report.hidden_changed:
        raise ConformanceError("hidden-cards", f"no swap of two cards spec.hidden_cards named changed any seat's "
                                               f"view in {report.matches} matches: are they the deal's cards?",
                               spec.name)
    return report


def option_sets(spec: GameSpec) -> list[dict[str, Any]]:
    """The defaults; then each option moved off its default, one at a time (each other choice, the
    other boolean, an integer's minimum), with the integer options at their minimum (short matches);
    then every option moved at once."""
    defaults = {key: option.default for key, option in spec.options.items()}
    shortest = {key: o.minimum for key, o in spec.options.items() if type(o.default) is int and o.minimum is not None}
    moved = {key: _other_values(option, shortest.get(key)) for key, option in spec.options.items()}
    sets: list[dict[str, Any]] = [{}]
    for key, values in moved.items():
        sets += [{**shortest, key: value} for value in values]
    sets.append({**shortest, **{key: values[0] for key, values in moved.items() if values}})
    unique: list[dict[str, Any]] = []
    for options in sets:
        if options not in unique and (not options or options != {k: defaults[k] for k in options}):
            unique.append(options)
    return unique


def _other_values(option: Option, shortest: int | None) -> tuple[Any, ...]:
    if type(option.default) is bool:
        return (not option.default,)
    if option.choices is not None:
        return tuple(c for c in option.choices if c != option.default)
    return (shortest,) if shortest is not None and shortest != option.default else ()


# --- the spec: options, notation of non-actions, seat groups ------------------------------------


def _fail(spec: GameSpec, rule: str, message: str) -> NoReturn:
    raise ConformanceError(rule, message, spec.name)


def _check_spec(spec: GameSpec) -> None:
    try:
        spec.check_options({"no such option": 1})
    except OptionError:
        pass
    else:
        _fail(spec, "options", "check_options accepted an option named 'no such option'")
    defaults = {key: option.default for key, option in spec.options.items()}
    if spec.check_options({}) != defaults:
        _fail(spec, "options", f"check_options({{}}) gave {spec.check_options({})}, not the defaults {defaults}")
    for key, option in spec.options.items():
        try:
            option.check(key, option.default)
        except OptionError as err:
            _fail(spec, "options", f"the default of option {key!r} fails its own check: {err}")
    for text in NOT_ACTIONS:
        try:
            action = spec.parse_action(text)
        except ActionSyntaxError:
            continue
        _fail(spec, "syntax", f"parse_action({text!r}) gave {action!r} instead of raising ActionSyntaxError")


def _check_options(spec: GameSpec, options: Mapping[str, Any]) -> None:
    try:
        spec.check_options(options)
    except OptionError as err:
        raise ConformanceError("options", f"an option set to play is refused: {err}", spec.name, options) from err


def _check_seat_groups(spec: GameSpec, options: Mapping[str, Any]) -> None:
    """Line-ups of one bot more than the seats, as a schedule asks (also with a rule that keeps no bots apart)."""
    bots = [f"bot{i}" for i in range(spec.num_seats + 1)]
    for apart in (None, lambda group: True):
        try:
            groups, note = spec.seat_groups(bots, options, 100) if apart is None else \
                spec.seat_groups(bots, options, 100, apart=apart)
        except Exception as err:
            raise ConformanceError("traits", f"seat_groups({bots}) raised {err!r}", spec.name, options) from err
        if not groups or not isinstance(note, str):
            _fail(spec, "traits", f"seat_groups({bots}) gave no line-up, or no sentence: {groups!r}, {note!r}")
        for group in groups:
            if len(group) != spec.num_seats or not set(group) <= set(bots):
                _fail(spec, "traits", f"seat_groups({bots}) gave {group!r}: not {spec.num_seats} of the bots")


# --- one match ------------------------------------------------------------------------------------


def _json_equal(value: Any) -> bool:
    try:
        return bool(json.loads(json.dumps(value)) == value)
    except (TypeError, ValueError):
        return False


def _json_text(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def _first_difference(a: Any, b: Any) -> str:
    """Where two views differ (a key of an observation), for the message."""
    if isinstance(a, dict) and isinstance(b, dict):
        keys = [k for k in sorted(set(a) | set(b), key=str) if a.get(k) != b.get(k)]
        if keys:
            return f"at {keys[0]!r}: {a.get(keys[0])!r} against {b.get(keys[0])!r}"
    return f"{a!r} against {b!r}"


def _view(state: GameState, seat: int) -> tuple[dict[str, Any], list[Any], list[int]]:
    """All a seat is given: its observation, the events it sees, its legal actions."""
    return state.observation(seat), state.visible_events(seat), state.legal_actions(seat)


def _changed(state: GameState) -> tuple[int, int, int]:
    return len(state.events), len(state.actions), len(state.to_act())


def _swap_names(text: str, x: int, y: int) -> str:
    """An action's notation with cards x and y exchanged, where it names them (``AS``, ``EXCHANGE 2C 5H``)."""
    names = {cards.NAMES[x]: cards.NAMES[y], cards.NAMES[y]: cards.NAMES[x]}
    return " ".join(names.get(word.upper(), word) for word in text.split(" "))


class _Playout:
    """One random match, checked decision by decision."""

    def __init__(self, spec: GameSpec, options: dict[str, Any], seed: int, views: float, max_decisions: int,
                 report: Conformance):
        self.spec, self.options, self.seed = spec, options, seed
        self.views, self.max_decisions, self.report = views, max_decisions, report
        self.rng = random.Random(seed)
        self.decision = 0
        self.deal_start = 0  # the index in state.actions of the deal in play's first action
        self.decks_seen = 0

    def fail(self, rule: str, message: str) -> NoReturn:
        raise ConformanceError(rule, message, self.spec.name, self.options, self.seed, self.decision)

    def run(self) -> None:
        try:
            state = self.spec.new(self.options, seed=self.seed)
            self.play(state)
            self.check_end(state)
            self.check_determinism(state)
            self.check_traits(state)
        except ConformanceError:
            raise
        except Exception as err:  # noqa: BLE001 (whatever the game raises is reported, with where)
            self.fail("raises", f"the game raised {type(err).__name__}: {err}")
        self.report.matches += 1
        self.report.decisions += self.decision

    # --- each decision ------------------------------------------------------------------------

    def play(self, state: GameState) -> None:
        n = state.num_seats
        if n != self.spec.num_seats:
            self.fail("seats", f"the state has {n} seats, the spec {self.spec.num_seats}")
        while seats := self.check_turn(state):
            if self.decision >= self.max_decisions:
                self.fail("ends", f"the match has not ended after {self.decision} decisions")
            if len(state.shoe.decks) != self.decks_seen:
                self.decks_seen, self.deal_start = len(state.shoe.decks), len(state.actions)
            if self.rng.random() < self.views:
                self.check_hidden(state)
            seat = self.rng.choice(seats)
            legal = state.legal_actions(seat)
            self.check_refusals(state, seat, seats, legal)
            action = self.rng.choice(legal)
            before = {b: _view(state, b) for b in seats if b != seat}
            self.apply(state, seat, action)
            if before and state.to_act():
                self.check_simultaneous(state, seat, action, legal, before)
            self.decision += 1

    def check_turn(self, state: GameState) -> tuple[int, ...]:
        """Who acts, their legal actions and their names, every seat's observation; the seats to act."""
        n = state.num_seats
        seats = state.to_act()
        if list(seats) != sorted(set(seats)) or not set(seats) <= set(range(n)):
            self.fail("seats", f"to_act() gave {seats!r}: not ascending seats 0..{n - 1} without repeats")
        if state.is_terminal() != (not seats):
            self.fail("terminal", f"is_terminal() is {state.is_terminal()} while to_act() is {seats!r}")
        for seat in range(n) if seats else ():  # a finished match: check_end
            legal = state.legal_actions(seat)
            if seat not in seats:
                if legal:
                    self.fail("legal", f"seat {seat} is not to act {seats!r} but has legal actions {legal[:8]!r}")
                continue
            if not legal:
                self.fail("legal", f"seat {seat} must act but has no legal action")
            if legal != sorted(set(legal)):
                self.fail("legal", f"seat {seat}'s legal actions are not ascending without repeats: {legal!r}")
            self.check_names(state, legal)
        typed = self.spec.typed
        for seat in range(n):
            obs = state.observation(seat)
            if not _json_equal(obs):
                self.fail("json", f"seat {seat}'s observation is not the same after a JSON round trip: {obs!r}")
            if typed is not None and not isinstance(typed.observation(obs), dict):
                self.fail("traits", f"typed.observation of seat {seat}'s observation is not a dict")
        return seats

    def check_names(self, state: GameState, legal: list[int]) -> None:
        try:
            names = [state.action_name(a) for a in legal]
            backs = [(state.parse_action(name), self.spec.parse_action(name), self.spec.action_name(a))
                     for a, name in zip(legal, names)]
        except ActionSyntaxError as err:
            self.fail("notation", f"the legal actions {legal[:8]!r}... are not named and parsed back: {err}")
        for a, name, back in zip(legal, names, backs):
            if back != (a, a, name):
                self.fail("notation", f"action {a!r} is named {name!r}, which parses back to {back[0]!r} "
                                      f"(the spec's: {back[1]!r}, named {back[2]!r})")
        if state.action_names(legal) != names:
            self.fail("notation", f"action_names({legal!r}) gave {state.action_names(legal)!r}, not {names!r}")

    def check_refusals(self, state: GameState, seat: int, seats: Sequence[int], legal: list[int]) -> None:
        """An action outside the legal list, and a seat not to act, are refused and change nothing."""
        bad = self.rng.choice([a for a in range(100) if a not in legal] + [-1])
        before = (state.observation(seat), _changed(state))
        try:
            state.apply(seat, bad)
        except IllegalActionError as err:
            if not (err.rule and err.reason):
                self.fail("illegal", f"seat {seat}'s illegal action {bad!r} was refused without a rule and a reason")
        else:
            self.fail("illegal", f"seat {seat} played {bad!r}, not among its legal actions {legal[:8]!r}, "
                                 f"and it was accepted")
        if (state.observation(seat), _changed(state)) != before:
            self.fail("illegal", f"seat {seat}'s refused action {bad!r} changed the state")
        idle = [s for s in range(state.num_seats) if s not in seats]
        if idle:
            try:
                state.apply(idle[0], legal[0])
            except NotYourTurnError:
                pass
            except IllegalActionError as err:
                self.fail("not-your-turn", f"seat {idle[0]}, not to act, was refused with {type(err).__name__} "
                                           f"({err}), not NotYourTurnError")
            else:
                self.fail("not-your-turn", f"seat {idle[0]}, not to act {tuple(seats)!r}, played {legal[0]!r}")
            if (state.observation(seat), _changed(state)) != before:
                self.fail("not-your-turn", f"seat {idle[0]}'s refused action changed the state")

    def apply(self, state: GameState, seat: int, action: int) -> None:
        count = len(state.actions)
        try:
            state.apply(seat, action)
        except IllegalActionError as err:
            self.fail("applies", f"seat {seat}'s legal action {action!r} ({state.action_name(action)}) "
                                 f"was refused: {err}")
        if len(state.actions) != count + 1 or state.actions[-1] != (seat, action):
            self.fail("applies", f"seat {seat}'s action {action!r} is not the last of state.actions "
                                 f"({state.actions[-3:]!r})")

    # --- what a seat may see ---------------------------------------------------------------------

    def replay(self, state: GameState, decks: Sequence[Sequence[int]], actions: Iterable[tuple[int, int]],
               options: Mapping[str, Any] | None = None) -> GameState:
        """A match from ``decks`` (and the state's drawn suits) with ``actions`` applied; IllegalActionError
        when one is refused."""
        twin = self.spec.new(self.options if options is None else options, decks=decks, suits=state.shoe.suits)
        for seat, action in actions:
            twin.apply(seat, action)
        return twin

    def check_hidden(self, state: GameState) -> None:
        """Two cards hidden from a seat (of one suit, so that play stays legal) swap places in the deal in
        play, and in the actions of this deal that name them: the view of every seat both are hidden
        from must not change."""
        n = state.num_seats
        hidden = [set(self.hidden_of(state, seat)) for seat in range(n)]
        seat = self.rng.randrange(n)
        by_suit: dict[int, list[int]] = {}
        for c in sorted(hidden[seat]):
            by_suit.setdefault(cards.SUIT[c], []).append(c)
        pairs = [same for same in by_suit.values() if len(same) >= 2]
        if not pairs:
            return
        x, y = self.rng.sample(self.rng.choice(pairs), 2)
        decks = [list(d) for d in state.shoe.decks]
        deal = decks[-1]
        i, j = deal.index(x), deal.index(y)
        deal[i], deal[j] = y, x
        actions = [(s, a if k < self.deal_start else state.parse_action(_swap_names(state.action_name(a), x, y)))
                   for k, (s, a) in enumerate(state.actions)]
        try:
            twin = self.replay(state, decks, actions)
        except (IllegalActionError, ActionSyntaxError):
            return  # the swap changed what was legal (a game of ranks): not a world a seat must mistake
        self.report.hidden_checked += 1
        blind = [t for t in range(n) if {x, y} <= hidden[t]]
        for t in blind:
            mine, theirs = _view(state, t), _view(twin, t)
            if mine != theirs:
                if _view(self.replay(state, state.shoe.decks, state.actions), t) != mine:
                    self.fail("replay", f"seat {t}'s view differs in the match replayed from its decks and actions")
                part = next(k for k in range(3) if mine[k] != theirs[k])
                what = ("observation", "visible events", "legal actions")[part]
                self.fail("hidden", f"seat {t}'s {what} changed when {cards.NAMES[x]} and {cards.NAMES[y]}, hidden "
                                    f"from it (spec.hidden_cards), swap places: "
                                    f"{_first_difference(mine[part], theirs[part])}")
        if any(state.observation(t) != twin.observation(t) for t in range(n) if t not in blind):
            self.report.hidden_changed += 1

    def hidden_of(self, state: GameState, seat: int) -> list[int]:
        hidden = list(self.spec.hidden_cards(state, seat))
        if any(not (type(c) is int and 0 <= c < 52) for c in hidden):
            self.fail("hidden-cards", f"spec.hidden_cards(state, {seat}) gave {hidden!r}: not cards 0..51")
        return hidden

    def check_simultaneous(self, state: GameState, seat: int, action: int, legal: list[int],
                           before: Mapping[int, tuple[Any, ...]]) -> None:
        """``seat`` just chose ``action`` in a simultaneous decision: the seats still to choose see the same
        as before it, and the same as had it chosen otherwise."""
        waiting = [b for b in before if b in state.to_act()]
        others = [a for a in legal if a != action]
        if not waiting or not others:
            return
        alternative = self.rng.choice(others)
        twin = self.replay(state, state.shoe.decks, [*state.actions[:-1], (seat, alternative)])
        self.report.simultaneous_checked += 1
        for b in waiting:
            now = _view(state, b)
            for what, view in (("before it chose", before[b]), (f"had it chosen {alternative!r}", _view(twin, b))):
                if view != now:
                    part = next(k for k in range(3) if view[k] != now[k])
                    self.fail("simultaneous", f"seat {b}, still to choose, sees seat {seat}'s choice {action!r} "
                                              f"({state.action_name(action)}): its view differs from {what}, "
                                              f"{_first_difference(now[part], view[part])}")

    # --- the end --------------------------------------------------------------------------------

    def check_end(self, state: GameState) -> None:
        n = state.num_seats
        before = _changed(state)
        for seat in range(n):
            if state.legal_actions(seat):
                self.fail("terminal", f"the match is over but seat {seat} has legal actions "
                                      f"{state.legal_actions(seat)[:8]!r}")
            for action in {0, state.actions[-1][1] if state.actions else 0}:
                try:
                    state.apply(seat, action)
                except IllegalActionError:
                    pass
                else:
                    self.fail("terminal", f"the match is over but seat {seat}'s action {action!r} was accepted")
        if _changed(state) != before:
            self.fail("terminal", "an action refused after the end changed the state")
        for k, e in enumerate(state.events):
            if not (e.to == PUBLIC or 0 <= e.to < n) or not (e.seat is None or 0 <= e.seat < n):
                self.fail("events", f"event {k} ({e.kind}) names seat {e.seat!r}, to {e.to!r}: not a seat 0..{n - 1}")
            if not _json_text(e.data):
                self.fail("json", f"event {k} ({e.kind})'s data is not JSON: {e.data!r}")
        for seat in range(n):
            if state.visible_events(seat) != [e for e in state.events if e.to in (PUBLIC, seat)]:
                self.fail("events", f"seat {seat}'s visible events are not the public events and its own")
        self.check_results(state)

    def check_results(self, state: GameState) -> None:
        n = state.num_seats
        results, scores, placing = state.results(), state.scores(), state.placing()
        if not _json_text(results):
            self.fail("json", f"results() is not JSON: {results!r}")
        if results.get("scores") != scores or results.get("placing") != placing:
            self.fail("results", f"results() holds scores {results.get('scores')!r} and placing "
                                 f"{results.get('placing')!r}, not scores() {scores!r} and placing() {placing!r}")
        if len(scores) != n or len(placing) != n or min(placing) != 1 or not set(placing) <= set(range(1, n + 1)):
            self.fail("results", f"scores {scores!r} and placing {placing!r}: not one per seat, someone first")

    def check_determinism(self, state: GameState) -> None:
        """The same seed and actions play the same match; so do its decks and drawn suits."""
        twin = self.spec.new(self.options, seed=self.seed)
        try:
            for k, (seat, action) in enumerate(state.actions):  # noqa: B007 (k: named in the failure)
                twin.apply(seat, action)
        except IllegalActionError as err:
            self.fail("determinism", f"with the same seed, action {k} of the match ({seat}, {action!r}) is refused: "
                                     f"{err}")
        same = (twin.shoe.decks, twin.shoe.suits, twin.events, twin.results())
        if same != (state.shoe.decks, state.shoe.suits, state.events, state.results()):
            self.fail("determinism", "the same seed and actions gave other decks, suits, events or results")
        try:
            replayed = self.replay(state, state.shoe.decks, state.actions)
        except IllegalActionError as err:
            self.fail("replay", f"the match replayed from its decks refused an action: {err}")
        if not replayed.is_terminal() or (replayed.events, replayed.results()) != (state.events, state.results()):
            self.fail("replay", "the match replayed from its decks, suits and actions gave other events or results")

    def check_traits(self, state: GameState) -> None:
        """What the rest of the referee asks of the game, on this match: its log, its results, its table as
        each viewer sees it, its typed messages."""
        spec, n = self.spec, state.num_seats
        seats = [f"seat{s}" for s in range(n)]
        results = state.results()
        for name, lines in (("render_log", lambda: list(spec.render_log(state.events, seats))),
                            ("render_results", lambda: list(spec.render_results(results, seats)))):
            got = self.trait(name, lines)
            if not all(isinstance(line, str) for line in got):
                self.fail("traits", f"{name} gave a line that is not text: {got!r}")
        for viewer in [None, *range(n)]:
            self.check_table_view(state, seats, viewer)
        typed = spec.typed
        if typed is not None:
            for e in state.events:
                if not isinstance(self.trait("typed.event", lambda e=e: typed.event(e.kind, e.data)), dict):
                    self.fail("traits", f"typed.event of a {e.kind!r} event is not a dict")
            if not isinstance(self.trait("typed.results", lambda: typed.results(results)), dict):
                self.fail("traits", "typed.results is not a dict")

    def check_table_view(self, state: GameState, seats: list[str], viewer: int | None) -> None:
        view = self.trait("table_view", lambda: self.spec.table_view(seats, self.options))
        who = "the referee" if viewer is None else f"seat {viewer}"
        events = state.events if viewer is None else state.visible_events(viewer)
        for k, e in enumerate(events):
            self.trait("table_view", lambda e=e: view.feed(e))
            line = self.trait("table_view", lambda e=e: view.describe(e))
            if not (line is None or isinstance(line, str)):
                self.fail("traits", f"the table view of {who} described a {e.kind!r} event as {line!r}")
            if k == len(events) - 1 or self.rng.random() < self.views:
                frame = self.trait("table_view", view.frame)
                if not _json_equal(frame):
                    self.fail("traits", f"the table view of {who}, fed a {e.kind!r} event, gave a frame that is "
                                        f"not JSON: {frame!r}")
        if not _json_equal(self.trait("table_view", view.score_table)):
            self.fail("traits", f"the table view of {who} gave a score table that is not JSON")

    def trait(self, name: str, call: Any) -> Any:
        try:
            return call()
        except Exception as err:  # noqa: BLE001 (whatever a trait raises is reported, with where)
            self.fail("traits", f"{name} raised {type(err).__name__}: {err}")


__all__ = ["RULES", "Conformance", "ConformanceError", "check_game", "option_sets"]
