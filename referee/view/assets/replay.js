// The replay viewer: renders the steps computed by the referee (referee/view/steps.py) and
// moves through them. No rules here: every frame comes from the game's engine.
"use strict";
const DATA = JSON.parse(document.getElementById("replay-data").textContent);
const STEPS = DATA.steps;
let current = 0;
let timer = null;
const LOG = [];  // the log's entries, one per step
let logAt = STEPS.length - 1;  // the step the log shows

function $(id) { return document.getElementById(id); }

function render() {
  const step = STEPS[current];
  const frame = step.frame;
  $("position").textContent = "step " + current + " / " + (STEPS.length - 1);
  $("info").replaceChildren(infoEl(frame));
  renderTable($("table"), frame, DATA.seats, step.actor, DATA.viewer);
  const faults = $("faults");
  faults.replaceChildren();
  for (const f of step.faults) {
    faults.append(el("div", { class: "fault", "data-seat": f.seat },
                     "\u26a0 fault: " + DATA.seats[f.seat] + " " + f.kind + (f.detail ? ": " + f.detail : "")));
  }
  renderScores(frame.rows);
  // the log up to this step: only the entries between the last position and this one change
  for (let k = Math.min(logAt, current); k <= Math.max(logAt, current); k++) {
    LOG[k].classList.toggle("future", k > current);
    LOG[k].classList.toggle("current", k === current);
  }
  logAt = current;
  LOG[current].scrollIntoView({ block: "nearest" });
  $("final").textContent = current === STEPS.length - 1 && DATA.results
    ? "final scores: " + DATA.seats.map((s, i) => s + " " + DATA.results.scores[i]).join(", ") : "";
  $("play").textContent = timer ? "pause" : "play";
  syncJumps(frame);
  const hash = "#step=" + current;
  if (location.hash !== hash) history.replaceState(null, "", hash);
}

function renderScores(rows) {
  const t = DATA.scores;
  const body = $("scores-body");
  body.replaceChildren();
  for (const row of t.rows.slice(0, rows)) {
    const tr = el("tr", {});
    row.forEach((v, k) => tr.append(cellEl("td", v, k < 3 ? "l" : "")));
    body.append(tr);
  }
}

function buildLog() {
  const log = $("log");
  STEPS.forEach((step, k) => {
    const who = step.actor === null ? "" : DATA.seats[step.actor];
    const lines = step.lines.slice();
    if (step.actor !== null && !lines.length) {
      lines.push(step.action !== null ? who + ": " + step.action : who + " decides (hidden from this view)");
    }
    const entry = el("div", { class: "entry" + (step.faults.length ? " fault" : ""), "data-step": k });
    entry.append(el("span", { class: "muted" }, k + " "));
    if (step.faults.length) entry.append(el("span", { class: "fault-mark" }, "\u26a0 "));
    entry.append(lines.join(" \u2022 "));
    entry.addEventListener("click", () => go(k));
    log.append(entry);
    LOG.push(entry);
  });
  const head = $("scores-head");
  const tr = el("tr", {});
  DATA.scores.headers.forEach((h, k) => tr.append(el("th", { class: k < 3 ? "l" : "" }, h)));
  head.append(tr);
  $("scores-title").textContent = DATA.scores.title;
}

// jumps: the first step of each chapter (round or game), and of each trick of the current chapter
const CHAPTERS = [];
STEPS.forEach((s, k) => {
  if (!CHAPTERS.length || CHAPTERS[CHAPTERS.length - 1].name !== s.frame.chapter) CHAPTERS.push({ name: s.frame.chapter, step: k });
});

function chapterOf(k) {
  let c = 0;
  CHAPTERS.forEach((ch, i) => { if (ch.step <= k) c = i; });
  return c;
}

function tricksOf(c) {
  const start = CHAPTERS[c].step, end = c + 1 < CHAPTERS.length ? CHAPTERS[c + 1].step : STEPS.length;
  const out = [];
  for (let k = start; k < end; k++) {
    const t = STEPS[k].frame.trick;
    if (t !== null && (!out.length || out[out.length - 1].trick !== t)) out.push({ trick: t, step: k });
  }
  return out;
}

function syncJumps(frame) {
  const c = chapterOf(current);
  const chapter = $("chapter");
  if (!chapter.options.length) CHAPTERS.forEach((ch, i) => chapter.append(el("option", { value: i }, ch.name || "start")));
  chapter.value = String(c);
  const trick = $("trick");
  trick.replaceChildren(el("option", { value: "" }, "trick\u2026"));
  for (const t of tricksOf(c)) trick.append(el("option", { value: t.step }, "trick " + t.trick));
  const here = tricksOf(c).filter(t => t.step <= current).pop();
  trick.value = here && frame.trick !== null ? String(here.step) : "";
}

function go(k) {
  current = Math.max(0, Math.min(STEPS.length - 1, k));
  render();
}

function toggle() {
  if (timer) { clearInterval(timer); timer = null; }
  else {
    if (current === STEPS.length - 1) current = 0;
    timer = setInterval(() => { if (current >= STEPS.length - 1) toggle(); else go(current + 1); }, Number($("speed").value));
  }
  render();
}

function fromHash() {
  const m = /step=(\d+)/.exec(location.hash);
  return m ? Number(m[1]) : 0;
}

$("first").addEventListener("click", () => go(0));
$("back").addEventListener("click", () => go(current - 1));
$("play").addEventListener("click", toggle);
$("forward").addEventListener("click", () => go(current + 1));
$("last").addEventListener("click", () => go(STEPS.length - 1));
$("chapter").addEventListener("change", e => go(CHAPTERS[Number(e.target.value)].step));
$("trick").addEventListener("change", e => { if (e.target.value !== "") go(Number(e.target.value)); });
$("speed").addEventListener("change", () => { if (timer) { toggle(); toggle(); } });
window.addEventListener("hashchange", () => go(fromHash()));
document.addEventListener("keydown", e => {
  if (e.target.tagName === "SELECT") return;
  const c = chapterOf(current);
  if (e.key === "ArrowRight") go(current + 1);
  else if (e.key === "ArrowLeft") go(current - 1);
  else if (e.key === "ArrowDown") go(c + 1 < CHAPTERS.length ? CHAPTERS[c + 1].step : STEPS.length - 1);
  else if (e.key === "ArrowUp") go(CHAPTERS[current === CHAPTERS[c].step && c > 0 ? c - 1 : c].step);
  else if (e.key === "Home") go(0);
  else if (e.key === "End") go(STEPS.length - 1);
  else if (e.key === " ") toggle();
  else return;
  e.preventDefault();
});
buildLog();
go(fromHash());
