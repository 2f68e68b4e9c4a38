#!/usr/bin/env node
// A sample referee bot in Node.js: it loads proto/referee/v1/referee.proto (the kit's
// own copy, beside this file) at run time (no generated code), opens one Play session, and
// plays every seat it is given, of Confirmation or Aegis, several games at once if
// --capacity allows.
//
//   npm ci
//   node bot.js --address HOST:PORT --name NAME --token-fd FD [--capacity N] [--games N]
//
// --address is HOST:PORT or unix:PATH (a sandboxed bot reaches the referee only by a Unix
// socket). The token comes as the launcher gives it, the first line of inherited descriptor
// FD (--token-fd), or on the command line (--token TOKEN) for a bot started by hand.
//
// Exit codes: 0 done (--games games ended, or the referee closed the session
// after them), 1 the stream broke or ended early, 2 bad usage, 3 refused by the
// referee, 4 no referee at the address.
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const { parseArgs } = require("node:util");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");

const PROTOCOL_VERSION = 1;
const DEFAULT_PROTO = path.join(__dirname, "proto", "referee", "v1", "referee.proto");

// ---------------------------------------------------------------- cards

const RANKS = "23456789TJQKA";
const rank = (card) => RANKS.indexOf(card[0]); // 0 (two) .. 12 (ace)
const suit = (card) => card[1];
const isCard = (action) => /^[2-9TJQKA][SHDC]$/.test(action);

// ---------------------------------------------------------------- policies
// Each returns the action to play, as one of `legal` (the request's legal_actions).

// Confirmation: roughly how many tricks these cards should take.
function confirmationEstimate(hand, trump) {
  const trumps = hand.filter((c) => suit(c) === trump);
  const aces = hand.filter((c) => rank(c) === 12 && suit(c) !== trump).length;
  const highTrumps = trumps.filter((c) => rank(c) >= 10).length; // Q, K, A of trumps
  return aces + highTrumps + Math.max(0, trumps.length - 3); // long trumps win late tricks
}

// The legal action "<word> n" whose n is closest to target (ties: the lower n).
function closest(legal, word, target) {
  let best = null;
  for (const action of legal) {
    if (!action.startsWith(word + " ")) continue;
    const n = Number(action.slice(word.length + 1));
    if (best === null || Math.abs(n - target) < Math.abs(best.n - target)) best = { n, action };
  }
  return best && best.action;
}

function playConfirmation(obs, legal) {
  const me = obs.seat;
  if (obs.phase === "bid") {
    return closest(legal, "BID", confirmationEstimate(obs.hand, obs.trump)) || legal[0];
  }
  if (obs.phase === "confirm") {
    // Keep the bid unless the cards left now promise quite another count.
    const expected = obs.tricks_won[me] + confirmationEstimate(obs.hand, obs.trump);
    if (Math.abs(expected - obs.bids_in_force[me]) >= 2) {
      const revise = closest(legal, "REVISE", expected);
      if (revise) return revise;
    }
    return legal.includes("CONFIRM") ? "CONFIRM" : legal[0];
  }
  // Trick play: while short of the bid play the strongest card, else the weakest.
  const strength = (c) => rank(c) + (suit(c) === obs.trump ? 13 : 0);
  const cards = legal.filter(isCard).sort((a, b) => strength(a) - strength(b));
  const wantTricks = obs.tricks_won[me] < obs.bids_in_force[me];
  return wantTricks ? cards[cards.length - 1] : cards[0];
}

// Aegis: trumps, then killers, then the rest by rank; an ace only beats faces, so it counts as a jack.
function aegisStrength(card, obs) {
  if (suit(card) === obs.trump) return 30 + rank(card);
  if (obs.killers.includes(card)) return 20;
  return rank(card) === 12 ? 9 : rank(card);
}

// The EXCHANGE action discarding exactly `discard` (legal lists the cards in canonical order).
function exchangeOf(legal, discard) {
  const wanted = [...discard].sort().join(" ");
  return legal.find((a) => a.startsWith("EXCHANGE ") && a.slice(9).split(" ").sort().join(" ") === wanted);
}

