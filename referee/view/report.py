"""The tournament report: standings with Elo intervals, head to head, the collusion check (the pairs
of entries flagged for review: :mod:`referee.results.collusion`), seat bias, points per bot,
and every match with its replay. One ``index.html`` and a ``replays/`` folder, all self-contained.

A report is published, entrants read it: it holds back the record of every deal set an entry
still to play may play (:func:`referee.results.release.held_in`). Such a match is listed with
its results (public) but without a replay, saying why and what releases it; a replay an earlier
report wrote of it is removed; and with ``--logs``, the lines of its match are left out of the
bots' logs (under ``isolation = "tournament"``, where a process's lines outside its matches may
tell what it saw in any of them, the logs are held whole).

The standings are those of ``referee ratings`` (the same :func:`referee.results.standings.compute`
on the same stored matches, the same ``--anchor`` and ``--bootstrap``); the numbers are read from
its values, never from printed text."""

from __future__ import annotations

import html
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

from referee import files, games
from referee.model import Isolation
from referee.results import collusion as tcollusion
from referee.results import history as thistory
from referee.results import release
from referee.results import standings as tstandings
from referee.results.store import MatchRow, MetaKey, Store, StoreError
from referee.stats.collusion import Collusion
from referee.view import logs
from referee.view.about import About, about_html, about_of
from referee.view.page import page, replay_page, scroll

REPLAYS = "replays"


def replay_file(key: str) -> str:
    """The file name of a match's replay in ``replays/``: its id made safe for a path and an address,
    one name per id (``3:alice|bob`` -> ``3_alice,bob.html``: a bot's name holds no ``,``, and the
    first ``_`` after the deal set's digits is the ``:``; anything else is written ``~HEX~``)."""
    safe = {":": "_", "|": ","}
    return "".join(c if re.fullmatch(r"[A-Za-z0-9_.+-]", c) else safe.get(c) or f"~{ord(c):x}~" for c in key) + ".html"


