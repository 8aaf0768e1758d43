/* ginproto live page: the run's state, as the referee's server pushes it (server-sent events).
 *
 * This script draws what it is sent and nothing more: the server sends only what a spectator
 * may see of a game in progress. Each finished game links to the replay viewer (/game/N).
 *
 * Stable hooks: <p id="progress" data-games-played="N" data-games-total="M">; the standings
 * <table data-standings>, a row per engine <tr data-engine="NAME" ...>; each game in progress
 * <article data-live-game="N" data-hand="H" data-move="M">, its cards <span data-card="Th">;
 * each finished game <tr data-finished="N">, with data-withheld while its deal is withheld (games
 * dealt the same cards are still to be played). <html data-ready> once the first state is
 * drawn, and data-version="V" the version of the state drawn. The seed shows once the run is
 * over (<span id="seed" data-seed="S">), never before.
 */
(function () {
  'use strict';

  var SUITS = { c: ['\u2663', ''], d: ['\u2666', 'red'], h: ['\u2665', 'red'], s: ['\u2660', ''] };
  var root = document.documentElement;
  var $ = function (id) { return document.getElementById(id); };
  var finished = [];
  var withheld = {};

  function esc(text) {
    return String(text).replace(/[&<>"']/g, function (c) {
      return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c];
    });
  }

  function chip(code) {
    var suit = SUITS[code[1]];
    var rank = code[0] === 'T' ? '10' : code[0];
    return '<span class="chip ' + suit[1] + '" data-card="' + code + '">' + rank + suit[0] +
      '</span>';
  }

  function chips(text) {
    var out = '';
    for (var i = 0; i + 1 < text.length; i += 2) out += chip(text.substr(i, 2));
    return out;
  }

  function duration(s) {
    if (s === null || s === undefined) return '-';
    if (s < 60) return s + 's';
    var m = Math.floor(s / 60);
    if (m < 60) return m + 'm' + String(s % 60).padStart(2, '0') + 's';
    return Math.floor(m / 60) + 'h' + String(m % 60).padStart(2, '0') + 'm';
  }

  function signed(x, digits) {
    var text = x.toFixed(digits);
    if (Number(text) === 0) text = (0).toFixed(digits);
    return (x > 0 && Number(text) !== 0 ? '+' : '') + text;
  }

  // -- progress and standings ------------------------------------------------------------
  function renderProgress(state) {
    var p = $('progress');
    p.setAttribute('data-games-played', String(state.played));
    p.setAttribute('data-games-total', String(state.total));
    var text = state.played + ' of ' + state.total + (state.total === 1 ? ' game' : ' games') + ' played';
    if (!state.over && state.eta !== null) text += ', ETA ' + duration(state.eta);
    if (state.over) text += ' \u00b7 ' + esc(state.status);
    if (state.seed !== null && state.seed !== undefined) {
      text += ' \u00b7 <span id="seed" data-seed="' + esc(state.seed) + '">seed ' +
        esc(state.seed) + '</span>';
    }
    p.innerHTML = text;
    $('bar-done').style.width = (state.total ? 100 * state.played / state.total : 0) + '%';
    var badge = $('status');
    badge.textContent = state.over ? 'finished' : 'live';
    badge.className = 'live-badge' + (state.over ? ' over' : '');
  }

  function renderStandings(s) {
    var rows = (s.engines || []).map(function (e, i) {
      var elo = e.elo;
      var pts = e.points_per_hand;
      var faults = Object.keys(e.faults || {}).map(function (k) { return k + ' ' + e.faults[k]; });
      return '<tr data-engine="' + esc(e.name) + '" data-rank="' + (e.rank || i + 1) +
        '" data-games="' + e.games + '" data-wins="' + e.wins + '" data-losses="' + e.losses +
        '" data-draws="' + e.draws + '" data-score="' + e.score + '"' +
        (elo ? ' data-elo="' + elo.elo + '"' : '') + '>' +
        '<td>' + (e.rank || i + 1) + '</td><td class="text">' + esc(e.name) + '</td>' +
        '<td>' + e.games + '</td><td>' + e.wins + '</td><td>' + e.losses + '</td><td>' +
        e.draws + '</td><td>' + (100 * e.score).toFixed(1) + '%</td>' +
        '<td>' + (elo && elo.elo !== null ? signed(elo.elo, 0) : '-') + '</td>' +
        '<td>' + (elo && elo.lo !== null && elo.hi !== null
          ? signed(elo.lo, 0) + ' .. ' + signed(elo.hi, 0) : '-') + '</td>' +
        '<td>' + (pts ? signed(pts.mean, 2) : '-') + '</td>' +
        '<td class="text">' + (faults.length ? esc(faults.join(', ')) : 'none') + '</td></tr>';
    });
    $('standings').tBodies[0].innerHTML = rows.join('');
    var h = s.head_to_head;
    var names = (s.engines || []).map(function (e) { return e.name; });
    var pair = (h && h.names) || names;  // the head-to-head figures are the first-named's
    $('head-to-head').innerHTML = h && h.elo
      ? 'Elo difference of ' + esc(pair[0]) + ' vs ' + esc(pair[1]) + ': ' +
        (h.elo.elo === null ? 'unbounded' : signed(h.elo.elo, 1)) +
        (h.elo.lo !== null && h.elo.hi !== null
          ? ' (95%: ' + signed(h.elo.lo, 1) + ' .. ' + signed(h.elo.hi, 1) + ')' : '') +
        (h.los !== null && h.los !== undefined ? ', LOS ' + (100 * h.los).toFixed(1) + '%' : '')
      : '';
    var sprt = s.sprt;
    $('sprt').hidden = !sprt;
    if (sprt) {
      var words = { H0: 'H0 accepted', H1: 'H1 accepted' }[sprt.state] || 'continue';
      $('sprt').innerHTML = 'SPRT (elo0 ' + sprt.elo0 + ', elo1 ' + sprt.elo1 + ', alpha ' +
        sprt.alpha + ', beta ' + sprt.beta + '): llr ' +
        (sprt.llr === null ? '-' : sprt.llr.toFixed(3)) + ' (' + sprt.lower.toFixed(3) + ', ' +
        sprt.upper.toFixed(3) + '), ' + words;
      $('sprt').setAttribute('data-sprt', sprt.state);
    }
    renderCross(s, names);
  }

  function renderCross(s, names) {
    var cross = s.cross_table;
    $('cross-box').hidden = !cross;
    if (!cross) return;
    var head = '<thead><tr><th></th>' + names.map(function (n, i) {
      return '<th title="' + esc(n) + '">' + (i + 1) + '</th>';
    }).join('') + '</tr></thead>';
    var body = names.map(function (a, i) {
      return '<tr><th class="text">' + (i + 1) + ' ' + esc(a) + '</th>' + names.map(function (b) {
        if (a === b) return '<td>x</td>';
        var c = cross[a] && cross[a][b];
        return '<td data-cross="' + esc(a) + '|' + esc(b) + '">' +
          (c ? c.score + '/' + c.games : '-') + '</td>';
      }).join('') + '</tr>';
    }).join('');
    $('cross').innerHTML = head + '<tbody>' + body + '</tbody>';
  }

  // -- games in progress -------------------------------------------------------------------
  var WORDS = { pass: 'passes', take: 'takes the upcard', stock: 'draws from the stock',
    pile: 'takes from the pile', discard: 'discards', knock: 'knocks, discarding',
    biggin: 'goes big gin' };

  function moveText(g, m) {
    return esc(g.players[m.p]) + ' ' + (WORDS[m.k] || esc(m.k)) + (m.c ? ' ' + chip(m.c) : '');
  }

  function renderLive(list) {
    $('live-none').hidden = list.length > 0;
    $('live-games').innerHTML = list.map(function (g) {
      var cols = g.totals.length;
      var who = g.players.map(function (name, p) {
        var role = '';
        if (g.roles) role = g.roles.box === p ? ' (box)' : g.roles.captain === p ? ' (captain)' : ' (sits out)';
        var score = g.totals.map(function (t) { return t[p]; }).join(' / ');
        return '<span class="' + (g.to === p ? 'turn' : '') + '" data-player="' + p + '">' +
          esc(name) + role + (g.dealer === p ? ' (dealer)' : '') + ': ' + score + '</span>';
      }).join('');
      var last = g.last ? '<p class="info">' + (g.last.winner === null
        ? 'Hand ' + g.last.hand + ' was drawn.'
        : esc(g.players[g.last.winner]) + ' won hand ' + g.last.hand + ' (' +
          esc(g.last.outcome) + '), ' + g.last.points + ' points.') + '</p>' : '';
      return '<article class="live-game" data-live-game="' + g.g + '" data-hand="' + g.hand +
        '" data-move="' + g.move + '" aria-label="game ' + g.g + ' in progress">' +
        '<h3>Game ' + g.g + ', hand ' + g.hand + ' (knock limit ' + g.limit + ')' +
        (cols > 1 ? ', scores in ' + cols + ' games' : '') + '</h3>' +
        '<div class="who">' + who + '</div>' +
        '<p>To move: ' + esc(g.players[g.to]) + ' (' + esc(g.phase) + ') \u00b7 stock ' + g.stock +
        ' cards</p><p>Discard pile (top last): ' + (chips(g.pile) || 'empty') + '</p>' + last +
        '<ol class="moves-line">' + g.moves.map(function (m) {
          return '<li>' + moveText(g, m) + '</li>';
        }).join('') + '</ol></article>';
    }).join('');
    // The newest moves in sight: each list scrolled to its end.
    document.querySelectorAll('.moves-line').forEach(function (ol) { ol.scrollTop = ol.scrollHeight; });
  }

  // -- finished games ----------------------------------------------------------------------
  function finishedRow(f) {
    var winner = f.winner === null ? 'drawn' : esc(f.players[f.winner]);
    return '<tr data-finished="' + f.n + '"><td class="text"><a href="/game/' + f.n + '#g' + f.n +
      'h1m0">game ' + f.n + '</a></td><td class="text">' + f.players.map(esc).join(' vs ') +
      '</td><td class="text">' + winner + '</td><td class="text">' + esc(f.how) + '</td><td>' +
      f.hands + '</td><td class="text">' +
      (f.fault ? esc(f.players[f.fault.p]) + ': ' + esc(f.fault.kind) : '') + '</td></tr>';
  }

  function renderFinished(state) {
    var body = $('finished').tBodies[0];
    if (state.first === 0) { finished = []; body.innerHTML = ''; }
    if (!state.finished.length) return;
    finished = finished.concat(state.finished);
    body.insertAdjacentHTML('beforeend', state.finished.map(finishedRow).join(''));
  }

  // A finished game whose deal other games still to be played share: marked until they are over.
  function renderWithheld(list) {
    var now = {};
    (list || []).forEach(function (n) { now[n] = true; });
    Object.keys(withheld).concat(Object.keys(now)).forEach(function (n) {
      var row = document.querySelector('[data-finished="' + n + '"]');
      if (!row) return;
      var note = row.querySelector('.withheld-note');
      if (now[n]) {
        row.setAttribute('data-withheld', '');
        row.title = 'Games still to be played are dealt the same cards: its replay opens' +
          ' when they are over.';
        if (!note) row.cells[0].insertAdjacentHTML('beforeend',
          ' <span class="withheld-note">(deal withheld)</span>');
      } else {
        row.removeAttribute('data-withheld');
        row.removeAttribute('title');
        if (note) note.remove();
      }
    });
    withheld = now;
  }

  // -- the stream ----------------------------------------------------------------------------
  function render(state) {
    if ($('title').textContent !== state.title) {
      $('title').textContent = state.title;
      document.title = state.title + ' (live)';
    }
    renderFinished(state);
    renderWithheld(state.withheld);
    renderProgress(state);
    renderStandings(state.standings || {});
    renderLive(state.live);
    root.setAttribute('data-version', String(state.v));
    if (!root.hasAttribute('data-ready')) root.setAttribute('data-ready', '1');
  }

  var source = new EventSource('/events');
  source.addEventListener('state', function (e) { render(JSON.parse(e.data)); });
  source.addEventListener('error', function () {
    // The referee stopped, or restarted (a --resume): the browser reconnects by itself, and
    // the first state it is sent then draws the page afresh.
    $('status').textContent = 'reconnecting';
  });
})();