function playAegis(obs, legal) {
  const me = obs.seat;
  const weak = obs.hand.filter((c) => aegisStrength(c, obs) < 8); // non-trump, non-killer, below T
  if (obs.phase === "exchange") {
    if (obs.role === "master") {
      // Exchange at most once (each exchange raises the least declaration), and only a bad hand.
      if (obs.e === 0 && weak.length >= 2) return exchangeOf(legal, weak) || legal[0];
      return legal.includes("STOP") ? "STOP" : legal[0];
    }
    return (weak.length && exchangeOf(legal, weak)) || legal[0]; // legal[0] is the bare EXCHANGE
  }
  if (obs.phase === "declare") {
    const strong = obs.hand.filter((c) => aegisStrength(c, obs) >= 20).length;
    const declares = legal.filter((a) => a.startsWith("DECLARE "));
    if (obs.role === "slave" && (strong < 3 || !declares.length) && legal.includes("PASS")) return "PASS";
    return declares[0] || legal[0]; // the least declaration allowed
  }
  // Trick play: the attacker plays its strongest card, the defender its weakest.
  const cards = legal.filter(isCard).sort((a, b) => aegisStrength(a, obs) - aegisStrength(b, obs));
  return obs.attacker === me ? cards[cards.length - 1] : cards[0];
}

const POLICIES = { confirmation: playConfirmation, aegis: playAegis };

// What to answer: { index } in `legal` of the action to play (0, the referee's default, for a game
// it has no policy for or an action its policy did not find), or { error } when the policy threw:
// the referee then plays its default and charges an error fault (docs/protocol.md §4), so a bug
// shows in the standings instead of passing for weak play.
function decide(request, game) {
  const legal = request.legal_actions;
  try {
    const obs = JSON.parse(request.observation_json);
    const policy = POLICIES[game || obs.game];
    const index = policy ? legal.indexOf(policy(obs, legal)) : 0;
    return { index: index >= 0 ? index : 0 };
  } catch (err) {
    const error = `${err.name}: ${err.message}`.replace(/\s+/g, " ").slice(0, 200);
    console.error(`${request.game_id} seat ${request.seat}: policy failed: ${err.stack || error}`);
    return { error };
  }
}

// The ActionReply to a request: its ids, and the action by name (or by index), or the error.
function reply(request, game, byIndex) {
  const answer = { request_id: request.request_id, game_id: request.game_id, seat: request.seat };
  const { index, error } = decide(request, game);
  if (error !== undefined) answer.error = error;
  else if (byIndex) answer.index = index;
  else answer.name = request.legal_actions[index];
  return answer;
}

// ---------------------------------------------------------------- the session

function usage(message) {
  console.error(`${message}\nusage: node bot.js --address HOST:PORT|unix:PATH --name NAME [--token-fd FD | --token TOKEN] ` +
    "[--capacity N] [--games N] [--by-index] [--proto PATH] [--connect-timeout SECONDS] [--quiet]");
  process.exit(2);
}

// The token the launcher wrote into descriptor fd: its first line, trimmed; the descriptor is closed.
function tokenFromFd(fd) {
  const chunks = [];
  const buffer = Buffer.alloc(256);
  const pause = new Int32Array(new SharedArrayBuffer(4));
  try {
    for (;;) {
      let n;
      try {
        n = fs.readSync(fd, buffer, 0, buffer.length, null);
      } catch (err) {
        if (err.code !== "EAGAIN") throw err;
        Atomics.wait(pause, 0, 0, 10); // a non-blocking pipe not yet written: wait 10 ms, read again
        continue;
      }
      if (n === 0) break;
      chunks.push(Buffer.from(buffer.subarray(0, n)));
      if (buffer.subarray(0, n).includes(10)) break; // the end of the first line
    }
    fs.closeSync(fd);
  } catch (err) {
    usage(`cannot read the token from --token-fd ${fd}: ${err.code || err.message}`);
  }
  return Buffer.concat(chunks).toString("utf8").split("\n")[0].trim();
}

