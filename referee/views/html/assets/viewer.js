/* ginproto replay viewer and match report.
 *
 * This script draws; it knows no rule of the game. Every position (both hands arranged in
 * melds and deadwood, the pile, the stock, who is to move, the showdown and its points) was
 * computed in Python by the rules engine and is read here from the page's data.
 *
 * Stable hooks: every face-up card is an <svg data-card="Th">; the position shown is
 * <html data-position="g2h3m41">, also the URL fragment.
 */
(function () {
  'use strict';

  var RANKS = { A: 'A', T: '10', J: 'J', Q: 'Q', K: 'K' };
  var RANK_NAMES = { A: 'ace', T: 'ten', J: 'jack', Q: 'queen', K: 'king', '2': 'two',
    '3': 'three', '4': 'four', '5': 'five', '6': 'six', '7': 'seven', '8': 'eight', '9': 'nine' };
  var SUITS = { c: ['\u2663', 'clubs', 'black'], d: ['\u2666', 'diamonds', 'red'],
    h: ['\u2665', 'hearts', 'red'], s: ['\u2660', 'spades', 'black'] };
  var SERIES = 'abcdef';  // the palette of viewer.css, repeated past six series

  var root = document.documentElement;
  var index = JSON.parse(document.getElementById('ginproto-index').textContent);
  var charts = JSON.parse(document.getElementById('ginproto-charts').textContent);
  var byNumber = {};
  index.forEach(function (g) { byNumber[g.n] = g; });
  var cache = {};
  var loaded = {};
  var state = { g: null, h: 0, m: 0, view: 'all', game: null };
  var $ = function (id) { return document.getElementById(id); };

  function esc(text) {
    return String(text).replace(/[&<>"']/g, function (c) {
      return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c];
    });
  }

  // -- cards ----------------------------------------------------------------------------
  function split(text) {
    var out = [];
    for (var i = 0; i + 1 < text.length; i += 2) out.push(text.substr(i, 2));
    return out;
  }
  function cardName(code) {
    return RANK_NAMES[code[0]] + ' of ' + SUITS[code[1]][1];
  }
  function card(code, extra) {
    var suit = SUITS[code[1]];
    var rank = RANKS[code[0]] || code[0];
    var name = cardName(code);
    return '<svg class="card ' + suit[2] + (extra ? ' ' + extra : '') + '" data-card="' + code +
      '" role="img" aria-label="' + name + '" viewBox="0 0 50 70"><title>' + name +
      '</title><rect class="face" x="1" y="1" width="48" height="68" rx="5"/>' +
      // "10" is drawn no wider than 18 units, so that it shows whole in the fanned pile.
      '<text class="rank" x="4" y="18"' +
      (rank.length > 1 ? ' textLength="18" lengthAdjust="spacingAndGlyphs"' : '') + '>' + rank +
      '</text>' +
      '<text class="pip" x="5" y="34">' + suit[0] + '</text>' +
      '<text class="big" x="30" y="62" text-anchor="middle">' + suit[0] + '</text></svg>';
  }
  function back() {
    return '<svg class="card back" role="img" aria-label="a face-down card" viewBox="0 0 50 70">' +
      '<title>a face-down card</title><rect class="face" x="1" y="1" width="48" height="68" rx="5"/>' +
      '<path d="M6 6 L44 64 M44 6 L6 64"/></svg>';
  }
  function cards(text, last) {
    return split(text).map(function (c) { return card(c, c === last ? 'last' : ''); }).join('');
  }
  // A hand as the rules engine arranged it: "7c8c9c TdThTs|2d5h".
  function arranged(text, last, deadwood) {
    var parts = text.split('|');
    var melds = parts[0] ? parts[0].split(' ') : [];
    var html = melds.map(function (m) {
      var names = split(m).map(cardName).join(', ');
      return '<span class="meld" role="group" aria-label="meld: ' + names + '">' +
        cards(m, last) + '</span>';
    }).join('');
    if (parts[1]) {
      html += '<span class="deadwood" role="group" aria-label="deadwood' +
        (deadwood === undefined ? '' : ' ' + deadwood) + '">' + cards(parts[1], last) + '</span>';
    }
    return html;
  }
  function count(text) { return text.replace(/[ |]/g, '').length / 2; }

  // -- data -----------------------------------------------------------------------------
  function unpack(n) {
    if (cache[n]) return cache[n];
    var text = $('ginproto-game-' + n).textContent;
    var bytes = Uint8Array.from(atob(text), function (c) { return c.charCodeAt(0); });
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
    cache[n] = new Response(stream).json();
    return cache[n];
  }

  function player(game, p) {
    var name = game.players[p] === undefined ? '?' : game.players[p];
    return 'player ' + p + ' (' + esc(name) + ')';
  }

  // -- the position ---------------------------------------------------------------------
  function positionId(g, h, m) { return 'g' + g + 'h' + h + 'm' + m; }

  function parseId(text) {
    var m = /^#?g(\d+)(?:h(\d+)(?:m(\d+))?)?$/.exec(text || '');
    if (!m) return null;
    return { g: +m[1], h: m[2] === undefined ? null : +m[2], m: m[3] === undefined ? 0 : +m[3] };
  }

  function go(g, h, m, keepHash) {
    if (!byNumber[g]) g = index[0].n;
    if (loaded[g]) {  // at once, so that quick key presses each take one step
      show(loaded[g], g, h, m, keepHash);
      return Promise.resolve();
    }
    return unpack(g).then(function (game) {
      loaded[g] = game;
      show(game, g, h, m, keepHash);
    });
  }

  function show(game, g, h, m, keepHash) {
    {
      var hands = game.hands;
      if (!hands.length) { h = 0; m = 0; }
      else {
        if (h === null || h < 1) h = 1;
        if (h > hands.length) h = hands.length;
        var last = hands[h - 1].pos.length - 1;
        if (m < 0) m = 0;
        if (m > last) m = last;
      }
      var newGame = state.game !== game;
      state.g = g; state.h = h; state.m = m; state.game = game;
      render(newGame);
      var id = positionId(g, h, m);
      root.setAttribute('data-position', id);
      if (!keepHash && location.hash !== '#' + id) {
        try { history.replaceState(null, '', '#' + id); } catch (e) { location.hash = id; }
      }
    }
  }

  function step(delta) {
    var game = state.game;
    if (!game || !game.hands.length) return;
    var hand = game.hands[state.h - 1];
    var m = state.m + delta;
    if (m >= hand.pos.length) {
      if (state.h < game.hands.length) go(state.g, state.h + 1, 0);
      return;
    }
    if (m < 0) {
      if (state.h > 1) go(state.g, state.h - 1, game.hands[state.h - 2].pos.length - 1);
      return;
    }
    go(state.g, state.h, m);
  }

  function viewerSeat(hand) {
    // The seat whose cards the chosen player may see: its own, the captain's for the sitter.
    if (state.view === 'all') return null;
    var p = +state.view;
    var seat = hand.seats.indexOf(p);
    return seat < 0 ? 1 : seat;
  }

  function render(newGame) {
    var game = state.game;
    if (newGame) renderGame(game);
    $('game-pick').value = String(state.g);
    var hand = game.hands[state.h - 1];
    if (!hand) { renderEmpty(game); renderSheet(game, null); return; }
    $('hand-pick').value = String(state.h);
    var pos = hand.pos[state.m];
    var last = hand.pos.length - 1;
    $('where').textContent = 'Hand ' + hand.n + ': ' + (state.m === 0
      ? 'the deal, ' + (last === 0 ? 'and no move after it'
        : 'before its ' + (last === 1 ? 'one move' : last + ' moves'))
      : 'after move ' + state.m + ' of ' + last);
    renderTable(game, hand, pos);
    renderShowdown(game, hand, state.m === last);
    renderMoves(game, hand);
    renderSheet(game, hand);
    ['first', 'prev'].forEach(function (id) { $(id).disabled = state.m === 0 && state.h <= 1; });
    ['next', 'last'].forEach(function (id) {
      $(id).disabled = state.m === last && state.h >= game.hands.length;
    });
  }

  function renderEmpty(game) {
    ['seat-0', 'seat-1', 'sitter', 'pile', 'stock-count', 'stock-back', 'pile-count', 'offer',
      'moves'].forEach(function (id) { $(id).innerHTML = ''; });
    $('where').textContent = 'no hand was dealt';
    $('last-move').innerHTML = faultText(game);
    $('showdown').hidden = true;
  }

  function renderGame(game) {
    var pick = $('hand-pick');
    pick.innerHTML = game.hands.map(function (h) {
      return '<option value="' + h.n + '">' + h.n + '</option>';
    }).join('');
    var view = $('view-pick');
    var opts = '<option value="all">both hands</option>';
    game.players.forEach(function (name, p) {
      opts += '<option value="' + p + '">' + esc(name) + "'s view</option>";
    });
    view.innerHTML = opts;
    view.value = state.view in game.players || state.view === 'all' ? state.view : 'all';
    state.view = view.value;
    var info = game.variant + ' to ' + game.target + ' \u00b7 ' +
      game.players.map(function (n, p) { return player(game, p); }).join(' vs ');
    Object.keys(game.info).forEach(function (k) { info += ' \u00b7 ' + esc(k) + ' ' + esc(game.info[k]); });
    if (game.rules.length) info += ' \u00b7 rules changed: ' + esc(game.rules.join(' '));
    if (game.cut) info += ' \u00b7 cut for roles: ' + game.cut.join(' ');
    $('game-info').innerHTML = info;
    renderScoreChart(game);
  }

  function roleOf(hand, p) {
    if (!hand.roles) return '';
    if (hand.roles.box === p) return 'box';
    return hand.roles.captain === p ? 'captain' : 'sitter';
  }

  function renderTable(game, hand, pos) {
    var mv = pos.mv;
    var over = pos.ph === 'over';
    var see = viewerSeat(hand);
    [0, 1].forEach(function (seat) {
      var p = hand.seats[seat];
      var el = $('seat-' + seat);
      var head = '<div class="seat-head"><span class="name">' + player(game, p) + '</span>';
      var role = roleOf(hand, p);
      if (role) head += '<span class="badge">' + role + '</span>';
      if (hand.dealer === p) head += '<span class="badge">dealer</span>';
      if (pos.to === p) head += '<span class="badge turn">to move: ' + pos.ph + '</span>';
      if (mv && mv.p === p) head += '<span class="badge">last move</span>';
      var hidden = see !== null && see !== seat && !over;
      if (!hidden) head += '<span class="badge">deadwood ' + pos.dw[seat] + '</span>';
      head += '</div>';
      var body;
      if (hidden) {
        body = '';
        for (var i = count(pos.h[seat]); i > 0; i--) body += back();
        body = '<span class="deadwood" aria-label="' + count(pos.h[seat]) +
          ' face-down cards">' + body + '</span>';
      } else {
        body = arranged(pos.h[seat], mv && mv.p === p ? mv.c : null, pos.dw[seat]);
      }
      el.innerHTML = head + '<div class="cards" data-player="' + p + '">' + body + '</div>';
      el.className = 'seat' + (pos.to === p ? ' to-move' : '');
      el.setAttribute('aria-label', 'cards of ' + (game.players[p] || p));
    });
    if (hand.roles) {
      var s = hand.roles.sitter;
      $('sitter').innerHTML = player(game, s) + ' sits out this hand and advises the captain.';
    } else {
      $('sitter').innerHTML = '';
    }
    $('stock-back').innerHTML = back();
    $('stock-count').textContent = pos.st + ' cards';
    var pile = split(pos.pile);
    $('pile-count').textContent =
      '(' + pile.length + (pile.length === 1 ? ' card' : ' cards') + ', top last)';
    $('pile').innerHTML = pile.map(function (c, i) {
      var top = i === pile.length - 1;
      return card(c, top && mv && mv.d === c ? 'last' : '');
    }).join('');
    $('offer').innerHTML = pos.ph === 'offer'
      ? 'Upcard offer: ' + card(hand.upcard) + ' ' + player(game, pos.to) + ' may take it or pass.'
      : 'Upcard ' + hand.upcard + ' \u00b7 knock limit ' + hand.limit;
    var text = state.m === 0 ? 'Hand ' + hand.n + ' is dealt.' : moveText(game, hand, mv, see);
    if (state.m === hand.pos.length - 1 && game.fault && game.fault.hand === hand.n) {
      text += ' ' + faultText(game);
    }
    $('last-move').innerHTML = text;
  }

  function moveText(game, hand, mv, see) {
    var hidden = see !== null && hand.seats[see] !== mv.p && mv.th;
    var text = player(game, mv.p) + ' ' + esc(hidden ? mv.th : mv.t) + '.';
    if (mv.adv) {
      text += ' <span class="advice">(' + player(game, mv.advp) + ' advised: ' + esc(mv.adv) +
        (mv.follow ? ', followed' : ', not followed') + ')</span>';
    }
    return text;
  }

  function faultText(game) {
    var f = game.fault;
    if (!f) return '';
    return '<span class="fault-text">Fault: ' + player(game, f.p) + ' forfeits the game (' +
      esc(f.kind) + '): ' + esc(f.detail) + '</span>';
  }

  function renderShowdown(game, hand, atEnd) {
    var el = $('showdown');
    var r = hand.result;
    if (!atEnd || !r) { el.hidden = true; el.innerHTML = ''; return; }
    var html = '<h3>Showdown</h3>';
    var sd = hand.show;
    if (sd) {
      html += side('knocker', player(game, sd.knocker.p) + ' knocks', sd.knocker);
      if (sd.layoffs.length) {
        html += '<div class="layoffs"><strong>Layoffs</strong>, in order:<ol>' +
          sd.layoffs.map(function (l) {
            return '<li>' + card(l.c) + ' on ' + cards(l.on) + '</li>';
          }).join('') + '</ol></div>';
      }
      html += side('defender', player(game, sd.defender.p) + ' defends', sd.defender);
    }
    html += '<p class="points" data-points="' + r.points + '" data-outcome="' + r.outcome +
      '">' + esc(r.text) + ' \u2014 ' + esc(r.how) + '</p>';
    el.innerHTML = html;
    el.hidden = false;
  }

  function side(cls, title, shown) {
    var melds = shown.melds.map(function (m) {
      return '<span class="meld" role="group" aria-label="meld">' + cards(m) + '</span>';
    }).join('') || 'none';
    return '<div class="' + cls + '"><strong>' + title + '</strong>' +
      '<div class="cards"><span class="group-label">melds</span>' + melds + '</div>' +
      '<div class="cards"><span class="group-label">deadwood</span>' +
      (shown.dead ? '<span class="deadwood" role="group" aria-label="deadwood">' +
        cards(shown.dead) + '</span>' : '') +
      '<span class="group-label">= ' + shown.dw + '</span></div></div>';
  }

  function renderMoves(game, hand) {
    var html = '';
    var see = viewerSeat(hand);
    for (var m = 1; m < hand.pos.length; m++) {
      var mv = hand.pos[m].mv;
      var text = see !== null && hand.seats[see] !== mv.p && mv.th ? mv.th : mv.t;
      html += '<li class="' + (m === state.m ? 'current' : '') + '" value="' + m + '">' +
        '<button type="button" data-m="' + m + '">' + player(game, mv.p) + ' ' + esc(text) +
        '</button>' + (mv.adv ? ' <span class="advice">advice: ' + esc(mv.adv) + '</span>' : '') +
        '</li>';
    }
    var list = $('moves');
    list.innerHTML = html;
    var current = list.querySelector('li.current');
    if (current && current.scrollIntoView) current.scrollIntoView({ block: 'nearest' });
  }

  function renderSheet(game, current) {
    var cols = game.columns;
    var players = game.players;
    var head = '<tr><th>Hand</th><th class="text">Dealer, roles</th><th class="text">Result</th>';
    for (var g = 0; g < cols; g++) {
      players.forEach(function (name) {
        head += '<th>' + (cols > 1 ? 'Game ' + (g + 1) + ': ' : '') + esc(name) + '</th>';
      });
    }
    var rows = '';
    game.hands.forEach(function (h) {
      var r = h.result;
      var roles = h.roles ? 'box ' + esc(players[h.roles.box]) + ', captain ' +
        esc(players[h.roles.captain]) + ', sitter ' + esc(players[h.roles.sitter])
        : 'dealer ' + esc(players[h.dealer]);
      rows += '<tr data-hand="' + h.n + '"' + (current === h ? ' class="current"' : '') + '>' +
        '<td><button type="button" data-hand="' + h.n + '">' + h.n + '</button></td>' +
        '<td class="text">' + roles + '</td><td class="text">' +
        (r ? esc(r.text) + (r.outcome === 'draw' ? '' : '<br><small>' + esc(r.how) + '</small>')
          : 'not finished') + '</td>';
      for (var g = 0; g < cols; g++) {
        players.forEach(function (name, p) {
          var total = h.totals ? h.totals[g][p] : '';
          var entered = r && r.winner === p && r.outcome !== 'draw' &&
            (cols === 1 || r.games.indexOf(g + 1) >= 0);
          rows += '<td data-game="' + (g + 1) + '" data-player="' + p + '" data-total="' + total +
            '"' + (entered ? ' data-entered="' + r.points + '" class="entered"' : ' class="muted"') +
            '>' + (entered ? '+' + r.points + ' = ' : '') + total + '</td>';
        });
      }
      rows += '</tr>';
    });
    if (game.fault) {
      rows += '<tr class="fault"><td></td><td class="text" colspan="' + (2 + cols * players.length) +
        '">' + faultText(game) + '</td></tr>';
    }
    if (game.end) {
      var e = game.end;
      var win = e.winner === null ? 'a tie' : 'won by ' + player(game, e.winner);
      rows += '<tr class="end"><td></td><td class="text" colspan="2">Game over (' + esc(e.how) +
        '): ' + win + (e.games.length ? '; games won by ' + e.games.map(function (w) {
          return w === null ? 'nobody' : esc(players[w]);
        }).join(', ') : '') + '</td>';
      for (var g2 = 0; g2 < cols; g2++) {
        players.forEach(function (name, p) {
          rows += '<td data-final="' + (g2 + 1) + '" data-player="' + p + '">' + e.scores[g2][p] +
            '</td>';
        });
      }
      rows += '</tr>';
    }
    $('sheet').innerHTML = '<table class="sheet"><thead>' + head + '</tr></thead><tbody>' + rows +
      '</tbody></table>';
  }

  // -- charts (Chartist) ------------------------------------------------------------------
  // A series' class: its own (an interval or a bound is drawn in grey, dashed) or the next
  // colour of the palette (viewer.css), so that the legend and the lines agree.
  function seriesClass(classes, i) {
    return (classes && classes[i]) || 'ct-series-' + SERIES[i % SERIES.length];
  }

  function withClasses(series, classes) {
    return series.map(function (data, i) {
      return { data: data, className: seriesClass(classes, i) };
    });
  }

  function legend(el, names, classes) {
    el.innerHTML = names.map(function (name, i) {
      return '<span class="' + seriesClass(classes, i) + '"><svg viewBox="0 0 24 10"' +
        ' aria-hidden="true"><line class="ct-line" x1="0" y1="5" x2="24" y2="5"/></svg> ' +
        esc(name) + '</span>';
    }).join('');
  }

  function renderScoreChart(game) {
    var labels = ['0'];
    var names = [];
    var series = [];
    for (var g = 0; g < game.columns; g++) {
      game.players.forEach(function (name, p) {
        names.push((game.columns > 1 ? 'game ' + (g + 1) + ': ' : '') + name);
        series.push([0]);
      });
    }
    game.hands.forEach(function (h) {
      if (!h.totals) return;
      labels.push(String(h.n));
      var i = 0;
      h.totals.forEach(function (col) { col.forEach(function (v) { series[i++].push(v); }); });
    });
    var el = $('score-chart');
    el.innerHTML = '';
    el.setAttribute('role', 'img');
    el.setAttribute('aria-label', 'Line chart of the running score of each player per hand');
    new Chartist.LineChart(el, { labels: labels, series: withClasses(series) },
      { showPoint: labels.length < 40, lineSmooth: false, fullWidth: true,
        axisX: { labelInterpolationFnc: thin(labels.length) },
        chartPadding: { right: 20 } });
    legend($('score-legend'), names);
  }

  function thin(n) {
    var every = Math.max(1, Math.ceil(n / 20));
    return function (value, i) { return i % every === 0 ? value : null; };
  }

  function renderReportCharts() {
    Object.keys(charts).forEach(function (id) {
      var spec = charts[id];
      var el = $(id);
      if (!el) return;
      var data = { labels: spec.labels, series: withClasses(spec.series, spec.classes) };
      var options = { fullWidth: true, chartPadding: { right: 20 },
        axisX: { labelInterpolationFnc: thin(spec.labels.length) } };
      if (spec.type === 'bar') {
        new Chartist.BarChart(el, data, options);
      } else {
        options.showPoint = spec.labels.length < 40;
        options.lineSmooth = false;
        new Chartist.LineChart(el, data, options);
      }
      var key = $(id + '-legend');
      if (key) legend(key, spec.names, spec.classes);
    });
  }

  // -- events -----------------------------------------------------------------------------
  function start() {
    renderReportCharts();
    if (!index.length) {
      root.setAttribute('data-ready', String(Math.round(performance.now())));
      return;
    }
    $('game-pick').innerHTML = index.map(function (g) {
      return '<option value="' + g.n + '">' + g.n + ': ' + g.players.map(esc).join(' vs ') +
        '</option>';
    }).join('');
    $('game-pick').addEventListener('change', function (e) { go(+e.target.value, 1, 0); });
    $('hand-pick').addEventListener('change', function (e) { go(state.g, +e.target.value, 0); });
    $('view-pick').addEventListener('change', function (e) {
      state.view = e.target.value;
      go(state.g, state.h, state.m);
    });
    $('first').addEventListener('click', function () { go(state.g, state.h, 0); });
    $('last').addEventListener('click', function () { go(state.g, state.h, 1e9); });
    $('prev').addEventListener('click', function () { step(-1); });
    $('next').addEventListener('click', function () { step(1); });
    $('moves').addEventListener('click', function (e) {
      var b = e.target.closest('button[data-m]');
      if (b) go(state.g, state.h, +b.getAttribute('data-m'));
    });
    $('sheet').addEventListener('click', function (e) {
      var b = e.target.closest('button[data-hand]');
      if (b) go(state.g, +b.getAttribute('data-hand'), 0);
    });
    document.addEventListener('keydown', function (e) {
      if (e.altKey || e.ctrlKey || e.metaKey) return;
      var keys = { ArrowRight: function () { step(1); }, ArrowLeft: function () { step(-1); },
        Home: function () { go(state.g, state.h, 0); },
        End: function () { go(state.g, state.h, 1e9); },
        PageDown: function () { go(state.g, state.h + 1, 0); },
        PageUp: function () { go(state.g, Math.max(1, state.h - 1), 0); } };
      if (!keys[e.key]) return;
      e.preventDefault();
      keys[e.key]();
    }, true);
    window.addEventListener('hashchange', function () {
      var at = parseId(location.hash);
      if (at) go(at.g, at.h, at.m, true);
    });
    var at = parseId(location.hash) || { g: index[0].n, h: 1, m: 0 };
    go(at.g, at.h, at.m).then(function () {
      // Milliseconds from the start of the navigation to the first position drawn.
      root.setAttribute('data-ready', String(Math.round(performance.now())));
    });
  }

  start();
})();
