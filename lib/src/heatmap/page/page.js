(function () {
  'use strict';
  var D = JSON.parse(document.getElementById('attn-data').textContent);
  var R = D.rows, C = D.cols, N = R * C;
  var SVG = 'http://www.w3.org/2000/svg';
  var FONT = '12px system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif';
  var LABEL_MAX = 150;

  function $(id) { return document.getElementById(id); }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function svg(tag, attrs) {
    var e = document.createElementNS(SVG, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    return e;
  }

  // The numbers: base64 little-endian float32 (or float64), panel after
  // panel, each rows x cols; states: 0 a value, 1 masked, 2 NaN.
  function bytes(b64) {  // in pieces: atob refuses strings of some 50 MB
    var pad = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0;
    var a = new Uint8Array(b64.length / 4 * 3 - pad), at = 0, piece = 1 << 22;
    for (var p = 0; p < b64.length; p += piece) {
      var s = atob(b64.substr(p, piece));
      for (var i = 0; i < s.length; ++i) a[at++] = s.charCodeAt(i);
    }
    return a;
  }
  var raw = new DataView(bytes(document.getElementById('attn-values').textContent).buffer);
  var f32 = D.encoding === 'f32';
  var states = D.states ? bytes(document.getElementById('attn-states').textContent) : null;
  var cachedPanel = -1, cachedValues = null;
  function values(k) {
    if (k === cachedPanel) return cachedValues;
    var out = new Float64Array(N), base = k * N * (f32 ? 4 : 8);
    for (var i = 0; i < N; ++i) {
      out[i] = f32 ? raw.getFloat32(base + 4 * i, true) : raw.getFloat64(base + 8 * i, true);
    }
    cachedPanel = k;
    cachedValues = out;
    return out;
  }
  function state(k, i) { return states ? states[k * N + i] : 0; }
  // A head summary's cell: the head's weights, small, in the tooltip.
  var PR = D.pattern_rows, PC = D.pattern_cols;
  var patterns = PR ? new DataView(bytes(document.getElementById('attn-patterns').textContent).buffer) : null;
  function drawPattern(i) {
    var box = el('div', 'pattern'), scale = Math.max(2, Math.floor(120 / Math.max(PR, PC)));
    box.appendChild(el('div', 'caption', D.pattern_title + ' (colours from 0 to its largest)'));
    var c = el('canvas'), g = c.getContext('2d'), base = i * PR * PC, top = 0, r, k;
    c.width = PC * scale;
    c.height = PR * scale;
    for (k = 0; k < PR * PC; ++k) top = Math.max(top, patterns.getFloat32(4 * (base + k), true));
    for (r = 0; r < PR; ++r) {
      for (k = 0; k < PC; ++k) {
        var v = patterns.getFloat32(4 * (base + r * PC + k), true), t = top > 0 ? v / top : 0;
        g.fillStyle = css(lut[Math.max(0, Math.min(255, Math.round(t * 255)))]);
        g.fillRect(k * scale, r * scale, scale, scale);
      }
    }
    box.appendChild(c);
    return box;
  }

  // Colours: the PNG's table and range (lut_index in heatmap/color.h).
  function hexRgb(h) {
    return [parseInt(h.substr(0, 2), 16), parseInt(h.substr(2, 2), 16), parseInt(h.substr(4, 2), 16)];
  }
  var lut = [], ink = [];
  for (var i = 0; i < 256; ++i) {
    lut.push(hexRgb(D.lut.substr(6 * i, 6)));
    ink.push(D.lut_ink.charAt(i) === '1' ? '#fff' : '#000');
  }
  var maskedFill = hexRgb(D.masked_fill.substr(1)), missing = hexRgb(D.missing.substr(1));
  // Where v lies from the bottom colour (0) to the top (1): ColorNorm's
  // fraction (heatmap.h), linear, log or power.
  function frac(v) {
    if (D.color_scale === 'log') {
      if (v !== v) return v;
      if (!(v > 0)) return -1;
      return (Math.log(v) - Math.log(D.lo)) / (Math.log(D.hi) - Math.log(D.lo));
    }
    var t = (v / 2 - D.lo / 2) / (D.hi / 2 - D.lo / 2);
    return D.color_scale === 'power' && t > 0 ? Math.pow(t, D.gamma) : t;
  }
  function lutIndex(v) {
    var t = frac(v);
    if (!(t > 0)) return 0;
    if (t >= 1) return 255;
    return Math.floor(t * 255 + 0.5);
  }
  function css(c) { return 'rgb(' + c[0] + ',' + c[1] + ',' + c[2] + ')'; }

  function fmt(v) {
    if (isNaN(v)) return 'nan';
    if (!isFinite(v)) return v > 0 ? 'inf' : '-inf';
    if (v === 0) return '0';
    var a = Math.abs(v);
    if (a >= 1e-4 && a < 1e6) return String(parseFloat(v.toPrecision(6)));
    return v.toExponential(5).replace(/\.?0+e/, 'e');
  }
  function tickText(v) { return String(parseFloat(v.toPrecision(4))); }
  function niceStep(x) {
    var p = Math.pow(10, Math.floor(Math.log10(x))), m = x / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
  }

  // What row or column i (of the shown cells) is called; a block of
  // factor x factor cells is named by its index ranges.
  function name(which, i) {
    var labels = which === 'row' ? D.row_labels : D.col_labels;
    if (D.factor === 1) return labels.length ? labels[i] : String(i);
    var n = which === 'row' ? D.source_rows : D.source_cols;
    var a = i * D.factor, b = Math.min(n, a + D.factor) - 1;
    return a === b ? String(a) : a + '\u2013' + b;
  }
  function indexText(which, i) {
    if (D.factor === 1) return String(i);
    return name(which, i);
  }

  // Panels: which one is shown, and the selectors.
  var current = 0;
  function find(batch, head) {
    for (var k = 0; k < D.panels.length; ++k) {
      if (D.panels[k].batch === batch && D.panels[k].head === head) return k;
    }
    return -1;
  }
  function distinct(key) {
    var out = [];
    D.panels.forEach(function (p) { if (out.indexOf(p[key]) < 0) out.push(p[key]); });
    return out;
  }
  var batches = distinct('batch'), heads = distinct('head');
  var selects = {};
  function headName(h) { return h < 0 ? 'mean of heads' : 'head ' + h; }
  function addSelect(key, title, options, text) {
    if (options.length < 2) return;
    var label = el('label', null, title), s = el('select');
    s.id = 'select-' + key;
    options.forEach(function (o) {
      var opt = el('option', null, text(o));
      opt.value = String(o);
      s.appendChild(opt);
    });
    s.addEventListener('change', function () {
      var p = D.panels[current];
      var b = key === 'batch' ? Number(s.value) : p.batch;
      var h = key === 'head' ? Number(s.value) : p.head;
      var k = find(b, h);
      if (k >= 0) show(k);
    });
    label.appendChild(s);
    $('controls').appendChild(label);
    selects[key] = s;
  }
  addSelect('batch', D.batch_name, batches, String);
  addSelect('head', 'head', heads, function (h) { return h < 0 ? 'mean of heads' : String(h); });
  var keys = [];
  if (heads.length > 1) keys.push('\u2190 \u2192 head');
  if (batches.length > 1) keys.push('\u2191 \u2193 ' + D.batch_name);
  if (keys.length) $('controls').appendChild(el('span', 'keys', 'arrow keys: ' + keys.join(', ')));
  function step(key, by) {
    var list = key === 'batch' ? batches : heads, p = D.panels[current];
    var at = list.indexOf(p[key]) + by;
    if (at < 0 || at >= list.length) return;
    var k = key === 'batch' ? find(list[at], p.head) : find(p.batch, list[at]);
    if (k >= 0) show(k);
  }
  document.addEventListener('keydown', function (e) {
    if (e.target && e.target.tagName === 'SELECT') return;
    var moves = { ArrowLeft: ['head', -1], ArrowRight: ['head', 1], ArrowUp: ['batch', -1], ArrowDown: ['batch', 1] };
    var m = moves[e.key];
    if (!m) return;
    step(m[0], m[1]);
    e.preventDefault();
  });

  // One panel as an image of one pixel a cell.
  function image(k) {
    var v = values(k), c = document.createElement('canvas');
    c.width = C;
    c.height = R;
    var g = c.getContext('2d'), img = g.createImageData(C, R), px = img.data;
    for (var i = 0; i < N; ++i) {
      var s = state(k, i), col = s === 1 ? maskedFill : s === 2 ? missing : lut[lutIndex(v[i])];
      px[4 * i] = col[0];
      px[4 * i + 1] = col[1];
      px[4 * i + 2] = col[2];
      px[4 * i + 3] = 255;
    }
    g.putImageData(img, 0, 0);
    return c;
  }
  // The PNG's hatching: pixels with (x + y) mod 8 < 2.
  function hatch(g) {
    var p = document.createElement('canvas');
    p.width = p.height = 8;
    var h = p.getContext('2d');
    h.fillStyle = D.masked_fill;
    h.fillRect(0, 0, 8, 8);
    h.fillStyle = D.masked_hatch;
    for (var y = 0; y < 8; ++y) {
      for (var x = 0; x < 8; ++x) if ((x + y) % 8 < 2) h.fillRect(x, y, 1, 1);
    }
    return g.createPattern(p, 'repeat');
  }
  function fitText(g, s, w) {
    if (g.measureText(s).width <= w) return s;
    while (s.length > 1 && g.measureText(s + '\u2026').width > w) s = s.slice(0, -1);
    return s + '\u2026';
  }

  // The matrix: labels, cells, values, colour bar.
  var geo = null;
  function drawMatrix(k) {
    var canvas = $('matrix'), g = canvas.getContext('2d');
    var cell = Math.max(1, Math.min(52, Math.floor(560 / Math.max(R, C))));
    g.font = FONT;
    var rowStep = niceStep(Math.max(1, 15 / cell)), colStep = rowStep;
    var rowW = 0, colW = 0, i;
    for (i = 0; i < R; i += rowStep) rowW = Math.max(rowW, g.measureText(fitText(g, name('row', i), LABEL_MAX)).width);
    for (i = 0; i < C; i += colStep) colW = Math.max(colW, g.measureText(fitText(g, name('col', i), LABEL_MAX)).width);
    var upright = colW > cell * colStep - 4;
    var x0 = 20 + Math.ceil(rowW) + 8, y0 = (upright ? Math.ceil(colW) : 14) + 10;
    var w = C * cell, h = R * cell, barH = Math.max(h, 160);
    var barX = x0 + w + 26;
    var lo = D.lo, hi = D.hi, ticks = [lo, hi], tstep = niceStep((hi - lo) / 5);
    if (D.color_scale === 'log') {
      var e0 = Math.ceil(Math.log10(lo)), e1 = Math.floor(Math.log10(hi));
      var every = Math.max(1, Math.floor((e1 - e0 + 1 + 5) / 6));
      for (var e = e0; e <= e1; e += every) ticks.push(Math.pow(10, e));
    } else {
      for (var t = Math.ceil(lo / tstep) * tstep; t < hi; t += tstep) ticks.push(t);
    }
    var tickW = 0;
    ticks.forEach(function (t) { tickW = Math.max(tickW, g.measureText(tickText(t)).width); });
    var width = Math.ceil(barX + 14 + 6 + tickW + 26), height = Math.max(y0 + h, y0 + barH) + 26;
    var dpr = window.devicePixelRatio || 1;
    canvas.width = Math.round(width * dpr);
    canvas.height = Math.round(height * dpr);
    canvas.style.width = width + 'px';
    canvas.style.height = height + 'px';
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.fillStyle = '#fff';
    g.fillRect(0, 0, width, height);
    g.imageSmoothingEnabled = false;
    g.drawImage(image(k), x0, y0, w, h);
    var v = values(k);
    if (cell >= 12) {  // a 1-pixel gap between cells, as in the PNG
      g.fillStyle = '#fff';
      for (i = 1; i <= C; ++i) g.fillRect(x0 + i * cell - 1, y0, 1, h);
      for (i = 1; i <= R; ++i) g.fillRect(x0, y0 + i * cell - 1, w, 1);
    }
    if (states) {
      g.fillStyle = hatch(g);
      var gap = cell >= 12 ? 1 : 0;
      for (i = 0; i < N; ++i) {
        if (state(k, i) === 1) g.fillRect(x0 + (i % C) * cell, y0 + Math.floor(i / C) * cell, cell - gap, cell - gap);
      }
    }
    // Values in the cells, with the PNG's digits (--precision) and --annotate.
    if (D.annotate !== 'never' && (cell >= 34 || (D.annotate === 'always' && cell >= 12))) {
      var decimals = D.decimals;
      g.font = '11px system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif';
      g.textAlign = 'center';
      g.textBaseline = 'middle';
      for (i = 0; i < N; ++i) {
        var s = state(k, i);
        if (s === 1) continue;
        var text = s === 2 ? 'nan' : v[i].toFixed(decimals);
        if (D.annotate !== 'always' && g.measureText(text).width > cell - 4) continue;
        g.fillStyle = s === 2 ? '#000' : ink[lutIndex(v[i])];
        g.fillText(text, x0 + (i % C) * cell + cell / 2, y0 + Math.floor(i / C) * cell + cell / 2);
      }
    }
    g.font = FONT;
    g.fillStyle = '#333';
    g.textBaseline = 'middle';
    g.textAlign = 'right';
    for (i = 0; i < R; i += rowStep) g.fillText(fitText(g, name('row', i), LABEL_MAX), x0 - 6, y0 + (i + 0.5) * cell);
    for (i = 0; i < C; i += colStep) {
      var label = fitText(g, name('col', i), LABEL_MAX), cx = x0 + (i + 0.5) * cell;
      if (upright) {
        g.save();
        g.translate(cx, y0 - 6);
        g.rotate(-Math.PI / 2);
        g.textAlign = 'left';
        g.fillText(label, 0, 0);
        g.restore();
      } else {
        g.textAlign = 'center';
        g.fillText(label, cx, y0 - 12);
      }
    }
    g.fillStyle = '#777';
    g.textAlign = 'center';
    g.fillText(D.col_title, x0 + w / 2, y0 + h + 14);
    g.save();
    g.translate(9, y0 + h / 2);
    g.rotate(-Math.PI / 2);
    g.fillText(D.row_title, 0, 0);
    g.restore();
    // The colour bar: the table from bottom to top, ticks at round values.
    for (i = 0; i < barH; ++i) {
      g.fillStyle = css(lut[Math.round((1 - i / (barH - 1)) * 255)]);
      g.fillRect(barX, y0 + i, 14, 1);
    }
    g.fillStyle = '#333';
    g.textAlign = 'left';
    ticks.forEach(function (t, n) {
      var y = y0 + Math.round((D.color_scale === 'linear' ? (hi / 2 - t / 2) / (hi / 2 - lo / 2) : 1 - frac(t)) * (barH - 1));
      if (n > 1 && (y - y0 < 14 || y0 + barH - 1 - y < 14)) return;
      g.fillRect(barX + 14, y, 4, 1);
      g.fillText(tickText(t), barX + 20, y);
    });
    g.save();
    g.translate(barX + 20 + tickW + 16, y0 + barH / 2);
    g.rotate(-Math.PI / 2);
    g.textAlign = 'center';
    g.fillStyle = '#777';
    g.fillText(fitText(g, D.scale_name, barH), 0, 0);
    g.restore();
    geo = { x: x0, y: y0, cell: cell };
    canvas.dataset.x0 = x0;  // where the cells are, for tools that drive the page
    canvas.dataset.y0 = y0;
    canvas.dataset.cell = cell;
  }

  // The head view: queries left, keys right, a line from each query to
  // each key whose opacity is the weight's place in the colour range.
  var links = [], tokens = [];
  function note(box, text) { box.appendChild(el('p', 'note', text)); }
  function drawHeadView(k) {
    var box = $('headview');
    box.textContent = '';
    links = [];
    tokens = [];
    if (PR) {
      note(box, 'Not drawn: the cells are ' + D.row_title + ' and ' + D.col_title + ', not query and key tokens; hover a cell for its head\'s weights.');
      return;
    }
    if (D.factor !== 1) {
      note(box, 'Not drawn: the panel shows blocks of ' + D.factor + '\u00d7' + D.factor + ' cells, not single ' + D.row_title + ' and ' + D.col_title + '.');
      return;
    }
    if (D.lo < 0) {
      note(box, 'Not drawn: the head view shows non-negative values such as weights; these are signed.');
      return;
    }
    if (Math.max(R, C) > 128) {
      note(box, 'Not drawn: the head view is for up to 128 ' + D.row_title + ' and ' + D.col_title + '; this panel has ' + R + ' \u00d7 ' + C + '.');
      return;
    }
    var g = $('matrix').getContext('2d');
    g.font = FONT;
    var rowH = 24, pad = 8, left = [], right = [], lw = 0, rw = 0, i;
    for (i = 0; i < R; ++i) { left.push(fitText(g, name('row', i), 120)); lw = Math.max(lw, g.measureText(left[i]).width); }
    for (i = 0; i < C; ++i) { right.push(fitText(g, name('col', i), 120)); rw = Math.max(rw, g.measureText(right[i]).width); }
    lw = Math.ceil(lw * 1.1) + 16;  // room for the bold of a hovered token
    rw = Math.ceil(rw * 1.1) + 16;
    var span = 180, width = lw + span + rw, height = Math.max(R, C) * rowH + 2 * pad;
    var s = svg('svg', { width: width, height: height, viewBox: '0 0 ' + width + ' ' + height });
    var bg = svg('g', {}), lines = svg('g', {}), texts = svg('g', {});
    s.appendChild(bg);
    s.appendChild(lines);
    s.appendChild(texts);
    var v = values(k);
    for (var q = 0; q < R; ++q) {
      for (var c = 0; c < C; ++c) {
        var at = q * C + c;
        if (state(k, at) !== 0) continue;
        var t = Math.min(1, frac(v[at]));
        if (!(t > 0.002)) continue;
        var line = svg('line', { x1: lw + 4, y1: pad + (q + 0.5) * rowH, x2: lw + span - 4, y2: pad + (c + 0.5) * rowH, 'stroke-opacity': t.toFixed(3) });
        line.dataset.q = q;
        line.dataset.k = c;
        lines.appendChild(line);
        links.push(line);
      }
    }
    function token(side, i, text, full) {
      var x = side === 'q' ? lw - 6 : lw + span + 6, y = pad + (i + 0.5) * rowH;
      var back = svg('rect', { x: side === 'q' ? 0 : lw + span, y: y - rowH / 2 + 1, width: side === 'q' ? lw : rw, height: rowH - 2, fill: 'transparent', rx: 3 });
      var e = svg('text', { x: x, y: y, 'text-anchor': side === 'q' ? 'end' : 'start', 'dominant-baseline': 'central' });
      e.textContent = text;
      var tip = svg('title', {});
      tip.textContent = full;
      e.appendChild(tip);
      e.dataset.side = side;
      e.dataset.i = i;
      back.dataset.side = side;
      back.dataset.i = i;
      e.classList.add('token');
      var enter = function () { isolate(side, i); };
      e.addEventListener('mouseenter', enter);
      back.addEventListener('mouseenter', enter);
      e.addEventListener('mouseleave', function () { isolate(null, 0); });
      back.addEventListener('mouseleave', function () { isolate(null, 0); });
      bg.appendChild(back);
      texts.appendChild(e);
      tokens.push(e, back);
    }
    for (i = 0; i < R; ++i) token('q', i, left[i], name('row', i));
    for (i = 0; i < C; ++i) token('k', i, right[i], name('col', i));
    box.appendChild(s);
  }
  // Only the lines of one token (side 'q' or 'k'), or all with side null.
  function isolate(side, i) {
    links.forEach(function (l) {
      var keep = side === null || Number(side === 'q' ? l.dataset.q : l.dataset.k) === i;
      l.style.display = keep ? '' : 'none';
    });
    tokens.forEach(function (t) {
      t.classList.toggle('active', side !== null && t.dataset.side === side && Number(t.dataset.i) === i);
    });
  }

  // The tooltip: the panel, the query, the key and the value under the pointer.
  var tip = $('tooltip'), cursor = $('cursor');
  function row(table, head, text, cls) {
    var tr = el('tr', cls);
    tr.appendChild(el('th', null, head));
    tr.appendChild(el('td', null, text));
    table.appendChild(tr);
  }
  function hover(q, c, px, py) {
    var k = current, i = q * C + c, s = state(k, i), v = values(k)[i];
    tip.textContent = '';
    if (D.panels[k].caption) tip.appendChild(el('div', 'caption', D.panels[k].caption));
    var table = el('table');
    var many = D.factor > 1;
    row(table, many ? D.row_title : D.row_name, many ? name('row', q) : name('row', q) + (D.row_labels.length ? '  (' + q + ')' : ''));
    row(table, many ? D.col_title : D.col_name, many ? name('col', c) : name('col', c) + (D.col_labels.length ? '  (' + c + ')' : ''));
    row(table, D.scale_name, s === 1 ? 'masked' : fmt(v), 'value');
    if (many) row(table, 'block', D.reduce + ' of ' + D.factor + '\u00d7' + D.factor + ' cells');
    tip.appendChild(table);
    if (patterns) tip.appendChild(drawPattern(i));
    tip.hidden = false;
    var tw = tip.offsetWidth, th = tip.offsetHeight;
    var x = px + 16 + tw > window.innerWidth ? px - 16 - tw : px + 16;
    var y = py + 16 + th > window.innerHeight ? py - 16 - th : py + 16;
    tip.style.left = Math.max(0, x) + 'px';
    tip.style.top = Math.max(0, y) + 'px';
    cursor.hidden = false;
    cursor.style.left = geo.x + c * geo.cell + 'px';
    cursor.style.top = geo.y + q * geo.cell + 'px';
    cursor.style.width = cursor.style.height = geo.cell + 'px';
    if (links.length) isolate('q', q);
  }
  function leave() {
    tip.hidden = true;
    cursor.hidden = true;
    if (links.length) isolate(null, 0);
  }
  $('matrix').addEventListener('mousemove', function (e) {
    var r = this.getBoundingClientRect();
    var x = e.clientX - r.left - geo.x, y = e.clientY - r.top - geo.y;
    var c = Math.floor(x / geo.cell), q = Math.floor(y / geo.cell);
    if (x < 0 || y < 0 || c >= C || q >= R) return leave();
    hover(q, c, e.clientX, e.clientY);
  });
  $('matrix').addEventListener('mouseleave', leave);

  // Notes under the matrix: what the hatching and the gray mean, blocks.
  function swatch(fill) {
    var c = el('canvas'), g = c.getContext('2d');
    c.width = c.height = 12;
    g.fillStyle = fill === 'masked' ? hatch(g) : D.missing;
    g.fillRect(0, 0, 12, 12);
    return c;
  }
  function drawNotes() {
    var box = $('notes');
    var any = [false, false, false];
    if (states) for (var i = 0; i < states.length; ++i) any[states[i]] = true;
    [[1, 'masked'], [2, 'nan']].forEach(function (m) {
      if (!any[m[0]]) return;
      var span = el('span');
      span.appendChild(swatch(m[1]));
      span.appendChild(document.createTextNode(m[1]));
      box.appendChild(span);
    });
    if (D.block_note) box.appendChild(el('span', null, D.block_note));
  }

  // Every panel small, as in the PNG's grid: click to show one.
  function drawOverview() {
    if (D.panels.length < 2) return;
    var grid = $('thumbs'), side = 56;
    var tw = C >= R ? side : Math.max(8, Math.round(side * C / R));
    var th = R >= C ? side : Math.max(8, Math.round(side * R / C));
    grid.style.gridTemplateColumns = 'repeat(' + heads.length + ', auto)';
    D.panels.forEach(function (p, k) {
      var t = el('div', 'thumb'), c = image(k);
      c.style.width = tw + 'px';
      c.style.height = th + 'px';
      t.appendChild(c);
      t.appendChild(el('div', null, p.caption));
      t.title = p.caption;
      t.dataset.panel = k;
      t.addEventListener('click', function () { show(k); });
      grid.appendChild(t);
    });
    $('overview').hidden = false;
  }

  function show(k) {
    current = k;
    var p = D.panels[k];
    if (selects.batch) selects.batch.value = String(p.batch);
    if (selects.head) selects.head.value = String(p.head);
    $('caption').textContent = p.caption || '';
    leave();
    drawMatrix(k);
    drawHeadView(k);
    Array.prototype.forEach.call(document.querySelectorAll('.thumb'), function (t) {
      t.classList.toggle('current', Number(t.dataset.panel) === k);
    });
  }

  $('title').textContent = D.title || D.source || 'attn heatmap';
  $('subtitle').textContent = D.subtitle;
  drawNotes();
  drawOverview();
  show(0);
  document.body.dataset.ready = 'true';
})();