def _f(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def write_report(directory: str | Path, out: str | Path | None = None, anchor: tuple[str, float] | None = None,
                 bootstrap: int = 1000, publish_logs: bool = False,
                 notice: Callable[[str], None] | None = None) -> Path:
    """Write the report of the results in ``directory`` (to ``out``, by default ``directory/report``);
    returns the path of its ``index.html``. With ``publish_logs``, the bots' logs too (``logs/``, each
    replay linking its seats' lines); without, the log pages an earlier report wrote are removed.
    ``notice`` is told, in a line each, what the report holds back. Raises StoreError for a
    directory without results."""
    store = Store(directory, create=False)
    try:
        rows = list(store.matches())
        if not rows:
            raise StoreError(f"{directory}: no finished matches yet")
        st = tstandings.of_store(store, rows, anchor=anchor, bootstrap=bootstrap)
        histories = thistory.of_store(store)
        about = about_of(store, Path(directory).name)
        held = release.held_in(store)
        held_keys = {r.key: r.deal_set for r in store.matches(every=True) if held.holds(r.deal_set)}
        logs_held = bool(held_keys) and store.meta(MetaKey.ISOLATION) != Isolation.MATCH
        out = Path(out) if out is not None else Path(directory) / "report"
        try:  # each page is written whole or not at all (a full disk: exit 6, the store untouched)
            files.make_directory(out / REPLAYS)
            for key in held_keys:  # an earlier report's replay of a match held now
                (out / REPLAYS / replay_file(key)).unlink(missing_ok=True)
            log_pages, spans = {}, {}
            if publish_logs and not logs_held:
                log_pages = logs.publish(Path(directory) / logs.LOGS, out / logs.LOGS,
                                         held=lambda key: held.why(held_keys[key]) if key in held_keys else None)
                spans = logs.spans(Path(directory) / logs.LOGS)
            else:
                logs.withdraw(out / logs.LOGS)
            for row in rows:
                record = store.record(row.key) if row.key not in held_keys else None
                if record is not None:
                    links = [(f"{bot} (seat {seat}), lines {span.first}-{span.last}",
                              f"../{logs.LOGS}/{logs.page_name(span.log)}{span.anchor()}")
                             for seat, bot in enumerate(row.lineup) if (span := spans.get((row.key, seat)))]
                    record = {**record, "meta": {**record.get("meta", {}), "key": row.key}}  # its match, by name
                    files.write_text(out / REPLAYS / replay_file(row.key),
                                     replay_page(record, back_link="../index.html", logs=links))
            index = out / "index.html"
            notes = [held.line([r.deal_set for r in rows if r.key in held_keys])] if held_keys else []
            if publish_logs and logs_held:
                notes.append("the bots' logs are held while records are (under isolation = \"tournament\" a "
                             "process's lines may tell what it saw in any of its matches)")
            if notice is not None:
                for line in notes:
                    notice(f"report: {line}")
            files.write_text(index, report_page(st, rows, about,
                                                {bot: f"{logs.LOGS}/{p}" for bot, p in log_pages.items()},
                                                held=held, held_notes=notes, histories=histories))
        except files.WriteFailed as err:
            raise files.WriteFailed(f"{err}; the results store is untouched: make room and run view again") from None
    finally:
        store.close()
    return index


def report_page(st: tstandings.Standings, rows: Sequence[MatchRow], about: About,
                log_pages: dict[str, str] | None = None, held: release.Held = release.Held(frozenset()),
                held_notes: Sequence[str] = (), histories: Sequence[thistory.EntryHistory] | None = None) -> str:
    """The report's page; ``log_pages``: each bot's published log (its address); ``held``: the deal
    sets whose matches are listed without a replay, ``held_notes`` saying so above the list;
    ``histories``: the directory's history over versions (:func:`history_section`)."""
    spec = games.get(st.game)
    interval = (f"95% interval from {st.bootstrap} bootstrap resamples of deal sets" if st.bootstrap
                else "no interval (--bootstrap 0)")
    subtitle = html.escape(f"{st.matches} match(es) on {st.deal_sets} deal set(s); Elo by Bradley-Terry maximum "
                           f"likelihood, {tstandings.scale(st)}; {interval}")
    stop = st.stopped["text"] if st.stopped else None  # an adaptive tournament's stop: why it ended, not muted
    scale = st.pool.reasons if st.pool is not None else ()  # which scale the ratings are on: not muted
    notes = "".join(f"<p class=\"pool-scale\" data-verdict=\"{html.escape(st.pool.verdict)}\"><strong>"
                    f"{html.escape(n)}</strong></p>" if st.pool is not None and n in scale
                    else f"<p><strong>{html.escape(n)}</strong></p>" if n == stop
                    else f"<p class=\"muted\">{html.escape(n)}</p>" for n in st.notes)
    body = "\n".join([
        about_html(about, log_pages),
        notes,
        "<h2>Standings</h2>", standings_table(st), elo_bars(st),
        history_section(histories or ()),
        "<h2>Rank probabilities</h2><p class=\"muted\">P(rank = k): how likely each bot's rating is the k-th best, "
        "from the ratings' posterior over deal sets; top k: rank k or better</p>", ranks_table(st),
        "<h2>Head to head</h2><p class=\"muted\">the row's score against the column, pairwise games "
        "(in brackets)</p>", heatmap(st),
        "<h2>Collusion check</h2>", collusion_section(tcollusion.check(rows)),
        f"<h2>Seat bias</h2><p class=\"muted\">{html.escape(spec.seat_order)}</p>", bias_table(st),
        "<h2>Points per match</h2><p class=\"muted\">each bot's points per match: the box holds the middle half, "
        "the line the median, the whiskers the lowest and highest, the dot the mean</p>", points_plot(st, rows),
        "<h2>Matches</h2>", "".join(f"<p class=\"held\">{html.escape(n)}</p>" for n in held_notes),
        match_list(rows, held),
    ])
    return page(about.title, subtitle, body, styles=("common.css", "report.css"))


def collusion_section(c: Collusion) -> str:
    """The collusion check: what it measures, and the pairs flagged for review (or the nearest)."""
    what = tcollusion.WHAT.format(alpha=c.alpha, tested=len(c.pairs))
    parts = [f'<p class="muted">{html.escape(what)}</p>',
             f'<p id="collusion-headline"><strong>{html.escape(tcollusion.headline(c))}</strong></p>']
    shown = c.flagged or list(c.pairs[:1])
    if c.note is None and shown:
        if not c.flagged:
            nearest = html.escape(tcollusion.describe(shown[0]))
            parts.append(f'<p class="muted">the pair that comes nearest: {nearest}</p>')
        head = "".join(f"<th>{html.escape(h)}</th>" for h in tcollusion.HEADERS[:-1])
        body = []
        for e, row in zip(shown, tcollusion.rows_of(shown)):
            cells = "".join(f"<td>{html.escape(cell)}</td>" for cell in row[:-1])
            body.append(f'<tr class="{"flagged" if e.flagged else ""}" data-entry="{html.escape(e.entry)}" '
                        f'data-mate="{html.escape(e.mate)}">{cells}</tr>')
        parts.append(scroll(f'<table class="grid" id="collusion"><thead><tr>{head}</tr></thead>'
                            f'<tbody>{"".join(body)}</tbody></table>'))
    return "".join(parts)


def standings_table(st: tstandings.Standings) -> str:
    claimed = tstandings.shown_claims(st)  # an adaptive tournament's stop: what its rule said of each line
    head = (f"<tr><th>rank</th><th class=\"l\">bot</th><th>{html.escape(tstandings.elo_header(st))}</th>"
            "<th>95% interval</th><th>matches</th>"
            "<th>results</th><th>W-D-L</th><th>score %</th><th>opp. Elo</th><th>pts/seat</th>"
            f"<th><abbr title=\"{html.escape(tstandings.FAULTS_LEGEND)}\">{tstandings.FAULTS_HEADER}</abbr></th>"
            + (f"<th>{html.escape(tstandings.CLAIM_HEADER)}</th>" if claimed is not None else "") + "</tr>")
    body = []
    for (rank, b), claim in zip(enumerate(st.lines, 1), claimed or [None] * len(st.lines)):
        rule = ""
        if claimed is not None:
            kind = html.escape(claim[0] if claim is not None else "none")
            rule = f"<td class=\"claim\" data-shown=\"{kind}\">{html.escape(tstandings.claim_cell(claim))}</td>"
        shown = tstandings.shown_line(b)  # as the terminal shows it: a bound, or too few games
        elo, interval = tstandings.elo_cells(b, st)  # a pool's bot: held
        body.append(f"<tr data-bot=\"{html.escape(b.name)}\"><td>{rank}</td><td class=\"l\">{html.escape(b.name)}</td>"
                    f"<td class=\"elo\" data-shown=\"{html.escape(shown.kind)}\">{html.escape(elo)}</td>"
                    f"<td class=\"interval\">{html.escape(interval)}</td>"
                    f"<td>{b.matches}</td><td>{b.results}</td><td>{b.wins}-{b.draws}-{b.losses}</td>"
                    f"<td>{_f(b.score_pct, 1)}</td><td>{_f(b.opponents_elo)}</td><td>{_f(b.mean_points, 2)}</td>"
                    f"<td class=\"faults\" {_fault_attributes(b.faults)}>{tstandings.fault_cell(b.faults)}</td>"
                    f"{rule}</tr>")
    table = f"<table class=\"grid\" id=\"standings\"><thead>{head}</thead><tbody>{''.join(body)}</tbody></table>"
    return (scroll(table) + f"<p class=\"muted\">{html.escape(tstandings.FAULTS_LEGEND)}</p>")


def _fault_attributes(faults: dict[str, int]) -> str:
    """Each kind's count as a data attribute (``data-malformed="681"``), for scripts and tests."""
    return " ".join(f"data-{kind.replace('_', '-')}=\"{n}\"" for kind, n in faults.items())


def match_faults(row: MatchRow) -> str:
    """A match's faults by seat and kind (the names of records and JSON): ``bob (seat 1): timeout 2, malformed 1``."""
    parts = []
    for seat, counts in enumerate(row.faults):
        kinds = ", ".join(f"{kind} {n}" for kind, n in counts.items() if n)
        if kinds:
            parts.append(f"{row.lineup[seat]} (seat {seat}): {kinds}")
    return "; ".join(parts)


def ranks_table(st: tstandings.Standings) -> str:
    """P(rank = k) and P(top k) of every bot (percent), each cell shaded by its probability."""
    if not st.rank_probabilities:
        return "<p class=\"muted\">none: they need intervals, two deal sets or more and identifiable ratings</p>"
    lines = [b for b in st.lines if b.name in st.rank_probabilities]  # a pool's bots are held: not ranked
    n = len(lines)

    def cell(p: float) -> str:
        shade = 255 - int(p * 150)
        return f"<td style=\"background:rgb({shade},{shade},255)\" data-p=\"{p:.4f}\">{100 * p:.1f}</td>"

    head = ("<tr><th class=\"l\">bot</th>" + "".join(f"<th>{k}</th>" for k in range(1, n + 1))
            + "".join(f"<th>top {k}</th>" for k in range(2, n)) + "</tr>")
    body = [f"<tr data-bot=\"{html.escape(b.name)}\"><td class=\"l\">{html.escape(b.name)}</td>"
            + "".join(cell(p) for p in st.rank_probabilities[b.name])
            + "".join(cell(p) for p in st.top_k[b.name][1:n - 1]) + "</tr>" for b in lines]
    return (f"<table class=\"grid\" id=\"rank-probabilities\"><thead>{head}</thead>"
            f"<tbody>{''.join(body)}</tbody></table>")


def elo_bars(st: tstandings.Standings) -> str:
    """The Elo of each bot with its interval as an error bar (SVG), as the table shows them
    (:func:`referee.results.standings.shown_line`): a bound is a bar open towards the plot's edge
    (an arrow), too few games a dot alone (or nothing, for a record of every point or none)."""
    shown = {b.name: tstandings.shown_line(b) for b in st.lines}
    values = [v for s in shown.values() for v in (s.elo, s.lo, s.hi) if v is not None]
    if not values:
        return ""
    low, high = min(values), max(values)
    pad = max(25.0, (high - low) * 0.08)
    low, high = low - pad, high + pad
    width, left, right, row = 720, 120, 20, 30
    height = row * len(st.lines) + 40

    def x(v: float) -> float:
        return left + (v - low) / (high - low) * (width - left - right)

    parts = [_svg_start("elo-bars", width, height, "Elo with 95% intervals"),
             *_axis(low, high, _nice_step(high - low), x, height)]
    for i, b in enumerate(st.lines):
        y, s = 24 + i * row, shown[b.name]
        title = f"<title>{html.escape(b.name)}: {html.escape(s.elo_text)} {html.escape(s.interval_text)}</title>"
        parts.append(f"<text x=\"{left - 8}\" y=\"{y + 5}\" class=\"name\">{html.escape(b.name)}</text>")
        ends = [v for v in (s.lo, s.hi) if v is not None]
        if s.lo is not None and s.hi is not None:
            parts += [_line(x(s.lo), y, x(s.hi), y, "bar"), _line(x(s.lo), y - 6, x(s.lo), y + 6, "bar"),
                      _line(x(s.hi), y - 6, x(s.hi), y + 6, "bar")]
        elif ends:  # a bound: from it to the edge on its open side, an arrow there
            edge = width - right if s.lo is not None else left
            tip = 1 if s.lo is not None else -1
            parts += [f"<g class=\"bound\" data-bot=\"{html.escape(b.name)}\">{title}",
                      _line(x(ends[0]), y, edge, y, "bar"), _line(x(ends[0]), y - 6, x(ends[0]), y + 6, "bar"),
                      f"<path d=\"M{edge - 8 * tip:.1f},{y - 5} L{edge:.1f},{y} L{edge - 8 * tip:.1f},{y + 5}\" "
                      f"class=\"bar arrow\"/></g>"]
        if s.elo is not None:  # a bound has no point estimate
            parts.append(f"<circle cx=\"{x(s.elo):.1f}\" cy=\"{y}\" r=\"5\" class=\"dot\">{title}</circle>")
        elif not ends and s.kind == tstandings.TOO_FEW:  # nothing to draw: say why
            parts.append(f"<text x=\"{left + 6}\" y=\"{y + 5}\" class=\"note\">{html.escape(s.interval_text)}</text>")
    parts.append("</svg>")
    return "".join(parts)


def history_section(histories: Sequence[thistory.EntryHistory]) -> str:
    """Each entry with two versions or more: its ratings over its versions with their intervals (an
    SVG chart), then the same rows as a table (the chart's text alternative); the scales' notes."""
    drawn = [(k, h) for k, h in enumerate(histories) if len(h.versions) >= 2]
    if not drawn:
        return ""
    parts = ["<h2>History over versions</h2><p class=\"muted\">each entry with two versions or more: the rating "
             "each version had when the last run with it computed the standings, with its 95% interval; the table "
             "below each chart gives the same rows</p>"]
    for k, h in drawn:
        table_id = f"history-table-{k}"
        parts.append(f"<section class=\"history\" data-entry=\"{html.escape(h.entry)}\">"
                     f"<h3>{html.escape(h.entry)}</h3>{history_chart(h, f'history-{k}', table_id)}"
                     f"{history_table(h, table_id)}</section>")
    parts += [f"<p class=\"muted\">scale {html.escape(n)}</p>"
              for n in thistory.notes(r for _, h in drawn for r in h.versions)]
    return "".join(parts)


def history_table(h: thistory.EntryHistory, table_id: str) -> str:
    """An entry's versions as a table: the columns of ``referee history``."""
    left = [' class="l"' if name in ("version", "scale") else "" for name in thistory.HEADERS]  # text columns
    head = "".join(f"<th{cls}>{html.escape(name)}</th>" for cls, name in zip(left, thistory.HEADERS))
    body = []
    for k, row in enumerate(h.versions, 1):
        cells = thistory.cells(k, row, h.current)
        body.append(f"<tr data-version=\"{html.escape(row.version)}\">"
                    + "".join(f"<td{cls}>{html.escape(c)}</td>" for cls, c in zip(left, cells)) + "</tr>")
    return scroll(f"<table class=\"grid\" id=\"{table_id}\"><caption>{html.escape(h.entry)}: its versions "
                  f"(* the version now)</caption><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody>"
                  f"</table>")


#: the history chart's drawing box: its width (it scales to the page, up to the width its style sets),
#: its height, and its margins for the axes' labels
HISTORY_BOX = (400, 236, 52, 12, 20, 44)


def history_chart(h: thistory.EntryHistory, chart_id: str, table_id: str) -> str:
    """An entry's ratings over its versions (SVG, in the order it played them): a dot per rating (hollow
    off its pool's scale), its interval as a bar, a bound as a bar open towards the edge (an arrow);
    consecutive versions on one pool's scale are joined by a line (ratings on their runs' fields are not)."""
    rows = h.versions
    values = [v for r in rows for v in (r.elo, r.lo, r.hi) if v is not None]
    if not values:
        return "<p class=\"muted\">no version has a rating to draw</p>"
    width, height, left, right, top, bottom = HISTORY_BOX
    low, high = min(values), max(values)
    pad = max(25.0, (high - low) * 0.08)
    low, high = low - pad, high + pad
    step = (width - left - right) / len(rows)

    def x(k: int) -> float:
        return left + (k + 0.5) * step

    def y(v: float) -> float:
        return top + (high - v) / (high - low) * (height - top - bottom)

    label = f"{h.entry}: Elo of each of its {len(rows)} versions with 95% intervals (the table below gives them)"
    parts = [f"<svg id=\"{chart_id}\" class=\"history-chart\" viewBox=\"0 0 {width} {height}\" role=\"img\" "
             f"aria-label=\"{html.escape(label)}\" aria-describedby=\"{table_id}\">"]
    parts.append(f"<text x=\"{left - 6}\" y=\"{top - 2}\" class=\"ytick\">Elo</text>")
    tick_step = _nice_step(high - low)
    tick = (int(low // tick_step) + 1) * tick_step
    while tick < high:
        parts.append(_line(left, y(tick), width - right, y(tick), "gridline")
                     + f"<text x=\"{left - 6}\" y=\"{y(tick) + 4:.1f}\" class=\"ytick\">{tick:g}</text>")
        tick += tick_step
    bottom_y = height - bottom
    joined = [(k, r) for k, r in enumerate(rows) if r.elo is not None and r.scale is not None and not r.off_scale]
    for (k1, a), (k2, b) in zip(joined, joined[1:]):
        if k2 == k1 + 1 and a.scale == b.scale and a.elo is not None and b.elo is not None:
            parts.append(_line(x(k1), y(a.elo), x(k2), y(b.elo), "trend"))
    for k, r in enumerate(rows):
        elo_text, interval_text = thistory.rating_cells(r)
        title = (f"<title>#{k + 1} {html.escape(r.version)}: {html.escape(elo_text)} {html.escape(interval_text)}, "
                 f"{html.escape(thistory.scale_text(r))}</title>")
        cx = x(k)
        group = [f"<g class=\"version\" data-version=\"{html.escape(r.version)}\" "
                 f"data-shown=\"{html.escape(r.shown)}\">{title}"]
        if r.lo is not None and r.hi is not None:
            group += [_line(cx, y(r.hi), cx, y(r.lo), "bar"), _line(cx - 6, y(r.hi), cx + 6, y(r.hi), "bar"),
                      _line(cx - 6, y(r.lo), cx + 6, y(r.lo), "bar")]
        elif r.lo is not None or r.hi is not None:  # a bound: from it to the edge on its open side, an arrow there
            end = r.lo if r.lo is not None else r.hi
            assert end is not None
            edge, tip = (top, -1) if r.lo is not None else (bottom_y, 1)
            group += [_line(cx, y(end), cx, edge, "bar"), _line(cx - 6, y(end), cx + 6, y(end), "bar"),
                      f"<path d=\"M{cx - 5:.1f},{edge - 8 * tip:.1f} L{cx:.1f},{edge:.1f} L{cx + 5:.1f},"
                      f"{edge - 8 * tip:.1f}\" class=\"bar arrow\"/>"]
        if r.elo is not None:
            group.append(f"<circle cx=\"{cx:.1f}\" cy=\"{y(r.elo):.1f}\" r=\"5\" "
                         f"class=\"dot{' off-scale' if r.off_scale else ''}\"/>")
        elif r.lo is None and r.hi is None:  # no rating: say so where its point would be
            group.append(f"<text x=\"{cx:.1f}\" y=\"{(top + bottom_y) / 2:.1f}\" class=\"none\">-</text>")
        group.append(f"<text x=\"{cx:.1f}\" y=\"{bottom_y + 16}\" class=\"tick\">#{k + 1}</text></g>")
        parts.append("".join(group))
    parts.append(f"<text x=\"{(left + width - right) / 2:.1f}\" y=\"{height - 8}\" class=\"tick\">"
                 f"version (#, as in the table)</text></svg>")
    return "".join(parts)


def _nice_step(span: float) -> float:
    """A round step between the ticks of an axis ``span`` long: about 4 to 10 ticks."""
    for step in (1, 2, 5, 10, 25, 50, 100, 200, 250, 500, 1000, 2000):
        if span / step <= 10:
            return step
    return 5000


def _svg_start(name: str, width: int, height: int, label: str) -> str:
    return (f"<svg id=\"{name}\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" "
            f"role=\"img\" aria-label=\"{html.escape(label)}\">")


def _line(x1: float, y1: float, x2: float, y2: float, cls: str) -> str:
    return f"<line x1=\"{x1:.1f}\" y1=\"{y1:.1f}\" x2=\"{x2:.1f}\" y2=\"{y2:.1f}\" class=\"{cls}\"/>"


def _axis(low: float, high: float, step: float, x: Callable[[float], float], height: int) -> list[str]:
    """Vertical grid lines at every multiple of ``step`` between ``low`` and ``high``, labelled below."""
    out = []
    tick = (int(low // step) + 1) * step
    while tick < high:
        out.append(_line(x(tick), 10, x(tick), height - 22, "gridline")
                   + f"<text x=\"{x(tick):.1f}\" y=\"{height - 6}\" class=\"tick\">{tick:g}</text>")
        tick += step
    return out


def heatmap(st: tstandings.Standings) -> str:
    names = [b.name for b in st.lines]
    head = "<tr><th class=\"l\">vs &#x2192;</th>" + "".join(f"<th>{html.escape(n)}</th>" for n in names) + "</tr>"
    body = []
    for a in names:
        cells = [f"<th class=\"l\">{html.escape(a)}</th>"]
        for b in names:
            rec = st.head_to_head.get(a, {}).get(b)
            if a == b or rec is None or not rec.results or rec.score_pct is None:
                cells.append("<td class=\"empty\"></td>")
                continue
            pct = rec.score_pct
            # red (0%) through white (50%) to green (100%)
            t = (pct - 50) / 50
            color = (f"rgb(255,{255 - int(-t * 150)},{255 - int(-t * 150)})" if t < 0
                     else f"rgb({255 - int(t * 150)},255,{255 - int(t * 150)})")
            cells.append(f"<td style=\"background:{color}\" data-pct=\"{pct:.1f}\">{pct:.0f}% ({rec.results})</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return scroll(f"<table class=\"grid heat\" id=\"head-to-head\"><thead>{head}</thead><tbody>{''.join(body)}</tbody>"
                  "</table>")


def bias_table(st: tstandings.Standings) -> str:
    label = games.get(st.game).first_place_label
    rows = "".join(f"<tr><td>{s['seat']}</td><td>{s['games']}</td><td>{_f(s['mean_points'], 2)}</td>"
                   f"<td>{_f(s['first_place_pct'], 1)}</td></tr>" for s in st.seat_bias)
    return scroll(f"<table class=\"grid\" id=\"seat-bias\"><thead><tr><th>seat</th><th>games</th><th>mean points</th>"
                  f"<th>{html.escape(label)}</th></tr></thead><tbody>{rows}</tbody></table>")


def _quantile(values: Sequence[float], q: float) -> float:
    pos = q * (len(values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (pos - lo)


def points_plot(st: tstandings.Standings, rows: Sequence[MatchRow]) -> str:
    """A box plot of each bot's points per match (SVG)."""
    points: dict[str, list[int]] = defaultdict(list)
    for match in rows:  # not `row`: the name of the plot's row height below
        for seat, bot in enumerate(match.lineup):
            points[bot].append(match.scores[seat])
    names = [b.name for b in st.lines if points.get(b.name)]
    if not names:
        return ""
    low: float = min(min(points[n]) for n in names)
    high: float = max(max(points[n]) for n in names)
    if high == low:
        high = low + 1
    pad = (high - low) * 0.05
    low, high = low - pad, high + pad
    width, left, right, row = 720, 120, 20, 34
    height = row * len(names) + 40

    def x(v: float) -> float:
        return left + (v - low) / (high - low) * (width - left - right)

    parts = [_svg_start("points", width, height, "points per match"),
             *_axis(low, high, _nice_step(high - low), x, height)]
    for i, name in enumerate(names):
        v = sorted(points[name])
        q1, med, q3 = _quantile(v, 0.25), _quantile(v, 0.5), _quantile(v, 0.75)
        mean = sum(v) / len(v)
        y = 24 + i * row
        parts.append(f"<text x=\"{left - 8}\" y=\"{y + 5}\" class=\"name\">{html.escape(name)}</text>"
                     f"<line x1=\"{x(v[0]):.1f}\" y1=\"{y}\" x2=\"{x(v[-1]):.1f}\" y2=\"{y}\" class=\"whisker\"/>"
                     f"<rect x=\"{x(q1):.1f}\" y=\"{y - 9}\" width=\"{max(1.0, x(q3) - x(q1)):.1f}\" height=\"18\" "
                     f"class=\"box\"/><line x1=\"{x(med):.1f}\" y1=\"{y - 9}\" x2=\"{x(med):.1f}\" y2=\"{y + 9}\" "
                     f"class=\"median\"/><circle cx=\"{x(mean):.1f}\" cy=\"{y}\" r=\"3.5\" class=\"dot\">"
                     f"<title>{html.escape(name)}: {len(v)} seat(s), mean {mean:.2f}, median {med:g}, "
                     f"range {v[0]}..{v[-1]}</title></circle>")
    parts.append("</svg>")
    return "".join(parts)


def match_list(rows: Sequence[MatchRow], held: release.Held = release.Held(frozenset())) -> str:
    """Every match with its results, linking its replay (a held one: its key, and why it has none)."""
    body = []
    for row in rows:
        seats = ", ".join(f"{html.escape(bot)} {row.scores[s]}" + (" &#x2605;" if row.placing[s] == 1 else "")
                          for s, bot in enumerate(row.lineup))
        href = f"{REPLAYS}/{replay_file(row.key)}"
        why = held.why(row.deal_set)
        match = (f"<a href=\"{html.escape(href)}\">{html.escape(row.key)}</a>" if why is None else
                 f"{html.escape(row.key)} <span class=\"held\" title=\"{html.escape(why)}\">(replay held)</span>")
        body.append(f"<tr><td>{row.deal_set}</td><td class=\"l\">{match}</td><td class=\"l\">{seats}</td>"
                    f"<td class=\"l\">{html.escape(match_faults(row))}</td></tr>")
    return scroll("<table class=\"grid\" id=\"matches\"><thead><tr><th>deal set</th>"
                  "<th class=\"l\">match (its replay)</th><th class=\"l\">seats: points (&#x2605; first)</th>"
                  f"<th class=\"l\">faults by seat and kind</th></tr></thead><tbody>{''.join(body)}</tbody></table>")
