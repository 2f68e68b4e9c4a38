// A game's table from one frame (the game's table_view, computed by the referee): the seats
// with their hands, the trick on the table, the last trick won. Shared by the replay and the live page.
"use strict";

function seatArea(i, n) {
  if (n === 2) return i === 0 ? "s" : "n";
  return ["s", "w", "n", "e"][i % 4];
}

function seatBox(i, seat, names, actor, viewer) {
  const cls = "seat" + (i === actor ? " acting" : "") + (i === viewer ? " viewer" : "");
  const box = el("div", { class: cls, "data-seat": i, style: "grid-area: " + seatArea(i, names.length) });
  const name = el("div", {}, el("span", { class: "name" }, names[i]), " ", el("span", { class: "muted" }, "seat " + i));
  for (const tag of seat.tags) name.append(el("span", { class: "tag" }, tag));
  box.append(name);
  const stats = el("div", { class: "stats" });
  for (const [label, text] of seat.stats) stats.append(el("span", {}, label + " ", el("b", {}, text)));
  box.append(stats);
  const hand = el("div", { class: "hand" });
  if (seat.hand === null) {
    hand.classList.add("hidden");
    for (let k = 0; k < seat.count; k++) hand.append(el("span", { class: "back" }));
    hand.append(el("span", { class: "muted" }, " " + seat.count + " hidden"));
  } else {
    for (const c of seat.hand) hand.append(cardEl(c));
  }
  box.append(hand);
  return box;
}

function trickEl(trick, id, names) {
  const box = el("div", { class: id, "data-winner": trick && trick.winner !== null ? String(trick.winner) : "" });
  if (!trick) return box;
  box.append(el("div", { class: "label" }, trick.label));
  const plays = el("div", {});
  for (const [seat, card] of trick.cards) {
    plays.append(el("span", { class: "play" + (seat === trick.winner ? " won" : "") }, cardEl(card),
                    el("span", { class: "who" }, names[seat])));
  }
  box.append(plays);
  if (trick.winner !== null) box.append(el("div", { class: "winner" }, names[trick.winner] + " wins"));
  return box;
}

// fill `table` (a .table element) with the frame's seats and tricks
function renderTable(table, frame, names, actor, viewer) {
  table.replaceChildren();
  table.classList.toggle("two", names.length === 2);
  frame.seats.forEach((seat, i) => table.append(seatBox(i, seat, names, actor, viewer)));
  const last = trickEl(frame.last_trick, "last-trick", names);
  if (frame.last_trick) last.prepend(el("div", { class: "muted" }, "last trick won"));
  table.append(el("div", { class: "center" }, trickEl(frame.on_table, "on-table", names), last));
}

function infoEl(frame) {
  const info = el("div", { class: "info" });
  for (const [label, parts] of frame.info) {
    const item = el("span", { class: "item" }, el("span", { class: "label" }, label));
    for (const p of parts) item.append(partEl(p));
    info.append(item);
  }
  return info;
}
