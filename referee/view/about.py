"""What a published page says about its tournament: the title and description the file gives,
the game and its options, the seed once released (and while no record is held), the clock, the
sandbox and isolation, the dates of the first and last match, and every entry with its version
and status.

Read from a results directory's store (:func:`about_of`): its ``config`` (the file's settings),
its ``meta`` (what the run used: sandbox, isolation; whether the seed is released) and its
matches (the dates). The report and the live page show it in the same block
(:func:`about_html`). Everything that comes from a file or a bot is escaped."""

from __future__ import annotations

import html
import time
from dataclasses import dataclass, field
from typing import Any

from referee import games
from referee.model import EntryStatus, Isolation
from referee.report import format_options
from referee.results import release
from referee.results.store import Entry, MetaKey, Store
from referee.view.page import scroll

#: how the pages show an entry's status ("playing": it is in the tournament)
STATUS_WORDS = {EntryStatus.PLAYING: "entered"}
#: what each isolation means, in the pages' words
ISOLATION_WORDS: dict[str, str] = {
    Isolation.MATCH: "a fresh process of each bot for every match, nothing kept between matches",
    Isolation.TOURNAMENT: "each bot one long-lived process for the whole run"}


@dataclass(frozen=True)
class About:
    title: str
    description: str | None
    game: str  # the game's title
    options: dict[str, Any]
    seed: str | None  # as the pages say it: the number, or why it is not shown
    clock: str | None
    sandbox: str | None
    isolation: str | None
    dates: tuple[float, float] | None  # the first match's start, the last one's end (Unix times)
    entries: list[Entry] = field(default_factory=list)
    format: str | None = None  # a gauntlet's or an SPRT's line-up


def about_of(store: Store, name: str) -> About:
    """What the store says about its tournament; ``name`` (the directory's) titles it when the
    file gave no title: "Aegis tournament: NAME"."""
    config = store.config()
    spec = games.get(config["game"])
    kind, form = "tournament", None
    if "gauntlet" in config:
        kind, form = "gauntlet", f"the candidate {config['gauntlet']['candidate']} against every other entry"
    elif "sprt" in config:
        kind, form = "SPRT", f"{config['sprt']['candidate']} (candidate) against {config['sprt']['baseline']}"
    isolation = store.meta(MetaKey.ISOLATION)
    held, released = release.held_in(store), store.seed_released()
    return About(
        title=config.get("title") or f"{spec.title} {kind}: {name}",
        description=config.get("description"),
        game=spec.title,
        options=config.get("options", {}),
        seed=seed_text(config, released, held.reason() if held and (released or held.waiting) else None,
                       store.deal_sets_dealt()),
        clock=_clock(config.get("clock")),
        sandbox=public_sandbox(store.meta(MetaKey.SANDBOX)),
        isolation=f"{isolation}: {ISOLATION_WORDS[isolation]}" if isolation in ISOLATION_WORDS else isolation,
        dates=store.dates(),
        entries=store.entries(),
        format=form,
    )


def public_sandbox(line: str | None) -> str | None:
    """What a public page says of the sandbox: what contained the bots, in a sentence. The run's
    own line (stored in ``meta``, printed to the organiser) says how each limit holds on this
    host (cgroups, tmpfs sizes, inode counts): the organiser's detail, not the public's."""
    if not line:
        return None
    line = line.removeprefix("sandbox: ")
    if line.startswith("bwrap"):
        return ("bubblewrap: each bot in namespaces of its own, with no network but its door to the referee, "
                "and limits on its memory, processes, CPU time and files")
    if line.startswith("none"):
        return "none: the bots ran as the organiser's user, unconfined"
    return line.split(";", 1)[0]


def seed_text(config: dict[str, Any], released: bool, held: str | None = None, dealt: int | None = None) -> str | None:
    """The master seed as a page may show it: a given one always; a drawn one only once released
    (until then it would tell every deal still to be played), and not while records are ``held``
    (why they are: it deals their deal sets too). Of the later seeds, those that dealt one of the
    ``dealt`` deal sets (None: all): one that dealt none yet is the next deal sets' secret."""
    if "seed" not in config:
        return None
    drawn = config.get("seed_drawn")
    if drawn is False:
        return f"{config['seed']} (given in the tournament file: anyone who knows it can compute every deal)"
    if drawn is None:
        return "not shown (this results directory does not say whether it was given or drawn)"
    if held:
        return f"drawn from the system's entropy; not shown while records are {held}"
    if released:
        later = "".join(f"; deal sets from {first} on: {seed} (drawn when they were added, after the first was "
                        f"released)" for first, seed in config.get("later_seeds", [])
                        if dealt is None or first < dealt)
        return f"{config['seed']} (drawn from the system's entropy, released when the run ended){later}"
    return "drawn from the system's entropy; secret until the run ends"


def _clock(clock: dict[str, int] | None) -> str | None:
    if not clock:
        return None
    return f"{clock['decision_ms']} ms per decision, and a bank of {clock['bank_ms']} ms per seat per match"


def when(t: float) -> str:
    """A moment as the pages print it: UTC, to the minute."""
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(t))


def _time(t: float) -> str:
    iso = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
    return f'<time datetime="{iso}">{when(t)}</time>'


def description_html(text: str | None) -> str:
    """The description as paragraphs (a blank line parts two), every character escaped."""
    if not text:
        return ""
    paragraphs = [p.strip() for p in text.replace("\r\n", "\n").split("\n\n") if p.strip()]
    return "".join(f"<p>{html.escape(p)}</p>" for p in paragraphs)


def about_html(about: About, logs: dict[str, str] | None = None) -> str:
    """The block the report and the live page show; ``logs`` (bot -> the address of its log's
    page) links each entry's log, when the organiser publishes them."""
    facts = [("game", f"{about.game}; options: {format_options(about.options) or 'the defaults'}")]
    if about.format:
        facts.append(("line-up", about.format))
    facts += [(label, value) for label, value in (("seed", about.seed), ("clock", about.clock),
                                                  ("sandbox", about.sandbox), ("isolation", about.isolation))
              if value]
    rows = "".join(f'<tr data-fact="{label}"><th class="l">{label}</th><td class="l">{html.escape(value)}</td></tr>'
                   for label, value in facts)
    if about.dates is not None:
        first, last = about.dates
        rows += (f'<tr data-fact="played"><th class="l">played</th><td class="l">from {_time(first)} '
                 f'to {_time(last)}</td></tr>')
    return (f'<section id="about">{description_html(about.description)}'
            + f'<table class="facts" id="facts"><tbody>{rows}</tbody></table>'
            + f'<h2>Entries</h2>{entries_table(about.entries, logs or {})}</section>')


def entries_table(entries: list[Entry], logs: dict[str, str]) -> str:
    body = []
    for e in entries:
        status = STATUS_WORDS.get(e.status, e.status) + (f": {e.why}" if e.why else "")
        log = f' <a class="log" href="{html.escape(logs[e.name])}">log</a>' if e.name in logs else ""
        body.append(f'<tr data-entry="{html.escape(e.name)}" data-status="{html.escape(e.status)}">'
                    f'<td class="l">{html.escape(e.name)}{log}</td>'
                    f'<td class="l"><code>{html.escape(e.version or "-")}</code></td>'
                    f'<td class="l">{html.escape(status)}</td></tr>')
    return scroll('<table class="grid" id="entries"><thead><tr><th class="l">entry</th>'
                  '<th class="l">version</th><th class="l">status</th></tr></thead>'
                  f"<tbody>{''.join(body)}</tbody></table>")

