// Cards and suits as HTML: suit symbols, red and black. Shared by every page.
"use strict";
const SUIT_SYMBOL = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" };
const RED = { H: true, D: true };

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v; else node.setAttribute(k, v);
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

function cardEl(name) {
  const rank = name[0] === "T" ? "10" : name[0];
  const suit = name[name.length - 1];
  return el("span", { class: "card " + (RED[suit] ? "red" : "black"), "data-card": name, title: name },
            rank + SUIT_SYMBOL[suit]);
}

function suitEl(letter) {
  return el("span", { class: "suit " + (RED[letter] ? "red" : "black"), title: letter }, SUIT_SYMBOL[letter]);
}

// a part of a frame's text: a string, {c: card} or {s: suit}
function partEl(part) {
  if (typeof part === "string" || typeof part === "number") return document.createTextNode(String(part));
  if (part.c !== undefined) return cardEl(part.c);
  if (part.s !== undefined) return suitEl(part.s);
  return document.createTextNode(JSON.stringify(part));
}

function cellEl(tag, value, cls) {
  const node = el(tag, cls ? { class: cls } : {});
  node.append(partEl(value));
  return node;
}
