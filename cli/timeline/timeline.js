// The interactive timeline (cairn log timeline --html): draws the page's embedded data as
// SVG, only what the view shows, one bar per run when few enough are in view, CPU
// occupancy per pixel column otherwise. Wheel: zoom; drag: pan; click: a job's audit.
// No library, no network. Times are milliseconds from data.origin_us.
(function () {
  'use strict';

  var LEFT = 150, RIGHT = 24, AXIS = 22, STAGE_LANE = 12, UTIL_H = 150, QUEUE_H = 110;
  var MAX_BARS = 4000;     // more runs in view: aggregated
  var MAX_MARKERS = 1500;  // markers drawn in an aggregated view
  var BIN_PX = 2;
  var STAGE_COLOURS = { in: '#1f9bb4', out: '#7b5bc4' };
  var CATEGORY_COLOURS = ['#e6a23c', '#9b59b6', '#5dade2', '#1f9bb4', '#95a5a6'];
  var SERIES_COLOURS = ['#222222', '#3b7dd8', '#e08a1e', '#3c9a5f', '#a0306e', '#7b5bc4', '#2a9d9d', '#b08d2a'];
  var AGGREGATE_COLOUR = '#3b7dd8';
  var TICK_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 15e3, 3e4, 6e4, 12e4, 3e5, 6e5, 9e5,
                    18e5, 36e5, 72e5, 108e5, 216e5, 432e5, 864e5, 1728e5, 6048e5];

  var root = document.getElementById('timeline');
  var data, auditText;

  function esc(text) {
    return String(text).replace(/[&<>"']/g, function (c) {
      return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c];
    });
  }
  function n(v) { return Math.round(v * 100) / 100; }
  function absTime(ms) { return new Date(data.origin_us / 1000 + ms).toISOString().slice(0, 19) + 'Z'; }
  function duration(ms) {
    if (ms < 1000) return Math.round(ms) + ' ms';
    var s = Math.floor(ms / 1000);
    if (s < 120) return s + ' s';
    if (s < 7200) return Math.floor(s / 60) + ' min ' + String(s % 60).padStart(2, '0') + ' s';
    if (s < 172800) return Math.floor(s / 3600) + ' h ' + String(Math.floor(s % 3600 / 60)).padStart(2, '0') + ' min';
    return Math.floor(s / 86400) + ' d ' + String(Math.floor(s % 86400 / 3600)).padStart(2, '0') + ' h';
  }
  function bytes(b) {
    var units = ['B', 'K', 'M', 'G', 'T'], i = 0;
    while (b >= 1024 && i < units.length - 1) { b /= 1024; i++; }
    return (i ? b.toFixed(1) : b) + units[i];
  }
  function slotHeight(lanes) { return Math.min(10, Math.max(0.5, 64 / Math.max(lanes, 1))); }
  function rowHeight(lanes) { return Math.max(lanes, 1) * slotHeight(lanes) + 6; }
  // Index of the last element of sorted `a` that is <= v (-1 if none).
  function floorIndex(a, v) {
    var lo = 0, hi = a.length - 1, found = -1;
    while (lo <= hi) {
      var mid = (lo + hi) >> 1;
      if (a[mid] <= v) { found = mid; lo = mid + 1; } else hi = mid - 1;
    }
    return found;
  }

  // ---- the data, indexed once ----
  var jobs = new Map(), runsByJob = new Map(), rowY = [], rowsHeight = 0, runStarts, stageLanes = 0;
  function index() {
    data.jobs.forEach(function (job) { jobs.set(job.id, job); });
    data.runs.forEach(function (run) {
      if (!runsByJob.has(run.job)) runsByJob.set(run.job, []);
      runsByJob.get(run.job).push(run);
    });
    data.nodes.forEach(function (node) { rowY.push(rowsHeight); rowsHeight += rowHeight(node.lanes); });
    runStarts = data.runs.map(function (run) { return run.start; });
    data.stages.forEach(function (stage) { stageLanes = Math.max(stageLanes, stage.lane + 1); });
  }

  // ---- the view ----
  var view = { t0: 0, t1: 1, scroll: 0 };
  var ganttHeight = 0, width = 0, plotWidth = 0, svg = null, frame = 0, selected = null;
  function x(t) { return LEFT + (t - view.t0) / (view.t1 - view.t0) * plotWidth; }
  function clampX(t) { return x(Math.min(Math.max(t, view.t0), view.t1)); }
  function fullSpan() { return Math.max(1, data.to - data.from); }

  function ticks() {
    var span = view.t1 - view.t0, wanted = span / Math.max(1, plotWidth / 110), step = TICK_STEPS[TICK_STEPS.length - 1];
    for (var i = 0; i < TICK_STEPS.length; i++) if (TICK_STEPS[i] >= wanted) { step = TICK_STEPS[i]; break; }
    while (step < wanted) step *= 2;
    var origin = data.origin_us / 1000, out = [];
    var first = Math.ceil((origin + view.t0) / step) * step - origin;
    for (var t = first; t <= view.t1 && out.length < 200; t += step) {
      var iso = new Date(origin + t).toISOString(), label;
      if (step >= 864e5) label = iso.slice(5, 10);
      else if (span > 864e5) label = iso.slice(5, 10) + ' ' + iso.slice(11, 16);
      else if (step >= 6e4) label = iso.slice(11, 16);
      else if (step >= 1e3) label = iso.slice(11, 19);
      else label = iso.slice(11, 23);
      out.push({ t: t, label: label });
    }
    return out;
  }

  function grid(parts, tickList, top, bottom) {
    tickList.forEach(function (tick) {
      parts.push('<line class="grid" x1="' + n(x(tick.t)) + '" x2="' + n(x(tick.t)) + '" y1="' + n(top) + '" y2="' + n(bottom) + '"/>');
    });
  }

  // Runs overlapping the view, in start order.
  function runsInView() {
    var last = floorIndex(runStarts, view.t1), out = [];
    for (var i = 0; i <= last; i++) if (data.runs[i].end >= view.t0) out.push(data.runs[i]);
    return out;
  }

  function visibleRows() {
    var first = -1, last = -1;
    for (var r = 0; r < data.nodes.length; r++) {
      var top = rowY[r] - view.scroll, bottom = top + rowHeight(data.nodes[r].lanes);
      if (bottom >= 0 && top <= ganttHeight) { if (first < 0) first = r; last = r; }
    }
    return { first: first, last: last };
  }

  function box(top, r, slot, cpus) {
    var sh = slotHeight(data.nodes[r].lanes), gap = sh >= 4 ? 0.6 : 0;
    return { y: top + rowY[r] - view.scroll + 3 + slot * sh, h: Math.max(0.5, cpus * sh - gap) };
  }

  function drawBars(parts, runs, top, rows) {
    var previous = new Map(), bars = 0;
    runs.forEach(function (run) {
      var x0 = clampX(run.start), x1 = clampX(run.end), w = Math.max(0.8, x1 - x0), colour = data.colours[run.state] || '#888';
      run.slots.forEach(function (slot) {
        var r = slot[0];
        if (r < rows.first || r > rows.last) return;
        var b = box(top, r, slot[1], slot[2]);
        parts.push('<rect class="run' + (selected === run.job ? ' selected' : '') + '" data-job="' + run.job + '" data-run="' + run.run +
                   '" data-state="' + run.state + '" x="' + n(x0) + '" y="' + n(b.y) + '" width="' + n(w) + '" height="' + n(b.h) +
                   '" fill="' + colour + '"/>');
        bars++;
        (run.suspended || []).forEach(function (span) {
          var s0 = clampX(span[0]), s1 = clampX(span[1]);
          parts.push('<rect class="suspend" data-job="' + run.job + '" data-run="' + run.run + '" x="' + n(s0) + '" y="' + n(b.y) +
                     '" width="' + n(Math.max(0.8, s1 - s0)) + '" height="' + n(b.h) + '" fill="url(#hatch)"/>');
        });
        if (run.open && run.end >= view.t1 - 1e-6 && run.end >= data.to)
          parts.push('<path class="open-end" d="M' + n(x1) + ',' + n(b.y) + ' l5,' + n(b.h / 2) + ' l-5,' + n(b.h / 2) + ' z" fill="' + colour + '"/>');
      });
      var before = previous.get(run.job);
      if (before && before.next) link(parts, top, rows, before, run);
      previous.set(run.job, run);
    });
    // A link whose earlier run is out of view still shows where this run came from.
    return bars;
  }

  function link(parts, top, rows, from, to) {
    if (!from.slots.length || !to.slots.length) return;
    var a = from.slots[0], b = to.slots[0];
    if (a[0] < rows.first || a[0] > rows.last || b[0] < rows.first || b[0] > rows.last) return;
    var b0 = box(top, a[0], a[1], a[2]), b1 = box(top, b[0], b[1], b[2]);
    var x0 = clampX(from.end), y0 = b0.y + b0.h / 2, x1 = clampX(to.start), y1 = b1.y + b1.h / 2;
    var bend = Math.max(12, (x1 - x0) / 3);
    parts.push('<path class="requeue-link" data-job="' + from.job + '" data-from-run="' + from.run + '" data-to-run="' + to.run +
               '" d="M' + n(x0) + ',' + n(y0) + ' C' + n(x0 + bend) + ',' + n(y0 - 14) + ' ' + n(x1 - bend) + ',' + n(y1 - 14) + ' ' +
               n(x1) + ',' + n(y1) + '" marker-end="url(#arrow)"/>');
  }

  function drawOccupancy(parts, runs, top, rows) {
    var columns = Math.ceil(plotWidth / BIN_PX), colMs = (view.t1 - view.t0) / columns, busy = new Map();
    function cells(r) {
      var c = busy.get(r);
      if (!c) { c = { add: new Float64Array(columns + 1), diff: new Float64Array(columns + 2) }; busy.set(r, c); }
      return c;
    }
    runs.forEach(function (run) {
      var a = Math.max(0, (run.start - view.t0) / colMs), b = Math.min(columns, (run.end - view.t0) / colMs);
      if (b < a) return;
      var ia = Math.floor(a), ib = Math.floor(b);
      run.slots.forEach(function (slot) {
        var r = slot[0], cpus = slot[2];
        if (r < rows.first || r > rows.last) return;
        var c = cells(r);
        if (ia === ib) { c.add[ia] += (b - a) * cpus; return; }
        c.add[ia] += (ia + 1 - a) * cpus;
        c.diff[ia + 1] += cpus;
        c.diff[ib] -= cpus;
        if (ib < columns) c.add[ib] += (b - ib) * cpus;
      });
    });
    // One path per level of occupancy, each column a rectangle of it: few elements to draw.
    var paths = [];
    busy.forEach(function (c, r) {
      var lanes = Math.max(1, data.nodes[r].lanes), b = box(top, r, 0, data.nodes[r].lanes), run = 0, levels = new Int8Array(columns);
      for (var i = 0; i < columns; i++) {
        run += c.diff[i];
        levels[i] = Math.ceil(Math.min(1, (c.add[i] + run) / lanes) * 8);
      }
      for (var s = 0; s < columns;) {
        var e = s + 1;
        while (e < columns && levels[e] === levels[s]) e++;
        if (levels[s] > 0) {
          var w = n((e - s) * BIN_PX);
          paths[levels[s]] = (paths[levels[s]] || '') + 'M' + n(LEFT + s * BIN_PX) + ',' + n(b.y) + 'h' + w + 'v' + n(b.h) + 'h-' + w + 'z';
        }
        s = e;
      }
    });
    for (var level = 1; level <= 8; level++)
      if (paths[level]) parts.push('<path class="agg" d="' + paths[level] + '" fill="' + AGGREGATE_COLOUR + '" fill-opacity="' + level / 8 + '"/>');
  }

  function drawMarkers(parts, runs, top, rows, limit) {
    var drawn = 0;
    for (var i = 0; i < runs.length && drawn < limit; i++) {
      var run = runs[i];
      (run.markers || []).forEach(function (m) {
        if (drawn >= limit || m.t < view.t0 || m.t > view.t1) return;
        var slot = run.slots.find(function (s) { return s[0] === m.node; }) || run.slots[0];
        if (!slot || slot[0] < rows.first || slot[0] > rows.last) return;
        var b = box(top, slot[0], slot[1], slot[2]), mx = x(m.t), my = b.y + b.h / 2;
        if (m.kind === 'node_fail')
          parts.push('<path class="node-fail" data-job="' + run.job + '" data-run="' + run.run + '" data-marker="node_fail" d="M' + n(mx) + ',' + n(my - 6) + ' l6,6 l-6,6 l-6,-6 z"/>');
        else
          parts.push('<path class="oom' + (m.kind === 'step_oom' ? ' step' : '') + '" data-job="' + run.job + '" data-run="' + run.run +
                     '" data-marker="' + m.kind + '" d="M' + n(mx) + ',' + n(my + 4) + ' l6,-10 l-12,0 z"/>');
        drawn++;
      });
    }
  }

  function drawGantt(parts, top, tickList) {
    var rows = visibleRows();
    parts.push('<clipPath id="gantt-clip"><rect x="0" y="' + n(top) + '" width="' + n(width) + '" height="' + n(ganttHeight) + '"/></clipPath>');
    parts.push('<g clip-path="url(#gantt-clip)">');
    grid(parts, tickList, top, top + ganttHeight);
    for (var r = rows.first; r >= 0 && r <= rows.last; r++) {
      var node = data.nodes[r], y = top + rowY[r] - view.scroll, h = rowHeight(node.lanes);
      (node.down || []).forEach(function (down) {
        if (down.end < view.t0 || down.start > view.t1) return;
        var x0 = clampX(down.start), x1 = clampX(down.end);
        parts.push('<rect class="node-down" data-node="' + esc(node.name) + '" x="' + n(x0) + '" y="' + n(y) + '" width="' + n(Math.max(1, x1 - x0)) +
                   '" height="' + n(h) + '"><title>' + esc(node.name + ' down ' + absTime(down.start) + ' → ' +
                   (down.open ? 'the end of the drawing (still down)' : absTime(down.end)) + ': ' + down.reason) + '</title></rect>');
      });
      parts.push('<line class="row-sep" x1="' + LEFT + '" x2="' + n(LEFT + plotWidth) + '" y1="' + n(y + h) + '" y2="' + n(y + h) + '"/>');
      parts.push('<text class="label" x="' + (LEFT - 8) + '" y="' + n(y + h / 2 + 4) + '" text-anchor="end">' + esc(node.name) +
                 ' <tspan class="muted">' + node.cpus + ' CPU' + (node.cpus === 1 ? '' : 's') + '</tspan></text>');
    }
    var runs = runsInView(), bars = 0;
    runs.forEach(function (run) {
      run.slots.forEach(function (slot) { if (slot[0] >= rows.first && slot[0] <= rows.last) bars++; });
    });
    var aggregated = bars > MAX_BARS;
    if (aggregated) {
      drawOccupancy(parts, runs, top, rows);
      drawMarkers(parts, runs, top, rows, MAX_MARKERS);
    } else {
      drawBars(parts, runs, top, rows);
      drawMarkers(parts, runs, top, rows, Infinity);
    }
    parts.push('</g>');
    if (rowsHeight > ganttHeight) {
      var barH = Math.max(20, ganttHeight * ganttHeight / rowsHeight), barY = top + view.scroll / rowsHeight * ganttHeight;
      parts.push('<rect class="scrollbar" x="' + n(width - 8) + '" y="' + n(barY) + '" width="5" height="' + n(barH) + '" rx="2" fill="#bbb"/>');
    }
    stats.runs = runs.length;
    stats.bars = aggregated ? 0 : bars;
    stats.aggregated = aggregated;
    return top + ganttHeight;
  }

  function drawStages(parts, top, tickList) {
    if (!data.stages.length) return top;
    var height = stageLanes * STAGE_LANE + 4;
    parts.push('<text class="label" x="' + (LEFT - 8) + '" y="' + n(top + Math.min(height, 24) / 2 + 4) + '" text-anchor="end">burst buffer</text>');
    grid(parts, tickList, top, top + height);
    var drawn = 0;
    for (var i = 0; i < data.stages.length && drawn < MAX_BARS; i++) {
      var s = data.stages[i];
      if (s.end < view.t0 || s.start > view.t1) continue;
      var x0 = clampX(s.start), x1 = clampX(s.end);
      parts.push('<rect class="stage' + (s.outcome === 'failed' ? ' failed' : '') + '" data-job="' + s.job + '" data-stage="' + i +
                 '" data-direction="' + s.direction + '" data-outcome="' + s.outcome + '" x="' + n(x0) + '" y="' + n(top + 2 + s.lane * STAGE_LANE) +
                 '" width="' + n(Math.max(0.8, x1 - x0)) + '" height="' + (STAGE_LANE - 2) + '" fill="' + STAGE_COLOURS[s.direction] + '"' +
                 (s.outcome === 'aborted' ? ' fill-opacity="0.4"' : '') + '/>');
      drawn++;
    }
    return top + height;
  }

  function chartFrame(parts, tickList, top, height, title, max) {
    grid(parts, tickList, top, top + height);
    parts.push('<line x1="' + LEFT + '" x2="' + n(LEFT + plotWidth) + '" y1="' + n(top + height) + '" y2="' + n(top + height) + '" stroke="#999"/>');
    parts.push('<text class="label" x="' + (LEFT - 8) + '" y="' + n(top + 10) + '" text-anchor="end">' + title + '</text>');
    parts.push('<text class="muted" x="' + (LEFT - 8) + '" y="' + n(top + 24) + '" text-anchor="end">' + max + '</text>');
    parts.push('<text class="muted" x="' + (LEFT - 8) + '" y="' + n(top + height) + '" text-anchor="end">0</text>');
  }

  // The points of a step series the view needs: the one in force at t0, those inside, one
  // per pixel column at most (the column's largest value, so peaks stay visible).
  function viewPoints(t, value) {
    var first = Math.max(0, floorIndex(t, view.t0)), last = floorIndex(t, view.t1), out = [];
    out.continues = last + 1 < t.length;  // the series goes on past the view: draw to its edge
    if (last < 0) return out;
    var perColumn = (last - first) > 2 * plotWidth, column = -1;
    for (var i = first; i <= last; i++) {
      var px = Math.floor(clampX(t[i])), v = value(i);
      if (perColumn && px === column) {
        if (v > out[out.length - 1].v) out[out.length - 1].v = v;
        out[out.length - 1].i = i;
        continue;
      }
      column = px;
      out.push({ x: clampX(t[i]), v: v, i: i });
    }
    return out;
  }

  function stepPath(points, base, scale) {
    var d = '';
    points.forEach(function (p, k) {
      var y = base - p.v * scale;
      d += k === 0 ? 'M' + n(p.x) + ',' + n(y) : ' H' + n(p.x) + ' V' + n(y);
    });
    if (points.length && points.continues) d += ' H' + n(LEFT + plotWidth);
    return d;
  }

  function drawUtilisation(parts, top, tickList) {
    var max = 1;
    data.utilisation.forEach(function (s) {
      for (var i = 0; i < s.t.length; i++) max = Math.max(max, s.total[i], s.allocated[i]);
    });
    var base = top + UTIL_H, scale = UTIL_H / max, lx = LEFT;
    chartFrame(parts, tickList, top, UTIL_H, 'CPUs allocated', max);
    var lines = [];  // the cluster's drawn last, on top of partitions that may equal it
    data.utilisation.forEach(function (s, k) {
      var hue = SERIES_COLOURS[k % SERIES_COLOURS.length], name = s.partition || 'cluster';
      var total = viewPoints(s.t, function (i) { return s.total[i]; });
      var alloc = viewPoints(s.t, function (i) { return s.allocated[i]; });
      var drawn = '<path class="utilisation-total" data-partition="' + esc(name) + '" d="' + stepPath(total, base, scale) +
                  '" fill="none" stroke="' + hue + '" stroke-width="1" stroke-dasharray="4 3"/>' +
                  '<path class="utilisation" data-partition="' + esc(name) + '" d="' + stepPath(alloc, base, scale) +
                  '" fill="none" stroke="' + hue + '" stroke-width="' + (s.partition ? 1.4 : 2) + '"/>';
      if (s.partition) lines.unshift(drawn); else lines.push(drawn);
      parts.push('<rect x="' + lx + '" y="' + n(base + 14) + '" width="10" height="3" fill="' + hue + '"/><text class="label" x="' + (lx + 14) +
                 '" y="' + n(base + 18) + '">' + esc(name) + '</text>');
      lx += 24 + 7 * name.length;
    });
    parts.push(lines.join(''));
    parts.push('<text class="muted" x="' + (lx + 10) + '" y="' + n(base + 18) + '">solid: allocated · dashed: total of the nodes up</text>');
    return base + 24;
  }

  function drawQueue(parts, top, tickList) {
    var q = data.queue, cats = data.categories, max = 1;
    var sum = function (i) { var s = 0; cats.forEach(function (c) { s += q[c][i]; }); return s; };
    for (var i = 0; i < q.t.length; i++) max = Math.max(max, sum(i));
    var base = top + QUEUE_H, scale = QUEUE_H / max, lx = LEFT;
    chartFrame(parts, tickList, top, QUEUE_H, 'jobs pending', max);
    var points = viewPoints(q.t, sum), below = points.map(function () { return 0; });
    cats.forEach(function (cat, c) {
      if (points.length) {
        var d = '';
        points.forEach(function (p, k) {
          var y = base - (below[k] + q[cat][p.i]) * scale;
          d += k === 0 ? 'M' + n(p.x) + ',' + n(y) : ' H' + n(p.x) + ' V' + n(y);
        });
        if (points.continues) d += ' H' + n(LEFT + plotWidth);
        d += ' V' + n(base - below[points.length - 1] * scale);
        for (var k = points.length - 1; k >= 0; k--) {
          d += ' H' + n(points[k].x) + (k > 0 ? ' V' + n(base - below[k - 1] * scale) : '');
        }
        parts.push('<path class="queue" data-category="' + cat + '" d="' + d + ' Z" fill="' + CATEGORY_COLOURS[c] + '" fill-opacity="0.85"/>');
        points.forEach(function (p, k) { below[k] += q[cat][p.i]; });
      }
      parts.push('<rect x="' + lx + '" y="' + n(base + 9) + '" width="10" height="10" fill="' + CATEGORY_COLOURS[c] + '"/><text class="label" x="' +
                 (lx + 14) + '" y="' + n(base + 18) + '">' + cat + '</text>');
      lx += 24 + 7 * cat.length;
    });
    parts.push('<text class="muted" x="' + (lx + 10) + '" y="' + n(base + 18) + '">waiting: resources or priority (the scheduler\'s reasons are not logged)</text>');
    return base + 24;
  }

  function drawLegend(parts, top) {
    var states = {}, lx = LEFT;
    data.runs.forEach(function (run) { states[run.state] = true; });
    Object.keys(states).sort().forEach(function (state) {
      parts.push('<rect x="' + lx + '" y="' + top + '" width="12" height="10" fill="' + (data.colours[state] || '#888') + '"/><text class="label" x="' +
                 (lx + 16) + '" y="' + (top + 9) + '">' + state + '</text>');
      lx += 26 + 7 * state.length;
    });
    parts.push('<rect x="' + lx + '" y="' + top + '" width="14" height="10" fill="#3b7dd8"/><rect x="' + lx + '" y="' + top +
               '" width="14" height="10" fill="url(#hatch)"/><text class="label" x="' + (lx + 18) + '" y="' + (top + 9) + '">suspended</text>');
    lx += 90;
    parts.push('<path class="oom legend" d="M' + (lx + 6) + ',' + (top + 10) + ' l6,-10 l-12,0 z"/><text class="label" x="' + (lx + 16) + '" y="' + (top + 9) + '">out of memory</text>');
    lx += 110;
    parts.push('<path class="node-fail legend" d="M' + (lx + 6) + ',' + (top - 1) + ' l6,6 l-6,6 l-6,-6 z"/><text class="label" x="' + (lx + 16) + '" y="' + (top + 9) + '">node failure</text>');
    lx += 100;
    parts.push('<path class="requeue-link legend" d="M' + lx + ',' + (top + 5) + ' h24" marker-end="url(#arrow)"/><text class="label" x="' + (lx + 30) + '" y="' + (top + 9) + '">requeue</text>');
    lx += 90;
    ['in', 'out'].forEach(function (direction) {
      parts.push('<rect x="' + lx + '" y="' + top + '" width="12" height="10" fill="' + STAGE_COLOURS[direction] + '"/><text class="label" x="' + (lx + 16) +
                 '" y="' + (top + 9) + '">stage-' + direction + '</text>');
      lx += 80;
    });
    return top + 16;
  }

  var stats = { runs: 0, bars: 0, aggregated: false };

  function render() {
    frame = 0;
    width = Math.max(700, root.clientWidth || 1200);
    plotWidth = width - LEFT - RIGHT;
    var tickList = ticks(), parts = [], y = 0;
    parts.push('<defs><pattern id="hatch" patternUnits="userSpaceOnUse" width="6" height="6" patternTransform="rotate(45)">' +
               '<rect width="6" height="6" fill="#ffffff" fill-opacity="0.55"/><line x1="0" y1="0" x2="0" y2="6" stroke="#333" stroke-width="2.2"/></pattern>' +
               '<marker id="arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" markerHeight="7" orient="auto-start-reverse">' +
               '<path d="M0,0 L8,4 L0,8 z" fill="#2a9d9d"/></marker></defs>');
    tickList.forEach(function (tick) {
      parts.push('<text class="muted" x="' + n(x(tick.t)) + '" y="14" text-anchor="middle">' + tick.label + '</text>');
    });
    y = AXIS;
    if (data.nodes.length) y = drawGantt(parts, y, tickList);
    y = drawStages(parts, y + 10, tickList);
    y = drawUtilisation(parts, y + 16, tickList);
    y = drawQueue(parts, y + 16, tickList);
    y = drawLegend(parts, y + 14);
    var height = y + 8;
    if (!svg) {
      svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
      svg.setAttribute('class', 'cairn-timeline');
      svg.setAttribute('font-family', 'system-ui, sans-serif');
      svg.setAttribute('font-size', '11');
      root.appendChild(svg);
      attach();
    }
    svg.setAttribute('width', width);
    svg.setAttribute('height', height);
    svg.setAttribute('viewBox', '0 0 ' + width + ' ' + height);
    svg.innerHTML = parts.join('');
    document.getElementById('view-range').textContent = absTime(view.t0) + ' → ' + absTime(view.t1) + ' (' + duration(view.t1 - view.t0) + ')' +
      (stats.aggregated ? ' · ' + stats.runs + ' runs as CPU occupancy: zoom in to see each run' : ' · ' + stats.runs + ' runs');
  }

  function redraw() { if (!frame) frame = requestAnimationFrame(render); }

  function setView(t0, t1) {
    var span = fullSpan(), pad = span * 0.05, min = 5;
    if (t1 - t0 < min) { var mid = (t0 + t1) / 2; t0 = mid - min / 2; t1 = mid + min / 2; }
    if (t1 - t0 > span + 2 * pad) { t0 = data.from - pad; t1 = data.to + pad; }
    if (t0 < data.from - pad) { t1 += data.from - pad - t0; t0 = data.from - pad; }
    if (t1 > data.to + pad) { t0 -= t1 - data.to - pad; t1 = data.to + pad; }
    view.t0 = t0; view.t1 = t1;
    redraw();
  }
  function zoom(factor, anchorX) {
    var anchor = view.t0 + (anchorX - LEFT) / plotWidth * (view.t1 - view.t0);
    setView(anchor - (anchor - view.t0) * factor, anchor + (view.t1 - anchor) * factor);
  }
  function scrollRows(dy) {
    view.scroll = Math.max(0, Math.min(rowsHeight - ganttHeight, view.scroll + dy));
    redraw();
  }

  // ---- hover, click, the job panel ----
  var tooltip = document.getElementById('tooltip'), panel = document.getElementById('panel');

  function runText(run) {
    var job = jobs.get(run.job) || {}, where = run.slots.map(function (s) {
      var node = data.nodes[s[0]] ? data.nodes[s[0]].name : '?';
      return node + ' CPU' + (s[2] === 1 ? ' ' + s[1] : 's ' + s[1] + '-' + (s[1] + s[2] - 1));
    }).join(', ');
    var lines = ['Job ' + run.job + (job.name ? ' (' + job.name + ')' : '') + ' run ' + run.run + (job.user ? ' · ' + job.user : ''),
                 run.state + (run.open ? ' (open at the log\'s end)' : ' · exit ' + (run.exit || '0:0')),
                 absTime(run.start) + ' → ' + absTime(run.end) + ' (' + duration(run.end - run.start) + ')', where];
    (run.suspended || []).forEach(function (s) { lines.push('suspended ' + absTime(s[0]) + ' → ' + absTime(s[1]) + ' (' + duration(s[1] - s[0]) + ')'); });
    (run.markers || []).forEach(function (m) { lines.push(markerText(run, m)); });
    if (run.next) lines.push(run.next.replace(/_/g, ' ') + ' at ' + absTime(run.requeued));
    return lines.join('\n');
  }
  function markerText(run, m) {
    var node = data.nodes[m.node] ? data.nodes[m.node].name : '?';
    if (m.kind === 'oom') return 'out of memory on ' + node + ' at ' + absTime(m.t) + ' (peak ' + (m.peak ? bytes(m.peak) : 'unknown') + ', limit ' + (m.limit ? bytes(m.limit) : 'none') + ')';
    if (m.kind === 'step_oom') return 'step ' + m.step + ' out of memory on ' + node + ' at ' + absTime(m.t);
    return 'node ' + node + ' failed at ' + absTime(m.t);
  }
  function stageText(s) {
    var node = data.nodes[s.node] ? data.nodes[s.node].name : '?';
    return 'Job ' + s.job + ': stage-' + s.direction + ' on ' + node + '\n' + absTime(s.start) + ' → ' + absTime(s.end) + ' (' + duration(s.end - s.start) + ')\n' +
      (s.outcome === 'done' ? bytes(s.bytes || 0) + ' copied in ' + duration(s.copy_ms || 0) : s.outcome === 'failed' ? 'FAILED: ' + (s.message || '') :
       s.outcome === 'aborted' ? "cut short by the job's end" : "still staging at the log's end");
  }
  function findRun(job, run) {
    return (runsByJob.get(job) || []).find(function (r) { return r.run === run; });
  }
  function hoverText(target) {
    var job = Number(target.getAttribute('data-job'));
    if (target.hasAttribute('data-stage')) return stageText(data.stages[Number(target.getAttribute('data-stage'))]);
    var run = findRun(job, Number(target.getAttribute('data-run') || target.getAttribute('data-from-run')));
    if (!run) return 'Job ' + job;
    var text = runText(run);
    if (target.classList.contains('requeue-link')) text = 'Job ' + job + ': ' + run.next.replace(/_/g, ' ') + ' at ' + absTime(run.requeued) + '\n\n' + text;
    return text + '\n(click: the job\'s audit)';
  }

  // A job's audit rows as [time, event, actor, details]; the tables are read at the first call.
  var auditTables = null;
  function auditRows(id) {
    if (!auditTables) {
      auditTables = {};
      ['origin_us', 'kinds', 'actors'].forEach(function (name) {
        var key = '\n#' + name + '\t', at = auditText.indexOf(key), end = auditText.indexOf('\n', at + key.length);
        auditTables[name] = at < 0 ? [] : JSON.parse(auditText.slice(at + key.length, end));
      });
    }
    var key = '\n' + id + '\t', at = auditText.indexOf(key);
    if (at < 0) return null;
    var end = auditText.indexOf('\n', at + key.length);
    return JSON.parse(auditText.slice(at + key.length, end < 0 ? undefined : end)).map(function (row) {
      var micros = auditTables.origin_us + row[0], ms = Math.floor(micros / 1000);
      var iso = new Date(ms).toISOString().slice(0, 23) + String(((micros % 1000) + 1000) % 1000).padStart(3, '0') + 'Z';
      return [iso, auditTables.kinds[row[1]], auditTables.actors[row[2]], row[3]];
    });
  }

  function showJob(id) {
    var job = jobs.get(id);
    selected = id;
    var html = ['<button class="close" title="close">×</button>'];
    if (!job) {
      html.push('<h2>Job ' + esc(id) + '</h2><p>This job is not in the drawing (not in the log, or outside the window and filter).</p>');
    } else {
      html.push('<h2>Job ' + job.id + ' (' + esc(job.name) + ')</h2>');
      html.push('<p class="meta">' + esc(job.user) + ' · partition ' + esc(job.partition || '(default)') + (job.array ? ' · array task ' + esc(job.array) : '') +
                ' · ' + job.cpus + ' CPU' + (job.cpus === 1 ? '' : 's') + ' · <span class="swatch" style="background:' + (data.colours[job.state] || '#888') + '"></span>' +
                job.state + (job.reason ? ' (' + esc(job.reason) + ')' : '') + '<br>submitted ' + absTime(job.submit) +
                (job.end !== undefined ? ' · ended ' + absTime(job.end) : '') + '</p>');
      html.push('<p><button id="zoom-job">zoom to this job</button></p>');
      var runs = runsByJob.get(id) || [];
      if (runs.length) {
        html.push('<h3>Runs</h3><table><tr><th>run</th><th>state</th><th>start</th><th>duration</th><th>nodes</th><th>exit</th></tr>');
        runs.forEach(function (run) {
          html.push('<tr><td>' + run.run + '</td><td><span class="swatch" style="background:' + (data.colours[run.state] || '#888') + '"></span>' + run.state +
                    (run.open ? ' (open)' : '') + '</td><td>' + absTime(run.start) + '</td><td>' + duration(run.end - run.start) + '</td><td>' +
                    esc(run.slots.map(function (s) { return data.nodes[s[0]] ? data.nodes[s[0]].name : '?'; }).join(',')) + '</td><td>' + (run.exit || '0:0') + '</td></tr>');
          (run.suspended || []).forEach(function (s) { html.push('<tr><td></td><td colspan="5">suspended ' + absTime(s[0]) + ' → ' + absTime(s[1]) + '</td></tr>'); });
          (run.markers || []).forEach(function (m) { html.push('<tr><td></td><td colspan="5">' + esc(markerText(run, m)) + '</td></tr>'); });
          if (run.next) html.push('<tr><td></td><td colspan="5">' + run.next.replace(/_/g, ' ') + ' at ' + absTime(run.requeued) + '</td></tr>');
        });
        html.push('</table>');
      }
      if (job.steps && job.steps.length) {
        html.push('<h3>Steps</h3><table><tr><th>step</th><th>name</th><th>state</th><th>start</th><th>duration</th><th>nodes</th></tr>');
        job.steps.forEach(function (s) {
          html.push('<tr><td>' + job.id + '.' + s.id + '</td><td>' + esc(s.name) + '</td><td>' + s.state + '</td><td>' + absTime(s.start) + '</td><td>' +
                    duration(s.end - s.start) + '</td><td>' + esc(s.nodes) + '</td></tr>');
        });
        html.push('</table>');
      }
      var stages = data.stages.filter(function (s) { return s.job === id; });
      if (stages.length) {
        html.push('<h3>Burst buffer</h3><table>');
        stages.forEach(function (s) { html.push('<tr><td>' + esc(stageText(s)).replace(/\n/g, '<br>') + '</td></tr>'); });
        html.push('</table>');
      }
    }
    var rows = auditRows(id);
    html.push('<h3>Audit (cairn log audit --job ' + esc(id) + ')</h3>');
    if (!rows) html.push('<p>No events of this job in the log.</p>');
    else {
      html.push('<table class="audit-rows"><tr><th>TIME</th><th>EVENT</th><th>ACTOR</th><th>DETAILS</th></tr>');
      rows.forEach(function (row) {
        html.push('<tr class="audit-row"><td>' + esc(row[0]) + '</td><td>' + esc(row[1]) + '</td><td>' + esc(row[2]) + '</td><td class="details">' + esc(row[3]) + '</td></tr>');
      });
      html.push('</table>');
    }
    panel.innerHTML = html.join('');
    panel.hidden = false;
    panel.setAttribute('data-job', id);
    panel.querySelector('.close').onclick = function () { panel.hidden = true; selected = null; redraw(); };
    var zoomButton = document.getElementById('zoom-job');
    if (zoomButton) zoomButton.onclick = function () { zoomToJob(id); };
    redraw();
  }

  function zoomToJob(id) {
    var job = jobs.get(id);
    if (!job) return;
    var runs = runsByJob.get(id) || [], t0 = job.submit, t1 = job.end !== undefined ? job.end : data.to;
    runs.forEach(function (r) { t0 = Math.min(t0, r.start); t1 = Math.max(t1, r.end); });
    var pad = Math.max(50, (t1 - t0) * 0.1);
    if (runs.length && runs[0].slots.length) {
      var r = runs[0].slots[0][0];
      view.scroll = Math.max(0, Math.min(rowsHeight - ganttHeight, rowY[r] - ganttHeight / 3));
    }
    setView(t0 - pad, t1 + pad);
  }

  function attach() {
    var drag = null;
    svg.addEventListener('wheel', function (e) {
      e.preventDefault();
      if (e.shiftKey) { scrollRows(e.deltaY); return; }
      var rect = svg.getBoundingClientRect();
      zoom(e.deltaY > 0 ? 1.25 : 0.8, e.clientX - rect.left);
    }, { passive: false });
    svg.addEventListener('mousedown', function (e) {
      drag = { x: e.clientX, y: e.clientY, t0: view.t0, t1: view.t1, scroll: view.scroll, moved: false };
      svg.classList.add('dragging');
    });
    window.addEventListener('mousemove', function (e) {
      if (drag) {
        var dx = e.clientX - drag.x, dy = e.clientY - drag.y;
        if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
        if (drag.moved) {
          var shift = -dx / plotWidth * (drag.t1 - drag.t0);
          view.scroll = Math.max(0, Math.min(Math.max(0, rowsHeight - ganttHeight), drag.scroll - dy));
          setView(drag.t0 + shift, drag.t1 + shift);
        }
        tooltip.hidden = true;
        return;
      }
      var target = e.target && e.target.closest ? e.target.closest('[data-job]') : null;
      if (!target || !svg.contains(target)) { tooltip.hidden = true; return; }
      tooltip.textContent = hoverText(target);
      tooltip.hidden = false;
      var tx = Math.min(e.clientX + 14, window.innerWidth - tooltip.offsetWidth - 8);
      var ty = e.clientY + 16 + tooltip.offsetHeight > window.innerHeight ? e.clientY - tooltip.offsetHeight - 10 : e.clientY + 16;
      tooltip.style.left = tx + 'px';
      tooltip.style.top = ty + 'px';
    });
    window.addEventListener('mouseup', function (e) {
      if (!drag) return;
      var moved = drag.moved;
      drag = null;
      svg.classList.remove('dragging');
      if (moved) return;
      var target = e.target && e.target.closest ? e.target.closest('[data-job]') : null;
      if (target && svg.contains(target)) showJob(Number(target.getAttribute('data-job')));
    });
    document.getElementById('zoom-in').onclick = function () { zoom(0.5, LEFT + plotWidth / 2); };
    document.getElementById('zoom-out').onclick = function () { zoom(2, LEFT + plotWidth / 2); };
    document.getElementById('zoom-reset').onclick = function () { view.scroll = 0; setView(data.from, data.to); };
    window.addEventListener('resize', redraw);
    window.addEventListener('hashchange', fromHash);
  }

  function fromHash() {
    var match = /job=(\d+)/.exec(location.hash);
    if (match) showJob(Number(match[1]));
  }

  function fail(message) {
    root.innerHTML = '<div class="empty-message">The timeline could not be drawn: ' + esc(message) +
      '. The same data is in the page (script #cairn-data); `cairn log timeline --svg` draws it without a browser script.</div>';
  }

  function start() {
    performance.mark('cairn-start');
    try {
      data = JSON.parse(document.getElementById('cairn-data').textContent);
      auditText = '\n' + document.getElementById('cairn-audit').textContent;
      performance.mark('cairn-parsed');
    } catch (e) {
      fail('its data does not parse (' + e.message + ')');
      return;
    }
    if (data.format !== 1) { fail('its data is of format ' + data.format + ', this page reads format 1'); return; }
    try {
      index();
      performance.mark('cairn-indexed');
      if (data.empty) {
        var message = document.createElement('div');
        message.className = 'empty-message';
        message.textContent = data.empty;
        root.appendChild(message);
      }
      if (data.log.events === 0) return;
      document.getElementById('toolbar').hidden = false;
      ganttHeight = Math.min(rowsHeight, Math.max(280, Math.round(window.innerHeight * 0.55)));
      view.t0 = data.from; view.t1 = Math.max(data.to, data.from + 1);
      render();
      fromHash();
      var ms = performance.now();
      document.documentElement.setAttribute('data-rendered-ms', ms.toFixed(0));
      var note = document.createElement('p');
      note.className = 'drawn';
      note.textContent = data.runs.length + ' runs, ' + data.jobs.length + ' jobs, ' + data.nodes.length + ' nodes · page ready ' + Math.round(ms) + ' ms after it was opened';
      root.appendChild(note);
      window.cairnTimeline = { renderedMs: ms, stats: stats, showJob: showJob, setView: setView, render: render };
    } catch (e) {
      fail(e.message);
    }
  }

  start();
})();
