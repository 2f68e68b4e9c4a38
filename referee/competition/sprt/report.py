"""The report of an SPRT: a summary (JSON-ready), as text and as a Markdown paragraph."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from referee import __version__
from referee.competition.sprt.setup import SprtSetup
from referee.competition.sprt.units import Tally
from referee.report import format_options
from referee.results.pool import Pool
from referee.results.standings import FAULTS_HEADER, fault_cell
from referee.stats.anchored import Scale, check_scale, rate_anchored
from referee.stats.ratings import PairResult
from referee.stats.sprt import Z95, EloModel, Estimate, StoppedEstimate, Verdict, estimate, stopped_estimate

#: how the text names each model's unit
UNITS = {EloModel.NORMALIZED: "normalized Elo", EloModel.LOGISTIC: "logistic Elo"}


def conclusion(verdict: Verdict, elo0: float, elo1: float) -> str:
    """Words for a verdict: 'stronger' / 'not stronger' when elo0 >= 0, else 'no regression' / 'regression'."""
    if verdict == Verdict.H1:
        return "stronger" if elo0 >= 0 else "no regression"
    if verdict == Verdict.H0:
        return "not stronger" if elo0 >= 0 else "regression"
    return "no verdict: the cap was reached" if verdict == Verdict.INCONCLUSIVE else "no verdict: interrupted"


def on_pool(setup: SprtSetup, tally: Tally, pool: Pool, version: str | None) -> dict[str, Any] | None:
    """The candidate's rating on a pool's scale (``--pool``), anchored to the baseline alone, one of the
    pool's bots held at its rating (:func:`referee.stats.anchored.rate_anchored` of the units' games,
    each unit a deal set); the pool's verdict: off-scale where the setting or the baseline's ``version``
    (its content hash) is not the pool's (:meth:`Pool.mismatches`), else not checked (the pool's bots
    play no game against each other here). None before the first unit."""
    c, b = setup.candidate.name, setup.baseline.name
    outcomes = [PairResult(u.index, c, b, score) for u in tally.units for score in u.scores]
    if not outcomes:
        return None
    row = rate_anchored(outcomes, pool.scale)[c]
    clock = {"decision_ms": round(setup.clock.decision_s * 1000), "bank_ms": round(setup.clock.bank_s * 1000)}
    name = f"pool {pool.short_id}"
    mismatches = pool.mismatches(setup.game, setup.options, clock, {b: version})
    check = check_scale(outcomes, pool.scale)
    reasons = [check.line(name)]
    if mismatches:
        reasons.insert(0, f"off-scale: this run's setting is not {name}'s: {'; '.join(mismatches)}; this rating is "
                          f"not on its scale")
    interval = "" if row.lo is None or row.hi is None else f" [{row.lo:.0f}, {row.hi:.0f}]"
    return {"pool": pool.short_id, "anchor": b, "anchor_elo": pool.scale.ratings[b].elo,
            "verdict": Scale.OFF if mismatches else check.verdict, "elo": row.elo, "lo": row.lo, "hi": row.hi,
            "reasons": reasons,
            "text": (f"on the scale of {name}, anchored to its bot {b} alone ({pool.scale.ratings[b].elo:.0f}): "
                     f"{c} {row.elo:.0f}{interval}; {reasons[0]}")}


def _finite(value: float | None) -> float | None:
    return value if value is None or math.isfinite(value) else None


def summary(setup: SprtSetup, tally: Tally, status: Verdict) -> dict[str, Any]:
    """Everything the outputs show, JSON-ready (an infinite Elo is null)."""
    sprt = tally.sprt
    est = estimate(sprt.counts)
    verdict = Verdict(status)
    stopped = stopped_estimate(sprt.counts, sprt.values, sprt.elo0, sprt.elo1, sprt.alpha, sprt.beta, sprt.model,
                               verdict if verdict in (Verdict.H0, Verdict.H1) else None)
    margins = [sum(u.margins) for u in tally.units]
    n = len(margins)
    mean = sum(margins) / n if n else None
    half = None
    if mean is not None and n >= 2:
        sd = math.sqrt(sum((m - mean) ** 2 for m in margins) / (n - 1))
        half = Z95 * sd / math.sqrt(n)
    return {
        "game": setup.game, "options": setup.options, "seed": setup.seed,
        "candidate": setup.candidate.name, "baseline": setup.baseline.name,
        "preset": setup.preset, "elo_model": str(sprt.model), "elo0": setup.elo0, "elo1": setup.elo1,
        "alpha": setup.alpha, "beta": setup.beta,
        "verdict": status, "conclusion": conclusion(status, setup.elo0, setup.elo1),
        "llr": sprt.llr(), "llr_lower": sprt.lower, "llr_upper": sprt.upper, "llr_approx": sprt.llr_approx(),
        "units": sprt.n, "games": tally.games, "max_units": setup.max_units,
        "wins": tally.wins, "draws": tally.draws, "losses": tally.losses,
        "draw_ratio": tally.draws / tally.games if tally.games else None,
        "pentanomial": list(sprt.counts),
        "score": est.score, "elo": _finite(est.elo), "elo_lo": _finite(est.elo_lo), "elo_hi": _finite(est.elo_hi),
        "elo_text": elo_text(est), "nelo": est.nelo, "nelo_lo": est.nelo_lo, "nelo_hi": est.nelo_hi,
        "nelo_text": nelo_text(est), "los": est.los,
        "corrected": None if stopped is None else {**stopped.__dict__, "text": corrected_text(stopped)},
        "points_per_unit": mean, "points_per_unit_95": half,
        "faults": {bot: dict(counts) for bot, counts in sorted(tally.faults.items())},
        "seconds": round(tally.seconds, 1),
    }


def _signed(value: float | None, digits: int = 1) -> str:
    if value is None:
        return "-"
    if math.isinf(value):
        return "+inf" if value > 0 else "-inf"
    return f"{round(value, digits) + 0.0:+.{digits}f}"  # + 0.0: no "-0.0"


def elo_text(est: Estimate) -> str:
    """The Elo estimate and its 95% interval, e.g. ``+35.2 [+12.0, +58.9]`` (``-`` without units)."""
    if est.elo is None:
        return "-"
    if est.se == 0.0:  # a 95% interval of width 0 would claim a certainty the units do not give
        return f"{_signed(est.elo)} (no interval: all {est.n} unit(s) scored the same)"
    return f"{_signed(est.elo)} [{_signed(est.elo_lo)}, {_signed(est.elo_hi)}]"


def nelo_text(est: Estimate) -> str:
    """The normalized Elo estimate and its 95% interval (``-`` without units or without variance)."""
    if est.nelo is None:
        return "-"
    return f"{_signed(est.nelo)} [{_signed(est.nelo_lo)}, {_signed(est.nelo_hi)}]"


def corrected_text(c: StoppedEstimate) -> str:
    """The estimates corrected for the stop, e.g. ``Elo +21.0 [+2.1, +40.3], normalized Elo ... LOS 98.7%``."""
    nelo = "-" if c.nelo is None else f"{_signed(c.nelo)} [{_signed(c.nelo_lo)}, {_signed(c.nelo_hi)}]"
    return (f"Elo {_signed(c.elo)} [{_signed(c.elo_lo)}, {_signed(c.elo_hi)}], normalized Elo {nelo} "
            f"(95%, median-unbiased), LOS {100 * c.los:.1f}%"
            + (" (rough: the LLR's normal approximation ends over 3% past its bound)" if c.clamped else ""))


def estimates_text(s: Mapping[str, Any]) -> str:
    """Both Elo estimates as counted, with their 95% intervals, and the LOS."""
    lo = s["los"]
    return (f"Elo {s['elo_text']}, normalized Elo {s['nelo_text']} (95%, as counted), "
            f"LOS {'-' if lo is None else f'{100 * lo:.1f}%'}")


def _corrected(s: Mapping[str, Any]) -> str:
    corrected = s.get("corrected")
    return f"corrected for the stop: {'-' if corrected is None else corrected['text']}"


def _hypotheses(s: Mapping[str, Any]) -> str:
    preset = f" (preset {s['preset']})" if s["preset"] else ""
    return (f"H0 {_signed(s['elo0'], 2)} against H1 {_signed(s['elo1'], 2)} {UNITS[EloModel(s['elo_model'])]}"
            f"{preset}, alpha {s['alpha']:g}, beta {s['beta']:g}")


def _draws(s: Mapping[str, Any]) -> str:
    ratio = s["draw_ratio"]
    shown = "-" if ratio is None else f"{100 * ratio:.1f}%"
    return f"W-D-L {s['wins']}-{s['draws']}-{s['losses']} (draw ratio {shown})"


def _faults_text(s: Mapping[str, Any]) -> str:
    return ", ".join(f"{bot} {fault_cell(s['faults'].get(bot, {}))}" for bot in (s["candidate"], s["baseline"]))


def _verdict_text(s: Mapping[str, Any]) -> str:
    words = {"stronger": "is stronger", "not stronger": "is not stronger", "no regression": "shows no regression",
             "regression": "is weaker (a regression)"}
    if s["verdict"] in (Verdict.H1, Verdict.H0):
        return f"{s['verdict']} accepted: {s['candidate']} {words[s['conclusion']]}"
    return str(s["conclusion"])


def text(s: Mapping[str, Any]) -> str:
    margin = _signed(s["points_per_unit"], 2)
    if s["points_per_unit_95"] is not None:
        margin += f" ± {s['points_per_unit_95']:.2f} (95%)"
    lines = [
        (f"SPRT {s['game']} ({format_options(s['options'])}; seed {s['seed']}): {s['candidate']} against "
         f"{s['baseline']}; {_hypotheses(s)}"),
        f"verdict: {_verdict_text(s)}",
        *([s["anchored"]["text"]] if s.get("anchored") else []),
        (f"LLR {s['llr']:.2f} (bounds {s['llr_lower']:.2f}, {s['llr_upper']:.2f}) after {s['units']} unit(s) "
         f"({s['games']} games; cap {s['max_units']} units)"),
        estimates_text(s),
        _corrected(s),
        (f"{_draws(s)}; pentanomial (units scoring 0, 0.5, 1, 1.5, 2 points) "
         f"{' '.join(str(c) for c in s['pentanomial'])}"),
        f"points per unit ({s['candidate']} - {s['baseline']}) {margin}",
        f"{FAULTS_HEADER}: {_faults_text(s)}; {s['seconds']:.0f} s",
    ]
    return "\n".join(lines)


def markdown(s: Mapping[str, Any]) -> str:
    """One paragraph for a pull request."""
    verdict = {Verdict.H1: f"**H1 accepted: {s['conclusion']}**",
               Verdict.H0: f"**H0 accepted: {s['conclusion']}**"}.get(s["verdict"], f"**{s['conclusion']}**")
    margin = _signed(s["points_per_unit"], 2)
    if s["points_per_unit_95"] is not None:
        margin += f" ± {s['points_per_unit_95']:.2f}"
    return (
        f"**SPRT `{s['candidate']}` vs `{s['baseline']}`** ({s['game']}, {format_options(s['options'])}): "
        f"{verdict} after {s['units']} duplicate units ({s['games']} games). "
        f"LLR {s['llr']:.2f} (bounds {s['llr_lower']:.2f}, {s['llr_upper']:.2f}) for {_hypotheses(s)}. "
        f"{estimates_text(s)}; {_corrected(s)}; "
        f"{_draws(s)}, pentanomial {s['pentanomial']}; "
        f"points per unit {margin}. Seed {s['seed']}, referee {__version__}.\n"
        + (f"\n{s['anchored']['text']}\n" if s.get("anchored") else ""))
