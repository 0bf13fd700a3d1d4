// ackclock's interactive figure viewer: draws each figure of the page (a div of class ackfig
// holding its data in a script element of type application/json, written by ackclock-plot's
// Chart::html_figure; no tag is spelled out here, as this text sits in a script element) on a
// canvas, with the look of the static SVG. Drag across a plot to zoom
// to that x range (every panel of the figure follows; y fits the data in view), shift-drag to
// pan, Alt+wheel to zoom about the pointer, double-click or "reset" to see everything again;
// hover shows the nearest point's values; a legend entry hides or shows its series.
// No dependencies; public domain in spirit, MIT/Apache-2.0 as the rest of ackclock.
(function () {
  'use strict';
  var LEFT = 74, RIGHT = 26, TOP = 6, X_AREA = 44, PANEL_H = 380, PANEL_H_MANY = 130, GAP = 10;
  var figures = [];

  function log10(v) { return Math.log(v) / Math.LN10; }

  // Ticks of a linear axis: a step of 1, 2 or 5 times a power of ten, about `px` pixels apart.
  function linTicks(lo, hi, len, px) {
    var span = Math.max(hi - lo, 1e-12), want = Math.max(2, len / px);
    var raw = span / want, e = Math.floor(log10(raw)), step = 0;
    var ms = [1, 2, 5, 10];
    for (var i = 0; i < ms.length; i++) {
      step = ms[i] * Math.pow(10, e);
      if (step >= raw) break;
    }
    var dec = Math.max(0, -Math.floor(log10(step) + 1e-9));
    var out = [], first = Math.ceil(lo / step - 1e-9), last = Math.floor(hi / step + 1e-9);
    for (var k = first; k <= last; k++) out.push(k * step);
    return { ticks: out, label: function (v) { var s = v.toFixed(Math.min(dec, 12)); return /^-?[0.]+$/.test(s) ? (0).toFixed(Math.min(dec, 12)) : s; } };
  }

  // Ticks of a log axis: each decade, and 2 and 5 times it when there is room.
  function logTicks(lo, hi, len) {
    var l0 = Math.floor(log10(lo)), l1 = Math.ceil(log10(hi)), per = len / Math.max(log10(hi) - log10(lo), 1e-9);
    var ms = per > 160 ? [1, 2, 5] : [1], out = [];
    var every = Math.max(1, Math.ceil(60 / per));
    for (var k = l0; k <= l1; k++) {
      if (ms.length === 1 && ((k % every) + every) % every !== 0) continue;
      for (var i = 0; i < ms.length; i++) {
        var v = k >= 0 ? ms[i] * Math.pow(10, k) : ms[i] / Math.pow(10, -k);
        if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) out.push(v);
      }
    }
    return { ticks: out, label: function (v) { return v >= 1 ? String(Math.round(v)) : String(+v.toPrecision(3)); } };
  }

  function fmt(v) {
    if (!isFinite(v)) return String(v);
    var a = Math.abs(v);
    if (a !== 0 && (a < 1e-4 || a >= 1e9)) return v.toExponential(4);
    return String(+v.toPrecision(6));
  }

  // Whether a mark's points come in pairs (a vertical bar from the first to the second).
  function paired(m) { return m === 'bars' || m === 'errorbars'; }

  function Figure(el, spec) {
    this.el = el;
    this.spec = spec;
    this.hidden = {};
    this.base = spec.x.slice();
    this.view = spec.x.slice();
    this.groups = [];
    this.build();
  }

  Figure.prototype.build = function () {
    var el = this.el, spec = this.spec, self = this;
    el.textContent = '';
    var title = document.createElement('div');
    title.className = 'ackfig-title';
    title.textContent = spec.title;
    el.appendChild(title);
    var bar = document.createElement('div');
    bar.className = 'ackfig-bar';
    bar.innerHTML = '<span>drag: zoom &middot; shift-drag: pan &middot; alt+wheel: zoom &middot; double-click: reset</span>';
    var out = document.createElement('button');
    out.type = 'button';
    out.textContent = 'zoom out';
    out.onclick = function () { self.zoomBy(2, 0.5); };
    var reset = document.createElement('button');
    reset.type = 'button';
    reset.textContent = 'reset';
    reset.onclick = function () { self.reset(); };
    bar.appendChild(out);
    bar.appendChild(reset);
    el.appendChild(bar);
    var wrap = document.createElement('div');
    wrap.className = 'ackfig-plot';
    this.canvas = document.createElement('canvas');
    wrap.appendChild(this.canvas);
    this.sel = document.createElement('div');
    this.sel.className = 'ackfig-sel';
    wrap.appendChild(this.sel);
    this.tip = document.createElement('div');
    this.tip.className = 'ackfig-tip';
    wrap.appendChild(this.tip);
    el.appendChild(wrap);
    this.wrap = wrap;
    // Legend groups: each labelled series, with the unlabelled ones of its colour after it.
    var groupOf = {}, lastByColor = {}, legend = document.createElement('div');
    legend.className = 'ackfig-legend';
    spec.panels.forEach(function (p) {
      p.series.forEach(function (s) {
        if (s.label) {
          // As in the SVG, a series without points is not in the legend.
          if (!(s.label in groupOf) && s.x.length) {
            groupOf[s.label] = s.label;
            var item = document.createElement('span');
            item.className = 'ackfig-item';
            item.title = 'click to hide or show';
            var sw = document.createElement('canvas');
            sw.width = 28; sw.height = 14;
            self.sample(sw.getContext('2d'), s);
            item.appendChild(sw);
            item.appendChild(document.createTextNode(s.label));
            item.onclick = function () {
              self.hidden[s.label] = !self.hidden[s.label];
              item.classList.toggle('off', !!self.hidden[s.label]);
              self.draw();
            };
            legend.appendChild(item);
          }
          s.group = s.label;
          lastByColor[s.color] = s.label;
        } else {
          s.group = lastByColor[s.color] || null;
        }
      });
    });
    if (legend.childNodes.length) el.appendChild(legend);
    this.listen();
  };

  // A legend entry's sample of a mark.
  Figure.prototype.sample = function (c, s) {
    c.strokeStyle = c.fillStyle = s.color;
    c.lineWidth = 2;
    c.beginPath();
    var y = 7;
    if (s.mark === 'line' || s.mark === 'linepoints' || s.mark === 'dashed') {
      if (s.mark === 'dashed') c.setLineDash([6, 4]);
      c.moveTo(0, y); c.lineTo(28, y); c.stroke();
      if (s.mark === 'linepoints') { c.beginPath(); c.arc(14, y, 3.5, 0, 7); c.fill(); }
    } else if (s.mark === 'dots') {
      c.arc(14, y, 3, 0, 7); c.fill();
    } else if (s.mark === 'rings') {
      c.lineWidth = 1.5; c.arc(14, y, 3.5, 0, 7); c.stroke();
    } else if (s.mark === 'crosses') {
      c.moveTo(10, 3); c.lineTo(18, 11); c.moveTo(18, 3); c.lineTo(10, 11); c.stroke();
    } else {
      c.lineWidth = s.mark === 'bars' ? 2 : 1.5;
      c.moveTo(14, 1); c.lineTo(14, 13);
      if (s.mark === 'errorbars') { c.moveTo(10, 1); c.lineTo(18, 1); c.moveTo(10, 13); c.lineTo(18, 13); }
      c.stroke();
    }
  };

  Figure.prototype.layout = function () {
    var n = Math.max(1, this.spec.panels.length);
    var ph = n > 1 ? PANEL_H_MANY : PANEL_H;
    var w = Math.max(320, Math.min(this.wrap.clientWidth || 900, 1400));
    var h = TOP + n * ph + (n - 1) * GAP + X_AREA;
    var panels = [];
    for (var i = 0; i < n; i++) {
      panels.push({ x: LEFT, y: TOP + i * (ph + GAP), w: w - LEFT - RIGHT, h: ph });
    }
    return { w: w, h: h, panels: panels };
  };

  Figure.prototype.tx = function (v) { return this.spec.logX ? log10(v) : v; };
  Figure.prototype.fromTx = function (t) { return this.spec.logX ? Math.pow(10, t) : t; };

  // The y range: the figure's own at full view, else that of the data in view (all panels).
  Figure.prototype.yRange = function () {
    var sp = this.spec;
    if (this.view[0] === this.base[0] && this.view[1] === this.base[1]) return sp.y.slice();
    var lo = Infinity, hi = -Infinity, x0 = this.view[0], x1 = this.view[1], self = this;
    sp.panels.forEach(function (p) {
      p.series.forEach(function (s) {
        if (s.group && self.hidden[s.group]) return;
        var line = !paired(s.mark) && (s.mark === 'line' || s.mark === 'linepoints' || s.mark === 'dashed');
        for (var i = 0; i < s.x.length; i++) {
          var x = s.x[i], inside = x >= x0 && x <= x1;
          // A line's segment crossing the view's edge counts (its end outside the view).
          if (!inside && line) {
            inside = (i > 0 && (s.x[i - 1] - x0) * (x - x0) <= 0 && s.x[i - 1] <= x1) ||
              (i + 1 < s.x.length && (s.x[i + 1] - x1) * (x - x1) <= 0 && s.x[i + 1] >= x0);
          }
          if (inside) { lo = Math.min(lo, s.y[i]); hi = Math.max(hi, s.y[i]); }
        }
      });
    });
    if (!(hi > -Infinity)) return sp.y.slice();
    if (hi <= lo) { hi = lo + Math.max(Math.abs(lo) * 0.1, 1e-9); lo -= Math.max(Math.abs(lo) * 0.1, 1e-9); }
    var pad = (hi - lo) * 0.05;
    lo = lo >= 0 && lo - pad < 0 ? 0 : lo - pad;
    lo = Math.max(lo, sp.y[0]);
    hi = Math.min(hi + pad, sp.y[1]);
    return hi > lo ? [lo, hi] : sp.y.slice();
  };

  Figure.prototype.draw = function () {
    var L = this.layout(), dpr = window.devicePixelRatio || 1, cv = this.canvas, sp = this.spec, self = this;
    cv.width = Math.round(L.w * dpr);
    cv.height = Math.round(L.h * dpr);
    cv.style.width = L.w + 'px';
    cv.style.height = L.h + 'px';
    var c = cv.getContext('2d');
    c.setTransform(dpr, 0, 0, dpr, 0, 0);
    c.fillStyle = '#fff';
    c.fillRect(0, 0, L.w, L.h);
    var yr = this.yRange(), t0 = this.tx(this.view[0]), t1 = this.tx(this.view[1]);
    if (!(t1 > t0)) t1 = t0 + 1;
    this.L = L; this.yr = yr;
    var drawn = 0;
    L.panels.forEach(function (P, pi) {
      var X = function (v) { return P.x + (self.tx(v) - t0) / (t1 - t0) * P.w; };
      var Y = function (v) { return P.y + P.h - (v - yr[0]) / (yr[1] - yr[0]) * P.h; };
      P.X = X; P.Y = Y;
      self.axes(c, P, pi === L.panels.length - 1, yr);
      c.save();
      c.beginPath(); c.rect(P.x, P.y, P.w, P.h); c.clip();
      var panel = sp.panels[pi] || { series: [] };
      panel.series.forEach(function (s) {
        if (s.group && self.hidden[s.group]) return;
        drawn += self.series(c, s, X, Y);
      });
      c.restore();
      if (sp.panels.length > 1 && panel.name) {
        c.font = '14px sans-serif';
        var tw = c.measureText(panel.name).width;
        c.fillStyle = 'rgba(255,255,255,0.7)';
        c.fillRect(P.x + 4, P.y + 2, tw + 8, 19);
        c.fillStyle = '#282828';
        c.textAlign = 'left'; c.textBaseline = 'top';
        c.fillText(panel.name, P.x + 8, P.y + 5);
      }
    });
    this.el.dataset.x0 = String(this.view[0]);
    this.el.dataset.x1 = String(this.view[1]);
    this.el.dataset.drawn = String(drawn);
    this.el.dataset.rendered = '1';
  };

  // One panel's grid, axes, ticks and descriptions.
  Figure.prototype.axes = function (c, P, last, yr) {
    var sp = this.spec;
    var xt = sp.logX ? logTicks(this.view[0], this.view[1], P.w) : linTicks(this.view[0], this.view[1], P.w, 90);
    var yt = linTicks(yr[0], yr[1], P.h, P.h > 200 ? 45 : 28);
    c.lineWidth = 1;
    c.strokeStyle = '#dcdcdc';
    c.beginPath();
    xt.ticks.forEach(function (v) { var x = P.X(v); c.moveTo(Math.round(x) + 0.5, P.y); c.lineTo(Math.round(x) + 0.5, P.y + P.h); });
    yt.ticks.forEach(function (v) { var y = Math.round(P.Y(v)) + 0.5; c.moveTo(P.x, y); c.lineTo(P.x + P.w, y); });
    c.stroke();
    c.strokeStyle = '#5a5a5a';
    c.strokeRect(P.x + 0.5, P.y + 0.5, P.w, P.h);
    c.fillStyle = '#282828';
    c.font = '13px sans-serif';
    c.textAlign = 'right'; c.textBaseline = 'middle';
    yt.ticks.forEach(function (v) { c.fillText(yt.label(v), P.x - 6, P.Y(v)); });
    c.save();
    c.translate(16, P.y + P.h / 2);
    c.rotate(-Math.PI / 2);
    c.textAlign = 'center'; c.textBaseline = 'middle';
    c.font = (P.h > 200 ? 15 : 12) + 'px sans-serif';
    c.fillText(sp.yDesc, 0, 0);
    c.restore();
    if (last) {
      c.textAlign = 'center'; c.textBaseline = 'top';
      var prev = -1e9;
      xt.ticks.forEach(function (v) {
        var x = P.X(v), s = xt.label(v), w = c.measureText(s).width;
        if (x - w / 2 > prev + 6) { c.fillText(s, x, P.y + P.h + 5); prev = x + w / 2; }
      });
      c.font = '15px sans-serif';
      c.fillText(sp.xDesc, P.x + P.w / 2, P.y + P.h + 23);
    }
  };

  // Draws one series; returns how many marks (or line vertices) fell in view.
  Figure.prototype.series = function (c, s, X, Y) {
    var n = 0, x0 = this.view[0], x1 = this.view[1], xs = s.x, ys = s.y, i;
    c.strokeStyle = c.fillStyle = s.color;
    c.setLineDash([]);
    if (s.mark === 'line' || s.mark === 'linepoints' || s.mark === 'dashed') {
      c.lineWidth = s.mark === 'line' ? 1.2 : 2;
      if (s.mark === 'dashed') c.setLineDash([6, 4]);
      c.lineJoin = 'round';
      c.beginPath();
      var pen = false;
      for (i = 0; i < xs.length; i++) {
        var out = (xs[i] < x0 && (i + 1 >= xs.length || xs[i + 1] < x0)) || (xs[i] > x1 && (i === 0 || xs[i - 1] > x1));
        if (out) { pen = false; continue; }
        if (pen) c.lineTo(X(xs[i]), Y(ys[i])); else c.moveTo(X(xs[i]), Y(ys[i]));
        pen = true;
        n++;
      }
      c.stroke();
      c.setLineDash([]);
      if (s.mark === 'linepoints' && xs.length <= 400) {
        for (i = 0; i < xs.length; i++) {
          if (xs[i] < x0 || xs[i] > x1) continue;
          c.beginPath(); c.arc(X(xs[i]), Y(ys[i]), 3.5, 0, 7); c.fill();
        }
      }
      return n;
    }
    if (paired(s.mark)) {
      c.lineWidth = s.mark === 'bars' ? 2 : 1.5;
      c.beginPath();
      for (i = 0; i + 1 < xs.length; i += 2) {
        if (xs[i] < x0 || xs[i] > x1) continue;
        var bx = X(xs[i]), ya = Y(ys[i]), yb = Y(ys[i + 1]);
        c.moveTo(bx, ya); c.lineTo(bx, yb);
        if (s.mark === 'errorbars') { c.moveTo(bx - 4, ya); c.lineTo(bx + 4, ya); c.moveTo(bx - 4, yb); c.lineTo(bx + 4, yb); }
        n++;
      }
      c.stroke();
      return n;
    }
    c.lineWidth = s.mark === 'crosses' ? 2 : 1.2;
    c.beginPath();
    for (i = 0; i < xs.length; i++) {
      if (xs[i] < x0 || xs[i] > x1) continue;
      var px = X(xs[i]), py = Y(ys[i]);
      if (s.mark === 'dots') { c.moveTo(px + 2, py); c.arc(px, py, 2, 0, 7); }
      else if (s.mark === 'rings') { c.moveTo(px + 3.5, py); c.arc(px, py, 3.5, 0, 7); }
      else { c.moveTo(px - 3.5, py - 3.5); c.lineTo(px + 3.5, py + 3.5); c.moveTo(px + 3.5, py - 3.5); c.lineTo(px - 3.5, py + 3.5); }
      n++;
    }
    if (s.mark === 'dots') c.fill(); else c.stroke();
    return n;
  };

  // The panel under a point of the canvas (CSS pixels), or null.
  Figure.prototype.panelAt = function (x, y) {
    var ps = this.L ? this.L.panels : [];
    for (var i = 0; i < ps.length; i++) {
      var P = ps[i];
      if (x >= P.x && x <= P.x + P.w && y >= P.y - GAP / 2 && y <= P.y + P.h + GAP / 2) return i;
    }
    return -1;
  };

  Figure.prototype.valueAt = function (px) {
    var P = this.L.panels[0], t0 = this.tx(this.view[0]), t1 = this.tx(this.view[1]);
    return this.fromTx(t0 + (px - P.x) / P.w * (t1 - t0));
  };

  /** Shows the x range [a, b] (in the axis's units) in every panel. */
  Figure.prototype.zoom = function (a, b) {
    if (!(b > a)) return;
    if (this.spec.logX && a <= 0) return;
    this.view = [a, b];
    this.draw();
  };

  /** Zooms by `f` (2: twice as wide) about the fraction `at` of the plot's width. */
  Figure.prototype.zoomBy = function (f, at) {
    var t0 = this.tx(this.view[0]), t1 = this.tx(this.view[1]), m = t0 + (t1 - t0) * at;
    var b0 = this.tx(this.base[0]), b1 = this.tx(this.base[1]);
    var n0 = m - (m - t0) * f, n1 = m + (t1 - m) * f;
    if (n1 - n0 >= b1 - b0) { this.reset(); return; }
    if (n0 < b0) { n1 += b0 - n0; n0 = b0; }
    if (n1 > b1) { n0 -= n1 - b1; n1 = b1; }
    this.zoom(this.fromTx(n0), this.fromTx(n1));
  };

  /** Shows the whole figure again. */
  Figure.prototype.reset = function () { this.view = this.base.slice(); this.draw(); };

  /** The x range in view. */
  Figure.prototype.xRange = function () { return this.view.slice(); };

  // The nearest drawn point to (x, y) in panel `pi`, within 12 px: [series, index].
  Figure.prototype.nearest = function (pi, x, y) {
    var P = this.L.panels[pi], panel = this.spec.panels[pi], best = null, bd = 144, self = this;
    if (!panel) return null;
    panel.series.forEach(function (s) {
      if (s.group && self.hidden[s.group]) return;
      for (var i = 0; i < s.x.length; i++) {
        var dx = P.X(s.x[i]) - x;
        if (dx * dx > bd) continue;
        var dy = P.Y(s.y[i]) - y, d = dx * dx + dy * dy;
        if (d < bd) { bd = d; best = [s, paired(s.mark) ? i - (i % 2) : i]; }
      }
    });
    return best;
  };

  Figure.prototype.hover = function (x, y) {
    var pi = this.panelAt(x, y), tip = this.tip;
    var hit = pi >= 0 ? this.nearest(pi, x, y) : null;
    if (!hit) { tip.style.display = 'none'; return; }
    var s = hit[0], i = hit[1], sp = this.spec;
    var name = s.label || s.group || (sp.panels[pi] && sp.panels[pi].name) || sp.yDesc;
    var yv = paired(s.mark) ? fmt(s.y[i]) + ' to ' + fmt(s.y[i + 1]) : fmt(s.y[i]);
    tip.textContent = name + ': ' + fmt(s.x[i]) + ', ' + yv;
    tip.style.display = 'block';
    var left = Math.min(x + 12, this.L.w - tip.offsetWidth - 4);
    tip.style.left = Math.max(0, left) + 'px';
    tip.style.top = Math.max(0, y - 28) + 'px';
  };

  Figure.prototype.listen = function () {
    var self = this, cv = this.canvas, drag = null;
    function pos(e) { var r = cv.getBoundingClientRect(); return [e.clientX - r.left, e.clientY - r.top]; }
    cv.addEventListener('mousedown', function (e) {
      if (e.button !== 0) return;
      var p = pos(e);
      if (self.panelAt(p[0], p[1]) < 0) return;
      drag = { x: p[0], pan: e.shiftKey, view: self.view.slice() };
      e.preventDefault();
    });
    window.addEventListener('mousemove', function (e) {
      var p = pos(e);
      if (!drag) { self.hover(p[0], p[1]); return; }
      var P = self.L.panels[0], x = Math.max(P.x, Math.min(P.x + P.w, p[0]));
      if (drag.pan) {
        var t0 = self.tx(drag.view[0]), t1 = self.tx(drag.view[1]), d = (drag.x - x) / P.w * (t1 - t0);
        var b0 = self.tx(self.base[0]), b1 = self.tx(self.base[1]);
        d = Math.max(b0 - t0, Math.min(b1 - t1, d));
        self.view = [self.fromTx(t0 + d), self.fromTx(t1 + d)];
        self.draw();
        return;
      }
      var a = Math.min(drag.x, x), b = Math.max(drag.x, x), top = P.y, bottom = self.L.panels[self.L.panels.length - 1];
      self.sel.style.display = 'block';
      self.sel.style.left = a + 'px';
      self.sel.style.width = (b - a) + 'px';
      self.sel.style.top = top + 'px';
      self.sel.style.height = (bottom.y + bottom.h - top) + 'px';
    });
    window.addEventListener('mouseup', function (e) {
      if (!drag) return;
      var d = drag;
      drag = null;
      self.sel.style.display = 'none';
      if (d.pan) return;
      var x = pos(e)[0], P = self.L.panels[0];
      x = Math.max(P.x, Math.min(P.x + P.w, x));
      if (Math.abs(x - d.x) < 4) return;
      self.zoom(self.valueAt(Math.min(d.x, x)), self.valueAt(Math.max(d.x, x)));
    });
    cv.addEventListener('mouseleave', function () { self.tip.style.display = 'none'; });
    cv.addEventListener('dblclick', function () { self.reset(); });
    cv.addEventListener('wheel', function (e) {
      if (!e.altKey) return;
      var p = pos(e), P = self.L.panels[0];
      e.preventDefault();
      self.zoomBy(e.deltaY > 0 ? 1.25 : 0.8, Math.max(0, Math.min(1, (p[0] - P.x) / P.w)));
    }, { passive: false });
  };

  /** Draws every figure of the page that is not drawn yet. */
  function renderAll() {
    var els = document.querySelectorAll('div.ackfig');
    for (var i = 0; i < els.length; i++) {
      var el = els[i];
      if (el.ackfig) continue;
      var data = el.querySelector('script[type="application/json"]');
      if (!data) continue;
      try {
        var f = new Figure(el, JSON.parse(data.textContent));
        el.ackfig = f;
        figures.push(f);
        f.draw();
      } catch (err) {
        el.dataset.error = String(err);
        console.error('ackclock figure ' + (el.id || i) + ': ' + err);
      }
    }
  }

  var resizeTimer = null;
  window.addEventListener('resize', function () {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(function () { figures.forEach(function (f) { f.draw(); }); }, 100);
  });
  window.ackclockPlot = { figures: figures, renderAll: renderAll };
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', renderAll);
  else renderAll();
})();
