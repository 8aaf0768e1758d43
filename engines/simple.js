#!/usr/bin/env node
// A Gin Rummy engine for the ginproto protocol, version 1, in plain Node.js (no dependencies).
//
// It is written from spec/PROTOCOL.md alone, to show that the spec is enough to build an
// engine in any language. It plays like the Python `simple` engine:
//   - take the upcard / the pile card only if that lowers its best deadwood by melding the card;
//   - discard the highest-value deadwood card, never the card just taken from the pile;
//   - knock (or go gin) as soon as it legally can;
//   - as the three-player sitter, advise the move it would make in the captain's place.
// It is stateless: every decision is taken from the latest `position` line alone.

"use strict";

const readline = require("readline");

const RANKS = "A23456789TJQK";
const SUITS = "cdhs";

// ---- cards ---------------------------------------------------------------------------------

function parseCard(text) {
  // The referee writes "Th"; be lenient as the spec allows for readers: "th", "10h".
  let t = text.trim();
  if (t.length === 3 && t.startsWith("10")) t = "T" + t[2];
  if (t.length !== 2) throw new Error("bad card " + text);
  const rank = RANKS.indexOf(t[0].toUpperCase()) + 1;
  const suit = SUITS.indexOf(t[1].toLowerCase());
  if (rank < 1 || suit < 0) throw new Error("bad card " + text);
  return { rank, suit, text: RANKS[rank - 1] + SUITS[suit] };
}

function cardValue(card) {
  return Math.min(card.rank, 10);
}

function parseCards(token) {
  if (token === undefined || token === "-" || token === "") return [];
  return token.split(",").map(parseCard);
}

// ---- melds and deadwood --------------------------------------------------------------------

// Every meld (as a bitmask over the indices of `cards`) that these cards can form:
// sets of 3 or 4 of one rank, and runs of 3 or more consecutive ranks of one suit (ace low).
function allMelds(cards) {
  const melds = [];
  for (let rank = 1; rank <= 13; rank++) {
    const idx = [];
    cards.forEach((c, i) => { if (c.rank === rank) idx.push(i); });
    if (idx.length >= 3) {
      for (let a = 0; a < idx.length; a++)
        for (let b = a + 1; b < idx.length; b++)
          for (let c = b + 1; c < idx.length; c++)
            melds.push((1 << idx[a]) | (1 << idx[b]) | (1 << idx[c]));
      if (idx.length === 4) melds.push(idx.reduce((m, i) => m | (1 << i), 0));
    }
  }
  for (let suit = 0; suit < 4; suit++) {
    const at = new Map();
    cards.forEach((c, i) => { if (c.suit === suit) at.set(c.rank, i); });
    for (let lo = 1; lo <= 11; lo++) {
      let mask = 0;
      for (let r = lo; r <= 13 && at.has(r); r++) {
        mask |= 1 << at.get(r);
        if (r - lo >= 2) melds.push(mask);
      }
    }
  }
  return melds;
}

// A solver for one set of cards: best(mask) gives the least deadwood of the cards in `mask`
// and one arrangement of melds reaching it.
function makeSolver(cards) {
  const melds = allMelds(cards);
  const memo = new Map();
  function best(mask) {
    if (mask === 0) return { deadwood: 0, melds: [] };
    const hit = memo.get(mask);
    if (hit !== undefined) return hit;
    const low = mask & -mask;
    const i = 31 - Math.clz32(low);
    // Either the lowest card is deadwood ...
    const rest = best(mask & ~low);
    let result = { deadwood: rest.deadwood + cardValue(cards[i]), melds: rest.melds };
    // ... or it is in one of the melds that fit in the mask.
    for (const m of melds) {
      if ((m & low) !== 0 && (m & mask) === m) {
        const r = best(mask & ~m);
        if (r.deadwood < result.deadwood) result = { deadwood: r.deadwood, melds: [m, ...r.melds] };
      }
    }
    memo.set(mask, result);
    return result;
  }
  return best;
}

function maskOf(cards) {
  return (1 << cards.length) - 1;
}

function meldText(cards, mask) {
  return cards.filter((_, i) => (mask >> i) & 1).map((c) => c.text).join("-");
}

function inMelds(melds, i) {
  return melds.some((m) => (m >> i) & 1);
}

// ---- the position --------------------------------------------------------------------------

// Section 4: a token with "=" is a rule parameter; any other is a keyword followed by its value.
function parseFields(tokens) {
  const fields = {};
  const params = {};
  for (let i = 0; i < tokens.length; ) {
    const tok = tokens[i];
    const eq = tok.indexOf("=");
    if (eq >= 0) {
      params[tok.slice(0, eq)] = tok.slice(eq + 1);
      i += 1;
    } else {
      fields[tok] = tokens[i + 1];
      i += 2;
    }
  }
  return { fields, params };
}

function lastTurn(position) {
  const history = position.fields.history;
  if (!history || history === "-") return null;
  const turns = history.split(",");
  return turns[turns.length - 1].split(":");
}

