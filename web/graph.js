// A job's graph as SVG: one box per job vertex (a chain of operators), laid out left to
// right by depth from the sources, edges from /jobs/:id/plan. Each box is coloured by how
// its subtasks spend their time (as Flink's dashboard): idle blue, busy red,
// backpressured grey, and shows its parallelism, records in / out and low watermark.
'use strict';

(function () {
  const W = 280, H = 138, GAP_X = 90, GAP_Y = 36, PAD = 20;
  const SVG_NS = 'http://www.w3.org/2000/svg';

  function mix(a, b, t) {
    const pa = [1, 3, 5].map((i) => parseInt(a.slice(i, i + 2), 16));
    const pb = [1, 3, 5].map((i) => parseInt(b.slice(i, i + 2), 16));
    return '#' + pa.map((x, i) => Math.round(x + (pb[i] - x) * t).toString(16).padStart(2, '0')).join('');
  }

  // The fill of a vertex: backpressure dominates (the vertex waits on its outputs), else
  // idle blue to busy red by the share of time it was busy.
  UI.vertexColor = function (busy, backpressured) {
    busy = busy || 0;
    backpressured = backpressured || 0;
    if (backpressured > 0.1 && backpressured >= busy) return mix('#dedede', '#9c9c9c', Math.min(1, backpressured));
    return mix('#dcebf9', '#f08a7e', Math.min(1, busy));
  };

  // Depth of each vertex: the longest path from a source.
  function layers(nodes) {
    const byId = new Map(nodes.map((n) => [n.id, n]));
    const depth = new Map();
    const visiting = new Set();
    function of(id) {
      if (depth.has(id)) return depth.get(id);
      if (visiting.has(id)) return 0;  // a cycle (iterations): break it
      visiting.add(id);
      const n = byId.get(id);
      let d = 0;
      for (const input of (n && n.inputs) || []) if (byId.has(input.id)) d = Math.max(d, of(input.id) + 1);
      visiting.delete(id);
      depth.set(id, d);
      return d;
    }
    nodes.forEach((n) => of(n.id));
    return depth;
  }

  function el(tag, attrs, text) {
    const e = document.createElementNS(SVG_NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function clip(text, max) {
    return text.length > max ? text.slice(0, max - 1) + '…' : text;
  }

  // plan: /jobs/:id/plan's "plan"; info: vertex id -> {name, parallelism, status,
  // recordsIn, recordsOut, busy, backpressured, watermark}; selected: a vertex id.
  UI.renderGraph = function (container, plan, info, selected, onSelect) {
    const nodes = plan.nodes || [];
    const depth = layers(nodes);
    const columns = [];
    nodes.forEach((n) => {
      const d = depth.get(n.id);
      (columns[d] = columns[d] || []).push(n);
    });
    // Rows: within a column, in the order of their inputs' rows (fewer crossings).
    const pos = new Map();
    columns.forEach((column, c) => {
      if (c > 0) {
        const key = (n) => {
          const rows = ((n.inputs || []).map((i) => pos.get(i.id)).filter(Boolean)).map((p) => p.row);
          return rows.length ? rows.reduce((a, b) => a + b, 0) / rows.length : 0;
        };
        column.sort((a, b) => key(a) - key(b));
      }
      column.forEach((n, row) => pos.set(n.id, { col: c, row }));
    });
    const rows = Math.max(1, ...columns.map((c) => c.length));
    const width = PAD * 2 + columns.length * W + Math.max(0, columns.length - 1) * GAP_X;
    const height = PAD * 2 + rows * H + (rows - 1) * GAP_Y;
    const xy = (id) => {
      const p = pos.get(id);
      const inColumn = columns[p.col].length;
      const offset = ((rows - inColumn) * (H + GAP_Y)) / 2;  // a short column is centred
      return { x: PAD + p.col * (W + GAP_X), y: PAD + offset + p.row * (H + GAP_Y) };
    };

    const svg = el('svg', { width, height, viewBox: `0 0 ${width} ${height}`, class: 'job-graph', role: 'img' });
    const defs = el('defs');
    const marker = el('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 10, refY: 5, markerWidth: 8, markerHeight: 8, orient: 'auto' });
    marker.appendChild(el('path', { d: 'M0,0 L10,5 L0,10 z', fill: '#5b6570' }));
    defs.appendChild(marker);
    svg.appendChild(defs);

    for (const n of nodes) {
      for (const input of n.inputs || []) {
        if (!pos.has(input.id)) continue;
        const a = xy(input.id), b = xy(n.id);
        const x1 = a.x + W, y1 = a.y + H / 2, x2 = b.x, y2 = b.y + H / 2;
        const mid = (x1 + x2) / 2;
        const g = el('g', { class: 'edge' });
        g.appendChild(el('path', { d: `M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2 - 2},${y2}`, 'marker-end': 'url(#arrow)' }));
        g.appendChild(el('text', { x: mid, y: (y1 + y2) / 2 - 6, 'text-anchor': 'middle', class: 'edge-label' }, input.ship_strategy || ''));
        svg.appendChild(g);
      }
    }

    for (const n of nodes) {
      const v = info[n.id] || {};
      const { x, y } = xy(n.id);
      const g = el('g', { class: 'vertex' + (n.id === selected ? ' selected' : ''), transform: `translate(${x},${y})`,
        'data-vertex-id': n.id, 'data-vertex-name': v.name || '', tabindex: 0 });
      g.appendChild(el('title', {}, v.name || n.id));
      g.appendChild(el('rect', { width: W, height: H, rx: 6, fill: UI.vertexColor(v.busy, v.backpressured) }));
      // The chain's operators: the head, then the ones chained to it (the title has all).
      const ops = (v.name || n.id).split(' -> ');
      g.appendChild(el('text', { x: 12, y: 22, class: 'vertex-name' }, clip(ops[0], 36)));
      if (ops.length > 1) g.appendChild(el('text', { x: 12, y: 39, class: 'vertex-chain' }, clip('→ ' + ops.slice(1).join(' → '), 44)));
      const status = v.status ? v.status : '';
      const rowsText = [
        [`Parallelism ${v.parallelism ?? n.parallelism}`, status],
        [`Records in ${UI.fmtCount(v.recordsIn)}`, `out ${UI.fmtCount(v.recordsOut)}`],
        [`Busy ${UI.fmtPercent(v.busy)}`, `Backpressured ${UI.fmtPercent(v.backpressured)}`],
        [`Watermark ${UI.fmtWatermark(v.watermark)}`, ''],
      ];
      rowsText.forEach(([left, right], i) => {
        const ty = 66 + i * 18;
        const t = el('text', { x: 12, y: ty, class: 'vertex-metric', 'data-metric': ['parallelism', 'records', 'time', 'watermark'][i] }, left);
        g.appendChild(t);
        if (right) g.appendChild(el('text', { x: W - 12, y: ty, 'text-anchor': 'end', class: 'vertex-metric' }, right));
      });
      // Records out, for someone (or a test) reading one number.
      g.querySelector('[data-metric=records]').setAttribute('data-records-out', v.recordsOut ?? '');
      g.querySelector('[data-metric=records]').setAttribute('data-records-in', v.recordsIn ?? '');
      g.addEventListener('click', () => onSelect(n.id));
      g.addEventListener('keydown', (e) => { if (e.key === 'Enter') onSelect(n.id); });
      svg.appendChild(g);
    }

    container.replaceChildren(svg);
  };

  // The legend under the graph.
  UI.graphLegend = function () {
    const swatch = (color, label) => `<span><span class="swatch" style="background:${color}"></span>${UI.esc(label)}</span>`;
    return `<div class="legend">${swatch(UI.vertexColor(0, 0), 'idle')} ${swatch(UI.vertexColor(0.5, 0), 'busy 50%')}
      ${swatch(UI.vertexColor(1, 0), 'busy 100%')} ${swatch(UI.vertexColor(0, 0.5), 'backpressured 50%')}
      ${swatch(UI.vertexColor(0, 1), 'backpressured 100%')} <span class="hint">Click a vertex for its subtasks.</span></div>`;
  };
})();
