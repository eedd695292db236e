// One job: its state and actions (savepoint, stop with savepoint, cancel), and tabs for
// its graph with the selected vertex's subtasks, its checkpoints, its exceptions and, for
// a SQL job, its SQL text and optimised plan.
'use strict';

(function () {
  const esc = UI.esc;
  const TABS = [
    ['overview', 'Overview'],
    ['checkpoints', 'Checkpoints'],
    ['exceptions', 'Exceptions'],
    ['sql', 'SQL'],
  ];

  // The page's state while it is shown.
  let job = null;  // {id, tab, plan, selected}

  function table(headers, rows, cls) {
    return `<table class="table ${cls || ''}"><thead><tr>${headers.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead>
      <tbody>${rows.join('')}</tbody></table>`;
  }

  function minWatermark(list) {
    // The vertex's low watermark: the least over its subtasks (none while one has none).
    let low = null;
    for (const entry of list || []) {
      const v = Number(entry.value);
      if (low === null || v < low) low = v;
    }
    return low;
  }

  // Per vertex: its details (/jobs/:id: records), watermarks, and as Flink's dashboard
  // its busiest and most backpressured subtask (busyTimeMsPerSecond and
  // backPressuredTimeMsPerSecond, the max over the subtasks, in ms per second).
  async function vertexInfo(d) {
    const info = {};
    await Promise.all((d.vertices || []).map(async (v) => {
      const base = `/jobs/${job.id}/vertices/${v.id}`;
      const [wm, times] = await Promise.all([UI.get(`${base}/watermarks`),
        UI.get(`${base}/subtasks/metrics?get=busyTimeMsPerSecond,backPressuredTimeMsPerSecond&agg=max`)]);
      const max = (id) => ((times.find((m) => m.id === id) || {}).max || 0) / 1000;
      const busy = max('busyTimeMsPerSecond'), backpressured = max('backPressuredTimeMsPerSecond');
      info[v.id] = {
        name: v.name, status: v.status, parallelism: v.parallelism,
        recordsIn: v.metrics['read-records'], recordsOut: v.metrics['write-records'],
        busy, backpressured, level: UI.backpressureLevel(backpressured),
        watermarks: wm, watermark: minWatermark(wm),
      };
    }));
    return info;
  }

  function header(d) {
    const end = d['end-time'] > 0 ? ` · ended ${UI.fmtTime(d['end-time'])}` : '';
    return `<div class="job-title"><h1 id="job-name">${esc(d.name)}</h1><span id="job-state">${UI.stateBadge(d.state)}</span></div>
      <div class="sub"><span class="mono" id="job-id">${esc(d.jid)}</span> · started ${UI.fmtTime(d['start-time'])} ·
      ${d['end-time'] > 0 ? 'ran' : 'running'} for ${UI.fmtDuration(d.duration)}${end}</div>`;
  }

  // ---- the overview tab: the graph, the vertices, the selected vertex's subtasks ----

  function vertexTable(d, info) {
    const rows = (d.vertices || []).map((v) => {
      const i = info[v.id] || {};
      return `<tr class="vertex-row${v.id === job.selected ? ' selected' : ''}" data-vertex-id="${esc(v.id)}">
        <td>${esc(v.name)}</td><td>${UI.stateBadge(v.status)}</td><td class="num">${v.parallelism}</td>
        <td class="num">${UI.fmtCount(i.recordsIn)}</td><td class="num">${UI.fmtCount(i.recordsOut)}</td>
        <td class="num">${UI.fmtPercent(i.busy)}</td><td class="num">${UI.fmtPercent(i.backpressured)}
          <span class="level level-${esc(i.level)}">${esc(i.level || '')}</span></td>
        <td>${UI.fmtWatermark(i.watermark)}</td></tr>`;
    });
    return table(['Vertex', 'Status', 'Parallelism', 'Records in', 'Records out', 'Busy', 'Backpressured', 'Low watermark'],
      rows, 'clickable');
  }

  async function subtaskPanel(info) {
    const v = info[job.selected];
    if (!v) return '<p class="hint">Select a vertex (in the graph or the table) to see its subtasks.</p>';
    const base = `/jobs/${job.id}/vertices/${job.selected}`;
    // Flink's backpressure endpoint: each subtask's level and its busy, backpressured and
    // idle ratios (its ...TimeMsPerSecond over 1000).
    const [vd, names, backpressure] = await Promise.all([UI.get(base), UI.get(`${base}/subtasks/metrics`), UI.get(`${base}/backpressure`)]);
    const ids = names.map((m) => m.id).sort();
    const metrics = ids.length ? await UI.get(`${base}/subtasks/metrics?get=${encodeURIComponent(ids.join(','))}`) : [];
    const ratios = new Map((backpressure.subtasks || []).map((s) => [s.subtask, s]));
    const wm = new Map((v.watermarks || []).map((w) => [Number(w.id.split('.')[0]), w.value]));
    const rows = (vd.subtasks || []).map((s) => {
      const r = ratios.get(s.subtask) || {};
      const shares = { busy: r.busyRatio, backpressured: r.ratio, idle: r.idleRatio };
      const level = r.backpressureLevel;
      return `<tr class="subtask-row"><td class="num">${s.subtask}</td><td>${UI.stateBadge(s.status)}</td>
        <td class="num">${UI.fmtCount(s.metrics['read-records'])}</td><td class="num">${UI.fmtCount(s.metrics['write-records'])}</td>
        <td class="num">${UI.fmtPercent(shares.busy)}</td><td class="num">${UI.fmtPercent(shares.backpressured)}</td>
        <td class="num">${UI.fmtPercent(shares.idle)}</td>
        <td><span class="level level-${esc(level)}">${esc(level || '–')}</span></td>
        <td>${UI.fmtWatermark(wm.get(s.subtask))}</td><td class="num">${s.attempt}</td><td>${esc(s['taskmanager-id'])}</td></tr>`;
    });
    const metricRows = metrics.map((m) => `<tr><td class="mono">${esc(m.id)}</td><td class="num">${UI.fmtCount(m.min)}</td>
      <td class="num">${UI.fmtCount(m.max)}</td><td class="num">${UI.fmtCount(m.avg)}</td><td class="num">${UI.fmtCount(m.sum)}</td></tr>`);
    return `<h2 id="subtasks-title">Subtasks of ${esc(v.name)}</h2>
      ${table(['Subtask', 'Status', 'Records in', 'Records out', 'Busy', 'Backpressured', 'Idle', 'Backpressure', 'Watermark', 'Attempt', 'Worker'],
        rows, 'subtasks')}
      <h3>Metrics over the subtasks</h3>
      ${metricRows.length ? table(['Metric', 'Min', 'Max', 'Avg', 'Sum'], metricRows, 'compact') : '<p class="empty">No metric yet.</p>'}`;
  }

  async function renderOverview(pane, d) {
    if (!job.plan) job.plan = (await UI.get(`/jobs/${job.id}/plan`)).plan;
    const info = await vertexInfo(d);
    if (!pane.querySelector('#graph')) {
      pane.innerHTML = `<div class="graph-box"><div id="graph"></div>${UI.graphLegend()}</div>
        <div id="vertex-table"></div><div id="subtask-panel"></div>`;
    }
    const select = (id) => {
      job.selected = id;
      UI.refreshNow();
    };
    UI.renderGraph(pane.querySelector('#graph'), job.plan, info, job.selected, select);
    pane.querySelector('#vertex-table').innerHTML = vertexTable(d, info);
    pane.querySelectorAll('.vertex-row').forEach((row) => { row.onclick = () => select(row.dataset.vertexId); });
    pane.querySelector('#subtask-panel').innerHTML = await subtaskPanel(info);
  }

  // ---- the checkpoints tab ----

  function checkpointRow(c) {
    const type = c.is_savepoint ? 'Savepoint' : 'Checkpoint';
    return `<tr class="checkpoint-row" data-checkpoint-id="${c.id}"><td class="num">${c.id}</td><td>${type}</td>
      <td>${UI.stateBadge(c.status)}</td><td>${UI.fmtTime(c.trigger_timestamp, true)}</td>
      <td class="num">${UI.fmtDuration(c.end_to_end_duration)}</td><td class="num">${UI.fmtBytes(c.checkpointed_size)}</td>
      <td class="num">${UI.fmtDuration(c.alignment_duration)}</td><td class="num">${UI.fmtBytes(c.processed_data)} / ${UI.fmtBytes(c.persisted_data)}</td>
      <td class="num">${c.num_acknowledged_subtasks} / ${c.num_subtasks}</td></tr>`;
  }

  async function renderCheckpoints(pane) {
    const [stats, config] = await Promise.all([UI.get(`/jobs/${job.id}/checkpoints`), UI.get(`/jobs/${job.id}/checkpoints/config`)]);
    const counts = stats.counts || {};
    const latest = (stats.latest || {}).completed;
    const duration = (stats.summary || {}).end_to_end_duration || {};
    const interval = config.interval >= 9e18 ? 'off' : UI.fmtDuration(config.interval);
    const card = (label, value, id) => `<div class="card"><div class="card-value" id="${id}">${esc(value)}</div><div class="card-label">${esc(label)}</div></div>`;
    const HISTORY_ROWS = 20;  // the newest; Flink's dashboard keeps 10 by default
    const all = stats.history || [];
    const history = all.slice(0, HISTORY_ROWS).map(checkpointRow);
    pane.innerHTML = `<div class="cards">
        ${card('Completed', counts.completed ?? 0, 'checkpoints-completed')}
        ${card('Failed', counts.failed ?? 0, 'checkpoints-failed')}
        ${card('In progress', counts.in_progress ?? 0, 'checkpoints-in-progress')}
        ${card('Restored', counts.restored ?? 0, 'checkpoints-restored')}
        ${card('Duration min / avg / max', `${UI.fmtDuration(duration.min)} / ${UI.fmtDuration(duration.avg)} / ${UI.fmtDuration(duration.max)}`, 'checkpoints-duration')}
      </div>
      <p class="sub">Latest completed: ${latest ? `#${latest.id} at ${UI.fmtTime(latest.latest_ack_timestamp)}, ${UI.fmtDuration(latest.end_to_end_duration)}, ${UI.fmtBytes(latest.checkpointed_size)}${latest.external_path ? ` in <span class="mono">${esc(latest.external_path)}</span>` : ''}` : 'none yet'}.
        Mode ${esc(config.mode)}, every ${esc(interval)}, timeout ${UI.fmtDuration(config.timeout)}, state backend ${esc(config.state_backend)}.</p>
      <h2>History <span class="hint">${all.length > HISTORY_ROWS ? `the newest ${HISTORY_ROWS} of ${all.length}` : ''}</span></h2>
      ${history.length ? table(['ID', 'Type', 'Status', 'Triggered', 'End-to-end duration', 'Checkpointed size', 'Alignment', 'Processed / persisted data', 'Acknowledged'],
        history, 'checkpoint-history') : '<p class="empty" id="no-checkpoints">No checkpoint yet.</p>'}`;
  }

  // ---- exceptions and SQL ----

  async function renderExceptions(pane, d) {
    const answer = await UI.get(`/jobs/${job.id}/exceptions`);
    const list = (answer.exceptionHistory || {}).entries || [];
    // Newest first: a failed job's first entry ended it, the others each caused a restart.
    const failed = d.state === 'FAILED';
    const what = (i) => (failed && i === 0 ? 'ended the job' : `caused restart ${list.length - i - (failed ? 1 : 0)}`);
    const entries = list.map((e, i) => `<div class="exception">
      <div class="sub"><strong>${what(i)}</strong> · ${UI.fmtTime(e.timestamp, true)} · ${esc(e.exceptionName)}</div>
      <pre>${esc(e.stacktrace)}</pre></div>`);
    pane.innerHTML = entries.length ? entries.join('') : '<p class="empty" id="no-exceptions">No exception: the job has not failed or restarted.</p>';
  }

  async function renderSql(pane) {
    if (pane.dataset.loaded) return;  // the text never changes
    try {
      const sql = await UI.get(`/jobs/${job.id}/sql`);
      pane.innerHTML = `<h2>Statement</h2><pre class="code" id="job-sql">${esc(sql.sql)}</pre>
        <h2>Optimised plan</h2><pre class="code" id="job-plan">${esc(sql.plan)}</pre>`;
    } catch (e) {
      if (e.status !== 404) throw e;
      pane.innerHTML = '<p class="empty" id="no-sql">This job was submitted as a JobGraphSpec, not SQL: it has no SQL text.</p>';
    }
    pane.dataset.loaded = '1';
  }

  // ---- actions ----

  // Polls a savepoint / stop operation until it ends; shows its outcome.
  async function follow(trigger, what) {
    const out = document.getElementById('job-operation');
    UI.showMessage(out, 'info', `${what}: in progress…`);
    for (;;) {
      const op = await UI.get(`/jobs/${job.id}/savepoints/${trigger}`);
      if (op.status.id === 'COMPLETED') {
        const o = op.operation || {};
        if (o.location) UI.showMessage(out, 'ok', `${what} completed: ${o.location}`);
        else UI.showMessage(out, 'error', `${what} failed: ${(o['failure-cause'] || {})['stack-trace'] || 'unknown cause'}`);
        UI.refreshNow();
        return;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  async function act(what, fn) {
    const out = document.getElementById('job-operation');
    try {
      await fn();
    } catch (e) {
      UI.showMessage(out, 'error', `${what}: ${e.message}`);
    }
  }

  function bindActions() {
    const dir = () => document.getElementById('savepoint-dir').value.trim();
    document.getElementById('trigger-savepoint').onclick = () => act('Savepoint', async () => {
      const body = dir() ? { 'target-directory': dir(), 'cancel-job': false } : { 'cancel-job': false };
      const answer = await UI.post(`/jobs/${job.id}/savepoints`, body);
      await follow(answer['request-id'], 'Savepoint');
    });
    document.getElementById('stop-job').onclick = () => act('Stop with savepoint', async () => {
      if (!window.confirm('Stop the job with a savepoint?')) return;
      const body = dir() ? { targetDirectory: dir(), drain: false } : { drain: false };
      const answer = await UI.post(`/jobs/${job.id}/stop`, body);
      await follow(answer['request-id'], 'Stop with savepoint');
    });
    document.getElementById('cancel-job').onclick = () => act('Cancel', async () => {
      if (!window.confirm('Cancel the job? It stops without a savepoint.')) return;
      await UI.patch(`/jobs/${job.id}?mode=cancel`);
      UI.showMessage(document.getElementById('job-operation'), 'info', 'Cancel requested.');
      UI.refreshNow();
    });
  }

  UI.pages.job = {
    mount(root, params) {
      const [id, tab] = params;
      if (!job || job.id !== id) job = { id, plan: null, selected: null };
      job.tab = TABS.some(([t]) => t === tab) ? tab : 'overview';
      root.innerHTML = `<div id="job-header"></div>
        <div class="actions job-actions">
          <input id="savepoint-dir" type="text" placeholder="Savepoint directory (empty: the configured one)"
            title="Where savepoints go; empty: the coordinator's execution.checkpointing.savepoint-dir">
          <button id="trigger-savepoint">Trigger savepoint</button>
          <button id="stop-job">Stop with savepoint</button>
          <button id="cancel-job" class="danger">Cancel job</button>
        </div>
        <div id="job-operation"></div>
        <nav class="tabs">${TABS.map(([t, label]) =>
          `<a href="#/jobs/${esc(id)}/${t}" id="tab-${t}" class="${t === job.tab ? 'active' : ''}">${label}</a>`).join('')}</nav>
        <div id="job-pane"></div>`;
      bindActions();
    },
    async refresh() {
      const d = await UI.get(`/jobs/${job.id}`);
      document.getElementById('job-header').innerHTML = header(d);
      const ended = UI.TERMINAL_STATES.includes(d.state);
      ['trigger-savepoint', 'stop-job', 'cancel-job'].forEach((b) => { document.getElementById(b).disabled = ended; });
      const pane = document.getElementById('job-pane');
      if (job.tab === 'overview') await renderOverview(pane, d);
      else if (job.tab === 'checkpoints') await renderCheckpoints(pane);
      else if (job.tab === 'exceptions') await renderExceptions(pane, d);
      else await renderSql(pane);
    },
  };
})();