function historyTurns(position) {
  const history = position.fields.history;
  if (!history || history === "-") return [];
  return history.split(",").map((t) => t.split(":"));
}

// ---- the strategy --------------------------------------------------------------------------

function bestDeadwood(cards) {
  return makeSolver(cards)(maskOf(cards)).deadwood;
}

// Would adding `card` to `hand` (10 cards) lower the best deadwood, with the card melded,
// after the best discard of another card?
function wants(hand, card) {
  const before = bestDeadwood(hand);
  const cards = [...hand, card];
  const best = makeSolver(cards);
  const taken = cards.length - 1;
  const full = maskOf(cards);
  for (let d = 0; d < taken; d++) {
    const r = best(full & ~(1 << d));
    if (r.deadwood < before && inMelds(r.melds, taken)) return true;
  }
  return false;
}

function decideDiscard(position) {
  const cards = parseCards(position.fields.cards);
  const limit = Number(position.fields.knocklimit);
  const discardTaken = position.params.discard_taken === "true";
  const last = lastTurn(position);
  let takenText = null;
  if (!discardTaken && last && (last[1] === "take" || last[1] === "pile")) takenText = last[2];
  const takenCard = takenText ? parseCard(takenText).text : null;
  const best = makeSolver(cards);
  const full = maskOf(cards);

  // Big gin, when the rules allow it and all the cards meld.
  const all = best(full);
  if (position.params.big_gin === "true" && all.deadwood === 0) {
    return ["biggin", ...all.melds.map((m) => meldText(cards, m))].join(" ");
  }

  // Knock with the discard that leaves the least deadwood (ties: the highest card goes).
  let knock = null;
  cards.forEach((c, d) => {
    if (c.text === takenCard) return;
    const r = best(full & ~(1 << d));
    if (r.deadwood > limit) return;
    if (knock === null || r.deadwood < knock.deadwood ||
        (r.deadwood === knock.deadwood && cardValue(c) > cardValue(cards[knock.d]))) {
      knock = { d, deadwood: r.deadwood, melds: r.melds };
    }
  });
  if (knock !== null) {
    const melds = knock.melds.map((m) => meldText(cards, m));
    return ["knock", cards[knock.d].text, ...melds].join(" ");
  }

  // Otherwise the highest-value deadwood card of the best arrangement of all the cards.
  let choice = -1;
  cards.forEach((c, i) => {
    if (c.text === takenCard || inMelds(all.melds, i)) return;
    if (choice < 0 || cardValue(c) > cardValue(cards[choice])) choice = i;
  });
  if (choice < 0) {
    // Everything melds (or only the taken card is loose): give up the card that costs least.
    let bestDw = Infinity;
    cards.forEach((c, d) => {
      if (c.text === takenCard) return;
      const dw = best(full & ~(1 << d)).deadwood;
      if (dw < bestDw || (dw === bestDw && cardValue(c) > cardValue(cards[choice]))) {
        bestDw = dw;
        choice = d;
      }
    });
  }
  return "discard " + cards[choice].text;
}

// The move for the position's phase: our own decision, or the advice for the captain.
function decide(position) {
  const phase = position.fields.phase;
  const cards = parseCards(position.fields.cards);
  const pile = parseCards(position.fields.pile);
  const top = pile.length ? pile[pile.length - 1] : null;
  if (phase === "offer") {
    return top && wants(cards, top) ? "take" : "pass";
  }
  if (phase === "draw") {
    const turns = historyTurns(position);
    const bothPassed = turns.length === 2 && turns.every((t) => t[1] === "pass");
    if (bothPassed || top === null) return "stock";
    return wants(cards, top) ? "pile" : "stock";
  }
  return decideDiscard(position);
}

// ---- the protocol loop ---------------------------------------------------------------------

function send(line) {
  process.stdout.write(line + "\n");
}

let position = null;

function handle(line) {
  const tokens = line.replace(/\r$/, "").trim().split(/[ \t]+/).filter((t) => t.length > 0);
  if (tokens.length === 0) return;
  const word = tokens[0];
  if (word === "gin") {
    send("id name JS Simple");
    send("id author ginproto");
    send("id version 1");
    send("ginok protocol 1");
  } else if (word === "isready") {
    send("readyok");
  } else if (word === "position") {
    position = parseFields(tokens.slice(1));
  } else if (word === "go") {
    if (position === null) {
      process.stderr.write("go without a position\n");
      return;
    }
    let move;
    try {
      move = decide(position);
    } catch (err) {
      process.stderr.write("error: " + (err && err.stack ? err.stack : err) + "\n");
      move = "pass";
    }
    send("move " + move);
  } else if (word === "quit") {
    process.exit(0);
  }
  // Every other line (setoption, newmatch, newgame, handover, gameover, matchscore,
  // matchover, and anything unknown) needs no answer.
}

const rl = readline.createInterface({ input: process.stdin, terminal: false });
rl.on("line", handle);
rl.on("close", () => process.exit(0));