function parseCommandLine() {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        address: { type: "string", default: "127.0.0.1:50051" },
        name: { type: "string", default: "nodebot" },
        token: { type: "string", default: "" },
        "token-fd": { type: "string" },
        capacity: { type: "string", default: "1" },
        games: { type: "string", default: "0" }, // 0 = play until the referee ends the session
        "by-index": { type: "boolean", default: false }, // answer with indices instead of names
        proto: { type: "string", default: DEFAULT_PROTO },
        "connect-timeout": { type: "string", default: "10" },
        quiet: { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false },
      },
    }));
  } catch (err) {
    usage(err.message);
  }
  if (values.help) usage("a sample referee bot");
  const number = (key) => {
    const n = Number(values[key]);
    if (!Number.isFinite(n) || n < 0) usage(`--${key} must be a number >= 0`);
    return n;
  };
  if (values["token-fd"] !== undefined) {
    if (values.token) usage("give --token or --token-fd, not both");
    const fd = Number(values["token-fd"]);
    if (!Number.isInteger(fd) || fd < 0) usage("--token-fd must be a descriptor number");
    values.token = tokenFromFd(fd);
  }
  return { ...values, capacity: Math.max(1, Math.floor(number("capacity"))), games: Math.floor(number("games")),
    connectTimeout: number("connect-timeout"), byIndex: values["by-index"] };
}

function main() {
  const args = parseCommandLine();
  const log = args.quiet ? () => {} : (...parts) => console.log(`${args.name}:`, ...parts);

  let definition;
  try {
    definition = protoLoader.loadSync(args.proto, {
      keepCase: true, longs: String, enums: String, defaults: true, oneofs: true,
    });
  } catch (err) {
    usage(`cannot load ${args.proto}: ${err.message}`);
  }
  const { Referee } = grpc.loadPackageDefinition(definition).referee.v1;
  const client = new Referee(args.address, grpc.credentials.createInsecure());

  const games = new Map(); // "game_id/seat" -> the GameStart of each seat in play
  let gamesEnded = 0;
  let finished = false;
  let call = null;

  function finish(code, message) {
    if (finished) return;
    finished = true;
    if (message && code === 0) log(message);
    else if (message) console.error(`${args.name}: ${message}`);
    process.exitCode = code;
    if (call) call.cancel(); // we are done: now, and only now, the session may end
    client.close();
  }

  function onMessage(message) {
    switch (message.kind) {
      case "welcome":
        log(`session ${message.welcome.session_id} on ${message.welcome.server}`);
        break;
      case "refusal":
        finish(3, `refused (${message.refusal.reason}): ${message.refusal.message}`);
        break;
      case "game_start": {
        const start = message.game_start;
        games.set(`${start.game_id}/${start.seat}`, start);
        log(`${start.game_id}: ${start.game}, seat ${start.seat} of [${start.seat_names.join(", ")}]`);
        break;
      }
      case "request": {
        const request = message.request;
        // request.events: what happened since this seat's last request (kind, actor,
        // JSON.parse(data_json)); this bot reads the observation instead.
        const start = games.get(`${request.game_id}/${request.seat}`);
        call.write({ action: reply(request, start && start.game, args.byIndex) });
        break;
      }
      case "result": {
        const result = message.result;
        if (result.status === "SUBSTITUTED") {
          console.error(`${args.name}: ${result.game_id} seat ${result.seat}: ${result.fault}, ` +
            `the referee played ${result.action}: ${result.reason}`);
        }
        break;
      }
      case "game_end": {
        const end = message.game_end;
        games.delete(`${end.game_id}/${end.seat}`);
        gamesEnded += 1;
        log(`${end.game_id} seat ${end.seat}: over, scores [${end.scores.join(", ")}], ` +
          `placing [${end.placing.join(", ")}]`);
        if (args.games && gamesEnded >= args.games) finish(0, `done after ${gamesEnded} game(s)`);
        break;
      }
      default:
        break; // a kind this bot does not know: ignore it
    }
  }

  const deadline = new Date(Date.now() + args.connectTimeout * 1000);
  client.waitForReady(deadline, (err) => {
    if (err) {
      finish(4, `no referee at ${args.address}: ${err.message}`);
      return;
    }
    call = client.Play();
    call.on("data", (message) => {
      if (!finished) onMessage(message);
    });
    call.on("error", (err) => finish(1, `stream ended: ${err.message}`));
    call.on("end", () => {
      if (args.games && gamesEnded < args.games) finish(1, `the referee ended the session after ${gamesEnded} game(s)`);
      else finish(0, "the referee ended the session");
    });
    // The Hello, then one ActionReply per request. Never call.end() while playing:
    // half-closing our side ends the session and forfeits every seat we hold.
    call.write({ hello: { protocol_version: PROTOCOL_VERSION, bot_name: args.name, token: args.token,
                          capacity: args.capacity } });
  });
}

if (require.main === module) main();

module.exports = { POLICIES, decide, reply, playConfirmation, playAegis, tokenFromFd, main };
