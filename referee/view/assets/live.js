// The live page: asks /state every second and draws the games in progress (public information
// only: what the referee hands spectators) and the standings.
"use strict";

function drawGames(games) {
  const box = document.getElementById("games");
  if (!games.length) { box.replaceChildren(el("p", { class: "muted" }, "none now")); return; }
  box.replaceChildren();
  for (const g of games) {
    const table = el("div", { class: "table" });
    renderTable(table, g.frame, g.seats, null, null);
    const lines = el("div", { class: "lines" });
    for (const line of g.lines) lines.append(el("div", {}, line));
    box.append(el("div", { class: "game", "data-game": g.id },
                  el("h3", {}, g.title + " " + g.id + ": " + g.seats.join(" v ")), infoEl(g.frame), table, lines));
  }
}

function drawStandings(st) {
  const box = document.getElementById("standings");
  if (!st) return;
  const head = el("tr", {});
  st.headers.forEach((h, k) => head.append(el("th", { class: k === 1 ? "l" : "" }, h)));
  const body = el("tbody", {});
  for (const row of st.rows) {
    const tr = el("tr", { "data-bot": row[1] });
    row.forEach((v, k) => tr.append(el("td", { class: k === 1 ? "l" : "" }, v)));
    body.append(tr);
  }
  box.replaceChildren(el("div", { class: "scroll" }, el("table", { class: "grid", id: "standings-table" },
                                                        el("thead", {}, head), body)));
  if (st.legend) box.append(el("p", { class: "muted" }, st.legend));
}

async function refresh() {
  try {
    const response = await fetch("state" + location.search, { cache: "no-store" });  // the page's token
    const state = await response.json();
    document.getElementById("progress").textContent = state.total !== null
      ? state.finished + " of " + state.total + " matches finished"
      : state.finished + " match(es) finished on this referee";
    document.getElementById("progress").dataset.finished = state.finished;
    const about = document.getElementById("about-box");
    if (state.about !== about.dataset.shown) {  // escaped by the referee: the entries, the title, the description
      about.innerHTML = state.about;
      about.dataset.shown = state.about;
    }
    drawGames(state.games);
    drawStandings(state.standings);
  } catch (e) {
    document.getElementById("progress").textContent = "the referee is not answering (finished or stopped)";
  }
}

refresh();
setInterval(refresh, 1000);
